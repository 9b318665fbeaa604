// Port and table configuration (port_mod, table_mod) and queues (queue
// statistics, queue configuration, queue descriptions) in every
// version's form.

package ofp

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// Port configuration bits (OFPPC_*), as OpenFlow 1.0 numbers them; later
// versions keep the numbers of the bits they still have.
const (
	PCPortDown   = 1 << 0
	PCNoSTP      = 1 << 1 // OpenFlow 1.0 only
	PCNoRecv     = 1 << 2
	PCNoRecvSTP  = 1 << 3 // OpenFlow 1.0 only
	PCNoFlood    = 1 << 4 // OpenFlow 1.0 only
	PCNoFwd      = 1 << 5
	PCNoPacketIn = 1 << 6

	pcAll10 = 0x7f
	pcAll11 = PCPortDown | PCNoRecv | PCNoFwd | PCNoPacketIn
)

// PortConfigBits returns the configuration bits version v can carry.
func PortConfigBits(v uint8) uint32 {
	if v == mf.OF10 {
		return pcAll10
	}
	return pcAll11
}

// PortMod is OFPT_PORT_MOD. PortNo is the 32-bit form. Config and Mask
// keep only the bits the version defines (as Open vSwitch decodes them);
// Advertise is 0 for "unchanged".
type PortMod struct {
	PortNo                  uint32
	HWAddr                  [6]byte
	Config, Mask, Advertise uint32
}

const ofp14PortModEthProp = 0 // OFPPMPT14_ETHERNET

func decodePortMod(r *reader, v uint8, _ Raw) (Message, error) {
	m := &PortMod{}
	if v == mf.OF10 {
		m.PortNo = PortToOF11(r.u16())
		copy(m.HWAddr[:], r.take(6))
		m.Config, m.Mask, m.Advertise = r.u32(), r.u32(), r.u32()
		r.skip(4)
	} else {
		m.PortNo = r.u32()
		r.skip(4)
		copy(m.HWAddr[:], r.take(6))
		r.skip(2)
		m.Config, m.Mask = r.u32(), r.u32()
		if v < mf.OF14 {
			m.Advertise = r.u32()
			r.skip(4)
		} else {
			props := r.rest()
			for len(props) > 0 {
				typ, rec, adv, err := nextProp(props)
				if err != nil {
					return nil, err
				}
				props = props[adv:]
				switch {
				case typ == ofp14PortModEthProp && len(rec) == 8:
					m.Advertise = binary.BigEndian.Uint32(rec[4:])
				case typ == ofp14PortModEthProp:
					return nil, errorf(OFPBPC_BAD_LEN, "port_mod ethernet property of %d bytes", len(rec))
				case typ == 0xffff:
					return nil, errorf(OFPBPC_BAD_EXPERIMENTER, "port_mod experimenter property")
				default:
					return nil, errorf(OFPBPC_BAD_TYPE, "port_mod property type %d", typ)
				}
			}
		}
	}
	all := PortConfigBits(v)
	m.Config &= all
	m.Mask &= all
	return m, nil
}

func (*PortMod) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPT10_PORT_MOD, RawOFPT11_PORT_MOD, RawOFPT14_PORT_MOD)
}

func (m *PortMod) appendBody(b []byte, v uint8) ([]byte, error) {
	if v == mf.OF10 {
		b, err := appendPort16(b, m.PortNo)
		if err != nil {
			return b, err
		}
		b = append(b, m.HWAddr[:]...)
		for _, w := range [...]uint32{m.Config, m.Mask, m.Advertise, 0} {
			b = binary.BigEndian.AppendUint32(b, w)
		}
		return b, nil
	}
	b = binary.BigEndian.AppendUint32(b, m.PortNo)
	b = append(b, 0, 0, 0, 0)
	b = append(b, m.HWAddr[:]...)
	b = append(b, 0, 0)
	b = binary.BigEndian.AppendUint32(b, m.Config)
	b = binary.BigEndian.AppendUint32(b, m.Mask)
	if v < mf.OF14 {
		b = binary.BigEndian.AppendUint32(b, m.Advertise)
		return append(b, 0, 0, 0, 0), nil
	}
	if m.Advertise != 0 {
		b = binary.BigEndian.AppendUint16(b, ofp14PortModEthProp)
		b = binary.BigEndian.AppendUint16(b, 8)
		b = binary.BigEndian.AppendUint32(b, m.Advertise)
	}
	return b, nil
}

// Table miss behaviours of OpenFlow 1.1 and 1.2 (OFPTC11_TABLE_MISS_*),
// and the table configuration bits of OpenFlow 1.4 (OFPTC14_*).
const (
	TableMissController = 0
	TableMissContinue   = 1
	TableMissDrop       = 2
	tableMissMask       = 3

	TableConfigEviction      = 1 << 2
	TableConfigVacancyEvents = 1 << 3
)

// TableMod is OFPT_TABLE_MOD. Config is as on the wire: the table-miss
// bits mean something in OpenFlow 1.1 and 1.2 only (MissConfig), the
// eviction and vacancy bits in 1.4+. Eviction and Vacancy hold the
// OpenFlow 1.4 properties when present.
type TableMod struct {
	TableID       uint8
	Config        uint32
	EvictionFlags *uint32
	Vacancy       *TableVacancy
}

// TableVacancy is the OpenFlow 1.4 vacancy property (percentages).
type TableVacancy struct{ Down, Up, Vacancy uint8 }

// OpenFlow 1.4 table_mod property types.
const (
	tableModPropEviction = 2
	tableModPropVacancy  = 3
)

// MissConfig returns the table-miss behaviour the message sets, and
// whether it sets one (OpenFlow 1.1 and 1.2 only).
func (m *TableMod) MissConfig(v uint8) (uint32, bool) {
	if v != mf.OF11 && v != mf.OF12 {
		return 0, false
	}
	return m.Config & tableMissMask, true
}

func decodeTableMod(r *reader, v uint8, _ Raw) (Message, error) {
	m := &TableMod{TableID: r.u8()}
	r.skip(3)
	m.Config = r.u32()
	if v < mf.OF14 {
		return m, nil
	}
	props := r.rest()
	for len(props) > 0 {
		typ, rec, adv, err := nextProp(props)
		if err != nil {
			return nil, err
		}
		props = props[adv:]
		switch {
		case typ == tableModPropEviction && len(rec) == 8:
			f := binary.BigEndian.Uint32(rec[4:])
			m.EvictionFlags = &f
		case typ == tableModPropVacancy && len(rec) == 8:
			m.Vacancy = &TableVacancy{Down: rec[4], Up: rec[5], Vacancy: rec[6]}
			if m.Vacancy.Down > 100 || m.Vacancy.Up > 100 || m.Vacancy.Down > m.Vacancy.Up {
				return nil, errorf(OFPBPC_BAD_VALUE, "table_mod vacancy down %d up %d", m.Vacancy.Down, m.Vacancy.Up)
			}
		case typ == tableModPropEviction || typ == tableModPropVacancy:
			return nil, errorf(OFPBPC_BAD_LEN, "table_mod property %d of %d bytes", typ, len(rec))
		case typ == 0xffff:
			return nil, errorf(OFPBPC_BAD_EXPERIMENTER, "table_mod experimenter property")
		default:
			return nil, errorf(OFPBPC_BAD_TYPE, "table_mod property type %d", typ)
		}
	}
	return m, nil
}

func (*TableMod) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPT11_TABLE_MOD, RawOFPT14_TABLE_MOD)
}

func (m *TableMod) appendBody(b []byte, v uint8) ([]byte, error) {
	b = append(b, m.TableID, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, m.Config)
	if v < mf.OF14 {
		return b, nil
	}
	if m.EvictionFlags != nil {
		b = binary.BigEndian.AppendUint16(b, tableModPropEviction)
		b = binary.BigEndian.AppendUint16(b, 8)
		b = binary.BigEndian.AppendUint32(b, *m.EvictionFlags)
	}
	if m.Vacancy != nil {
		b = binary.BigEndian.AppendUint16(b, tableModPropVacancy)
		b = binary.BigEndian.AppendUint16(b, 8)
		b = append(b, m.Vacancy.Down, m.Vacancy.Up, m.Vacancy.Vacancy, 0)
	}
	return b, nil
}

// QueueAll is OFPQ_ALL, every queue of a port.
const QueueAll = 0xffffffff

// QueueStatsRequest is OFPST_QUEUE_REQUEST (OFPMP_QUEUE_STATS). PortNo
// is the 32-bit form (PortAny: every port).
type QueueStatsRequest struct {
	Flags   uint16
	PortNo  uint32
	QueueID uint32
}

func decodeQueueStatsRequest(r *reader, v uint8, _ Raw) (Message, error) {
	m := &QueueStatsRequest{Flags: r.statsFlags}
	if v == mf.OF10 {
		m.PortNo = PortToOF11(r.u16())
		if m.PortNo == PortToOF11(PortAll) {
			m.PortNo = PortAny // OpenFlow 1.0 says OFPP_ALL for every port
		}
		r.skip(2)
	} else {
		m.PortNo = r.u32()
	}
	m.QueueID = r.u32()
	return m, nil
}

func (*QueueStatsRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST10_QUEUE_REQUEST, RawOFPST11_QUEUE_REQUEST)
}
func (m *QueueStatsRequest) multipartFlags() uint16 { return m.Flags }
func (m *QueueStatsRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	if v == mf.OF10 {
		port := m.PortNo
		if port == PortAny {
			port = PortToOF11(PortAll)
		}
		b, err := appendPort16(b, port)
		if err != nil {
			return b, err
		}
		b = append(b, 0, 0)
		return binary.BigEndian.AppendUint32(b, m.QueueID), nil
	}
	b = binary.BigEndian.AppendUint32(b, m.PortNo)
	return binary.BigEndian.AppendUint32(b, m.QueueID), nil
}

// QueueStats are one queue's counters; all-ones means unavailable. The
// duration is on the wire in OpenFlow 1.3+ (all-ones: unknown).
type QueueStats struct {
	PortNo, QueueID              uint32
	TxBytes, TxPackets, TxErrors uint64
	DurationSec, DurationNsec    uint32
}

// QueueStatsReply is OFPST_QUEUE_REPLY.
type QueueStatsReply struct {
	Flags uint16
	Stats []QueueStats
}

const ofp14QueueStatsLen = 48

func decodeQueueStatsReply(r *reader, v uint8, _ Raw) (Message, error) {
	m := &QueueStatsReply{Flags: r.statsFlags}
	for r.len() > 0 {
		qs := QueueStats{DurationSec: ^uint32(0), DurationNsec: ^uint32(0)}
		e := r
		switch {
		case v >= mf.OF14:
			var err error
			if e, err = takeEntry(r, 0, ofp14QueueStatsLen, "ofp14_queue_stats"); err != nil {
				return nil, err
			}
			e.skip(8)
			qs.PortNo = e.u32()
		case v == mf.OF10:
			qs.PortNo = PortToOF11(e.u16())
			e.skip(2)
		default:
			qs.PortNo = e.u32()
		}
		qs.QueueID = e.u32()
		qs.TxBytes, qs.TxPackets, qs.TxErrors = e.u64(), e.u64(), e.u64()
		if v >= mf.OF13 {
			qs.DurationSec, qs.DurationNsec = e.u32(), e.u32()
		}
		if v >= mf.OF14 {
			e.rest() // properties (experimenter only) are ignored
		}
		if err := firstErr(r.Err(), e.Err()); err != nil {
			return nil, err
		}
		m.Stats = append(m.Stats, qs)
	}
	return m, nil
}

func (*QueueStatsReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST10_QUEUE_REPLY, RawOFPST11_QUEUE_REPLY, RawOFPST13_QUEUE_REPLY, RawOFPST14_QUEUE_REPLY)
}
func (m *QueueStatsReply) multipartFlags() uint16 { return m.Flags }
func (m *QueueStatsReply) numEntries() int        { return len(m.Stats) }
func (m *QueueStatsReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(b, v, m)
}

func (m *QueueStatsReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	qs := &m.Stats[i]
	var err error
	switch {
	case v >= mf.OF14:
		b = binary.BigEndian.AppendUint16(b, ofp14QueueStatsLen)
		b = append(b, 0, 0, 0, 0, 0, 0)
		b = binary.BigEndian.AppendUint32(b, qs.PortNo)
	case v == mf.OF10:
		if b, err = appendPort16(b, qs.PortNo); err != nil {
			return b, err
		}
		b = append(b, 0, 0)
	default:
		b = binary.BigEndian.AppendUint32(b, qs.PortNo)
	}
	b = binary.BigEndian.AppendUint32(b, qs.QueueID)
	for _, c := range [...]uint64{qs.TxBytes, qs.TxPackets, qs.TxErrors} {
		b = binary.BigEndian.AppendUint64(b, c)
	}
	if v >= mf.OF13 {
		b = binary.BigEndian.AppendUint32(b, qs.DurationSec)
		b = binary.BigEndian.AppendUint32(b, qs.DurationNsec)
	}
	return b, nil
}

// Queue is one queue's configuration: its minimum and maximum rates in
// tenths of a percent, 0xffff (or absent on the wire) when not set.
type Queue struct {
	PortNo, QueueID  uint32
	MinRate, MaxRate uint16
}

// Queue property types (OFPQT_*).
const (
	queuePropMinRate = 1
	queuePropMaxRate = 2
	queueRateUnset   = 0xffff
)

// QueueGetConfigRequest is OFPT_QUEUE_GET_CONFIG_REQUEST (OpenFlow 1.0
// to 1.3) or OFPMP_QUEUE_DESC (1.4+, with QueueID). PortNo is the
// 32-bit form.
type QueueGetConfigRequest struct {
	PortNo  uint32
	QueueID uint32 // 1.4+ only; QueueAll in earlier versions
}

func decodeQueueGetConfigRequest(r *reader, v uint8, raw Raw) (Message, error) {
	m := &QueueGetConfigRequest{QueueID: QueueAll}
	switch {
	case v == mf.OF10:
		m.PortNo = PortToOF11(r.u16())
		r.skip(2)
	case raw == RawOFPST14_QUEUE_DESC_REQUEST:
		m.PortNo, m.QueueID = r.u32(), r.u32()
	default:
		m.PortNo = r.u32()
		r.skip(4)
	}
	return m, nil
}

func (*QueueGetConfigRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPT10_QUEUE_GET_CONFIG_REQUEST, RawOFPT11_QUEUE_GET_CONFIG_REQUEST, RawOFPST14_QUEUE_DESC_REQUEST)
}
func (m *QueueGetConfigRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	switch {
	case v == mf.OF10:
		b, err := appendPort16(b, m.PortNo)
		return append(b, 0, 0), err
	case v >= mf.OF14:
		b = binary.BigEndian.AppendUint32(b, m.PortNo)
		return binary.BigEndian.AppendUint32(b, m.QueueID), nil
	}
	b = binary.BigEndian.AppendUint32(b, m.PortNo)
	return append(b, 0, 0, 0, 0), nil
}

// QueueGetConfigReply is OFPT_QUEUE_GET_CONFIG_REPLY (OpenFlow 1.0 to
// 1.3: one port's queues) or OFPMP_QUEUE_DESC's reply (1.4+: queues of
// any ports). PortNo is the port asked about (1.0–1.3).
type QueueGetConfigReply struct {
	PortNo uint32
	Queues []Queue
}

func decodeQueueGetConfigReply(r *reader, v uint8, raw Raw) (Message, error) {
	m := &QueueGetConfigReply{}
	if raw != RawOFPST14_QUEUE_DESC_REPLY {
		if v == mf.OF10 {
			m.PortNo = PortToOF11(r.u16())
			r.skip(6)
		} else {
			m.PortNo = r.u32()
			r.skip(4)
		}
	}
	for r.len() > 0 && r.Err() == nil {
		q := Queue{PortNo: m.PortNo, MinRate: queueRateUnset, MaxRate: queueRateUnset}
		var e *reader
		var err error
		switch {
		case raw == RawOFPST14_QUEUE_DESC_REPLY:
			if e, err = takeEntry(r, 8, 16, "ofp14_queue_desc"); err != nil {
				return nil, err
			}
			q.PortNo, q.QueueID = e.u32(), e.u32()
			e.skip(8)
		case v <= mf.OF11:
			if e, err = takeEntry(r, 4, 8, "ofp10_packet_queue"); err != nil {
				return nil, err
			}
			q.QueueID = e.u32()
			e.skip(4)
		default:
			if e, err = takeEntry(r, 8, 16, "ofp12_packet_queue"); err != nil {
				return nil, err
			}
			q.QueueID, q.PortNo = e.u32(), e.u32()
			e.skip(8)
		}
		props := e.rest()
		for len(props) > 0 {
			if len(props) < 4 {
				return nil, errorf(OFPBRC_BAD_LEN, "queue property of %d bytes", len(props))
			}
			typ, n := binary.BigEndian.Uint16(props), int(binary.BigEndian.Uint16(props[2:]))
			if n < 8 || n > len(props) || n%8 != 0 {
				return nil, errorf(OFPBRC_BAD_LEN, "queue property of length %d in %d bytes", n, len(props))
			}
			// OpenFlow 1.4's queue description properties are 8 bytes
			// (type, length, rate, pad), older ones 16 (rate at 8).
			rateAt := 8
			if raw == RawOFPST14_QUEUE_DESC_REPLY {
				rateAt = 4
			}
			if (typ == queuePropMinRate || typ == queuePropMaxRate) && n >= rateAt+2 {
				rate := binary.BigEndian.Uint16(props[rateAt:])
				if typ == queuePropMinRate {
					q.MinRate = rate
				} else {
					q.MaxRate = rate
				}
			}
			props = props[n:]
		}
		m.Queues = append(m.Queues, q)
	}
	return m, nil
}

func (*QueueGetConfigReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPT10_QUEUE_GET_CONFIG_REPLY, RawOFPT11_QUEUE_GET_CONFIG_REPLY, RawOFPST14_QUEUE_DESC_REPLY)
}

func (m *QueueGetConfigReply) appendBody(b []byte, v uint8) ([]byte, error) {
	switch {
	case v == mf.OF10:
		var err error
		if b, err = appendPort16(b, m.PortNo); err != nil {
			return b, err
		}
		b = append(b, 0, 0, 0, 0, 0, 0)
	case v < mf.OF14:
		b = binary.BigEndian.AppendUint32(b, m.PortNo)
		b = append(b, 0, 0, 0, 0)
	}
	// Not split like multipart replies: before 1.4 this is one message.
	for i := range m.Queues {
		b = appendQueue(b, v, &m.Queues[i])
	}
	if len(b) > maxMessageLen {
		return b, errorf(OFPBRC_BAD_LEN, "queue configuration of %d queues", len(m.Queues))
	}
	return b, nil
}

func appendQueue(b []byte, v uint8, q *Queue) []byte {
	start := len(b)
	lenAt := start + 4
	switch {
	case v >= mf.OF14:
		b = binary.BigEndian.AppendUint32(b, q.PortNo)
		b = binary.BigEndian.AppendUint32(b, q.QueueID)
		lenAt = start + 8
		b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	case v <= mf.OF11:
		b = binary.BigEndian.AppendUint32(b, q.QueueID)
		b = append(b, 0, 0, 0, 0)
	default:
		b = binary.BigEndian.AppendUint32(b, q.QueueID)
		b = binary.BigEndian.AppendUint32(b, q.PortNo)
		lenAt = start + 8
		b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	}
	for _, p := range [...]struct {
		typ  uint16
		rate uint16
	}{{queuePropMinRate, q.MinRate}, {queuePropMaxRate, q.MaxRate}} {
		if p.rate == queueRateUnset || (p.typ == queuePropMaxRate && v == mf.OF10) {
			continue
		}
		b = binary.BigEndian.AppendUint16(b, p.typ)
		if v >= mf.OF14 {
			b = binary.BigEndian.AppendUint16(b, 8)
			b = binary.BigEndian.AppendUint16(b, p.rate)
			b = append(b, 0, 0)
			continue
		}
		b = binary.BigEndian.AppendUint16(b, 16)
		b = append(b, 0, 0, 0, 0)
		b = binary.BigEndian.AppendUint16(b, p.rate)
		b = append(b, 0, 0, 0, 0, 0, 0)
	}
	binary.BigEndian.PutUint16(b[lenAt:], uint16(len(b)-start))
	return b
}

func init() {
	for _, r := range []Raw{RawOFPT10_PORT_MOD, RawOFPT11_PORT_MOD, RawOFPT14_PORT_MOD} {
		decoders[r] = decodePortMod
	}
	decoders[RawOFPST14_TABLE_DESC_REQUEST] = func(r *reader, _ uint8, _ Raw) (Message, error) {
		return &TableDescRequest{Flags: r.statsFlags}, nil
	}
	decoders[RawOFPST14_TABLE_DESC_REPLY] = decodeTableDescReply
	decoders[RawOFPT14_TABLE_STATUS] = decodeTableStatus
	decoders[RawOFPT11_TABLE_MOD] = decodeTableMod
	decoders[RawOFPT14_TABLE_MOD] = decodeTableMod
	decoders[RawOFPST10_QUEUE_REQUEST] = decodeQueueStatsRequest
	decoders[RawOFPST11_QUEUE_REQUEST] = decodeQueueStatsRequest
	for _, r := range []Raw{RawOFPST10_QUEUE_REPLY, RawOFPST11_QUEUE_REPLY, RawOFPST13_QUEUE_REPLY, RawOFPST14_QUEUE_REPLY} {
		decoders[r] = decodeQueueStatsReply
	}
	for _, r := range []Raw{RawOFPT10_QUEUE_GET_CONFIG_REQUEST, RawOFPT11_QUEUE_GET_CONFIG_REQUEST, RawOFPST14_QUEUE_DESC_REQUEST} {
		decoders[r] = decodeQueueGetConfigRequest
	}
	for _, r := range []Raw{RawOFPT10_QUEUE_GET_CONFIG_REPLY, RawOFPT11_QUEUE_GET_CONFIG_REPLY, RawOFPST14_QUEUE_DESC_REPLY} {
		decoders[r] = decodeQueueGetConfigReply
	}
}

// TableDescRequest is OFPMP_TABLE_DESC's request (OpenFlow 1.4+).
type TableDescRequest struct{ Flags uint16 }

func (*TableDescRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST14_TABLE_DESC_REQUEST)
}
func (m *TableDescRequest) multipartFlags() uint16                       { return m.Flags }
func (m *TableDescRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }

// TableDesc is one table's configuration in a table description reply.
// EvictionFlags and Vacancy are the properties, nil when absent.
type TableDesc struct {
	TableID       uint8
	Config        uint32
	EvictionFlags *uint32
	Vacancy       *TableVacancy
}

// TableDescReply is OFPMP_TABLE_DESC's reply.
type TableDescReply struct {
	Flags  uint16
	Tables []TableDesc
}

const ofp14TableDescLen = 8

func decodeTableDescReply(r *reader, v uint8, _ Raw) (Message, error) {
	m := &TableDescReply{Flags: r.statsFlags}
	for r.len() > 0 {
		td, err := decodeTableDesc(r, v)
		if err != nil {
			return nil, err
		}
		m.Tables = append(m.Tables, td)
	}
	return m, nil
}

// decodeTableDesc takes one ofp14_table_desc from r.
func decodeTableDesc(r *reader, v uint8) (TableDesc, error) {
	e, err := takeEntry(r, 0, ofp14TableDescLen, "ofp14_table_desc")
	if err != nil {
		return TableDesc{}, err
	}
	e.skip(2)
	td := TableDesc{TableID: e.u8()}
	e.skip(1)
	td.Config = e.u32()
	// The properties are a table_mod's.
	tm, err := decodeTableMod(newReader(append([]byte{td.TableID, 0, 0, 0, 0, 0, 0, 0}, e.rest()...), "ofp14_table_desc"), v, 0)
	if err != nil {
		return TableDesc{}, err
	}
	td.EvictionFlags, td.Vacancy = tm.(*TableMod).EvictionFlags, tm.(*TableMod).Vacancy
	return td, nil
}

// Table status reasons (OFPTR_*): the vacancy events.
const (
	TableReasonVacancyDown = 3
	TableReasonVacancyUp   = 4
)

// TableStatus is OFPT_TABLE_STATUS (OpenFlow 1.4+): a table's vacancy
// crossed a threshold its table_mod set, with the table's description.
type TableStatus struct {
	Reason uint8
	Desc   TableDesc
}

func (*TableStatus) RawFor(v uint8) (Raw, error) { return versionRange(v, RawOFPT14_TABLE_STATUS) }

func (m *TableStatus) appendBody(b []byte, v uint8) ([]byte, error) {
	b = append(b, m.Reason, 0, 0, 0, 0, 0, 0, 0)
	return (&TableDescReply{Tables: []TableDesc{m.Desc}}).appendEntry(b, v, 0)
}

func decodeTableStatus(r *reader, v uint8, _ Raw) (Message, error) {
	m := &TableStatus{Reason: r.u8()}
	r.skip(7)
	td, err := decodeTableDesc(r, v)
	if err != nil {
		return nil, err
	}
	if r.len() != 0 {
		return nil, errorf(OFPBRC_BAD_LEN, "%d bytes after the table status's description", r.len())
	}
	m.Desc = td
	return m, r.Err()
}

func (*TableDescReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST14_TABLE_DESC_REPLY)
}
func (m *TableDescReply) multipartFlags() uint16 { return m.Flags }
func (m *TableDescReply) numEntries() int        { return len(m.Tables) }
func (m *TableDescReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(b, v, m)
}

func (m *TableDescReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	td := &m.Tables[i]
	start := len(b)
	b = append(b, 0, 0, td.TableID, 0)
	b = binary.BigEndian.AppendUint32(b, td.Config)
	tm := TableMod{EvictionFlags: td.EvictionFlags, Vacancy: td.Vacancy}
	props, err := tm.appendBody(nil, v)
	if err != nil {
		return b[:start], err
	}
	b = append(b, props[8:]...)
	putLen16(b, start)
	return b, nil
}
