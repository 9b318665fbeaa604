package conntrack

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// ct_state bits, as flow.Cs* (Open vSwitch's CS_*).
const (
	CsNew         = flow.CsNew
	CsEstablished = flow.CsEstablished
	CsRelated     = flow.CsRelated
	CsReplyDir    = flow.CsReplyDir
	CsInvalid     = flow.CsInvalid
	CsTracked     = flow.CsTracked
	CsSrcNAT      = flow.CsSrcNAT
	CsDstNAT      = flow.CsDstNAT
)

// DefaultMaxConns is Open vSwitch's default global connection limit.
const DefaultMaxConns = 3000000

// NumZones is the number of conntrack zones.
const NumZones = 1 << 16

// Config configures a Tracker. The zero value gives Open vSwitch's
// defaults.
type Config struct {
	// MaxConns is the global connection limit (0: DefaultMaxConns).
	MaxConns uint32
	// Now returns the current time in nanoseconds (nil: the monotonic
	// clock). Tests pass a fake clock.
	Now func() int64
	// SkipChecksums disables L3/L4 checksum validation, as for packets
	// whose checksums a NIC has verified.
	SkipChecksums bool
	// NoReuse leaves removed connections to the garbage collector
	// instead of reusing their memory (see the package doc).
	NoReuse bool
}

// Stats are the tracker's counters.
type Stats struct {
	Conns        int64  // connections in all zones
	Invalid      uint64 // packets marked +inv
	ZoneFull     uint64 // commits refused by a zone limit
	Full         uint64 // commits refused by the global limit
	NATExhausted uint64 // commits refused because the NAT ranges were used up
	Fragments    uint64 // fragments seen (not reassembled: marked +inv)
	ExpiredSwept uint64 // connections removed by Sweep
}

// Tracker is the connection tracker of one datapath: 65,536 zones, each
// its own table created on first commit.
type Tracker struct {
	// zones holds each zone's table pointer and per-zone counters side
	// by side, so that a flush or a zone's creation touches one cache
	// line (1 MiB in all).
	zones  zoneSlots
	seed   *hashSeed
	nat    natChooser
	now    func() int64
	verify bool

	count    atomic.Int64
	reuse    reuse
	maxConns atomic.Uint32
	liberal  atomic.Bool

	// cfg is the zone limits and timeout policies (zonecfg.go).
	cfg zoneConfig

	invalid, zoneFull, full, natExhausted, frags, swept atomic.Uint64

	// sweepMu guards the sweeper's cursor.
	sweepMu sync.Mutex
	// guarded by sweepMu
	sweepZone int
	// guarded by sweepMu
	sweepBucket int
}

// zoneSlots is every zone's slot, indexed by zone id.
type zoneSlots [NumZones]zoneSlot

// prefault writes one word of every page of the per-zone array (1 MiB,
// fresh from the OS and so unmapped): otherwise the first flush or
// creation of a zone pays a page fault or two, several microseconds on a
// VM, on the packet path or in a flush.
func (s *zoneSlots) prefault() {
	const page = 4096
	for i := 0; i < NumZones; i += page / int(unsafe.Sizeof(zoneSlot{})) {
		s[i].flushes.Store(0)
	}
}

// zoneSlot is one zone's entry in Tracker.zones: the table (nil until the
// zone's first commit and after a flush) and what outlives a flush.
type zoneSlot struct {
	atomic.Pointer[zone]
	// flushes counts FlushZone calls (metrics).
	flushes atomic.Uint32
	// sizeHint is the bucket count the zone had when it was last
	// flushed: a zone refilled after a flush (router failover) starts at
	// that size instead of growing through every power of two again.
	sizeHint atomic.Uint32
}

var monoStart = time.Now()

func newSeed() *hashSeed {
	var s hashSeed
	for i := range s {
		s[i] = rand.Uint64() | 1
	}
	return &s
}

// New returns an empty tracker.
func New(cfg Config) *Tracker {
	t := &Tracker{
		seed:   newSeed(),
		now:    cfg.Now,
		verify: !cfg.SkipChecksums,
	}
	t.nat = natChooser{natSeed: newSeed(), seed: t.seed}
	if t.now == nil {
		t.now = func() int64 { return int64(time.Since(monoStart)) }
	}
	m := cfg.MaxConns
	if m == 0 {
		m = DefaultMaxConns
	}
	t.maxConns.Store(m)
	t.reuse.limboCap, t.reuse.poolCap, t.reuse.cold = maxLimboConns, maxPooledConns, coldRun
	t.reuse.off = cfg.NoReuse
	t.zones.prefault()
	t.cfg.init()
	return t
}

// getZone returns zone id's table, creating it if create is set.
func (t *Tracker) getZone(id uint16, create bool) *zone {
	if z := t.zones[id].Load(); z != nil || !create {
		return z
	}
	z := newZone(id, t.reuse.newTable(max(int(t.zones[id].sizeHint.Load()), minBuckets)))
	t.cfg.apply(z)
	if !t.zones[id].CompareAndSwap(nil, z) {
		return t.zones[id].Load()
	}
	// A configuration change may have raced the publication; re-read.
	t.cfg.apply(z)
	return z
}

// Execute runs the ct action a on every packet of b in place and writes
// the ct_* metadata back into each packet: the batch stays the caller's.
// It never blocks on another zone and never allocates when the packets
// belong to existing connections.
func (t *Tracker) Execute(b *packet.Batch, a *odp.CtParams) {
	t.ExecuteAt(b, a, t.now())
}

// ExecuteAt is Execute at time now, in the clock of Now: a caller that
// runs many batches per iteration of its loop (a datapath worker) reads
// the clock once for all of them, as Open vSwitch's conntrack_execute
// takes its caller's timestamp, instead of once per call.
//
// Without a Reader the call holds back the reuse of connections removed
// while it runs, with a shared atomic counter (two atomic adds per call).
func (t *Tracker) ExecuteAt(b *packet.Batch, a *odp.CtParams, now int64) {
	c := t.reuse.enterAnon(unsafe.Pointer(b))
	t.executeAt(b, a, now, nil)
	c.Add(-1)
}

// executeAt runs the batch; m is the caller's Reader's memo, nil
// without a Reader.
func (t *Tracker) executeAt(b *packet.Batch, a *odp.CtParams, now int64, m *connMemo) {
	if b.N == 1 {
		// One packet (an upcall, a test, ovstest's benchmark): skip the
		// batch arrays, whose zeroing alone costs more than a lookup.
		t.executeOne(b.Pkts[0], a, now, m)
		return
	}
	t.executeBatch(b, a, now, m)
}

func (t *Tracker) executeOne(p *packet.Packet, a *odp.CtParams, now int64, m *connMemo) {
	if m.fast(p, a) {
		return
	}
	var pi pktInfo
	res := parsePacket(&pi, p, t.verify)
	var h hint
	if res == parseOK && m != nil {
		pi.key.Zone = a.Zone
		h = m.match(p.Md.CtConn, &pi.key)
	}
	t.process(p, a, now, &pi, res, 0, h, m)
}

func (t *Tracker) executeBatch(b *packet.Batch, a *odp.CtParams, now int64, m *connMemo) {
	var pis [packet.BatchSize]pktInfo
	var res [packet.BatchSize]parseResult
	var hs [packet.BatchSize]uint64
	var hints [packet.BatchSize]hint
	var done [packet.BatchSize]bool
	pkts := b.Slice()
	// Parse and hash the whole batch first, then walk the chains in
	// passes, so that the cache misses of different packets overlap (a
	// zone larger than the caches costs a miss per level per packet).
	// A packet that an earlier ct() of this worker's iteration left
	// with its connection (the commit after a lookup) skips the walk.
	z := t.zones[a.Zone].Load()
	for i, p := range pkts {
		if done[i] = m.fast(p, a); done[i] {
			continue
		}
		res[i] = parsePacket(&pis[i], p, t.verify)
		if res[i] == parseOK && z != nil {
			pis[i].key.Zone = a.Zone
			if m != nil {
				if hints[i] = m.match(p.Md.CtConn, &pis[i].key); hints[i].c != nil {
					continue
				}
			}
			hs[i] = pis[i].key.hash(t.seed)
		}
	}
	if z != nil && len(pkts) > 1 {
		// The bucket loads in a loop of their own, so that the core
		// has them all in flight at once (measured: the load of the
		// head was a tenth of the daemon's time in the conntrack
		// pipeline with 100,000 connections when it followed each
		// packet's parsing).
		var heads [packet.BatchSize]*node
		bk := z.tab.Load()
		for i := range pkts {
			if hs[i] != 0 {
				heads[i] = bk.heads[hs[i]&bk.mask].Load()
			}
		}
		var sink uint32
		for _, n := range heads[:len(pkts)] {
			if n != nil {
				sink += n.hash
			}
		}
		for _, n := range heads[:len(pkts)] {
			if n != nil {
				sink += uint32(n.conn().expires.Load())
			}
		}
		runtime.KeepAlive(sink) // a use, without a shared write
	}
	for i, p := range pkts {
		if !done[i] {
			t.process(p, a, now, &pis[i], res[i], hs[i], hints[i], m)
		}
	}
}

// setMd writes the ct metadata of a tracked packet. c may be nil; then
// tuple, if non-nil, is the original-direction tuple (a new connection
// that was not committed).
func setMd(md *packet.Metadata, state uint8, zone uint16, c *Conn, tuple *Key) {
	md.CtState = state | CsTracked
	md.CtZone = zone
	md.CtConn = 0
	if c != nil {
		md.CtMark, md.CtLabel = c.markLabel()
		tuple = &c.nodes[0].key
	} else {
		md.CtMark, md.CtLabel = 0, [16]byte{}
	}
	if tuple == nil {
		md.CtNwProto, md.CtNwSrc, md.CtNwDst, md.CtTpSrc, md.CtTpDst = 0, 0, 0, 0, 0
		md.CtIPv6Src, md.CtIPv6Dst = [16]byte{}, [16]byte{}
		return
	}
	md.CtNwProto = tuple.Proto
	if tuple.Family == 4 {
		md.CtNwSrc = uint32(tuple.Src[0])<<24 | uint32(tuple.Src[1])<<16 | uint32(tuple.Src[2])<<8 | uint32(tuple.Src[3])
		md.CtNwDst = uint32(tuple.Dst[0])<<24 | uint32(tuple.Dst[1])<<16 | uint32(tuple.Dst[2])<<8 | uint32(tuple.Dst[3])
		md.CtIPv6Src, md.CtIPv6Dst = [16]byte{}, [16]byte{}
	} else {
		md.CtNwSrc, md.CtNwDst = 0, 0
		md.CtIPv6Src, md.CtIPv6Dst = tuple.Src, tuple.Dst
	}
	if tuple.Proto == protoICMP || tuple.Proto == protoICMPv6 {
		md.CtTpSrc, md.CtTpDst = uint16(tuple.SrcType), uint16(tuple.ICMPCode)
	} else {
		md.CtTpSrc, md.CtTpDst = tuple.SrcPort, tuple.DstPort
	}
}

// origFromMd rebuilds the original-direction key of a packet that an
// earlier ct() in the same zone has already translated: its own tuple no
// longer matches either key of the connection (OVS keeps a pointer to the
// connection in the packet for this; a Go packet cannot hold one safely).
func origFromMd(md *packet.Metadata, pi *pktInfo, zone uint16) (Key, bool) {
	if md.CtState&CsTracked == 0 || md.CtZone != zone || md.CtState&(CsSrcNAT|CsDstNAT) == 0 || md.CtNwProto != pi.key.Proto {
		return Key{}, false
	}
	k := Key{Zone: zone, Proto: md.CtNwProto, Family: pi.key.Family}
	if k.Family == 4 {
		for i := 0; i < 4; i++ {
			k.Src[i] = byte(md.CtNwSrc >> (24 - 8*i))
			k.Dst[i] = byte(md.CtNwDst >> (24 - 8*i))
		}
	} else {
		k.Src, k.Dst = md.CtIPv6Src, md.CtIPv6Dst
	}
	if k.Proto == protoICMP || k.Proto == protoICMPv6 {
		t := &icmpTable(k.Family)[uint8(md.CtTpSrc)]
		k.SrcType, k.DstType, k.ICMPCode = uint8(md.CtTpSrc), t.reverse, uint8(md.CtTpDst)
		k.SrcPort, k.DstPort = pi.key.SrcPort, pi.key.DstPort
	} else {
		k.SrcPort, k.DstPort = md.CtTpSrc, md.CtTpDst
	}
	return k, true
}

func (t *Tracker) markInvalid(p *packet.Packet, zone uint16, c *Conn) {
	t.invalid.Add(1)
	setMd(&p.Md, CsInvalid, zone, c, nil)
}

// process runs one packet, parsed into pi (res) with key hash h (0: not
// computed), its connection hint from the memo m (nil without a Reader).
func (t *Tracker) process(p *packet.Packet, a *odp.CtParams, now int64, pi *pktInfo, res parseResult, h uint64, hn hint, m *connMemo) {
	zid := a.Zone
	switch res {
	case parseOK:
	case parseFragment:
		t.frags.Add(1)
		t.markInvalid(p, zid, nil)
		return
	default:
		t.markInvalid(p, zid, nil)
		return
	}
	pi.key.Zone = zid
	commit := a.Commit || a.ForceCommit
	z := t.getZone(zid, false)
	var c *Conn
	reply, natted := false, false
	if z != nil && hn.c != nil {
		c, reply = hn.c, hn.reply
	} else if z != nil {
		// A packet this zone has already NATed (an earlier ct(nat) of
		// the same zone, its state not cleared) belongs to that
		// connection, found by its original tuple; its translated tuple
		// is not looked up, even if another connection of the zone has
		// it as its own (Open vSwitch's natted lookup: OVN commits a
		// load balancer's SNAT in the DNAT zone for the first packet and
		// in the SNAT zone for the next ones).
		if k, ok := origFromMd(&p.Md, pi, zid); ok && !pi.related {
			if c, _ = z.lookup(&k, k.hash(t.seed)); c != nil {
				reply, natted = p.Md.CtState&CsReplyDir != 0, true
			}
		} else {
			if h == 0 {
				h = pi.key.hash(t.seed)
			}
			c, reply = z.lookup(&pi.key, h)
		}
		if c != nil && c.expired(now) {
			c = nil
		}
	}
	pol := t.cfg.policy(z)

	if pi.related {
		if c == nil {
			t.markInvalid(p, zid, nil)
			return
		}
		state := uint8(CsRelated)
		if reply {
			state |= CsReplyDir
		}
		if a.NAT != nil {
			state |= natPacket(p, pi, c, reply)
		}
		setMd(&p.Md, state, zid, c, nil)
		p.Md.CtConn = m.remember(c)
		return
	}

	var state uint8
	if c != nil && reply && a.ForceCommit {
		// force_commit in the reply direction ends the old connection.
		t.remove(z, c)
		c = nil
	}
	if c != nil {
		var res updateResult
		switch {
		case pi.key.Proto == protoTCP:
			c.mu.Lock()
			res = tcpUpdate(c, pi, reply, t.liberal.Load(), pol, now)
			c.mu.Unlock()
		case pi.key.Proto == protoICMP || pi.key.Proto == protoICMPv6:
			res = icmpUpdate(c, reply, pol, now)
		default:
			res = otherUpdate(c, reply, pol, now)
		}
		switch res {
		case updateInvalid:
			t.markInvalid(p, zid, c)
			return
		case updateNew:
			t.remove(z, c)
			c = nil
		case updateValidNew:
			state = CsNew
		case updateValid:
			state = CsEstablished
			if reply {
				state |= CsReplyDir
			}
		}
		if c != nil && c.flags&connAlgRelated != 0 && state&CsEstablished == 0 {
			state |= CsRelated
		}
	}
	if c == nil {
		if !validNew(pi) {
			t.markInvalid(p, zid, nil)
			return
		}
		state = CsNew
		if z != nil && z.nexp.Load() > 0 && z.expected(&pi.key, t.now()) {
			state |= CsRelated
		}
		if !commit {
			setMd(&p.Md, state, zid, nil, &pi.key)
			return
		}
		var ok bool
		if c, ok = t.commit(p, pi, a, state&CsRelated != 0, now); !ok {
			if c == nil {
				// Refused (limit or NAT exhaustion): OVS leaves the
				// packet +new without a connection.
				setMd(&p.Md, state, zid, nil, &pi.key)
				return
			}
		}
		if a.NAT != nil && c.nodes[0].nat != 0 {
			state |= natPacket(p, pi, c, false)
		}
		c.setMarkLabel(a)
		if k, ok := tftpExpectation(c); ok {
			t.expect(k, now)
		}
		setMd(&p.Md, state, zid, c, nil)
		p.Md.CtConn = m.remember(c)
		return
	}
	if a.NAT != nil && !natted {
		state |= natPacket(p, pi, c, reply)
	} else if natted {
		state |= p.Md.CtState & (CsSrcNAT | CsDstNAT)
	}
	if commit {
		c.setMarkLabel(a)
	}
	if c.helper == helperFTP {
		if k, ok := ftpExpectation(p, pi, c, reply); ok {
			t.expect(k, now)
		}
	}
	setMd(&p.Md, state, zid, c, nil)
	p.Md.CtConn = m.remember(c)
}

// validNew says whether a packet may open a connection.
func validNew(pi *pktInfo) bool {
	switch pi.key.Proto {
	case protoTCP:
		return tcpValidNew(pi)
	case protoICMP, protoICMPv6:
		return icmpTable(pi.key.Family)[pi.key.SrcType].isRequest
	}
	return true
}

// commit creates and publishes a connection for a new packet. It returns
// (nil, false) when a limit or the NAT ranges refuse it.
func (t *Tracker) commit(p *packet.Packet, pi *pktInfo, a *odp.CtParams, related bool, now int64) (*Conn, bool) {
	for {
		z := t.getZone(pi.key.Zone, true)
		z.mu.Lock()
		if z.dead {
			z.mu.Unlock()
			continue
		}
		c, ok := t.commitLocked(z, pi, a, related, now)
		z.mu.Unlock()
		return c, ok
	}
}

// commitLocked is commit with the zone locked.
//
// Preconditions: z.mu is held.
func (t *Tracker) commitLocked(z *zone, pi *pktInfo, a *odp.CtParams, related bool, now int64) (*Conn, bool) {
	h0 := pi.key.hash(t.seed)
	if c, _ := z.lookup(&pi.key, h0); c != nil && !c.expired(now) {
		return c, true // a concurrent commit won
	} else if c != nil && z.removeLocked(c) {
		t.reuse.retireLocked(z, c)
		t.count.Add(-1)
	}
	if l := z.limit.Load(); l != 0 && z.count.Load() >= int64(l) {
		z.refused.Add(1)
		t.zoneFull.Add(1)
		return nil, false
	}
	if t.count.Add(1) > int64(t.maxConns.Load()) {
		t.count.Add(-1)
		t.full.Add(1)
		return nil, false
	}
	rev := pi.key.reverse()
	var kind uint8
	if a.NAT != nil && (a.NAT.Src || a.NAT.Dst) {
		var ok bool
		if rev, kind, ok = t.nat.choose(z, &pi.key, a.NAT); !ok {
			t.count.Add(-1)
			t.natExhausted.Add(1)
			return nil, false
		}
	}
	h1 := rev.hash(t.seed)
	if o, _ := z.lookup(&rev, h1); o != nil {
		// The reply key is someone else's key: the tuple space is taken.
		t.count.Add(-1)
		t.natExhausted.Add(1)
		return nil, false
	}
	c := t.reuse.newConn(z)
	c.nodes[0].key, c.nodes[0].nat = pi.key, kind
	c.nodes[1].key = rev
	if related {
		c.flags |= connAlgRelated
	}
	c.helper = helperByName(a.Helper)
	pol := t.cfg.policy(z)
	switch {
	case pi.key.Proto == protoTCP:
		tcpNew(c, pi, pol, now)
	case pi.key.Proto == protoICMP || pi.key.Proto == protoICMPv6:
		icmpNew(c, pol, now)
	default:
		otherNew(c, pol, now)
	}
	z.insertLocked(c, [2]uint64{h0, h1})
	z.track(&t.reuse, c)
	return c, true
}

// remove deletes c from zone z (if still there).
func (t *Tracker) remove(z *zone, c *Conn) {
	z.mu.Lock()
	if !z.dead && z.removeLocked(c) {
		t.reuse.retireLocked(z, c)
		t.count.Add(-1)
	}
	z.mu.Unlock()
}

// SetTCPLiberal turns the TCP sequence window check off (true) or on, as
// `ovs-appctl dpctl/ct-disable-tcp-seq-chk` / `ct-enable-tcp-seq-chk`.
func (t *Tracker) SetTCPLiberal(on bool) { t.liberal.Store(on) }

// TCPLiberal reports whether the TCP sequence check is off.
func (t *Tracker) TCPLiberal() bool { return t.liberal.Load() }

// Stats returns the tracker's counters.
func (t *Tracker) Stats() Stats {
	return Stats{
		Conns:        t.count.Load(),
		Invalid:      t.invalid.Load(),
		ZoneFull:     t.zoneFull.Load(),
		Full:         t.full.Load(),
		NATExhausted: t.natExhausted.Load(),
		Fragments:    t.frags.Load(),
		ExpiredSwept: t.swept.Load(),
	}
}

// Count returns the number of connections.
func (t *Tracker) Count() int { return int(t.count.Load()) }

// ZoneCount returns the number of connections in zone z.
func (t *Tracker) ZoneCount(z uint16) int {
	if zz := t.zones[z].Load(); zz != nil {
		return int(zz.count.Load())
	}
	return 0
}

// SetMaxConns sets the global limit (dpctl/ct-set-maxconns).
func (t *Tracker) SetMaxConns(n uint32) { t.maxConns.Store(n) }

// MaxConns returns the global limit.
func (t *Tracker) MaxConns() uint32 { return t.maxConns.Load() }

// ZoneLimit is one zone's configured limit and current count.
type ZoneLimit struct {
	Zone  uint16
	Limit uint32
	Count int
}

// SetLimits sets the default zone limit (if def is non-nil) and
// per-zone limits, as dpctl/ct-set-limits; a limit of 0 means unlimited.
func (t *Tracker) SetLimits(def *uint32, zones map[uint16]uint32) {
	t.cfg.setLimits(&t.zones, def, zones)
}

// DeleteLimits removes per-zone limits (dpctl/ct-del-limits): the zones
// fall back to the default limit.
func (t *Tracker) DeleteLimits(zones ...uint16) { t.cfg.deleteLimits(&t.zones, zones) }

// Limits returns the default limit and, for the requested zones (all
// zones with an explicit limit if none are given), their limits and counts.
func (t *Tracker) Limits(zones ...uint16) (def uint32, out []ZoneLimit) {
	l := t.cfg.limits.Load()
	if len(zones) == 0 {
		for z := range l.zone {
			zones = append(zones, z)
		}
		sortU16(zones)
	}
	for _, z := range zones {
		out = append(out, ZoneLimit{Zone: z, Limit: l.of(z), Count: t.ZoneCount(z)})
	}
	return l.def, out
}

// ZoneRefused returns how many commits zone z's limit refused.
func (t *Tracker) ZoneRefused(z uint16) uint64 {
	if zz := t.zones[z].Load(); zz != nil {
		return zz.refused.Load()
	}
	return 0
}

// SetDefaultTimeoutPolicy replaces the default timeout policy.
func (t *Tracker) SetDefaultTimeoutPolicy(p TimeoutPolicy) {
	t.cfg.setDefaultPolicy(&t.zones, p)
}

// SetZoneTimeoutPolicy sets zone z's timeout policy (OVSDB CT_Zone
// timeout_policy); nil reverts to the default. Existing connections take
// the new timeouts with their next packet.
func (t *Tracker) SetZoneTimeoutPolicy(z uint16, p *TimeoutPolicy) {
	t.cfg.setZonePolicy(&t.zones, z, p)
}

// ZoneTimeoutPolicy returns the policy zone z uses.
func (t *Tracker) ZoneTimeoutPolicy(z uint16) TimeoutPolicy { return t.cfg.zonePolicy(z) }

func sortU16(s []uint16) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// ErrBadTuple is what ParseTupleMatch's errors are for malformed text.
var ErrBadTuple = errors.New("conntrack: bad ct-tuple")

// Now returns the tracker's clock (nanoseconds), the time base of Sweep.
func (t *Tracker) Now() int64 { return t.now() }
