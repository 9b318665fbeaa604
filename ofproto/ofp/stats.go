// Multipart (stats) messages: description, flow, aggregate and the
// framing shared by every multipart reply (flags, splitting across
// messages). Port, port description and table statistics are in
// stats_port.go.

package ofp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// Multipart header flags (OFPSF_*).
const (
	StatsReqMore   = 1 // OFPSF_REQ_MORE: more requests follow
	StatsReplyMore = 1 // OFPSF_REPLY_MORE: more replies follow
)

func init() {
	for raw, dec := range map[Raw]decodeFunc{
		RawOFPST_DESC_REQUEST:        func(r *reader, _ uint8, _ Raw) (Message, error) { return &DescStatsRequest{Flags: r.statsFlags}, nil },
		RawOFPST_DESC_REPLY:          decodeDescStatsReply,
		RawOFPST10_FLOW_REQUEST:      decodeFlowStatsRequest,
		RawOFPST11_FLOW_REQUEST:      decodeFlowStatsRequest,
		RawNXST_FLOW_REQUEST:         decodeFlowStatsRequest,
		RawOFPST10_AGGREGATE_REQUEST: decodeFlowStatsRequest,
		RawOFPST11_AGGREGATE_REQUEST: decodeFlowStatsRequest,
		RawOFPST15_AGGREGATE_REQUEST: decodeFlowStatsRequest,
		RawNXST_AGGREGATE_REQUEST:    decodeFlowStatsRequest,
		RawOFPST10_FLOW_REPLY:        decodeFlowStatsReply,
		RawOFPST11_FLOW_REPLY:        decodeFlowStatsReply,
		RawOFPST13_FLOW_REPLY:        decodeFlowStatsReply,
		RawOFPST15_FLOW_REPLY:        decodeFlowStatsReply,
		RawNXST_FLOW_REPLY:           decodeFlowStatsReply,
		RawOFPST_AGGREGATE_REPLY:     decodeAggregateStatsReply,
		RawOFPST15_AGGREGATE_REPLY:   decodeAggregateStatsReply,
		RawNXST_AGGREGATE_REPLY:      decodeAggregateStatsReply,
		RawOFPST_TABLE_REQUEST:       func(r *reader, _ uint8, _ Raw) (Message, error) { return &TableStatsRequest{Flags: r.statsFlags}, nil },
		RawOFPST10_TABLE_REPLY:       decodeTableStatsReply,
		RawOFPST11_TABLE_REPLY:       decodeTableStatsReply,
		RawOFPST12_TABLE_REPLY:       decodeTableStatsReply,
		RawOFPST13_TABLE_REPLY:       decodeTableStatsReply,
		RawOFPST10_PORT_REQUEST:      decodePortStatsRequest,
		RawOFPST11_PORT_REQUEST:      decodePortStatsRequest,
		RawOFPST10_PORT_REPLY:        decodePortStatsReply,
		RawOFPST11_PORT_REPLY:        decodePortStatsReply,
		RawOFPST13_PORT_REPLY:        decodePortStatsReply,
		RawOFPST14_PORT_REPLY:        decodePortStatsReply,
		RawOFPST10_PORT_DESC_REQUEST: decodePortDescRequest,
		RawOFPST15_PORT_DESC_REQUEST: decodePortDescRequest,
		RawOFPST10_PORT_DESC_REPLY:   decodePortDescReply,
		RawOFPST11_PORT_DESC_REPLY:   decodePortDescReply,
		RawOFPST14_PORT_DESC_REPLY:   decodePortDescReply,
		RawOFPT10_PORT_STATUS:        decodePortStatus,
		RawOFPT11_PORT_STATUS:        decodePortStatus,
		RawOFPT14_PORT_STATUS:        decodePortStatus,
	} {
		decoders[raw] = dec
	}
}

// statsHeaderFlags returns the flags of the multipart header of message b
// of type raw (0 if raw is not a multipart message). identify has checked
// that b holds the headers.
func statsHeaderFlags(b []byte, raw Raw) uint16 {
	switch rawTable[raw].kind {
	case kindOFPST, kindNXST, kindONFST:
		return binary.BigEndian.Uint16(b[10:])
	}
	return 0
}

// multipartMsg is a multipart message whose flags go in its stats header.
type multipartMsg interface {
	multipartFlags() uint16
}

func multipartFlags(m Message) uint16 {
	if mp, ok := m.(multipartMsg); ok {
		return mp.multipartFlags()
	}
	return 0
}

// multipartReply is a multipart reply whose body is a sequence of entries
// that may be split across messages.
type multipartReply interface {
	Message
	multipartMsg
	numEntries() int
	appendEntry(b []byte, v uint8, i int) ([]byte, error)
}

func appendEntries(b []byte, v uint8, m multipartReply) ([]byte, error) {
	var err error
	for i := 0; i < m.numEntries(); i++ {
		if b, err = m.appendEntry(b, v, i); err != nil {
			return b, err
		}
	}
	return b, nil
}

// EncodeReplies encodes m for version v as one or more messages. A
// multipart reply made of entries (FlowStatsReply, PortStatsReply,
// PortDescReply, TableStatsReply) whose body does not fit in one 64 KiB
// message is split as Open vSwitch does (ofpmp_postappend): each message
// is filled with as many whole entries as fit, and every message but the
// last carries OFPSF_REPLY_MORE; an entry no message can hold is
// OFPBRC_BAD_LEN. Other messages encode as Encode does.
func EncodeReplies(v uint8, xid uint32, m Message) ([][]byte, error) {
	if _, ok := m.(multipartReply); !ok {
		b, err := Encode(nil, v, xid, m)
		if err != nil {
			return nil, err
		}
		return [][]byte{b}, nil
	}
	var out [][]byte
	w, err := NewMultipartWriter(v, xid, m, func(b []byte) error {
		out = append(out, b)
		return nil
	})
	if err == nil {
		err = w.Add(m)
	}
	if err == nil && w.Excluded() > 0 {
		// A caller of the whole reply cannot warn about what is left
		// out: it gets the error.
		return nil, errorf(OFPBRC_BAD_LEN, "%w: %d of the reply's entries", errEntryTooLong, w.Excluded())
	}
	if err == nil {
		err = w.Close()
	}
	return out, err
}

// MultipartWriter encodes a multipart reply of many entries message by
// message, from batches of entries, and hands each message to a send
// function as soon as it is full: a reply of 100,000 flows never exists
// whole in memory. It splits exactly as EncodeReplies.
type MultipartWriter struct {
	v      uint8
	flags  uint16
	what   string
	hdr    []byte
	cur    []byte
	send   func([]byte) error
	closed bool
	// excluded counts the entries too large for any message, which Add
	// leaves out (Open vSwitch excludes them from the reply and warns).
	excluded int
}

// Excluded returns how many entries Add left out because no message could
// hold one (an entry's length is 16 bits): the caller warns, as Open
// vSwitch does for a flow whose actions do not fit.
func (w *MultipartWriter) Excluded() int { return w.excluded }

// NewMultipartWriter starts a reply of m's type (m's entries are not
// added; see Add) for version v and transaction xid. send receives each
// finished message; it may keep it.
func NewMultipartWriter(v uint8, xid uint32, m Message, send func([]byte) error) (*MultipartWriter, error) {
	mr, ok := m.(multipartReply)
	if !ok {
		return nil, fmt.Errorf("ofp: %T is not a multipart reply of entries", m)
	}
	raw, err := m.RawFor(v)
	if err != nil {
		return nil, err
	}
	flags := mr.multipartFlags()
	hdr := appendHeaders(nil, raw, v, xid, flags|StatsReplyMore)
	return &MultipartWriter{v: v, flags: flags, what: rawTable[raw].name, hdr: hdr,
		cur: append([]byte(nil), hdr...), send: send}, nil
}

// Add appends m's entries (m is of the writer's type).
func (w *MultipartWriter) Add(m Message) error {
	mr, ok := m.(multipartReply)
	if !ok {
		return fmt.Errorf("ofp: %T is not a multipart reply of entries", m)
	}
	var err error
	for i := 0; i < mr.numEntries(); i++ {
		start := len(w.cur)
		if w.cur, err = mr.appendEntry(w.cur, w.v, i); err != nil {
			if !errors.Is(err, errEntryTooLong) {
				return err
			}
			w.excluded++
			continue
		}
		if len(w.cur) <= maxMessageLen {
			continue
		}
		entry := w.cur[start:]
		if len(w.hdr)+len(entry) > maxMessageLen {
			w.cur = w.cur[:start]
			w.excluded++
			continue
		}
		next := append(append(make([]byte, 0, maxMessageLen), w.hdr...), entry...)
		if err := w.send(finishMsg(w.cur[:start])); err != nil {
			return err
		}
		w.cur = next
	}
	return nil
}

// Close sends the last message, without OFPSF_REPLY_MORE.
func (w *MultipartWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	last := finishMsg(w.cur)
	binary.BigEndian.PutUint16(last[10:], w.flags)
	return w.send(last)
}

func finishMsg(b []byte) []byte {
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	return b
}

// takeEntry takes the next entry of a multipart body whose 16-bit length
// is at offset lenOff, checking it against min and the bytes left.
func takeEntry(r *reader, lenOff, min int, what string) (*reader, error) {
	if r.len() < lenOff+2 {
		return nil, errorf(OFPBRC_BAD_LEN, "%s: %d trailing bytes", what, r.len())
	}
	n := int(binary.BigEndian.Uint16(r.b[r.off+lenOff:]))
	if n < min || n > r.len() {
		return nil, errorf(OFPBRC_BAD_LEN, "%s of length %d (minimum %d, %d bytes left)", what, n, min, r.len())
	}
	return newReader(r.take(n), what), nil
}

func putLen16(b []byte, at int) {
	binary.BigEndian.PutUint16(b[at:], uint16(len(b)-at))
}

// cString returns the NUL-terminated string in a fixed-size field.
func cString(p []byte) string {
	if i := bytes.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	return string(p)
}

// appendCString appends s as an n-byte NUL-padded field, truncated to
// n-1 bytes as Open vSwitch's ovs_strlcpy does.
func appendCString(b []byte, s string, n int) []byte {
	if len(s) > n-1 {
		s = s[:n-1]
	}
	b = append(b, s...)
	return appendZeros(b, n-len(s))
}

// DescStatsRequest is OFPST_DESC_REQUEST (OFPMP_DESC).
type DescStatsRequest struct{ Flags uint16 }

func (*DescStatsRequest) RawFor(v uint8) (Raw, error)                  { return versionRange(v, RawOFPST_DESC_REQUEST) }
func (m *DescStatsRequest) multipartFlags() uint16                     { return m.Flags }
func (*DescStatsRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }

// DescStatsReply is OFPST_DESC_REPLY: the switch's description strings.
type DescStatsReply struct {
	Flags                                      uint16
	MfrDesc, HWDesc, SWDesc, SerialNum, DPDesc string
}

const (
	descStrLen   = 256
	serialNumLen = 32
)

func decodeDescStatsReply(r *reader, _ uint8, _ Raw) (Message, error) {
	return &DescStatsReply{
		Flags:     r.statsFlags,
		MfrDesc:   cString(r.take(descStrLen)),
		HWDesc:    cString(r.take(descStrLen)),
		SWDesc:    cString(r.take(descStrLen)),
		SerialNum: cString(r.take(serialNumLen)),
		DPDesc:    cString(r.take(descStrLen)),
	}, nil
}

func (*DescStatsReply) RawFor(v uint8) (Raw, error) { return versionRange(v, RawOFPST_DESC_REPLY) }
func (m *DescStatsReply) multipartFlags() uint16    { return m.Flags }
func (m *DescStatsReply) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = appendCString(b, m.MfrDesc, descStrLen)
	b = appendCString(b, m.HWDesc, descStrLen)
	b = appendCString(b, m.SWDesc, descStrLen)
	b = appendCString(b, m.SerialNum, serialNumLen)
	return appendCString(b, m.DPDesc, descStrLen), nil
}

// FlowStatsRequest is a flow or aggregate statistics request in any
// format: OFPST10_FLOW/AGGREGATE (FormatOF10), NXST_FLOW/AGGREGATE
// (FormatNXM, OpenFlow 1.0 only, cookie as the NXM cookie pseudo-field)
// or OFPST11+_FLOW/AGGREGATE (FormatOXM). OutPort is as on the wire for
// the format (16-bit for OF1.0/NXM, OFPP_NONE = 0xffff; 32-bit for OXM).
type FlowStatsRequest struct {
	Flags              uint16
	Format             FlowFormat
	Aggregate          bool
	TableID            uint8
	OutPort            uint32
	OutGroup           uint32 // OXM only
	Cookie, CookieMask uint64 // OXM, or the NXM cookie pseudo-field
	Match              mf.Match
}

func decodeFlowStatsRequest(r *reader, v uint8, raw Raw) (Message, error) {
	m := &FlowStatsRequest{Flags: r.statsFlags}
	switch raw {
	case RawOFPST10_AGGREGATE_REQUEST, RawOFPST11_AGGREGATE_REQUEST, RawOFPST15_AGGREGATE_REQUEST, RawNXST_AGGREGATE_REQUEST:
		m.Aggregate = true
	}
	switch raw {
	case RawOFPST10_FLOW_REQUEST, RawOFPST10_AGGREGATE_REQUEST:
		m.Format = FormatOF10
		if err := DecodeOF10Match(r.take(ofp10MatchLen), &m.Match); err != nil {
			return nil, err
		}
		Normalize(&m.Match)
		m.TableID = r.u8()
		r.skip(1)
		m.OutPort = uint32(r.u16())
	case RawNXST_FLOW_REQUEST, RawNXST_AGGREGATE_REQUEST:
		m.Format = FormatNXM
		m.OutPort = uint32(r.u16())
		n := int(r.u16())
		m.TableID = r.u8()
		r.skip(3)
		if r.Err() != nil {
			return nil, r.Err()
		}
		if pad8(n) > r.len() {
			return nil, errorf(OFPBMC_BAD_LEN, "nx_match length %d (padded %d) exceeds %d remaining bytes", n, pad8(n), r.len())
		}
		p := r.take(pad8(n))
		var ck [2]uint64
		if err := DecodeNXM(p[:n], true, &m.Match, &ck); err != nil {
			return nil, err
		}
		m.Cookie, m.CookieMask = ck[0], ck[1]
	default:
		m.Format = FormatOXM
		m.TableID = r.u8()
		r.skip(3)
		m.OutPort, m.OutGroup = r.u32(), r.u32()
		r.skip(4)
		m.Cookie, m.CookieMask = r.u64(), r.u64()
		if r.Err() != nil {
			return nil, r.Err()
		}
		n, err := DecodeOXMMatch(r.b[r.off:], &m.Match)
		if err != nil {
			return nil, err
		}
		r.skip(n)
	}
	// Open vSwitch ignores bytes after the match; so does gvs.
	r.rest()
	return m, nil
}

// RawFor returns the raw type for the request's format and kind in v.
func (m *FlowStatsRequest) RawFor(v uint8) (Raw, error) {
	switch {
	case m.Format == FormatOF10 && m.Aggregate:
		return versionRange(v, RawOFPST10_AGGREGATE_REQUEST)
	case m.Format == FormatOF10:
		return versionRange(v, RawOFPST10_FLOW_REQUEST)
	case m.Format == FormatNXM && m.Aggregate:
		return versionRange(v, RawNXST_AGGREGATE_REQUEST)
	case m.Format == FormatNXM:
		return versionRange(v, RawNXST_FLOW_REQUEST)
	case m.Aggregate:
		return versionRange(v, RawOFPST11_AGGREGATE_REQUEST, RawOFPST15_AGGREGATE_REQUEST)
	}
	return versionRange(v, RawOFPST11_FLOW_REQUEST)
}

func (m *FlowStatsRequest) multipartFlags() uint16 { return m.Flags }

func (m *FlowStatsRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	switch m.Format {
	case FormatOF10:
		b = AppendOF10Match(b, &m.Match)
		b = append(b, m.TableID, 0)
		b = binary.BigEndian.AppendUint16(b, uint16(m.OutPort))
	case FormatNXM:
		b = binary.BigEndian.AppendUint16(b, uint16(m.OutPort))
		lenAt := len(b)
		b = append(b, 0, 0, m.TableID, 0, 0, 0)
		start := len(b)
		b = AppendNXM(b, 0, &m.Match, m.Cookie, m.CookieMask)
		n := len(b) - start
		binary.BigEndian.PutUint16(b[lenAt:], uint16(n))
		b = appendZeros(b, pad8(n)-n)
	default:
		b = append(b, m.TableID, 0, 0, 0)
		b = binary.BigEndian.AppendUint32(b, m.OutPort)
		b = binary.BigEndian.AppendUint32(b, m.OutGroup)
		b = append(b, 0, 0, 0, 0)
		b = binary.BigEndian.AppendUint64(b, m.Cookie)
		b = binary.BigEndian.AppendUint64(b, m.CookieMask)
		if v == mf.OF11 {
			var err error
			if b, err = AppendOF11Match(b, &m.Match); err != nil {
				return b, err
			}
		} else {
			b = AppendOXMMatch(b, v, &m.Match)
		}
	}
	return b, nil
}

// FlowStats is one flow's entry in a flow statistics reply.
type FlowStats struct {
	TableID                   uint8
	DurationSec, DurationNsec uint32
	Priority                  uint16
	IdleTimeout, HardTimeout  uint16
	Flags                     uint16 // OF1.3+ (OFPFF_*)
	Importance                uint16 // OF1.4+
	// IdleAge and HardAge are seconds since the flow last matched and
	// since it was added or modified: NXST_FLOW only (IdleAge also as the
	// OF1.5 idle_time statistic); -1 when absent.
	IdleAge, HardAge               int
	Cookie, PacketCount, ByteCount uint64
	Match                          mf.Match
	// Actions are the encoded OF1.0/NXM actions or OF1.1+ instructions
	// for the reply's version.
	Actions []byte
}

// FlowStatsReply is a flow statistics reply: OFPST10_FLOW_REPLY
// (FormatOF10), NXST_FLOW_REPLY (FormatNXM) or OFPST11/13/15_FLOW_REPLY
// (FormatOXM). Encode fails (OFPBRC_BAD_LEN) when the entries exceed one
// message; EncodeReplies splits them.
type FlowStatsReply struct {
	Flags  uint16
	Format FlowFormat
	Stats  []FlowStats
}

// Fixed sizes of a flow stats entry before its match.
const (
	ofp10FlowStatsLen = 88
	nxFlowStatsLen    = 48
	ofp11FlowStatsLen = 48
	ofp15FlowDescLen  = 24
)

func decodeFlowStatsReply(r *reader, v uint8, raw Raw) (Message, error) {
	m := &FlowStatsReply{Flags: r.statsFlags, Format: FormatOXM}
	switch raw {
	case RawOFPST10_FLOW_REPLY:
		m.Format = FormatOF10
	case RawNXST_FLOW_REPLY:
		m.Format = FormatNXM
	}
	for r.len() > 0 {
		fs := FlowStats{IdleAge: -1, HardAge: -1}
		if err := decodeFlowStats(r, v, raw, &fs); err != nil {
			return nil, err
		}
		m.Stats = append(m.Stats, fs)
	}
	return m, nil
}

// decodeFlowStats decodes one entry in the order Open vSwitch does, so
// that a malformed entry fails with its error: the fixed part and the
// claimed length (OFPBRC_BAD_LEN), the match and OpenFlow 1.5 statistics
// read from the rest of the body (OFPBMC_*), then the actions
// (OFPBRC_BAD_LEN) or instructions (OFPBIC_BAD_LEN) the length leaves.
func decodeFlowStats(r *reader, v uint8, raw Raw, fs *FlowStats) error {
	fixed, actErr := ofp11FlowStatsLen, OFPBIC_BAD_LEN
	switch raw {
	case RawOFPST10_FLOW_REPLY:
		fixed, actErr = ofp10FlowStatsLen, OFPBRC_BAD_LEN
	case RawNXST_FLOW_REPLY:
		fixed, actErr = nxFlowStatsLen, OFPBRC_BAD_LEN
	case RawOFPST15_FLOW_REPLY:
		fixed = ofp15FlowDescLen
	}
	if r.len() < fixed {
		return errorf(OFPBRC_BAD_LEN, "flow stats: %d leftover bytes", r.len())
	}
	start := r.off
	length := int(r.u16())
	if length < fixed {
		return errorf(OFPBRC_BAD_LEN, "flow stats entry claims length %d, below %d", length, fixed)
	}
	switch raw {
	case RawOFPST10_FLOW_REPLY:
		fs.TableID = r.u8()
		r.skip(1)
		if err := DecodeOF10Match(r.take(ofp10MatchLen), &fs.Match); err != nil {
			return err
		}
		Normalize(&fs.Match)
		fs.DurationSec, fs.DurationNsec = r.u32(), r.u32()
		fs.Priority, fs.IdleTimeout, fs.HardTimeout = r.u16(), r.u16(), r.u16()
		r.skip(6)
		fs.Cookie, fs.PacketCount, fs.ByteCount = r.u64(), r.u64(), r.u64()
	case RawNXST_FLOW_REPLY:
		fs.TableID = r.u8()
		r.skip(1)
		fs.DurationSec, fs.DurationNsec = r.u32(), r.u32()
		fs.Priority, fs.IdleTimeout, fs.HardTimeout = r.u16(), r.u16(), r.u16()
		n := int(r.u16())
		// Ages go on the wire plus one, with 0 meaning unknown.
		fs.IdleAge, fs.HardAge = int(r.u16())-1, int(r.u16())-1
		fs.Cookie, fs.PacketCount, fs.ByteCount = r.u64(), r.u64(), r.u64()
		if length < fixed+pad8(n) {
			return errorf(OFPBRC_BAD_LEN, "NXST_FLOW entry with match_len %d claims length %d", n, length)
		}
		if pad8(n) > r.len() {
			return errorf(OFPBMC_BAD_LEN, "nx_match length %d (padded %d) exceeds %d remaining bytes", n, pad8(n), r.len())
		}
		p := r.take(pad8(n))
		if err := DecodeNXM(p[:n], true, &fs.Match, nil); err != nil {
			return err
		}
	case RawOFPST15_FLOW_REPLY:
		r.skip(2)
		fs.TableID = r.u8()
		r.skip(1)
		fs.Priority, fs.IdleTimeout, fs.HardTimeout = r.u16(), r.u16(), r.u16()
		fs.Flags, fs.Importance = r.u16(), r.u16()
		fs.Cookie = r.u64()
		n, err := DecodeOXMMatch(r.b[r.off:], &fs.Match)
		if err != nil {
			return err
		}
		r.skip(n)
		var st oxsStats
		if err := st.decode(r); err != nil {
			return err
		}
		fs.DurationSec, fs.DurationNsec = st.durationSec, st.durationNsec
		fs.PacketCount, fs.ByteCount = st.packets, st.bytes
		if st.has&(1<<oxsIdleTime) != 0 {
			fs.IdleAge = int(st.idleSec)
		}
	default:
		fs.TableID = r.u8()
		r.skip(1)
		fs.DurationSec, fs.DurationNsec = r.u32(), r.u32()
		fs.Priority, fs.IdleTimeout, fs.HardTimeout = r.u16(), r.u16(), r.u16()
		fs.Flags, fs.Importance = r.u16(), r.u16()
		// Padding before OF1.3 (flags) and OF1.4 (importance): ignored.
		if v < mf.OF13 {
			fs.Flags = 0
		}
		if v < mf.OF14 {
			fs.Importance = 0
		}
		r.skip(2)
		fs.Cookie, fs.PacketCount, fs.ByteCount = r.u64(), r.u64(), r.u64()
		n, err := DecodeOXMMatch(r.b[r.off:], &fs.Match)
		if err != nil {
			return err
		}
		r.skip(n)
	}
	if r.Err() != nil {
		return r.Err()
	}
	n := length - (r.off - start)
	if n < 0 || n > r.len() || n%8 != 0 {
		return errorf(actErr, "flow stats entry of length %d leaves %d bytes of actions, %d left", length, n, r.len())
	}
	if n > 0 {
		fs.Actions = append([]byte(nil), r.take(n)...)
	}
	return nil
}

// RawFor returns the raw type for the reply's format in version v.
func (m *FlowStatsReply) RawFor(v uint8) (Raw, error) {
	switch m.Format {
	case FormatOF10:
		return versionRange(v, RawOFPST10_FLOW_REPLY)
	case FormatNXM:
		return versionRange(v, RawNXST_FLOW_REPLY)
	}
	return versionRange(v, RawOFPST11_FLOW_REPLY, RawOFPST13_FLOW_REPLY, RawOFPST15_FLOW_REPLY)
}

func (m *FlowStatsReply) multipartFlags() uint16 { return m.Flags }
func (m *FlowStatsReply) numEntries() int        { return len(m.Stats) }
func (m *FlowStatsReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(b, v, m)
}

// nxAge encodes an NXST_FLOW age: plus one, 0 when unknown, saturating.
func nxAge(age int) uint16 {
	switch {
	case age < 0:
		return 0
	case age >= 0xffff:
		return 0xffff
	}
	return uint16(age + 1)
}

func (m *FlowStatsReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	fs := &m.Stats[i]
	start := len(b)
	b = append(b, 0, 0)
	switch {
	case m.Format == FormatOF10:
		b = append(b, fs.TableID, 0)
		b = AppendOF10Match(b, &fs.Match)
		b = binary.BigEndian.AppendUint32(b, fs.DurationSec)
		b = binary.BigEndian.AppendUint32(b, fs.DurationNsec)
		b = binary.BigEndian.AppendUint16(b, fs.Priority)
		b = binary.BigEndian.AppendUint16(b, fs.IdleTimeout)
		b = binary.BigEndian.AppendUint16(b, fs.HardTimeout)
		b = append(b, 0, 0, 0, 0, 0, 0)
		b = binary.BigEndian.AppendUint64(b, fs.Cookie)
		b = binary.BigEndian.AppendUint64(b, fs.PacketCount)
		b = binary.BigEndian.AppendUint64(b, fs.ByteCount)
	case m.Format == FormatNXM:
		b = append(b, fs.TableID, 0)
		b = binary.BigEndian.AppendUint32(b, fs.DurationSec)
		b = binary.BigEndian.AppendUint32(b, fs.DurationNsec)
		b = binary.BigEndian.AppendUint16(b, fs.Priority)
		b = binary.BigEndian.AppendUint16(b, fs.IdleTimeout)
		b = binary.BigEndian.AppendUint16(b, fs.HardTimeout)
		lenAt := len(b)
		b = append(b, 0, 0)
		b = binary.BigEndian.AppendUint16(b, nxAge(fs.IdleAge))
		b = binary.BigEndian.AppendUint16(b, nxAge(fs.HardAge))
		b = binary.BigEndian.AppendUint64(b, fs.Cookie)
		b = binary.BigEndian.AppendUint64(b, fs.PacketCount)
		b = binary.BigEndian.AppendUint64(b, fs.ByteCount)
		mstart := len(b)
		b = AppendNXM(b, 0, &fs.Match, 0, 0)
		n := len(b) - mstart
		binary.BigEndian.PutUint16(b[lenAt:], uint16(n))
		b = appendZeros(b, pad8(n)-n)
	case v >= mf.OF15:
		b = append(b, 0, 0, fs.TableID, 0)
		b = binary.BigEndian.AppendUint16(b, fs.Priority)
		b = binary.BigEndian.AppendUint16(b, fs.IdleTimeout)
		b = binary.BigEndian.AppendUint16(b, fs.HardTimeout)
		b = binary.BigEndian.AppendUint16(b, fs.Flags)
		b = binary.BigEndian.AppendUint16(b, fs.Importance)
		b = binary.BigEndian.AppendUint64(b, fs.Cookie)
		b = AppendOXMMatch(b, v, &fs.Match)
		st := oxsStats{has: 1<<oxsDuration | 1<<oxsIdleTime | 1<<oxsPacketCount | 1<<oxsByteCount,
			durationSec: fs.DurationSec, durationNsec: fs.DurationNsec, packets: fs.PacketCount, bytes: fs.ByteCount}
		if fs.IdleAge > 0 {
			st.idleSec = uint32(fs.IdleAge)
		}
		b = st.append(b)
	default:
		b = append(b, fs.TableID, 0)
		b = binary.BigEndian.AppendUint32(b, fs.DurationSec)
		b = binary.BigEndian.AppendUint32(b, fs.DurationNsec)
		b = binary.BigEndian.AppendUint16(b, fs.Priority)
		b = binary.BigEndian.AppendUint16(b, fs.IdleTimeout)
		b = binary.BigEndian.AppendUint16(b, fs.HardTimeout)
		var flags, imp uint16
		if v >= mf.OF13 {
			flags = fs.Flags
		}
		if v >= mf.OF14 {
			imp = fs.Importance
		}
		b = binary.BigEndian.AppendUint16(b, flags)
		b = binary.BigEndian.AppendUint16(b, imp)
		b = append(b, 0, 0)
		b = binary.BigEndian.AppendUint64(b, fs.Cookie)
		b = binary.BigEndian.AppendUint64(b, fs.PacketCount)
		b = binary.BigEndian.AppendUint64(b, fs.ByteCount)
		b = AppendOXMMatch(b, v, &fs.Match)
	}
	b = append(b, fs.Actions...)
	if len(b)-start > maxMessageLen {
		return b[:start], errorf(OFPBRC_BAD_LEN, "%w: flow stats entry of %d bytes", errEntryTooLong, len(b)-start)
	}
	putLen16(b, start)
	return b, nil
}

// errEntryTooLong is what an entry that no message can hold wraps: a
// MultipartWriter leaves such an entry out (Excluded).
var errEntryTooLong = errors.New("entry too long for a message")

// AggregateStatsReply is OFPST_AGGREGATE_REPLY (FormatOF10 or FormatOXM;
// OFPST15_AGGREGATE_REPLY in OpenFlow 1.5) or NXST_AGGREGATE_REPLY
// (FormatNXM).
type AggregateStatsReply struct {
	Flags                  uint16
	Format                 FlowFormat
	PacketCount, ByteCount uint64
	FlowCount              uint32
}

func decodeAggregateStatsReply(r *reader, v uint8, raw Raw) (Message, error) {
	m := &AggregateStatsReply{Flags: r.statsFlags, Format: FormatOXM}
	switch {
	case raw == RawNXST_AGGREGATE_REPLY:
		m.Format = FormatNXM
	case v == mf.OF10:
		m.Format = FormatOF10
	}
	if raw == RawOFPST15_AGGREGATE_REPLY {
		var st oxsStats
		if err := st.decode(r); err != nil {
			return nil, err
		}
		m.PacketCount, m.ByteCount, m.FlowCount = st.packets, st.bytes, st.flowCount
		r.rest()
		return m, nil
	}
	m.PacketCount, m.ByteCount, m.FlowCount = r.u64(), r.u64(), r.u32()
	r.skip(4)
	return m, nil
}

// RawFor returns the raw type for the reply's format in version v.
func (m *AggregateStatsReply) RawFor(v uint8) (Raw, error) {
	if m.Format == FormatNXM {
		return versionRange(v, RawNXST_AGGREGATE_REPLY)
	}
	return versionRange(v, RawOFPST_AGGREGATE_REPLY, RawOFPST15_AGGREGATE_REPLY)
}

func (m *AggregateStatsReply) multipartFlags() uint16 { return m.Flags }
func (m *AggregateStatsReply) appendBody(b []byte, v uint8) ([]byte, error) {
	if v >= mf.OF15 && m.Format != FormatNXM {
		st := oxsStats{has: 1<<oxsPacketCount | 1<<oxsByteCount | 1<<oxsFlowCount,
			packets: m.PacketCount, bytes: m.ByteCount, flowCount: m.FlowCount}
		return st.append(b), nil
	}
	b = binary.BigEndian.AppendUint64(b, m.PacketCount)
	b = binary.BigEndian.AppendUint64(b, m.ByteCount)
	b = binary.BigEndian.AppendUint32(b, m.FlowCount)
	return append(b, 0, 0, 0, 0), nil
}

// OpenFlow 1.5 statistics (ofp_oxs_stat): OXS fields of class
// OFPXSC_OPENFLOW_BASIC after a 4-byte header, padded to 8 bytes.
const (
	oxsClassBasic  = 0x8002
	oxsDuration    = 0 // sec, nsec
	oxsIdleTime    = 1 // sec, nsec
	oxsFlowCount   = 3 // 32 bits
	oxsPacketCount = 4
	oxsByteCount   = 5
)

type oxsStats struct {
	has                       uint8 // bit per OXS field present
	durationSec, durationNsec uint32
	idleSec, idleNsec         uint32
	flowCount                 uint32
	packets, bytes            uint64
}

// oxsOrder is the order Open vSwitch emits the fields in.
var oxsOrder = [...]uint8{oxsDuration, oxsIdleTime, oxsPacketCount, oxsByteCount, oxsFlowCount}

var oxsLen = [...]uint8{oxsDuration: 8, oxsIdleTime: 8, oxsFlowCount: 4, oxsPacketCount: 8, oxsByteCount: 8}

func (s *oxsStats) append(b []byte) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	for _, f := range oxsOrder {
		if s.has&(1<<f) == 0 {
			continue
		}
		b = binary.BigEndian.AppendUint16(b, oxsClassBasic)
		b = append(b, f<<1, oxsLen[f])
		switch f {
		case oxsDuration:
			b = binary.BigEndian.AppendUint32(b, s.durationSec)
			b = binary.BigEndian.AppendUint32(b, s.durationNsec)
		case oxsIdleTime:
			b = binary.BigEndian.AppendUint32(b, s.idleSec)
			b = binary.BigEndian.AppendUint32(b, s.idleNsec)
		case oxsFlowCount:
			b = binary.BigEndian.AppendUint32(b, s.flowCount)
		case oxsPacketCount:
			b = binary.BigEndian.AppendUint64(b, s.packets)
		case oxsByteCount:
			b = binary.BigEndian.AppendUint64(b, s.bytes)
		}
	}
	n := len(b) - start
	binary.BigEndian.PutUint16(b[start+2:], uint16(n))
	return appendZeros(b, pad8(n)-n)
}

func (s *oxsStats) decode(r *reader) error {
	r.skip(2) // reserved
	n := int(r.u16())
	if r.Err() != nil {
		return r.Err()
	}
	if n < 4 || pad8(n)-4 > r.len() {
		return errorf(OFPBMC_BAD_LEN, "ofp_oxs_stat length %d with %d bytes left", n, r.len()+4)
	}
	p := newReader(r.take(pad8(n) - 4)[:n-4], "ofp_oxs_stat")
	for p.len() > 0 {
		class, fb, l := p.u16(), p.u8(), int(p.u8())
		v := p.take(l)
		if p.Err() != nil {
			return p.Err()
		}
		f := fb >> 1
		if class != oxsClassBasic || fb&1 != 0 || int(f) >= len(oxsLen) || oxsLen[f] == 0 || l != int(oxsLen[f]) {
			continue // Unknown statistics are skipped.
		}
		s.has |= 1 << f
		switch f {
		case oxsDuration:
			s.durationSec, s.durationNsec = binary.BigEndian.Uint32(v), binary.BigEndian.Uint32(v[4:])
		case oxsIdleTime:
			s.idleSec, s.idleNsec = binary.BigEndian.Uint32(v), binary.BigEndian.Uint32(v[4:])
		case oxsFlowCount:
			s.flowCount = binary.BigEndian.Uint32(v)
		case oxsPacketCount:
			s.packets = binary.BigEndian.Uint64(v)
		case oxsByteCount:
			s.bytes = binary.BigEndian.Uint64(v)
		}
	}
	return nil
}
