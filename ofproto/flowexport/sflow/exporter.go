package sflow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/gvs-project/gvs/ofproto/flowexport/internal/udpcoll"
	"slices"
	"sync"
	"time"
)

// Wire constants (sFlow v5, as lib/sflow.h).
const (
	datagramVersion   = 5
	addrIPv4          = 1
	addrIPv6          = 2
	tagFlowSample     = 1
	tagCountersSample = 2
	tagHeader         = 1
	tagExSwitch       = 1001
	tagCtrGeneric     = 1
	tagCtrEthernet    = 2
	tagCtrOFPort      = 1004
	tagCtrPortName    = 1005
	headerProtoEth    = 1 // SFLHEADER_ETHERNET_ISO8023
	dsClassPhysical   = 2 // SFL_DSCLASS_PHYSICAL_ENTITY
	dsClassIfindex    = 0
	ifTypeEthernet    = 6
	defaultSpeed      = 100000000
	fcsLen            = 4
	maxDatagram       = 1400 // SFL_DEFAULT_DATAGRAM_SIZE
	maxPortName       = 255
	undefCounter      = 0xffffffff
	genericLen        = 88
	ethernetLen       = 52
	ofPortLen         = 12
)

// Exporter builds sFlow v5 datagrams from flow samples and port counters
// and sends them to the collectors. It is safe for concurrent use.
type Exporter struct {
	now      func() time.Time
	counters func() []PortCounters
	boot     int64 // unix seconds

	// mu guards everything below.
	mu      sync.Mutex
	cfg     Config
	coll    *udpcoll.Set
	dgSeq   uint32 // datagrams sent
	flowSeq uint32 // flow samples written
	pool    uint32 // sample pool kept for samples that bring none
	pollers map[uint32]*poller
	dg      []byte // datagram being filled
	hdrLen  int    // bytes of the datagram header
	nSample uint32
	closed  bool
}

// poller is one port's counter poller.
type poller struct {
	seq  uint32
	next int64 // unix second of the next poll
	seen bool
}

// New returns an exporter sending to cfg.Targets; now is the clock (nil
// means time.Now) and counters returns the ports to poll (nil: none). If
// some targets cannot be opened, New still returns a working Exporter
// along with an error naming them (Open vSwitch keeps the collectors it
// could open); if none can, it returns only the error.
func New(cfg Config, now func() time.Time, counters func() []PortCounters) (*Exporter, error) {
	if now == nil {
		now = time.Now
	}
	e := &Exporter{
		now:      now,
		counters: counters,
		boot:     now().Unix(),
		pollers:  make(map[uint32]*poller),
		dg:       make([]byte, 0, maxDatagram+64),
	}
	err := e.Reconfigure(cfg)
	if e.coll.Count() == 0 {
		if err == nil {
			err = errors.New("sflow: no targets")
		}
		return nil, err
	}
	return e, err
}

// Reconfigure applies cfg: pending samples go out under the old
// configuration, then the collectors are reopened and the datagram header
// is rebuilt. Sequence numbers carry on.
func (e *Exporter) Reconfigure(cfg Config) error {
	cfg.Targets = slices.Clone(cfg.Targets)
	if cfg.Sampling == 0 {
		cfg.Sampling = DefaultSampling
	}
	if cfg.Polling <= 0 {
		cfg.Polling = DefaultPolling
	}
	if cfg.Header == 0 {
		cfg.Header = DefaultHeader
	}
	coll, err := udpcoll.Open(cfg.Targets, DefaultPort)
	if err != nil {
		err = fmt.Errorf("sflow: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.send()
	old := e.coll
	e.coll = coll
	if e.cfg.Polling != cfg.Polling {
		clear(e.pollers) // restart the polling schedule
	}
	e.cfg = cfg
	e.resetDatagram()
	if cerr := old.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("sflow: closing old collectors: %w", cerr)
	}
	return err
}

// resetDatagram starts a datagram: version, agent address and sub-agent
// ID; sequence number, uptime and sample count are filled in by send.
func (e *Exporter) resetDatagram() {
	b := binary.BigEndian.AppendUint32(e.dg[:0], datagramVersion)
	a := e.cfg.Agent.Unmap()
	if a.Is6() {
		b = binary.BigEndian.AppendUint32(b, addrIPv6)
		s := a.As16()
		b = append(b, s[:]...)
	} else {
		b = binary.BigEndian.AppendUint32(b, addrIPv4)
		var s [4]byte
		if a.Is4() {
			s = a.As4()
		}
		b = append(b, s[:]...)
	}
	b = binary.BigEndian.AppendUint32(b, e.cfg.SubID)
	b = append(b, make([]byte, 12)...) // sequence, uptime, samples
	e.dg = b
	e.hdrLen = len(b)
	e.nSample = 0
}

// send sends the pending datagram, if it holds samples.
//
// Preconditions: e.mu is held.
func (e *Exporter) send() {
	if e.nSample == 0 {
		return
	}
	e.dgSeq++
	h := e.dg[e.hdrLen-12:]
	binary.BigEndian.PutUint32(h[0:], e.dgSeq)
	// Open vSwitch's agent clock ticks in whole seconds.
	binary.BigEndian.PutUint32(h[4:], uint32((e.now().Unix()-e.boot)*1000))
	binary.BigEndian.PutUint32(h[8:], e.nSample)
	e.coll.Send(e.dg)
	e.dg = e.dg[:e.hdrLen]
	e.nSample = 0
}

// reserve makes room for a sample of size bytes, sending the datagram
// first if the sample would fill it, and reports whether the sample fits
// at all (Open vSwitch drops a sample larger than half a datagram).
//
// Preconditions: e.mu is held.
func (e *Exporter) reserve(size int) bool {
	if size > maxDatagram/2 {
		return false
	}
	if len(e.dg)+size >= maxDatagram {
		e.send()
	}
	e.nSample++
	return true
}

// Sample writes a flow sample (extended switch and raw header records, in
// Open vSwitch's order) into the pending datagram. It is sent by Run, or
// as soon as the datagram is full.
func (e *Exporter) Sample(s *Sample) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	hlen := min(len(s.Packet), int(e.cfg.Header))
	padded := (hlen + 3) &^ 3
	// tag, length, seq, source, rate, pool, drops, input, output, count;
	// switch record; header record.
	size := 40 + (8 + 16) + (8 + 16 + padded)
	if !e.reserve(size) {
		return
	}
	e.flowSeq++
	pool := s.SamplePool
	if pool == 0 {
		e.pool += e.cfg.Sampling
		pool = e.pool
	}
	frameLen := s.FrameLen
	if frameLen <= 0 {
		frameLen = len(s.Packet)
	}
	b := e.dg
	b = be32(b, tagFlowSample, uint32(size-8), e.flowSeq,
		dsClassPhysical<<24|(1000+e.cfg.SubID)&0xffffff,
		e.cfg.Sampling, pool, s.Drops, s.InIfindex, s.OutIfindex, 2)
	b = be32(b, tagExSwitch, 16,
		uint32(s.InVLAN&0xfff), uint32(s.InPriority&7),
		uint32(s.OutVLAN&0xfff), uint32(s.OutPriority&7))
	b = be32(b, tagHeader, uint32(16+padded),
		headerProtoEth, uint32(frameLen+fcsLen), fcsLen, uint32(hlen))
	b = append(b, s.Packet[:hlen]...)
	b = append(b, make([]byte, padded-hlen)...)
	e.dg = b
}

// be32 appends big-endian 32-bit words.
func be32(b []byte, v ...uint32) []byte {
	for _, x := range v {
		b = binary.BigEndian.AppendUint32(b, x)
	}
	return b
}

// Run polls the counters of the ports that are due (every Polling, with
// the first poll of each port spread over the interval by its ifindex),
// then sends the pending datagram. Call it about once a second.
func (e *Exporter) Run() {
	var ports []PortCounters
	if e.counters != nil {
		ports = e.counters() // outside the lock: it may take other locks
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	now := e.now().Unix()
	interval := int64(e.cfg.Polling / time.Second)
	if interval < 1 {
		interval = 1
	}
	for _, p := range e.pollers {
		p.seen = false
	}
	for i := range ports {
		pc := &ports[i]
		if pc.Ifindex == 0 {
			continue
		}
		p := e.pollers[pc.Ifindex]
		if p == nil {
			p = &poller{next: now + 1 + int64(pc.Ifindex)%interval}
			e.pollers[pc.Ifindex] = p
		}
		p.seen = true
		if now >= p.next {
			p.next = now + interval
			p.seq++
			e.writeCounters(pc, p.seq)
		}
	}
	for ifindex, p := range e.pollers {
		if !p.seen {
			delete(e.pollers, ifindex) // the port is gone
		}
	}
	e.send()
}

// writeCounters writes one port's counter sample: Ethernet, OpenFlow
// port, port name and generic interface records, in Open vSwitch's order.
//
// Preconditions: e.mu is held.
func (e *Exporter) writeCounters(pc *PortCounters, seq uint32) {
	name := pc.Name
	if len(name) > maxPortName {
		name = name[:maxPortName]
	}
	namePadded := (len(name) + 3) &^ 3
	size := 20 + (8 + ethernetLen) + (8 + ofPortLen) + (8 + 4 + namePadded) + (8 + genericLen)
	if !e.reserve(size) {
		return
	}
	b := e.dg
	b = be32(b, tagCountersSample, uint32(size-8), seq, dsClassIfindex<<24|pc.Ifindex&0xffffff, 4)

	// gvs keeps none of the dot3 error counters: all 13 are "unknown",
	// as Open vSwitch sends them for ports whose netdev lacks them.
	b = be32(b, tagCtrEthernet, ethernetLen)
	for range ethernetLen / 4 {
		b = be32(b, undefCounter)
	}

	b = be32(b, tagCtrOFPort, ofPortLen)
	b = binary.BigEndian.AppendUint64(b, e.cfg.DatapathID)
	b = be32(b, pc.OFPort)

	b = be32(b, tagCtrPortName, uint32(4+namePadded), uint32(len(name)))
	b = append(b, name...)
	b = append(b, make([]byte, namePadded-len(name))...)

	speed := pc.Speed
	if speed == 0 {
		speed = defaultSpeed
	}
	status := uint32(0)
	if pc.Up {
		status = 3 // ifAdminStatus and ifOperStatus up
	}
	b = be32(b, tagCtrGeneric, genericLen, pc.Ifindex, ifTypeEthernet)
	b = binary.BigEndian.AppendUint64(b, speed)
	b = be32(b, 0, status) // ifDirection unknown
	b = binary.BigEndian.AppendUint64(b, pc.RxBytes)
	// Open vSwitch reports all received packets as unicast.
	b = be32(b, uint32(pc.RxPackets), uint32(pc.RxMulticast), uint32(pc.RxBroadcast),
		uint32(pc.RxDrops), uint32(pc.RxErrors), undefCounter)
	b = binary.BigEndian.AppendUint64(b, pc.TxBytes)
	b = be32(b, uint32(pc.TxPackets), uint32(pc.TxMulticast), uint32(pc.TxBroadcast),
		uint32(pc.TxDrops), uint32(pc.TxErrors), 0)
	e.dg = b
}

// Flush sends the pending samples now.
func (e *Exporter) Flush() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		e.send()
	}
}

// Close sends the pending samples and closes the sockets. The Exporter
// ignores samples afterwards.
func (e *Exporter) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.send()
	e.closed = true
	err := e.coll.Close()
	e.coll = nil
	if err != nil {
		return fmt.Errorf("sflow: %w", err)
	}
	return nil
}
