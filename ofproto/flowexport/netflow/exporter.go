package netflow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/gvs-project/gvs/ofproto/flowexport/internal/udpcoll"
	"math"
	"sync"
	"time"
)

const (
	version5    = 5
	headerLen   = 24
	recordLen   = 48
	ipProtoICMP = 1
	ipDSCPMask  = 0xfc
	// bytesLimitHi is Open vSwitch's sanity bound on a byte counter before
	// splitting it into 32-bit records: more than 175·2^32 bytes in one
	// active timeout is a bug upstream (for example an "unknown" counter of
	// all ones), and splitting would send millions of records.
	bytesLimitHi = 175
)

// Exporter accumulates statistics per NetFlow flow and sends NetFlow v5
// records. It is safe for concurrent use.
type Exporter struct {
	now  func() time.Time
	boot time.Time

	// mu guards everything below.
	mu            sync.Mutex
	cfg           Config
	coll          *udpcoll.Set
	activeTimeout time.Duration // 0: no active timeout
	nextTimeout   time.Duration // uptime of the next active-timeout scan
	reconfigTime  time.Duration // uptime of the last active-timeout change
	seq           uint32        // netflow_cnt: records generated so far
	flows         map[FlowKey]*flowStats
	free          []*flowStats
	msg           [headerLen + MaxRecords*recordLen]byte
	n             int // records in msg
	closed        bool
}

// flowStats is one netflow_flow: times are uptimes (since New).
type flowStats struct {
	lastExpired time.Duration
	timed       bool // lastExpired has been set
	created     time.Duration
	used        time.Duration
	outIface    uint16
	tcpFlags    uint8
	packets     uint64
	bytes       uint64
}

// New returns an exporter sending to cfg.Targets; now is the clock (nil
// means time.Now). If some targets cannot be opened, New still returns a
// working Exporter along with an error naming them (Open vSwitch keeps the
// collectors it could open); if none can, it returns only the error.
func New(cfg Config, now func() time.Time) (*Exporter, error) {
	if now == nil {
		now = time.Now
	}
	e := &Exporter{now: now, boot: now(), flows: make(map[FlowKey]*flowStats)}
	err := e.Reconfigure(cfg)
	if e.coll.Count() == 0 {
		if err == nil {
			err = errors.New("no targets")
		}
		return nil, fmt.Errorf("netflow: %w", err)
	}
	return e, err
}

// Reconfigure applies cfg: it reopens the collectors and sets the engine
// fields and active timeout, keeping the flows and sequence number (as
// netflow_set_options). Errors are as New's.
func (e *Exporter) Reconfigure(cfg Config) error {
	cfg.Targets = append([]string(nil), cfg.Targets...)
	coll, err := udpcoll.Open(cfg.Targets, 0)
	if err != nil {
		err = fmt.Errorf("netflow: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.coll
	e.coll = coll
	e.cfg = cfg
	timeout := cfg.ActiveTimeout
	switch {
	case timeout == 0:
		timeout = DefaultActiveTimeout
	case timeout < 0:
		timeout = 0
	}
	if timeout != e.activeTimeout {
		e.activeTimeout = timeout
		up := e.uptime()
		e.reconfigTime = up
		e.nextTimeout = up
	}
	if cerr := old.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("netflow: closing old collectors: %w", cerr)
	}
	return err
}

// uptime is the time since New, never negative.
func (e *Exporter) uptime() time.Duration { return e.sinceBoot(e.now()) }

func (e *Exporter) sinceBoot(t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	d := t.Sub(e.boot)
	if d < 0 {
		return 0
	}
	return d
}

// Account adds statistics pushed from a datapath flow to the NetFlow flow
// k. outPort is the OpenFlow output port translation chose, or one of
// OutputDrop, OutputMulti, OutputFlood. used is when the datapath flow last
// saw a packet (zero if never). A change of output port first exports what
// was accumulated for the old one, as netflow_flow_update does.
func (e *Exporter) Account(k FlowKey, outPort uint16, packets, bytes uint64, tcpFlags uint8, used time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	u := e.sinceBoot(used)
	f := e.flows[k]
	if f == nil {
		f = e.newFlow()
		f.created = u
		f.outIface = outPort
		e.flows[k] = f
	}
	if f.outIface != outPort {
		e.expire(&k, f)
		f.created = u
		f.outIface = outPort
	}
	f.packets += packets
	f.bytes += bytes
	f.tcpFlags |= tcpFlags
	if u > f.used || !f.timed {
		f.used = max(f.used, u)
		if e.activeTimeout == 0 || !f.timed || e.reconfigTime > f.lastExpired {
			f.timed = true
			// Restart the active-timeout clock so that a flow that
			// predates a reconfiguration does not expire at once.
			f.lastExpired = e.uptime()
		}
	}
}

func (e *Exporter) newFlow() *flowStats {
	if n := len(e.free); n > 0 {
		f := e.free[n-1]
		e.free = e.free[:n-1]
		*f = flowStats{}
		return f
	}
	return &flowStats{}
}

func (e *Exporter) forget(k FlowKey, f *flowStats) {
	delete(e.flows, k)
	if len(e.free) < 1024 {
		e.free = append(e.free, f)
	}
}

// Expire exports the record of k now (if it has packets) and forgets the
// flow: the datapath flow behind it is gone (netflow_flow_clear).
func (e *Exporter) Expire(k FlowKey) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if f := e.flows[k]; f != nil {
		e.expire(&k, f)
		e.forget(k, f)
	}
}

// Run sends the records queued since the last call, then, at most once a
// second, exports the flows whose active timeout has passed (the records
// go out on the next Run, or as soon as a message is full). Flows idle for
// a whole timeout are forgotten. Call it about once a second.
func (e *Exporter) Run() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.run()
}

func (e *Exporter) run() {
	e.sendMsg()
	now := e.uptime()
	if e.activeTimeout == 0 || now < e.nextTimeout {
		return
	}
	e.nextTimeout = now + time.Second
	for k, f := range e.flows {
		if now > f.lastExpired+e.activeTimeout {
			idle := f.used < f.lastExpired
			e.expire(&k, f)
			if idle {
				e.forget(k, f)
			}
		}
	}
}

// Flush exports every flow that has packets and sends all records now.
func (e *Exporter) Flush() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.flush()
}

func (e *Exporter) flush() {
	for k, f := range e.flows {
		last := f.lastExpired
		e.expire(&k, f)
		f.lastExpired = last // not an active timeout
	}
	e.sendMsg()
}

// Close flushes and closes the sockets. The Exporter must not be used
// afterwards.
func (e *Exporter) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.flush()
	e.closed = true
	err := e.coll.Close()
	e.coll = nil
	if err != nil {
		return fmt.Errorf("netflow: %w", err)
	}
	return nil
}

// expire generates the records of f and resets its counters
// (netflow_expire__). Counters wider than 32 bits are spread over several
// records with even bytes per packet.
//
// Preconditions: e.mu is held.
func (e *Exporter) expire(k *FlowKey, f *flowStats) {
	pkts, bytes := f.packets, f.bytes
	f.lastExpired += e.activeTimeout
	if pkts == 0 {
		return
	}
	if bytes>>32 <= bytesLimitHi {
		for bytes > 0 {
			nRecs := (bytes + math.MaxUint32 - 1) / math.MaxUint32
			p, b := pkts/nRecs, bytes/nRecs
			e.addRecord(k, f, uint32(p), uint32(b))
			pkts -= p
			bytes -= b
		}
	}
	f.packets, f.bytes, f.tcpFlags = 0, 0, 0
}

// addRecord appends one record to the pending message, starting a message
// if none is pending and sending it once it holds MaxRecords.
//
// Preconditions: e.mu is held.
func (e *Exporter) addRecord(k *FlowKey, f *flowStats, pkts, bytes uint32) {
	h := e.msg[:headerLen]
	if e.n == 0 {
		now := e.now()
		binary.BigEndian.PutUint16(h[0:], version5)
		binary.BigEndian.PutUint32(h[4:], uint32(e.sinceBoot(now).Milliseconds()))
		binary.BigEndian.PutUint32(h[8:], uint32(now.Unix()))
		binary.BigEndian.PutUint32(h[12:], uint32(now.Nanosecond()))
		h[20] = e.cfg.EngineType
		h[21] = e.cfg.EngineID
		h[22], h[23] = 0, 0 // sampling_interval
	}
	e.n++
	binary.BigEndian.PutUint16(h[2:], uint16(e.n))
	// Open vSwitch stores the running record count in the header at each
	// record, so a message's flow_sequence is the number of its last
	// record counted from 0.
	binary.BigEndian.PutUint32(h[16:], e.seq)
	e.seq++

	r := e.msg[headerLen+(e.n-1)*recordLen : headerLen+e.n*recordLen]
	clear(r)
	copy(r[0:4], k.Src[:])
	copy(r[4:8], k.Dst[:])
	// r[8:12] next hop: 0
	in, out := k.InPort, f.outIface
	if e.cfg.AddIDToInterface {
		id := uint16(e.cfg.EngineID&0x7f) << 9
		in, out = id|in&0x1ff, id|out&0x1ff
	}
	binary.BigEndian.PutUint16(r[12:], in)
	binary.BigEndian.PutUint16(r[14:], out)
	binary.BigEndian.PutUint32(r[16:], pkts)
	binary.BigEndian.PutUint32(r[20:], bytes)
	binary.BigEndian.PutUint32(r[24:], uint32(f.created.Milliseconds()))
	binary.BigEndian.PutUint32(r[28:], uint32(max(f.created, f.used).Milliseconds()))
	if k.Proto == ipProtoICMP {
		binary.BigEndian.PutUint16(r[32:], 0)
		binary.BigEndian.PutUint16(r[34:], uint16(uint8(k.SrcPort))<<8|uint16(uint8(k.DstPort)))
	} else {
		binary.BigEndian.PutUint16(r[32:], k.SrcPort)
		binary.BigEndian.PutUint16(r[34:], k.DstPort)
	}
	r[37] = f.tcpFlags
	r[38] = k.Proto
	r[39] = k.TOS & ipDSCPMask
	if e.n >= MaxRecords {
		e.sendMsg()
	}
}

// sendMsg sends the pending message, if any.
//
// Preconditions: e.mu is held.
func (e *Exporter) sendMsg() {
	if e.n == 0 {
		return
	}
	e.coll.Send(e.msg[:headerLen+e.n*recordLen])
	e.n = 0
}
