package ofp

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// Flow mod commands (OFPFC_*).
const (
	FlowAdd          = 0
	FlowModify       = 1
	FlowModifyStrict = 2
	FlowDelete       = 3
	FlowDeleteStrict = 4
)

// Special ports and IDs.
const (
	PortAny16  = 0xffff     // OFPP_NONE / OFPP_ANY in 16-bit form
	PortAny    = 0xffffffff // OFPP_ANY (OF1.1+)
	GroupAny   = 0xffffffff // OFPG_ANY
	BufferNone = 0xffffffff // OFP_NO_BUFFER
	TableAll   = 0xff       // OFPTT_ALL
)

// FlowFormat is how a flow mod's match is encoded.
type FlowFormat uint8

// Flow formats.
const (
	FormatOF10 FlowFormat = iota // OFPT_FLOW_MOD with ofp10_match (OF1.0)
	FormatNXM                    // NXT_FLOW_MOD with nx_match (any version)
	FormatOXM                    // OFPT_FLOW_MOD with OXM ofp_match (OF1.1+)
)

// FlowMod is a flow table modification in any version. OutPort is stored
// as on the wire for the format (16-bit for OF1.0/NXM, 32-bit for OXM).
// Instructions holds the OF1.1+ instructions or the OF1.0/NXM actions,
// undecoded.
type FlowMod struct {
	Format       FlowFormat
	Cookie       uint64
	CookieMask   uint64 // OXM, or NXM cookie pseudo-field
	TableID      uint8  // OF1.0/NXM: high byte of the command (flow_mod_table_id)
	Command      uint8
	IdleTimeout  uint16
	HardTimeout  uint16
	Priority     uint16
	BufferID     uint32
	OutPort      uint32
	OutGroup     uint32 // OF1.1+
	Flags        uint16
	Importance   uint16 // OF1.4+
	Match        mf.Match
	Instructions []byte
	// CookieMatch is the cookie an NXM cookie pseudo-field matches
	// (meaningful when Format is FormatNXM and CookieMask is not zero).
	CookieMatch uint64
}

func decodeFlowMod(r *reader, v uint8, raw Raw) (Message, error) {
	var fm *FlowMod
	if r.scratch != nil {
		fm = &r.scratch.flowMod
		*fm = FlowMod{}
	} else {
		fm = &FlowMod{}
	}
	switch raw {
	case RawOFPT10_FLOW_MOD:
		fm.Format = FormatOF10
		if err := DecodeOF10Match(r.take(ofp10MatchLen), &fm.Match); err != nil {
			return nil, err
		}
		Normalize(&fm.Match)
		fm.Cookie = r.u64()
		cmd := r.u16()
		fm.Command, fm.TableID = uint8(cmd), uint8(cmd>>8)
		fm.IdleTimeout, fm.HardTimeout, fm.Priority = r.u16(), r.u16(), r.u16()
		fm.BufferID, fm.OutPort, fm.Flags = r.u32(), uint32(r.u16()), r.u16()
	case RawNXT_FLOW_MOD:
		fm.Format = FormatNXM
		fm.Cookie = r.u64()
		cmd := r.u16()
		fm.Command, fm.TableID = uint8(cmd), uint8(cmd>>8)
		fm.IdleTimeout, fm.HardTimeout, fm.Priority = r.u16(), r.u16(), r.u16()
		fm.BufferID, fm.OutPort, fm.Flags = r.u32(), uint32(r.u16()), r.u16()
		n := int(r.u16())
		r.skip(6)
		if r.Err() != nil {
			return nil, r.Err()
		}
		if pad8(n) > r.len() {
			return nil, errorf(OFPBMC_BAD_LEN, "nx_match length %d (padded %d) exceeds %d remaining bytes", n, pad8(n), r.len())
		}
		p := r.take(pad8(n))
		var ck [2]uint64
		if err := DecodeNXM(p[:n], true, &fm.Match, &ck); err != nil {
			return nil, err
		}
		fm.CookieMatch, fm.CookieMask = ck[0], ck[1]
	default:
		fm.Format = FormatOXM
		fm.Cookie, fm.CookieMask = r.u64(), r.u64()
		fm.TableID, fm.Command = r.u8(), r.u8()
		fm.IdleTimeout, fm.HardTimeout, fm.Priority = r.u16(), r.u16(), r.u16()
		fm.BufferID, fm.OutPort, fm.OutGroup = r.u32(), r.u32(), r.u32()
		fm.Flags, fm.Importance = r.u16(), r.u16()
		if v < mf.OF14 && fm.Importance != 0 {
			// Padding in OF1.1–1.3: ignored, as Open vSwitch does.
			fm.Importance = 0
		}
		if r.Err() != nil {
			return nil, r.Err()
		}
		n, err := DecodeOXMMatch(r.b[r.off:], &fm.Match)
		if err != nil {
			return nil, err
		}
		r.skip(n)
	}
	fm.Instructions = r.rest()
	return fm, nil
}

// RawFor returns the raw type for the flow mod's format in version v.
func (fm *FlowMod) RawFor(v uint8) (Raw, error) {
	switch fm.Format {
	case FormatOF10:
		return versionRange(v, RawOFPT10_FLOW_MOD)
	case FormatNXM:
		return RawNXT_FLOW_MOD, nil
	}
	return versionRange(v, RawOFPT11_FLOW_MOD)
}

func (fm *FlowMod) appendBody(b []byte, v uint8) ([]byte, error) {
	switch fm.Format {
	case FormatOF10, FormatNXM:
		if fm.Format == FormatOF10 {
			b = AppendOF10Match(b, &fm.Match)
		}
		b = binary.BigEndian.AppendUint64(b, fm.Cookie)
		b = binary.BigEndian.AppendUint16(b, uint16(fm.TableID)<<8|uint16(fm.Command))
		b = binary.BigEndian.AppendUint16(b, fm.IdleTimeout)
		b = binary.BigEndian.AppendUint16(b, fm.HardTimeout)
		b = binary.BigEndian.AppendUint16(b, fm.Priority)
		b = binary.BigEndian.AppendUint32(b, fm.BufferID)
		b = binary.BigEndian.AppendUint16(b, uint16(fm.OutPort))
		b = binary.BigEndian.AppendUint16(b, fm.Flags)
		if fm.Format == FormatNXM {
			lenAt := len(b)
			b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
			start := len(b)
			b = AppendNXM(b, 0, &fm.Match, fm.CookieMatch, fm.CookieMask)
			n := len(b) - start
			binary.BigEndian.PutUint16(b[lenAt:], uint16(n))
			b = appendZeros(b, pad8(n)-n)
		}
	default:
		b = binary.BigEndian.AppendUint64(b, fm.Cookie)
		b = binary.BigEndian.AppendUint64(b, fm.CookieMask)
		b = append(b, fm.TableID, fm.Command)
		b = binary.BigEndian.AppendUint16(b, fm.IdleTimeout)
		b = binary.BigEndian.AppendUint16(b, fm.HardTimeout)
		b = binary.BigEndian.AppendUint16(b, fm.Priority)
		b = binary.BigEndian.AppendUint32(b, fm.BufferID)
		b = binary.BigEndian.AppendUint32(b, fm.OutPort)
		b = binary.BigEndian.AppendUint32(b, fm.OutGroup)
		b = binary.BigEndian.AppendUint16(b, fm.Flags)
		imp := fm.Importance
		if v < mf.OF14 {
			imp = 0
		}
		b = binary.BigEndian.AppendUint16(b, imp)
		if v == mf.OF11 {
			var err error
			if b, err = AppendOF11Match(b, &fm.Match); err != nil {
				return b, err
			}
		} else {
			b = AppendOXMMatch(b, v, &fm.Match)
		}
	}
	return append(b, fm.Instructions...), nil
}
