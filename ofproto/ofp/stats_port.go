// Ports in every version's form (ofp10_phy_port, ofp11_port, ofp14_port
// with properties), port status, port and table statistics.

package ofp

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// Port status reasons (OFPPR_*).
const (
	PortAdd    = 0
	PortDelete = 1
	PortModify = 2
)

// appendPort16 appends the OpenFlow 1.0 (16-bit) form of 32-bit port p
// (PortFromOF11 in packet.go maps it as Open vSwitch does).
func appendPort16(b []byte, p uint32) ([]byte, error) {
	p16, err := PortFromOF11(p)
	if err != nil {
		return b, err
	}
	return binary.BigEndian.AppendUint16(b, p16), nil
}

// Port sizes and the OF1.4 ethernet port property.
const (
	ofp10PortLen       = 48
	ofp11PortLen       = 64
	ofp14PortLen       = 40
	ofp14PortEthType   = 0 // OFPPDPT14_ETHERNET
	ofp14PortEthLen    = 32
	ofp14PortStatsLen  = 80
	ofp14PortStatsEth  = 0 // OFPPSPT14_ETHERNET
	ofp14PortStatsELen = 40
)

// decodePort decodes one port description in version v's form (see
// appendPort). PortNo is always the 32-bit form.
func decodePort(r *reader, v uint8, p *Port) error {
	switch {
	case v == mf.OF10:
		e := newReader(r.take(ofp10PortLen), "ofp10_phy_port")
		p.PortNo = PortToOF11(e.u16())
		copy(p.HWAddr[:], e.take(6))
		copy(p.Name[:], e.take(16))
		p.Config, p.State = e.u32(), e.u32()
		p.Curr, p.Advertised, p.Supported, p.Peer = e.u32(), e.u32(), e.u32(), e.u32()
		return firstErr(r.Err(), e.Err())
	case v < mf.OF14:
		e := newReader(r.take(ofp11PortLen), "ofp11_port")
		p.PortNo = e.u32()
		e.skip(4)
		copy(p.HWAddr[:], e.take(6))
		e.skip(2)
		copy(p.Name[:], e.take(16))
		p.Config, p.State = e.u32(), e.u32()
		p.Curr, p.Advertised, p.Supported, p.Peer = e.u32(), e.u32(), e.u32(), e.u32()
		p.CurrSpeed, p.MaxSpeed = e.u32(), e.u32()
		return firstErr(r.Err(), e.Err())
	}
	e, err := takeEntry(r, 4, ofp14PortLen, "ofp14_port")
	if err != nil {
		return err
	}
	p.PortNo = e.u32()
	e.skip(4)
	copy(p.HWAddr[:], e.take(6))
	e.skip(2)
	copy(p.Name[:], e.take(16))
	p.Config, p.State = e.u32(), e.u32()
	props := e.take(e.len())
	for len(props) > 0 {
		typ, rec, adv, err := nextProp(props)
		if err != nil {
			return err
		}
		props = props[adv:]
		if typ != ofp14PortEthType {
			continue // Other properties (optical, experimenter) are ignored.
		}
		if len(rec) != ofp14PortEthLen {
			return errorf(OFPBPC_BAD_LEN, "ofp14_port ethernet property of %d bytes", len(rec))
		}
		pr := newReader(rec[8:], "ofp14_port ethernet property")
		p.Curr, p.Advertised, p.Supported, p.Peer = pr.u32(), pr.u32(), pr.u32(), pr.u32()
		p.CurrSpeed, p.MaxSpeed = pr.u32(), pr.u32()
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// nextProp splits the next property (16-bit type and length, padded to
// 8 bytes) off p, returning the record without padding and the bytes it
// occupies with padding.
func nextProp(p []byte) (typ uint16, rec []byte, adv int, err error) {
	if len(p) < 4 {
		return 0, nil, 0, errorf(OFPBPC_BAD_LEN, "property header needs 4 bytes, have %d", len(p))
	}
	n := int(binary.BigEndian.Uint16(p[2:]))
	if n < 4 || pad8(n) > len(p) {
		return 0, nil, 0, errorf(OFPBPC_BAD_LEN, "property of length %d (padded %d) in %d bytes", n, pad8(n), len(p))
	}
	return binary.BigEndian.Uint16(p), p[:n], pad8(n), nil
}

// appendPort appends p as an ofp10_phy_port (OF1.0, 16-bit number),
// ofp11_port (OF1.1–1.3) or ofp14_port with an ethernet property
// (OF1.4+).
func appendPort(b []byte, v uint8, p *Port) ([]byte, error) {
	var err error
	switch {
	case v == mf.OF10:
		if b, err = appendPort16(b, p.PortNo); err != nil {
			return b, err
		}
		b = append(b, p.HWAddr[:]...)
		b = append(b, p.Name[:]...)
	case v < mf.OF14:
		b = binary.BigEndian.AppendUint32(b, p.PortNo)
		b = append(b, 0, 0, 0, 0)
		b = append(b, p.HWAddr[:]...)
		b = append(b, 0, 0)
		b = append(b, p.Name[:]...)
	default:
		b = binary.BigEndian.AppendUint32(b, p.PortNo)
		b = binary.BigEndian.AppendUint16(b, ofp14PortLen+ofp14PortEthLen)
		b = append(b, 0, 0)
		b = append(b, p.HWAddr[:]...)
		b = append(b, 0, 0)
		b = append(b, p.Name[:]...)
		b = binary.BigEndian.AppendUint32(b, p.Config)
		b = binary.BigEndian.AppendUint32(b, p.State)
		b = binary.BigEndian.AppendUint16(b, ofp14PortEthType)
		b = binary.BigEndian.AppendUint16(b, ofp14PortEthLen)
		b = append(b, 0, 0, 0, 0)
		for _, w := range [...]uint32{p.Curr, p.Advertised, p.Supported, p.Peer, p.CurrSpeed, p.MaxSpeed} {
			b = binary.BigEndian.AppendUint32(b, w)
		}
		return b, nil
	}
	for _, w := range [...]uint32{p.Config, p.State, p.Curr, p.Advertised, p.Supported, p.Peer} {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	if v != mf.OF10 {
		b = binary.BigEndian.AppendUint32(b, p.CurrSpeed)
		b = binary.BigEndian.AppendUint32(b, p.MaxSpeed)
	}
	return b, nil
}

// PortStatus is OFPT_PORT_STATUS. Desc.PortNo is the 32-bit form.
type PortStatus struct {
	Reason uint8 // PortAdd, PortDelete, PortModify
	Desc   Port
}

func decodePortStatus(r *reader, v uint8, _ Raw) (Message, error) {
	m := &PortStatus{Reason: r.u8()}
	r.skip(7)
	if err := decodePort(r, v, &m.Desc); err != nil {
		return nil, err
	}
	r.rest() // trailing bytes are ignored, as by Open vSwitch
	return m, nil
}

func (*PortStatus) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPT10_PORT_STATUS, RawOFPT11_PORT_STATUS, RawOFPT14_PORT_STATUS)
}

func (m *PortStatus) appendBody(b []byte, v uint8) ([]byte, error) {
	b = append(b, m.Reason, 0, 0, 0, 0, 0, 0, 0)
	return appendPort(b, v, &m.Desc)
}

// PortDescRequest is OFPST_PORT_DESC_REQUEST (OFPMP_PORT_DESC). PortNo
// (32-bit form) is on the wire in OpenFlow 1.5 only; earlier versions
// ask for every port and decode as PortAny.
type PortDescRequest struct {
	Flags  uint16
	PortNo uint32
}

func decodePortDescRequest(r *reader, v uint8, raw Raw) (Message, error) {
	m := &PortDescRequest{Flags: r.statsFlags, PortNo: PortAny}
	if raw == RawOFPST15_PORT_DESC_REQUEST {
		m.PortNo = r.u32()
		r.skip(4)
	}
	return m, nil
}

func (*PortDescRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST10_PORT_DESC_REQUEST, RawOFPST15_PORT_DESC_REQUEST)
}
func (m *PortDescRequest) multipartFlags() uint16 { return m.Flags }
func (m *PortDescRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	if v >= mf.OF15 {
		b = binary.BigEndian.AppendUint32(b, m.PortNo)
		b = append(b, 0, 0, 0, 0)
	}
	return b, nil
}

// PortDescReply is OFPST_PORT_DESC_REPLY: ports in the version's form,
// PortNo always the 32-bit form.
type PortDescReply struct {
	Flags uint16
	Ports []Port
}

func decodePortDescReply(r *reader, v uint8, _ Raw) (Message, error) {
	m := &PortDescReply{Flags: r.statsFlags}
	for r.len() > 0 {
		var p Port
		if err := decodePort(r, v, &p); err != nil {
			return nil, err
		}
		m.Ports = append(m.Ports, p)
	}
	return m, nil
}

func (*PortDescReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST10_PORT_DESC_REPLY, RawOFPST11_PORT_DESC_REPLY, RawOFPST14_PORT_DESC_REPLY)
}
func (m *PortDescReply) multipartFlags() uint16 { return m.Flags }
func (m *PortDescReply) numEntries() int        { return len(m.Ports) }
func (m *PortDescReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	return appendPort(b, v, &m.Ports[i])
}
func (m *PortDescReply) appendBody(b []byte, v uint8) ([]byte, error) { return appendEntries(b, v, m) }

// PortStatsRequest is OFPST_PORT_REQUEST. PortNo is the 32-bit form
// (PortAny for all ports); OpenFlow 1.0 carries it in 16 bits.
type PortStatsRequest struct {
	Flags  uint16
	PortNo uint32
}

func decodePortStatsRequest(r *reader, v uint8, _ Raw) (Message, error) {
	m := &PortStatsRequest{Flags: r.statsFlags}
	if v == mf.OF10 {
		m.PortNo = PortToOF11(r.u16())
		r.skip(6)
	} else {
		m.PortNo = r.u32()
		r.skip(4)
	}
	return m, nil
}

func (*PortStatsRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST10_PORT_REQUEST, RawOFPST11_PORT_REQUEST)
}
func (m *PortStatsRequest) multipartFlags() uint16 { return m.Flags }
func (m *PortStatsRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	if v == mf.OF10 {
		b, err := appendPort16(b, m.PortNo)
		return append(b, 0, 0, 0, 0, 0, 0), err
	}
	b = binary.BigEndian.AppendUint32(b, m.PortNo)
	return append(b, 0, 0, 0, 0), nil
}

// PortStats is one port's counters; all-ones means unavailable. Duration
// is on the wire in OpenFlow 1.3+ only.
type PortStats struct {
	PortNo                                 uint32
	RxPackets, TxPackets, RxBytes, TxBytes uint64
	RxDropped, TxDropped, RxErrors         uint64
	TxErrors, RxFrameErr, RxOverErr        uint64
	RxCRCErr, Collisions                   uint64
	DurationSec, DurationNsec              uint32
	// ExtraProps are the OpenFlow 1.4+ properties after the ethernet one
	// (Open vSwitch sends Intel experimenter properties with RFC 2819 and
	// custom counters), encoded with their padding; kept as on the wire.
	ExtraProps []byte
}

// PortStatsReply is OFPST_PORT_REPLY.
type PortStatsReply struct {
	Flags uint16
	Stats []PortStats
}

func decodePortStatsReply(r *reader, v uint8, _ Raw) (Message, error) {
	m := &PortStatsReply{Flags: r.statsFlags}
	for r.len() > 0 {
		var ps PortStats
		e := r
		if v >= mf.OF14 {
			var err error
			if e, err = takeEntry(r, 0, ofp14PortStatsLen, "ofp14_port_stats"); err != nil {
				return nil, err
			}
			e.skip(4)
			ps.PortNo = e.u32()
			ps.DurationSec, ps.DurationNsec = e.u32(), e.u32()
		} else if v == mf.OF10 {
			ps.PortNo = PortToOF11(e.u16())
			e.skip(6)
		} else {
			ps.PortNo = e.u32()
			e.skip(4)
		}
		for _, c := range [...]*uint64{&ps.RxPackets, &ps.TxPackets, &ps.RxBytes, &ps.TxBytes,
			&ps.RxDropped, &ps.TxDropped, &ps.RxErrors, &ps.TxErrors} {
			*c = e.u64()
		}
		switch {
		case v < mf.OF14:
			ps.RxFrameErr, ps.RxOverErr, ps.RxCRCErr, ps.Collisions = e.u64(), e.u64(), e.u64(), e.u64()
			if v == mf.OF13 {
				ps.DurationSec, ps.DurationNsec = e.u32(), e.u32()
			}
		default:
			ps.RxFrameErr, ps.RxOverErr, ps.RxCRCErr, ps.Collisions = ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)
			if err := decodePortStatsProps(e.take(e.len()), &ps); err != nil {
				return nil, err
			}
		}
		if r.Err() != nil || e.Err() != nil {
			return nil, firstErr(r.Err(), e.Err())
		}
		m.Stats = append(m.Stats, ps)
	}
	return m, nil
}

func decodePortStatsProps(props []byte, ps *PortStats) error {
	for len(props) > 0 {
		typ, rec, adv, err := nextProp(props)
		if err != nil {
			return err
		}
		if typ != ofp14PortStatsEth {
			ps.ExtraProps = append(ps.ExtraProps, props[:adv]...)
			props = props[adv:]
			continue
		}
		props = props[adv:]
		if len(rec) != ofp14PortStatsELen {
			return errorf(OFPBPC_BAD_LEN, "port stats ethernet property of %d bytes", len(rec))
		}
		pr := newReader(rec[8:], "port stats ethernet property")
		ps.RxFrameErr, ps.RxOverErr, ps.RxCRCErr, ps.Collisions = pr.u64(), pr.u64(), pr.u64(), pr.u64()
	}
	return nil
}

func (*PortStatsReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST10_PORT_REPLY, RawOFPST11_PORT_REPLY, RawOFPST13_PORT_REPLY, RawOFPST14_PORT_REPLY)
}
func (m *PortStatsReply) multipartFlags() uint16 { return m.Flags }
func (m *PortStatsReply) numEntries() int        { return len(m.Stats) }
func (m *PortStatsReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(b, v, m)
}

func (m *PortStatsReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	ps := &m.Stats[i]
	start := len(b)
	var err error
	switch {
	case v >= mf.OF14:
		b = append(b, 0, 0, 0, 0)
		b = binary.BigEndian.AppendUint32(b, ps.PortNo)
		b = binary.BigEndian.AppendUint32(b, ps.DurationSec)
		b = binary.BigEndian.AppendUint32(b, ps.DurationNsec)
	case v == mf.OF10:
		if b, err = appendPort16(b, ps.PortNo); err != nil {
			return b[:start], err
		}
		b = append(b, 0, 0, 0, 0, 0, 0)
	default:
		b = binary.BigEndian.AppendUint32(b, ps.PortNo)
		b = append(b, 0, 0, 0, 0)
	}
	for _, c := range [...]uint64{ps.RxPackets, ps.TxPackets, ps.RxBytes, ps.TxBytes,
		ps.RxDropped, ps.TxDropped, ps.RxErrors, ps.TxErrors} {
		b = binary.BigEndian.AppendUint64(b, c)
	}
	if v >= mf.OF14 {
		b = binary.BigEndian.AppendUint16(b, ofp14PortStatsEth)
		b = binary.BigEndian.AppendUint16(b, ofp14PortStatsELen)
		b = append(b, 0, 0, 0, 0)
	}
	for _, c := range [...]uint64{ps.RxFrameErr, ps.RxOverErr, ps.RxCRCErr, ps.Collisions} {
		b = binary.BigEndian.AppendUint64(b, c)
	}
	switch {
	case v == mf.OF13:
		b = binary.BigEndian.AppendUint32(b, ps.DurationSec)
		b = binary.BigEndian.AppendUint32(b, ps.DurationNsec)
	case v >= mf.OF14:
		b = append(b, ps.ExtraProps...)
		if n := len(b) - start; n > maxMessageLen || n%8 != 0 {
			return b[:start], errorf(OFPBRC_BAD_LEN, "port stats entry of %d bytes", n)
		}
		putLen16(b, start)
	}
	return b, nil
}

// TableStatsRequest is OFPST_TABLE_REQUEST.
type TableStatsRequest struct{ Flags uint16 }

func (*TableStatsRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST_TABLE_REQUEST)
}
func (m *TableStatsRequest) multipartFlags() uint16                     { return m.Flags }
func (*TableStatsRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }

// TableStats is one table's statistics. The legacy columns exist in
// OpenFlow 1.0–1.2 only (1.3+ carries just the counters) and hold the
// wire values of the version decoded: MaxEntries and Wildcards (1.0–1.2;
// 32 bits before 1.2), Match, Instructions, WriteActions, ApplyActions
// and Config (1.1–1.2), the set-field and metadata masks (1.2).
// SetOVSLegacy fills them as Open vSwitch does.
type TableStats struct {
	TableID                                  uint8
	Name                                     string
	ActiveCount                              uint32
	LookupCount, MatchedCount                uint64
	MaxEntries                               uint32
	Wildcards, Match                         uint64
	Instructions, WriteActions, ApplyActions uint32
	Config                                   uint32
	WriteSetfields, ApplySetfields           uint64
	MetadataMatch, MetadataWrite             uint64
}

// SetOVSLegacy sets ts's legacy columns to what Open vSwitch 3.1 sends in
// version v for one of its classifier tables (all of them match and
// act on the same fields; lastTable has no goto_table instruction).
func (ts *TableStats) SetOVSLegacy(v uint8, lastTable bool) {
	ts.MaxEntries = 1000000
	ts.Config = 0
	if v == mf.OF10 {
		ts.Wildcards = 0x003fffff
		return
	}
	ts.Instructions = 0x3e // goto, write metadata, write/apply/clear actions
	if lastTable {
		ts.Instructions = 0x3c
	}
	switch v {
	case mf.OF11:
		ts.Wildcards, ts.Match = 0xfbff, 0xfbff
		ts.WriteActions, ts.ApplyActions = 0x01ffe7ff, 0x01ffe7ff
	default:
		ts.Wildcards, ts.Match = 0x0000101ffffffffd, 0x0000101ffffffffd
		ts.WriteActions, ts.ApplyActions = 0x03ff8001, 0x03ff8001
		ts.WriteSetfields, ts.ApplySetfields = 0x0000000ffffffbdd, 0x0000000ffffffbdd
		ts.MetadataMatch, ts.MetadataWrite = ^uint64(0), ^uint64(0)
	}
}

// TableStatsReply is OFPST_TABLE_REPLY.
type TableStatsReply struct {
	Flags uint16
	Stats []TableStats
}

const tableNameLen = 32

func decodeTableStatsReply(r *reader, v uint8, _ Raw) (Message, error) {
	m := &TableStatsReply{Flags: r.statsFlags}
	for r.Err() == nil && r.len() > 0 {
		var ts TableStats
		ts.TableID = r.u8()
		switch v {
		case mf.OF10:
			r.skip(3)
			ts.Name = cString(r.take(tableNameLen))
			ts.Wildcards, ts.MaxEntries = uint64(r.u32()), r.u32()
		case mf.OF11:
			r.skip(7)
			ts.Name = cString(r.take(tableNameLen))
			ts.Wildcards, ts.Match = uint64(r.u32()), uint64(r.u32())
			ts.Instructions, ts.WriteActions, ts.ApplyActions = r.u32(), r.u32(), r.u32()
			ts.Config, ts.MaxEntries = r.u32(), r.u32()
		case mf.OF12:
			r.skip(7)
			ts.Name = cString(r.take(tableNameLen))
			ts.Match, ts.Wildcards = r.u64(), r.u64()
			ts.WriteActions, ts.ApplyActions = r.u32(), r.u32()
			ts.WriteSetfields, ts.ApplySetfields = r.u64(), r.u64()
			ts.MetadataMatch, ts.MetadataWrite = r.u64(), r.u64()
			ts.Instructions, ts.Config, ts.MaxEntries = r.u32(), r.u32(), r.u32()
		default:
			r.skip(3)
		}
		ts.ActiveCount, ts.LookupCount, ts.MatchedCount = r.u32(), r.u64(), r.u64()
		m.Stats = append(m.Stats, ts)
	}
	return m, nil
}

func (*TableStatsReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST10_TABLE_REPLY, RawOFPST11_TABLE_REPLY, RawOFPST12_TABLE_REPLY, RawOFPST13_TABLE_REPLY)
}
func (m *TableStatsReply) multipartFlags() uint16 { return m.Flags }
func (m *TableStatsReply) numEntries() int        { return len(m.Stats) }
func (m *TableStatsReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(b, v, m)
}

func (m *TableStatsReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	ts := &m.Stats[i]
	b = append(b, ts.TableID)
	switch v {
	case mf.OF10:
		b = append(b, 0, 0, 0)
		b = appendCString(b, ts.Name, tableNameLen)
		b = binary.BigEndian.AppendUint32(b, uint32(ts.Wildcards))
		b = binary.BigEndian.AppendUint32(b, ts.MaxEntries)
	case mf.OF11:
		b = append(b, 0, 0, 0, 0, 0, 0, 0)
		b = appendCString(b, ts.Name, tableNameLen)
		for _, w := range [...]uint32{uint32(ts.Wildcards), uint32(ts.Match), ts.Instructions,
			ts.WriteActions, ts.ApplyActions, ts.Config, ts.MaxEntries} {
			b = binary.BigEndian.AppendUint32(b, w)
		}
	case mf.OF12:
		b = append(b, 0, 0, 0, 0, 0, 0, 0)
		b = appendCString(b, ts.Name, tableNameLen)
		b = binary.BigEndian.AppendUint64(b, ts.Match)
		b = binary.BigEndian.AppendUint64(b, ts.Wildcards)
		b = binary.BigEndian.AppendUint32(b, ts.WriteActions)
		b = binary.BigEndian.AppendUint32(b, ts.ApplyActions)
		for _, w := range [...]uint64{ts.WriteSetfields, ts.ApplySetfields, ts.MetadataMatch, ts.MetadataWrite} {
			b = binary.BigEndian.AppendUint64(b, w)
		}
		b = binary.BigEndian.AppendUint32(b, ts.Instructions)
		b = binary.BigEndian.AppendUint32(b, ts.Config)
		b = binary.BigEndian.AppendUint32(b, ts.MaxEntries)
	default:
		b = append(b, 0, 0, 0)
	}
	b = binary.BigEndian.AppendUint32(b, ts.ActiveCount)
	b = binary.BigEndian.AppendUint64(b, ts.LookupCount)
	return binary.BigEndian.AppendUint64(b, ts.MatchedCount), nil
}
