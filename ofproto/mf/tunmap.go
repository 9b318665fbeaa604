package mf

import (
	"errors"

	"github.com/gvs-project/gvs/datapath/flow"
)

// A switch's TLV table decides where each tun_metadataN lives in
// Key.TunMeta (like Open vSwitch's tun_table): every rule, and every
// packet whose Geneve options were mapped, uses that one layout, so the
// classifier compares the same bytes. Matches decoded from the wire carry
// a match-local layout until Relayout moves them into the switch's.

// ErrUnmappedTun is returned for a tun_metadata field the TLV table does
// not map (Open vSwitch's NXFMFC_INVALID_TLV_FIELD).
var ErrUnmappedTun = errors.New("mf: tun_metadata field not mapped by the TLV table")

// TunTLV is one TLV table mapping: Geneve option (Class, Type) of Len
// data bytes is tun_metadata Index.
type TunTLV struct {
	Class uint16
	Type  uint8
	Len   uint8
	Index uint16
}

// NewTunMap lays out mappings in order, each field taking the next Len
// bytes of Key.TunMeta. ErrTunFull if they do not fit.
func NewTunMap(tlvs []TunTLV) (*TunMap, error) {
	tm := &TunMap{}
	for _, t := range tlvs {
		if t.Index >= 64 || t.Len == 0 {
			continue
		}
		if int(tm.Used)+int(t.Len) > len(flow.Key{}.TunMeta) {
			return nil, ErrTunFull
		}
		tm.Opts[t.Index] = TunLoc{Off: tm.Used, Len: t.Len}
		tm.Used += t.Len
	}
	return tm, nil
}

// TunIndex returns N for tun_metadataN, ok false for other fields.
func (f *Field) TunIndex() (int, bool) {
	if f.loc.kind != locTunMeta {
		return 0, false
	}
	return int(f.loc.tunIdx), true
}

// Relayout moves m's tun_metadata fields from its match-local layout into
// tm's, right-aligned in each field's mapped width. A field tm does not
// map, or a value wider than its mapping, gives ErrUnmappedTun and leaves
// m unchanged.
func (m *Match) Relayout(tm *TunMap) error {
	if m.Mask.TunMetaPresent == 0 {
		return nil
	}
	var val, mask [len(flow.Key{}.TunMeta)]byte
	var opts [64]TunLoc
	for i := range m.Tun.Opts {
		old := m.Tun.Opts[i]
		if m.Mask.TunMetaPresent&(1<<i) == 0 || old.Len == 0 {
			continue
		}
		nw := tm.Opts[i]
		if nw.Len == 0 || old.Len > nw.Len {
			return ErrUnmappedTun
		}
		pad := nw.Len - old.Len
		copy(val[nw.Off+pad:nw.Off+nw.Len], m.Flow.TunMeta[old.Off:old.Off+old.Len])
		copy(mask[nw.Off+pad:nw.Off+nw.Len], m.Mask.TunMeta[old.Off:old.Off+old.Len])
		if !old.Masked {
			// An exact match covers the whole mapped width.
			for j := nw.Off; j < nw.Off+nw.Len; j++ {
				mask[j] = 0xff
			}
		}
		opts[i] = TunLoc{Off: nw.Off, Len: nw.Len, Masked: old.Masked}
	}
	m.Flow.TunMeta, m.Mask.TunMeta = val, mask
	m.Tun = TunMap{Opts: opts, Used: tm.Used}
	return nil
}

// GetTun writes tun_metadataN of fl under layout tm into dst (f.Bytes
// long, right-aligned; zero when the field is absent or unmapped).
func (f *Field) GetTun(fl *Flow, tm *TunMap, dst []byte) {
	clear(dst)
	loc := tm.Opts[f.loc.tunIdx]
	if loc.Len == 0 || fl.TunMetaPresent&(1<<f.loc.tunIdx) == 0 {
		return
	}
	n := min(int(loc.Len), len(dst))
	copy(dst[len(dst)-n:], fl.TunMeta[int(loc.Off)+int(loc.Len)-n:loc.Off+loc.Len])
}

// SetTun stores v (f.Bytes long, right-aligned) into tun_metadataN of fl
// under layout tm and marks the field present. Bits beyond the mapped
// width are dropped, as Open vSwitch truncates to the option length.
// ErrUnmappedTun if tm does not map the field.
func (f *Field) SetTun(fl *Flow, tm *TunMap, v []byte) error {
	loc := tm.Opts[f.loc.tunIdx]
	if loc.Len == 0 {
		return ErrUnmappedTun
	}
	n := min(int(loc.Len), len(v))
	dst := fl.TunMeta[loc.Off : loc.Off+loc.Len]
	clear(dst)
	copy(dst[len(dst)-n:], v[len(v)-n:])
	fl.TunMetaPresent |= 1 << f.loc.tunIdx
	return nil
}
