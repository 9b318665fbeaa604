package ofp

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/mf"
)

// NXM_NX_COOKIE pseudo-field: allowed only in NXT_FLOW_MOD and NXST_FLOW
// matches, where it restricts modify/delete/stats to matching cookies.
const (
	nxmCookieField = 30
	ofpmtOXM       = 1
	ofpmtStandard  = 0
)

// maxField is the widest field value (tun_metadata) in bytes.
const maxField = 124

// DecodeNXM decodes an nx_match (or the OXM fields of an ofp_match without
// its header and padding) of exactly len(p) bytes. With strict set, as
// for flow_mod, unknown fields fail with OFPBMC_BAD_FIELD and unmet
// prerequisites with OFPBMC_BAD_PREREQ; otherwise unknown fields are
// skipped and prerequisites not checked. If cookie is not nil an
// NXM_NX_COOKIE entry is accepted and stored there (value, mask).
func DecodeNXM(p []byte, strict bool, m *mf.Match, cookie *[2]uint64) error {
	*m = mf.Match{}
	var val, mask [maxField]byte
	for off := 0; off < len(p); {
		start := off
		if len(p)-off < 4 {
			return errorf(OFPBMC_BAD_LEN, "partial %d-byte OXM header at offset %d", len(p)-off, off)
		}
		h := binary.BigEndian.Uint32(p[off:])
		class, code, hasMask, length := uint16(h>>16), uint8(h>>9&0x7f), h>>8&1 == 1, int(h&0xff)
		var exp uint32
		hl := 4
		if class == mf.ClassExperimenter {
			if len(p)-off < 8 {
				return errorf(OFPBMC_BAD_LEN, "partial experimenter OXM header at offset %d", off)
			}
			if length < 4 {
				return errorf(OFPBMC_BAD_LEN, "experimenter OXM length %d at offset %d", length, off)
			}
			exp = binary.BigEndian.Uint32(p[off+4:])
			hl, length = 8, length-4
		}
		off += hl
		if len(p)-off < length {
			return errorf(OFPBMC_BAD_LEN, "OXM %#x needs %d payload bytes at offset %d, %d remain", h, length, off, len(p)-off)
		}
		payload := p[off : off+length]
		off += length
		width := length
		if hasMask {
			width = length / 2
			for i := 0; i < width; i++ {
				if payload[i]&^payload[width+i] != 0 {
					return errorf(OFPBMC_BAD_WILDCARDS, "OXM %#x at offset %d has value bits outside its mask", h, start)
				}
			}
		}
		f := mf.Std.ByHeader(class, code, exp)
		if f != nil && (f.Variable && width > maxField || !f.Variable && width != f.Bytes) {
			f = nil // wrong length: not the field's header
		}
		if f == nil {
			if cookie != nil && class == mf.ClassNXM1 && code == nxmCookieField && width == 8 {
				if cookie[1] != 0 {
					return errorf(OFPBMC_DUP_FIELD, "second cookie at offset %d", start)
				}
				cookie[0] = binary.BigEndian.Uint64(payload)
				cookie[1] = ^uint64(0)
				if hasMask {
					cookie[1] = binary.BigEndian.Uint64(payload[8:])
				}
				continue
			}
			if !strict {
				continue
			}
			return errorf(OFPBMC_BAD_FIELD, "unknown OXM %#x (experimenter %#x) at offset %d", h, exp, start)
		}
		v := val[:width]
		copy(v, payload[:width])
		var mk []byte
		if hasMask {
			mk = mask[:width]
			copy(mk, payload[width:])
		}
		if width == 0 {
			// A variable-length field with no bytes is zero (Open
			// vSwitch's encoding of tun_metadataN=0: a value's length
			// is its bytes after leading zeros), and a zero mask.
			v = val[:1]
			v[0] = 0
			if hasMask {
				mk = mask[:1]
				mk[0] = 0
			}
		}
		if hasMask {
			if !f.MaskValid(mk) {
				return errorf(OFPBMC_BAD_MASK, "%s at offset %d is not maskable", f.Name, start)
			}
		}
		if !f.ValueValid(v) {
			return errorf(OFPBMC_BAD_VALUE, "%s at offset %d: bad value %x", f.Name, start, bytes.Clone(v))
		}
		if strict && !m.PrereqsOK(f) {
			return errorf(OFPBMC_BAD_PREREQ, "%s at offset %d requires %s", f.Name, start, f.Prereq)
		}
		if !m.IsWild(f) {
			return errorf(OFPBMC_DUP_FIELD, "%s at offset %d is already matched", f.Name, start)
		}
		if err := m.SetMasked(f, v, mk); err != nil {
			code := OFPBMC_BAD_VALUE
			if errors.Is(err, mf.ErrBadMask) {
				code = OFPBMC_BAD_MASK
			}
			return &Error{Code: code, Err: err}
		}
		if f.Prereq != mf.PrereqNone {
			// A field with prerequisites implies an Ethernet packet type.
			m.Flow.PacketType, m.Mask.PacketType = 0, ^uint32(0)
		}
	}
	return nil
}

// nxmWriter emits match entries in canonical order.
type nxmWriter struct {
	b        []byte
	version  uint8 // 0 for NXM
	implied  bool  // a field with prerequisites was written
	val, msk [maxField]byte
}

func (w *nxmWriter) header(f *mf.Field, width int, masked bool) {
	h, _ := f.HeaderFor(w.version)
	n := width
	if masked {
		n *= 2
	}
	if h.IsExperimenter() {
		n += 4
	}
	var hm uint32
	if masked {
		hm = 1
	}
	w.b = binary.BigEndian.AppendUint32(w.b, uint32(h.Class)<<16|uint32(h.Field)<<9|hm<<8|uint32(n))
	if h.IsExperimenter() {
		w.b = binary.BigEndian.AppendUint32(w.b, h.Experimenter)
	}
}

// put writes field id from m unless it is wildcarded, exact if its mask
// is all ones.
func (w *nxmWriter) put(m *mf.Match, id mf.ID) {
	f := mf.ByID(id)
	if m.IsWild(f) {
		return
	}
	n := m.Width(f)
	v, k := w.val[:n], w.msk[:n]
	m.Get(f, v, k)
	if allZero(k) {
		return
	}
	exact := allOnes(k)
	if f.Variable {
		exact = !m.Tun.Opts[id-mf.IDTunMetadata0].Masked
	}
	w.header(f, n, !exact)
	w.b = append(w.b, v...)
	if !exact {
		w.b = append(w.b, k...)
	}
	if f.Prereq != mf.PrereqNone {
		w.implied = true
	}
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

func allOnes(b []byte) bool {
	for _, x := range b {
		if x != 0xff {
			return false
		}
	}
	return true
}

// AppendNXM appends the nx_match (version 0) or OXM fields (version >=
// OF1.2) for m, without padding, in Open vSwitch's canonical order, and a
// cookie pseudo-field if cookieMask is not zero. It returns the bytes
// appended.
func AppendNXM(b []byte, version uint8, m *mf.Match, cookie, cookieMask uint64) []byte {
	w := nxmWriter{b: b, version: version}
	start := len(b)
	fl, mk := &m.Flow, &m.Mask
	oxm := version != 0

	if mk.PacketType != 0 && !(fl.PacketType == 0 && mk.PacketType == ^uint32(0)) {
		w.put(m, mf.IDPacketType)
	}
	w.put(m, mf.IDDPHash)
	w.put(m, mf.IDRecircID)
	w.put(m, mf.IDConjID)
	if oxm {
		w.put(m, mf.IDInPortOXM)
	} else {
		w.put(m, mf.IDInPort)
	}
	w.put(m, mf.IDActsetOutput)
	w.put(m, mf.IDEthSrc)
	w.put(m, mf.IDEthDst)
	w.put(m, mf.IDEthType)
	if oxm {
		w.put(m, mf.IDVLANVID)
		tci, mtci := fl.VLANs[0].TCI, mk.VLANs[0].TCI
		if tci&0x1fff != 0 && mtci&0xe000 != 0 {
			w.putExact(mf.IDVLANPCP, uint64(tci>>13&7))
		}
	} else {
		w.put(m, mf.IDVLANTCI)
	}
	dl := fl.DLType()
	if dl == flow.EthTypeMPLS || dl == flow.EthTypeMPLSMcst {
		for _, id := range []mf.ID{mf.IDMPLSTC, mf.IDMPLSBOS, mf.IDMPLSTTL, mf.IDMPLSLabel} {
			w.put(m, id)
		}
	}
	switch dl {
	case flow.EthTypeIPv4, flow.EthTypeIPv6:
		w.putIP(m, dl)
	case flow.EthTypeARP, flow.EthTypeRARP:
		for _, id := range []mf.ID{mf.IDARPOp, mf.IDARPSPA, mf.IDARPTPA, mf.IDARPSHA, mf.IDARPTHA} {
			w.put(m, id)
		}
	}
	for _, id := range []mf.ID{mf.IDTunID, mf.IDTunFlags, mf.IDTunSrc, mf.IDTunDst, mf.IDTunIPv6Src,
		mf.IDTunIPv6Dst, mf.IDTunGbpID, mf.IDTunGbpFlags} {
		w.put(m, id)
	}
	// The long runs of fields a match rarely has are skipped whole when
	// their mask is zero (a flow dump encodes 100,000 matches).
	if mk.TunMetaPresent != 0 {
		for i := mf.ID(0); i < 64; i++ {
			w.put(m, mf.IDTunMetadata0+i)
		}
	}
	if mk.TunErspanIdx|mk.NshSPI|mk.NshC[0]|mk.NshC[1]|mk.NshC[2]|mk.NshC[3] != 0 ||
		mk.TunErspanVer|mk.TunErspanDir|mk.TunErspanHwid|mk.TunGtpuFlags|mk.TunGtpuMsgtype|
			mk.NshFlags|mk.NshTTL|mk.NshMdtype|mk.NshNp|mk.NshSI != 0 {
		for _, id := range []mf.ID{mf.IDTunErspanIdx, mf.IDTunErspanVer, mf.IDTunErspanDir, mf.IDTunErspanHwid,
			mf.IDTunGtpuFlags, mf.IDTunGtpuMsgtype, mf.IDNshFlags, mf.IDNshTTL, mf.IDNshMdtype, mf.IDNshNp,
			mf.IDNshSPI, mf.IDNshSI, mf.IDNshC1, mf.IDNshC1 + 1, mf.IDNshC1 + 2, mf.IDNshC1 + 3} {
			w.put(m, id)
		}
	}
	switch {
	case mk.Regs == [mf.NumRegs]uint32{}:
	case version < mf.OF15:
		for i := mf.ID(0); i < mf.NumRegs; i++ {
			w.put(m, mf.IDReg0+i)
		}
	default:
		for i := mf.ID(0); i < mf.NumRegs/2; i++ {
			w.put(m, mf.IDXReg0+i)
		}
	}
	for _, id := range []mf.ID{mf.IDPktMark, mf.IDCtState, mf.IDCtZone, mf.IDCtMark, mf.IDCtLabel,
		mf.IDCtNwSrc, mf.IDCtIPv6Src, mf.IDCtNwDst, mf.IDCtIPv6Dst} {
		w.put(m, id)
	}
	if fl.CtNwProto != 0 {
		w.put(m, mf.IDCtNwProto)
		w.put(m, mf.IDCtTpSrc)
		w.put(m, mf.IDCtTpDst)
	}
	w.put(m, mf.IDMetadata)
	if cookieMask != 0 {
		masked := cookieMask != ^uint64(0)
		n, hm := uint32(8), uint32(0)
		if masked {
			n, hm = 16, 1
		}
		w.b = binary.BigEndian.AppendUint32(w.b, uint32(mf.ClassNXM1)<<16|nxmCookieField<<9|hm<<8|n)
		w.b = binary.BigEndian.AppendUint64(w.b, cookie&cookieMask)
		if masked {
			w.b = binary.BigEndian.AppendUint64(w.b, cookieMask)
		}
	}
	if mk.PacketType == ^uint32(0) && fl.PacketType == 0 && !w.implied {
		// Default (Ethernet) packet type with no field implying it: say
		// so explicitly, first.
		pt := mf.ByID(mf.IDPacketType)
		tail := append([]byte(nil), w.b[start:]...)
		w.b = w.b[:start]
		w.header(pt, 4, false)
		w.b = append(w.b, 0, 0, 0, 0)
		w.b = append(w.b, tail...)
	}
	return w.b
}

func (w *nxmWriter) putExact(id mf.ID, v uint64) {
	f := mf.ByID(id)
	w.header(f, f.Bytes, false)
	for i := f.Bytes - 1; i >= 0; i-- {
		w.b = append(w.b, byte(v>>(8*i)))
	}
	if f.Prereq != mf.PrereqNone {
		w.implied = true
	}
}

func (w *nxmWriter) putIP(m *mf.Match, dl uint16) {
	fl := &m.Flow
	oxm := w.version != 0
	if dl == flow.EthTypeIPv4 {
		w.put(m, mf.IDIPv4Src)
		w.put(m, mf.IDIPv4Dst)
	} else {
		w.put(m, mf.IDIPv6Src)
		w.put(m, mf.IDIPv6Dst)
	}
	w.put(m, mf.IDIPFrag)
	if m.Mask.NwTos&0xfc != 0 {
		if oxm {
			w.putExact(mf.IDIPDSCPShifted, uint64(fl.NwTos>>2))
		} else {
			w.putExact(mf.IDIPDSCP, uint64(fl.NwTos&0xfc))
		}
	}
	if m.Mask.NwTos&3 != 0 {
		w.putExact(mf.IDIPECN, uint64(fl.NwTos&3))
	}
	w.put(m, mf.IDIPTTL)
	w.put(m, mf.IDIPv6Label)
	if m.Mask.NwProto == 0 {
		return
	}
	w.put(m, mf.IDIPProto)
	switch {
	case fl.NwProto == flow.IPProtoTCP:
		w.put(m, mf.IDTCPSrc)
		w.put(m, mf.IDTCPDst)
		w.put(m, mf.IDTCPFlags)
	case fl.NwProto == flow.IPProtoUDP:
		w.put(m, mf.IDUDPSrc)
		w.put(m, mf.IDUDPDst)
	case fl.NwProto == flow.IPProtoSCTP:
		w.put(m, mf.IDSCTPSrc)
		w.put(m, mf.IDSCTPDst)
	case dl == flow.EthTypeIPv4 && fl.NwProto == flow.IPProtoICMP:
		w.put(m, mf.IDICMPv4Type)
		w.put(m, mf.IDICMPv4Code)
	case dl == flow.EthTypeIPv6 && fl.NwProto == flow.IPProtoICMPv6:
		w.put(m, mf.IDICMPv6Type)
		w.put(m, mf.IDICMPv6Code)
		if fl.TpDst == 0 && (fl.TpSrc == 135 || fl.TpSrc == 136) {
			w.put(m, mf.IDNDReserved)
			w.put(m, mf.IDNDTarget)
			w.put(m, mf.IDNDOptionsType)
			if fl.TpSrc == 135 {
				w.put(m, mf.IDNDSLL)
			} else {
				w.put(m, mf.IDNDTLL)
			}
		}
	}
}

// DecodeOXMMatch decodes an ofp_match at the start of p, OpenFlow 1.2+'s
// (type OXM) or OpenFlow 1.1's standard match, returning the bytes it
// occupies including padding.
func DecodeOXMMatch(p []byte, m *mf.Match) (int, error) {
	if len(p) < 4 {
		return 0, errorf(OFPBMC_BAD_LEN, "ofp_match header needs 4 bytes, have %d", len(p))
	}
	typ, n := binary.BigEndian.Uint16(p), int(binary.BigEndian.Uint16(p[2:]))
	if n < 4 {
		return 0, errorf(OFPBMC_BAD_LEN, "ofp_match length %d", n)
	}
	switch typ {
	case ofpmtOXM:
	case ofpmtStandard:
		// OpenFlow 1.1's fixed match; accepted in any version, as Open
		// vSwitch does.
		return ofp11MatchLen, DecodeOF11Match(p, m)
	default:
		return 0, errorf(OFPBMC_BAD_TYPE, "ofp_match type %d", typ)
	}
	if pad8(n) > len(p) {
		return 0, errorf(OFPBMC_BAD_LEN, "ofp_match of %d bytes (padded %d) in %d", n, pad8(n), len(p))
	}
	return pad8(n), DecodeNXM(p[4:n], true, m, nil)
}

// AppendOXMMatch appends an ofp_match of type OXM for m, padded to 8
// bytes. Open vSwitch uses it in OpenFlow 1.1 too where the message
// allows (flow stats replies); flow mods, flow stats requests and
// flow-removed messages carry OpenFlow 1.1's standard match instead
// (see match11.go).
func AppendOXMMatch(b []byte, version uint8, m *mf.Match) []byte {
	start := len(b)
	b = append(b, 0, ofpmtOXM, 0, 0)
	b = AppendNXM(b, version, m, 0, 0)
	n := len(b) - start
	binary.BigEndian.PutUint16(b[start+2:], uint16(n))
	return appendZeros(b, pad8(n)-n)
}

// OpenFlow 1.0 wildcard bits.
const (
	ofpfw10InPort    = 1 << 0
	ofpfw10DLVLAN    = 1 << 1
	ofpfw10DLSrc     = 1 << 2
	ofpfw10DLDst     = 1 << 3
	ofpfw10DLType    = 1 << 4
	ofpfw10NWProto   = 1 << 5
	ofpfw10TPSrc     = 1 << 6
	ofpfw10TPDst     = 1 << 7
	ofpfw10NWSrcSh   = 8
	ofpfw10NWDstSh   = 14
	ofpfw10DLVLANPCP = 1 << 20
	ofpfw10NWTos     = 1 << 21
	ofpfw10All       = 1<<22 - 1
	ofp10VLANNone    = 0xffff
	ofp10MatchLen    = 40
)

func wcbitsToNetmask(n uint32) uint32 {
	n &= 0x3f
	if n < 32 {
		return ^uint32(0) << n
	}
	return 0
}

func netmaskToWCBits(m uint32) uint32 {
	n := uint32(0)
	for m != 0 {
		n++
		m <<= 1
	}
	return 32 - n
}

// DecodeOF10Match decodes a 40-byte OpenFlow 1.0 ofp_match.
func DecodeOF10Match(p []byte, m *mf.Match) error {
	if len(p) < ofp10MatchLen {
		return errorf(OFPBRC_BAD_LEN, "ofp10_match needs 40 bytes, have %d", len(p))
	}
	*m = mf.Match{}
	wc := binary.BigEndian.Uint32(p) & ofpfw10All
	fl, mk := &m.Flow, &m.Mask
	if wc&ofpfw10InPort == 0 {
		mk.InPort = 0xffff
	}
	if wc&ofpfw10NWTos == 0 {
		mk.NwTos |= 0xfc
	}
	if wc&ofpfw10NWProto == 0 {
		mk.NwProto = 0xff
	}
	mk.NwSrc, mk.NwDst = wcbitsToNetmask(wc>>ofpfw10NWSrcSh), wcbitsToNetmask(wc>>ofpfw10NWDstSh)
	if wc&ofpfw10TPSrc == 0 {
		mk.TpSrc = 0xffff
	}
	if wc&ofpfw10TPDst == 0 {
		mk.TpDst = 0xffff
	}
	if wc&ofpfw10DLSrc == 0 {
		mk.EthSrc = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	if wc&ofpfw10DLDst == 0 {
		mk.EthDst = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	if wc&ofpfw10DLType == 0 {
		mk.EthType = 0xffff
	}
	if wc&ofpfw10DLVLANPCP == 0 {
		mk.VLANs[0].TCI |= 0xe000 | flow.VLANCFI
	}
	if wc&ofpfw10DLVLAN == 0 {
		mk.VLANs[0].TCI |= 0x0fff | flow.VLANCFI
	}
	const dataBits = ofpfw10NWTos | ofpfw10NWProto | ofpfw10TPSrc | ofpfw10TPDst | ofpfw10DLSrc |
		ofpfw10DLDst | ofpfw10DLType | ofpfw10DLVLAN | ofpfw10DLVLANPCP
	if wc&dataBits != dataBits || mk.NwSrc != 0 || mk.NwDst != 0 {
		mk.PacketType = ^uint32(0)
	}
	r := newReader(p[4:ofp10MatchLen], "ofp10_match")
	fl.InPort = uint32(r.u16())
	copy(fl.EthSrc[:], r.take(6))
	copy(fl.EthDst[:], r.take(6))
	vlan, pcp := r.u16(), r.u8()
	r.skip(1)
	fl.EthType = r.u16()
	if fl.EthType < flow.EthTypeMin {
		fl.EthType = flow.EthTypeNone
	}
	fl.NwTos = r.u8() & 0xfc
	fl.NwProto = r.u8()
	r.skip(2)
	fl.NwSrc, fl.NwDst = r.u32(), r.u32()
	fl.TpSrc, fl.TpDst = r.u16(), r.u16()
	if wc&ofpfw10DLVLAN == 0 && vlan == ofp10VLANNone {
		fl.VLANs[0].TCI, mk.VLANs[0].TCI = 0, 0xffff
	} else {
		fl.VLANs[0].TCI = (vlan&0x0fff | uint16(pcp)<<13 | flow.VLANCFI) & mk.VLANs[0].TCI
	}
	zeroWildcarded(m)
	return r.Err()
}

// zeroWildcarded clears flow bits outside the mask.
func zeroWildcarded(m *mf.Match) {
	fw, mw := m.Flow.Key.W(), m.Mask.Key.W()
	for i := range fw {
		fw[i] &= mw[i]
	}
	for i := range m.Flow.Regs {
		m.Flow.Regs[i] &= m.Mask.Regs[i]
	}
	m.Flow.Metadata &= m.Mask.Metadata
	m.Flow.ConjID &= m.Mask.ConjID
	m.Flow.ActsetOutput &= m.Mask.ActsetOutput
}

// AppendOF10Match appends the 40-byte OpenFlow 1.0 ofp_match for m. Fields
// OpenFlow 1.0 cannot express are dropped; callers pick NXM for those.
func AppendOF10Match(b []byte, m *mf.Match) []byte {
	fl, mk := &m.Flow, &m.Mask
	var wc uint32
	if mk.InPort == 0 {
		wc |= ofpfw10InPort
	}
	if mk.EthType == 0 {
		wc |= ofpfw10DLType
	}
	if mk.NwProto == 0 {
		wc |= ofpfw10NWProto
	}
	wc |= netmaskToWCBits(mk.NwSrc) << ofpfw10NWSrcSh
	wc |= netmaskToWCBits(mk.NwDst) << ofpfw10NWDstSh
	if mk.NwTos&0xfc == 0 {
		wc |= ofpfw10NWTos
	}
	if mk.TpSrc == 0 {
		wc |= ofpfw10TPSrc
	}
	if mk.TpDst == 0 {
		wc |= ofpfw10TPDst
	}
	if mk.EthSrc == [6]byte{} {
		wc |= ofpfw10DLSrc
	}
	if mk.EthDst == [6]byte{} {
		wc |= ofpfw10DLDst
	}
	var vlan uint16
	var pcp uint8
	tci, mtci := fl.VLANs[0].TCI, mk.VLANs[0].TCI
	switch {
	case mtci == 0:
		wc |= ofpfw10DLVLAN | ofpfw10DLVLANPCP
	case mtci&flow.VLANCFI != 0 && tci&flow.VLANCFI == 0:
		vlan = ofp10VLANNone
	default:
		if mtci&0x0fff == 0 {
			wc |= ofpfw10DLVLAN
		} else {
			vlan = tci & 0x0fff
		}
		if mtci&0xe000 == 0 {
			wc |= ofpfw10DLVLANPCP
		} else {
			pcp = uint8(tci >> 13)
		}
	}
	b = binary.BigEndian.AppendUint32(b, wc)
	b = binary.BigEndian.AppendUint16(b, uint16(fl.InPort))
	b = append(b, fl.EthSrc[:]...)
	b = append(b, fl.EthDst[:]...)
	b = binary.BigEndian.AppendUint16(b, vlan)
	b = append(b, pcp, 0)
	b = binary.BigEndian.AppendUint16(b, fl.EthType)
	b = append(b, fl.NwTos&0xfc, fl.NwProto, 0, 0)
	b = binary.BigEndian.AppendUint32(b, fl.NwSrc)
	b = binary.BigEndian.AppendUint32(b, fl.NwDst)
	b = binary.BigEndian.AppendUint16(b, fl.TpSrc)
	return binary.BigEndian.AppendUint16(b, fl.TpDst)
}

// Normalize drops matches on fields that the rest of the match makes
// meaningless — ports without an IP protocol that has them, IP fields
// without an IP Ethertype, and so on — as Open vSwitch's
// ofputil_normalize_match does. OpenFlow 1.0 flow mods are normalized on
// decode, as Open vSwitch does (the 1.0 match has no prerequisite checks).
func Normalize(m *mf.Match) {
	const (
		mayNwAddr = 1 << iota
		mayTpAddr
		mayNwProto
		mayIPvx
		mayArpSha
		mayArpTha
		mayIPv6
		mayNDTarget
		mayMPLS
		mayEther
	)
	fl, mk := &m.Flow, &m.Mask
	var may int
	var dl uint16
	switch {
	case mk.PacketType == 0 || (fl.PacketType == 0 && mk.PacketType == ^uint32(0)):
		may, dl = mayEther, fl.EthType
	case mk.PacketType == ^uint32(0) && fl.PacketType>>16 == 1:
		dl = uint16(fl.PacketType)
	}
	switch dl {
	case flow.EthTypeIPv4:
		may |= mayNwProto | mayIPvx | mayNwAddr
		switch fl.NwProto {
		case flow.IPProtoTCP, flow.IPProtoUDP, flow.IPProtoSCTP, flow.IPProtoICMP:
			may |= mayTpAddr
		}
	case flow.EthTypeIPv6:
		may |= mayNwProto | mayIPvx | mayIPv6
		switch fl.NwProto {
		case flow.IPProtoTCP, flow.IPProtoUDP, flow.IPProtoSCTP:
			may |= mayTpAddr
		case flow.IPProtoICMPv6:
			may |= mayTpAddr
			switch fl.TpSrc {
			case 135:
				may |= mayNDTarget | mayArpSha
			case 136:
				may |= mayNDTarget | mayArpTha
			}
		}
	case flow.EthTypeARP, flow.EthTypeRARP:
		may |= mayNwProto | mayNwAddr | mayArpSha | mayArpTha
	case flow.EthTypeMPLS, flow.EthTypeMPLSMcst:
		may |= mayMPLS
	}
	if may&mayEther == 0 {
		mk.EthSrc, mk.EthDst = [6]byte{}, [6]byte{}
	}
	if may&mayNwAddr == 0 {
		mk.NwSrc, mk.NwDst = 0, 0
	}
	if may&mayTpAddr == 0 {
		mk.TpSrc, mk.TpDst = 0, 0
	}
	if may&mayNwProto == 0 {
		mk.NwProto = 0
	}
	if may&mayIPvx == 0 {
		mk.NwTos, mk.NwTTL = 0, 0
	}
	if may&mayArpSha == 0 {
		mk.ArpSha = [6]byte{}
	}
	if may&mayArpTha == 0 {
		mk.ArpTha = [6]byte{}
	}
	if may&mayIPv6 == 0 {
		mk.IPv6Src, mk.IPv6Dst, mk.IPv6Label = [16]byte{}, [16]byte{}, 0
	}
	if may&mayNDTarget == 0 {
		mk.NDTarget = [16]byte{}
	}
	if may&mayMPLS == 0 {
		mk.MPLSLSE = 0
	}
	zeroWildcarded(m)
}
