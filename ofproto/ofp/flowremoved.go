package ofp

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// Flow-removed reasons as on the wire (OFPRR_*). Open vSwitch sends
// MeterDelete as Delete before OpenFlow 1.4.
const (
	OFPRRIdleTimeout  = 0
	OFPRRHardTimeout  = 1
	OFPRRDelete       = 2
	OFPRRGroupDelete  = 3
	OFPRRMeterDelete  = 4
	OFPRREviction     = 5
	flowRemovedOXSLen = 4
)

// FlowRemovedReasonFor returns the reason Open vSwitch puts on the wire
// for version v: before OpenFlow 1.4 a meter deletion is sent as
// OFPRRDelete. The flow-removed encoder applies it.
func FlowRemovedReasonFor(reason, v uint8) uint8 {
	if v < 5 && reason == OFPRRMeterDelete {
		return OFPRRDelete
	}
	return reason
}

// FlowRemoved is OFPT_FLOW_REMOVED (OpenFlow 1.0, 1.1–1.4 and 1.5
// layouts) or NXT_FLOW_REMOVED, chosen by Format (FormatOXM picks the
// version's standard layout).
//
// As in Open vSwitch: OpenFlow 1.0 and NXT forms carry no hard timeout
// (0) and OpenFlow 1.0 no table (TableID 255); NXT encodes the table as
// TableID+1, 0 meaning unknown (255). OpenFlow 1.5 carries the duration
// and counters as OXS statistics; a statistic that is absent decodes as
// all-ones and is not encoded.
type FlowRemoved struct {
	Format                    FlowFormat
	Cookie                    uint64
	Priority                  uint16
	Reason                    uint8 // OFPRR*: as decoded; the encoder applies FlowRemovedReasonFor
	TableID                   uint8
	DurationSec, DurationNsec uint32
	IdleTimeout, HardTimeout  uint16
	PacketCount, ByteCount    uint64
	Match                     mf.Match
}

// OXS (OpenFlow 1.5 flow statistics) headers Open vSwitch uses: class
// OFPXSC_OPENFLOW_BASIC (0x8002), field, payload length.
const (
	frOXSDuration    = 0x8002<<16 | 0<<9 | 8
	frOXSIdleTime    = 0x8002<<16 | 1<<9 | 8
	frOXSFlowCount   = 0x8002<<16 | 3<<9 | 4
	frOXSPacketCount = 0x8002<<16 | 4<<9 | 8
	frOXSByteCount   = 0x8002<<16 | 5<<9 | 8
)

func init() {
	for _, r := range []Raw{RawOFPT10_FLOW_REMOVED, RawOFPT11_FLOW_REMOVED, RawOFPT15_FLOW_REMOVED, RawNXT_FLOW_REMOVED} {
		decoders[r] = decodeFlowRemoved
	}
}

func decodeFlowRemoved(r *reader, v uint8, raw Raw) (Message, error) {
	fr := &FlowRemoved{}
	switch raw {
	case RawOFPT10_FLOW_REMOVED:
		fr.Format, fr.TableID = FormatOF10, 255
		if err := DecodeOF10Match(r.take(ofp10MatchLen), &fr.Match); err != nil {
			return nil, err
		}
		fr.Cookie, fr.Priority, fr.Reason = r.u64(), r.u16(), r.u8()
		r.skip(1)
		fr.DurationSec, fr.DurationNsec, fr.IdleTimeout = r.u32(), r.u32(), r.u16()
		r.skip(2)
		fr.PacketCount, fr.ByteCount = r.u64(), r.u64()
	case RawNXT_FLOW_REMOVED:
		fr.Format = FormatNXM
		fr.Cookie, fr.Priority, fr.Reason, fr.TableID = r.u64(), r.u16(), r.u8(), r.u8()-1
		fr.DurationSec, fr.DurationNsec, fr.IdleTimeout = r.u32(), r.u32(), r.u16()
		n := int(r.u16())
		fr.PacketCount, fr.ByteCount = r.u64(), r.u64()
		if r.Err() != nil {
			return nil, r.Err()
		}
		if pad8(n) > r.len() {
			return nil, errorf(OFPBMC_BAD_LEN, "nx_match length %d (padded %d) exceeds %d remaining bytes", n, pad8(n), r.len())
		}
		if err := DecodeNXM(r.take(pad8(n))[:n], true, &fr.Match, nil); err != nil {
			return nil, err
		}
		if r.len() != 0 {
			return nil, errorf(OFPBRC_BAD_LEN, "%d bytes after the nx_match", r.len())
		}
	case RawOFPT11_FLOW_REMOVED:
		fr.Format = FormatOXM
		fr.Cookie, fr.Priority, fr.Reason, fr.TableID = r.u64(), r.u16(), r.u8(), r.u8()
		fr.DurationSec, fr.DurationNsec = r.u32(), r.u32()
		fr.IdleTimeout, fr.HardTimeout = r.u16(), r.u16()
		fr.PacketCount, fr.ByteCount = r.u64(), r.u64()
		if r.Err() != nil {
			return nil, r.Err()
		}
		n, err := DecodeOXMMatch(r.b[r.off:], &fr.Match)
		if err != nil {
			return nil, err
		}
		r.skip(n)
	default: // OpenFlow 1.5
		fr.Format = FormatOXM
		fr.TableID, fr.Reason, fr.Priority = r.u8(), r.u8(), r.u16()
		fr.IdleTimeout, fr.HardTimeout, fr.Cookie = r.u16(), r.u16(), r.u64()
		if r.Err() != nil {
			return nil, r.Err()
		}
		n, err := DecodeOXMMatch(r.b[r.off:], &fr.Match)
		if err != nil {
			return nil, err
		}
		r.skip(n)
		if err := fr.decodeOXS(r); err != nil {
			return nil, err
		}
	}
	// Bytes after the match (OpenFlow 1.1+) are ignored, as Open vSwitch
	// does.
	r.off = len(r.b)
	return fr, r.Err()
}

// decodeOXS reads an ofp_oxs_stat: 16-bit reserved, 16-bit length
// (including this header), OXS entries, padding to 8. Unknown entries are
// skipped.
func (fr *FlowRemoved) decodeOXS(r *reader) error {
	fr.DurationSec, fr.DurationNsec = ^uint32(0), ^uint32(0)
	fr.PacketCount, fr.ByteCount = ^uint64(0), ^uint64(0)
	if r.len() < flowRemovedOXSLen {
		return errorf(OFPBMC_BAD_LEN, "OXS stats header needs 4 bytes, have %d", r.len())
	}
	n := int(binary.BigEndian.Uint16(r.b[r.off+2:]))
	if n < flowRemovedOXSLen || pad8(n) > r.len() {
		return errorf(OFPBMC_BAD_LEN, "OXS stats length %d (padded %d) with %d bytes left", n, pad8(n), r.len())
	}
	p := r.take(pad8(n))[flowRemovedOXSLen:n]
	for len(p) > 0 {
		if len(p) < 4 {
			return errorf(OFPBMC_BAD_LEN, "partial %d-byte OXS header", len(p))
		}
		h := binary.BigEndian.Uint32(p)
		hl, plen := 4, int(h&0xff)
		if h>>16 == 0xffff { // experimenter: 4 more header bytes counted in the length
			if len(p) < 8 || plen < 4 {
				return errorf(OFPBMC_BAD_LEN, "bad experimenter OXS entry %#x", h)
			}
			hl, plen = 8, plen-4
		}
		if len(p) < hl+plen {
			return errorf(OFPBMC_BAD_LEN, "OXS entry %#x needs %d bytes, have %d", h, hl+plen, len(p))
		}
		val := p[hl : hl+plen]
		p = p[hl+plen:]
		if hl != 4 {
			continue
		}
		switch h {
		case frOXSDuration:
			fr.DurationSec, fr.DurationNsec = binary.BigEndian.Uint32(val), binary.BigEndian.Uint32(val[4:])
		case frOXSPacketCount:
			fr.PacketCount = binary.BigEndian.Uint64(val)
		case frOXSByteCount:
			fr.ByteCount = binary.BigEndian.Uint64(val)
		}
	}
	return nil
}

// RawFor returns the raw type for the flow-removed's format in version v.
func (fr *FlowRemoved) RawFor(v uint8) (Raw, error) {
	switch fr.Format {
	case FormatOF10:
		return versionRange(v, RawOFPT10_FLOW_REMOVED)
	case FormatNXM:
		return RawNXT_FLOW_REMOVED, nil
	}
	if v == 2 {
		// The OpenFlow 1.1 standard match is not supported.
		return 0, errorf(OFPBRC_BAD_VERSION, "flow removed cannot be encoded in OpenFlow 1.1")
	}
	return versionRange(v, RawOFPT11_FLOW_REMOVED, RawOFPT15_FLOW_REMOVED)
}

func (fr *FlowRemoved) appendBody(b []byte, v uint8) ([]byte, error) {
	raw, err := fr.RawFor(v)
	if err != nil {
		return b, err
	}
	reason := FlowRemovedReasonFor(fr.Reason, v)
	switch raw {
	case RawOFPT10_FLOW_REMOVED:
		b = AppendOF10Match(b, &fr.Match)
		b = binary.BigEndian.AppendUint64(b, fr.Cookie)
		b = binary.BigEndian.AppendUint16(b, fr.Priority)
		b = append(b, reason, 0)
		b = binary.BigEndian.AppendUint32(b, fr.DurationSec)
		b = binary.BigEndian.AppendUint32(b, fr.DurationNsec)
		b = binary.BigEndian.AppendUint16(b, fr.IdleTimeout)
		b = append(b, 0, 0)
		b = binary.BigEndian.AppendUint64(b, fr.PacketCount)
		b = binary.BigEndian.AppendUint64(b, fr.ByteCount)
	case RawNXT_FLOW_REMOVED:
		b = binary.BigEndian.AppendUint64(b, fr.Cookie)
		b = binary.BigEndian.AppendUint16(b, fr.Priority)
		b = append(b, reason, fr.TableID+1)
		b = binary.BigEndian.AppendUint32(b, fr.DurationSec)
		b = binary.BigEndian.AppendUint32(b, fr.DurationNsec)
		b = binary.BigEndian.AppendUint16(b, fr.IdleTimeout)
		lenAt := len(b)
		b = append(b, 0, 0)
		b = binary.BigEndian.AppendUint64(b, fr.PacketCount)
		b = binary.BigEndian.AppendUint64(b, fr.ByteCount)
		start := len(b)
		b = AppendNXM(b, 0, &fr.Match, 0, 0)
		n := len(b) - start
		binary.BigEndian.PutUint16(b[lenAt:], uint16(n))
		b = appendZeros(b, pad8(n)-n)
	case RawOFPT11_FLOW_REMOVED:
		b = binary.BigEndian.AppendUint64(b, fr.Cookie)
		b = binary.BigEndian.AppendUint16(b, fr.Priority)
		b = append(b, reason, fr.TableID)
		b = binary.BigEndian.AppendUint32(b, fr.DurationSec)
		b = binary.BigEndian.AppendUint32(b, fr.DurationNsec)
		b = binary.BigEndian.AppendUint16(b, fr.IdleTimeout)
		b = binary.BigEndian.AppendUint16(b, fr.HardTimeout)
		b = binary.BigEndian.AppendUint64(b, fr.PacketCount)
		b = binary.BigEndian.AppendUint64(b, fr.ByteCount)
		if v == mf.OF11 {
			// What OpenFlow 1.1 cannot say is left out, as Open
			// vSwitch does: the switch reports a flow it holds.
			b = appendOF11Match(b, &fr.Match)
		} else {
			b = AppendOXMMatch(b, v, &fr.Match)
		}
	default:
		b = append(b, fr.TableID, reason)
		b = binary.BigEndian.AppendUint16(b, fr.Priority)
		b = binary.BigEndian.AppendUint16(b, fr.IdleTimeout)
		b = binary.BigEndian.AppendUint16(b, fr.HardTimeout)
		b = binary.BigEndian.AppendUint64(b, fr.Cookie)
		b = AppendOXMMatch(b, v, &fr.Match)
		start := len(b)
		b = append(b, 0, 0, 0, 0)
		if fr.DurationSec != ^uint32(0) {
			b = binary.BigEndian.AppendUint32(b, frOXSDuration)
			b = binary.BigEndian.AppendUint32(b, fr.DurationSec)
			b = binary.BigEndian.AppendUint32(b, fr.DurationNsec)
		}
		if fr.PacketCount != ^uint64(0) {
			b = binary.BigEndian.AppendUint32(b, frOXSPacketCount)
			b = binary.BigEndian.AppendUint64(b, fr.PacketCount)
		}
		if fr.ByteCount != ^uint64(0) {
			b = binary.BigEndian.AppendUint32(b, frOXSByteCount)
			b = binary.BigEndian.AppendUint64(b, fr.ByteCount)
		}
		n := len(b) - start
		binary.BigEndian.PutUint16(b[start+2:], uint16(n))
		b = appendZeros(b, pad8(n)-n)
	}
	return b, nil
}
