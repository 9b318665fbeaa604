package conntrack

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// Memory reuse (see the package doc, "Reuse"): a removed connection, and
// the bucket array of a flushed zone, go to a limbo stamped with a new
// epoch; once every reader has passed a quiescent point since then, they
// move to a pool from which commits take them instead of allocating.

// Caps on what reuse keeps from the collector, in connections.
const (
	// maxPooledConns bounds the connections ready for reuse (24 MiB).
	maxPooledConns = 1 << 17
	// maxLimboConns bounds the connections waiting for a grace period
	// (24 MiB); beyond it the oldest are left to the collector.
	maxLimboConns = 1 << 17
	// maxPooledTabs bounds the flushed zones' bucket arrays kept.
	maxPooledTabs = 8
	// minPooledTab is the smallest bucket array worth keeping.
	minPooledTab = 1024
	// spareChunk is how many pooled connections a zone takes at once.
	spareChunk = 32
	// checkEvery is how many fresh allocations a zone makes between two
	// attempts to end a grace period that did not end yet.
	checkEvery = 64
	// anonStripes spreads the counters of callers without a Reader.
	anonStripes = 8
)

// offline is Reader.seen of a reader that holds nothing until it next
// executes.
const offline = math.MaxUint64

// Reader is one goroutine's handle for running ct() with connection
// reuse: a datapath worker creates one, calls ExecuteAt through it, and
// calls Quiesce between batches (when it holds nothing from conntrack)
// and Offline before it blocks. A connection removed at some time is
// reused only after every Reader has quiesced (or gone offline) since.
// A Reader must not be used by two goroutines at once.
type Reader struct {
	t *Tracker
	// seen is the epoch at the reader's last quiescent point, or offline.
	seen   atomic.Uint64
	closed bool
	_      [64 - 8 - 8 - 8]byte // own cache line: Quiesce writes it
	memo   connMemo
}

// anonStripe counts the running calls of one stripe of callers without
// a Reader, in two phases: a call counts in the phase current when it
// starts, and a grace period flips the phase and waits (without
// blocking) for the old one to drain, so that calls starting all the
// time cannot hold reuse back for ever.
type anonStripe struct {
	n [2]atomic.Int64
	_ [48]byte
}

// retired is one limbo entry: a removed connection or a flushed zone's
// connections (in commit order) and bucket array.
type retired struct {
	epoch uint64
	c     *Conn
	conns []*Conn
	tab   *buckets
}

// connRun is a flushed zone's connections, taken from pos on.
type connRun struct {
	conns []*Conn
	pos   int
}

// maxPooledLists bounds the arrays kept for zones' connection lists.
const maxPooledLists = 8

// reuse owns the Tracker's memory reuse: the limbo of retired
// connections and bucket arrays waiting for a grace period, the pool
// they then move to, the Reader registry and the counters of calls
// without a Reader. Commits and zone creations allocate through it
// (newConn, newList, newTable); removals and flushes retire through it
// (retireLocked, retireZone).
type reuse struct {
	// epoch is bumped by every retirement; readers publish the value
	// they saw at their quiescent points.
	epoch atomic.Uint64
	// pooled is the number of connections in the pool (a hint read
	// without mu, so that commits skip the lock when it is empty).
	pooled atomic.Int64
	// nlimbo is the number of limbo entries (a hint, as pooled).
	nlimbo atomic.Int64
	// anon counts running calls without a Reader, striped by the
	// caller's batch address so that workers do not share a line.
	anon [anonStripes]anonStripe
	// anonPhase is the phase new calls count in (bit 0).
	anonPhase atomic.Uint64

	readersMu sync.Mutex
	// readers is copied on write (readersMu) and read without a lock.
	readers atomic.Pointer[[]*Reader]

	mu sync.Mutex
	// guarded by mu
	limbo []retired // oldest first, epochs nondecreasing
	// guarded by mu
	limboHead int
	// guarded by mu
	limboConns int
	// anonSafe is the epoch up to which no call without a Reader can
	// hold a retired connection; anonPending says that the phase was
	// flipped at epoch anonFlip and the old phase has not drained yet.
	// guarded by mu
	anonSafe uint64
	// guarded by mu
	anonFlip uint64
	// guarded by mu
	anonPending bool
	// runs are flushed zones' connections, taken from the front (commit
	// order, so that a refilled zone gets the memory layout it had).
	// guarded by mu
	runs []connRun
	// lists are the emptied arrays of consumed runs, for new zones' all.
	// guarded by mu
	lists [][]*Conn
	// nlists is len(lists) (a hint, as pooled).
	nlists atomic.Int64
	// free are connections removed one by one.
	// guarded by mu
	free []*Conn
	// guarded by mu
	tabs []*buckets
	// limboCap and poolCap are maxLimboConns and maxPooledConns (tests
	// lower them).
	limboCap, poolCap int
	// ntabs is len(tabs) (a hint, as pooled).
	ntabs atomic.Int64
	// reused counts the connections handed out by the pool.
	reused atomic.Uint64
	// coldDropped counts flushed zones not reused because cold.
	coldDropped atomic.Uint64
	// cold is coldRun (tests replace it).
	cold func([]*Conn) bool
	// off is Config.NoReuse: nothing is retired.
	off bool
}

// coldProbeNs is the time above which reading one word in each of four
// pages of a flushed zone shows them paged out by the host: on the VM
// this was measured on, memory left untouched for a second or more
// costs 20-80 µs per 4 KiB page to touch again (the four reads took
// 0.1-0.3 ms; about 1.3 µs per connection, against a fresh page's fault
// at about 0.25 µs per connection), while they take under 1 µs when the
// memory is resident, even out of the caches.
const coldProbeNs = 16000

// coldRun reports whether the memory of a flushed zone's connections is
// paged out (see coldProbeNs), probing four connections spread over it.
func coldRun(conns []*Conn) bool {
	n := len(conns)
	t0 := time.Now()
	var sink int64
	for i := range 4 {
		sink += conns[i*n/4].expires.Load()
	}
	runtime.KeepAlive(sink)
	return time.Since(t0) > coldProbeNs
}

// NewReader registers a reader. It starts online: until its first
// Quiesce or Offline it holds back every connection removed after now.
func (t *Tracker) NewReader() *Reader {
	r := &Reader{t: t}
	r.seen.Store(t.reuse.epoch.Load())
	u := &t.reuse
	u.readersMu.Lock()
	old := u.readers.Load()
	var rs []*Reader
	if old != nil {
		rs = append(rs, *old...)
	}
	rs = append(rs, r)
	u.readers.Store(&rs)
	u.readersMu.Unlock()
	return r
}

// Close unregisters r; it no longer holds anything back. Calls through a
// closed reader run as Tracker.ExecuteAt.
func (r *Reader) Close() {
	u := &r.t.reuse
	u.readersMu.Lock()
	defer u.readersMu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	var rs []*Reader
	for _, o := range *u.readers.Load() {
		if o != r {
			rs = append(rs, o)
		}
	}
	u.readers.Store(&rs)
}

// Quiesce declares that the caller holds nothing it got from conntrack
// through r (it is between batches). It writes only when a retirement
// happened since the last call.
func (r *Reader) Quiesce() {
	r.memo.forget()
	if g := r.t.reuse.epoch.Load(); r.seen.Load() != g {
		r.seen.Store(g)
	}
}

// Offline declares that r will not run anything until its next
// ExecuteAt or Quiesce (a worker about to block): it then holds nothing
// back however long it waits.
func (r *Reader) Offline() {
	r.memo.forget()
	if r.seen.Load() != offline {
		r.seen.Store(offline)
	}
}

// Execute is Tracker.Execute through r.
func (r *Reader) Execute(b *packet.Batch, a *odp.CtParams) {
	r.ExecuteAt(b, a, r.t.now())
}

// ExecuteAt is Tracker.ExecuteAt through r: it costs no shared write.
func (r *Reader) ExecuteAt(b *packet.Batch, a *odp.CtParams, now int64) {
	if r.closed {
		r.t.ExecuteAt(b, a, now)
		return
	}
	if r.seen.Load() == offline {
		// Online again: the store is ordered before every read below.
		r.seen.Store(r.t.reuse.epoch.Load())
	}
	r.t.executeAt(b, a, now, &r.memo)
}

// enterAnon brackets, with the Add(-1) of the counter it returns, a
// read by a caller without a Reader (ExecuteAt, Sweep, FlushTuple):
// nothing retired while it runs is reused before it returns.
func (u *reuse) enterAnon(key unsafe.Pointer) *atomic.Int64 {
	c := &u.anon[(uintptr(key)>>6)%anonStripes].n[u.anonPhase.Load()&1]
	c.Add(1)
	return c
}

// drained reports whether no call counts in phase ph.
func (u *reuse) drained(ph uint64) bool {
	for i := range u.anon {
		if u.anon[i].n[ph&1].Load() != 0 {
			return false
		}
	}
	return true
}

// anonSafeLocked returns the epoch up to which no call without a Reader
// can hold a retired connection. A call that could hold one retired at
// epoch e started before e, so it counts in the phase current before
// the next flip: once that phase has drained, e is safe. A call that
// read the phase before the flip but counts after it starts after e and
// cannot reach what e retired.
//
// Preconditions: u.mu is held.
func (u *reuse) anonSafeLocked() uint64 {
	if u.anonPending && u.drained(u.anonPhase.Load()^1) {
		u.anonSafe, u.anonPending = u.anonFlip, false
	}
	if g := u.epoch.Load(); !u.anonPending && u.anonSafe < g {
		old := u.anonPhase.Load()
		u.anonPhase.Store(old ^ 1)
		u.anonFlip, u.anonPending = g, true
		if u.drained(old) {
			u.anonSafe, u.anonPending = g, false
		}
	}
	return u.anonSafe
}

// retireLocked unlinks nothing: it records c, already unlinked from its
// zone's table, and drops it from the zone's list.
//
// Preconditions: z.mu is held and c was just removed from z.
func (u *reuse) retireLocked(z *zone, c *Conn) {
	z.untrack(c)
	if u.off {
		return
	}
	u.mu.Lock()
	u.pushLocked(retired{c: c}, 1)
	u.mu.Unlock()
}

// retireZone records the connections and table of a flushed zone.
func (u *reuse) retireZone(conns []*Conn, tab *buckets) {
	if u.off || len(conns) == 0 && (tab == nil || len(tab.heads) < minPooledTab) {
		return
	}
	u.mu.Lock()
	// Beyond the cap the rest of the run is left to the collector.
	conns = truncRun(conns, u.limboCap)
	u.pushLocked(retired{conns: conns, tab: tab}, len(conns))
	u.mu.Unlock()
}

// pushLocked stamps e with a new epoch and appends it to the limbo,
// dropping the oldest entries beyond the cap.
//
// Preconditions: u.mu is held.
func (u *reuse) pushLocked(e retired, n int) {
	e.epoch = u.epoch.Add(1)
	u.limbo = append(u.limbo, e)
	u.limboConns += n
	for u.limboConns > u.limboCap && u.limboHead < len(u.limbo) {
		u.dropHeadLocked()
	}
	u.nlimbo.Store(int64(len(u.limbo) - u.limboHead))
}

// dropHeadLocked removes the oldest limbo entry (to the collector or
// the pool).
//
// Preconditions: u.mu is held.
func (u *reuse) dropHeadLocked() retired {
	e := u.limbo[u.limboHead]
	u.limbo[u.limboHead] = retired{}
	u.limboHead++
	if e.c != nil {
		u.limboConns--
	} else {
		u.limboConns -= len(e.conns)
	}
	if u.limboHead == len(u.limbo) {
		u.limbo, u.limboHead = u.limbo[:0], 0
	} else if u.limboHead >= 64 && u.limboHead*2 >= len(u.limbo) {
		n := copy(u.limbo, u.limbo[u.limboHead:])
		clear(u.limbo[n:])
		u.limbo, u.limboHead = u.limbo[:n], 0
	}
	return e
}

// safeEpochLocked returns the newest epoch whose retirements no reader
// can still hold: every Reader has published a later or equal epoch
// (or is offline), and every call without a Reader that may have
// started before it has returned.
//
// Preconditions: u.mu is held.
func (u *reuse) safeEpochLocked() uint64 {
	safe := u.anonSafeLocked()
	if rs := u.readers.Load(); rs != nil {
		for _, r := range *rs {
			safe = min(safe, r.seen.Load())
		}
	}
	return safe
}

// advanceLocked moves the limbo entries whose grace period has ended to
// the pool.
//
// Preconditions: u.mu is held.
func (u *reuse) advanceLocked() {
	if u.limboHead == len(u.limbo) {
		return
	}
	safe := u.safeEpochLocked()
	for u.limboHead < len(u.limbo) && u.limbo[u.limboHead].epoch <= safe {
		e := u.dropHeadLocked()
		if len(e.conns) > 0 && u.cold(e.conns) {
			// Paged out: a fresh page costs less. Leave the zone's
			// connections and table to the collector.
			clear(e.conns)
			u.coldDropped.Add(1)
			continue
		}
		room := u.poolCap - int(u.pooled.Load())
		switch {
		case e.c != nil:
			if room > 0 {
				u.free = append(u.free, e.c)
				u.pooled.Add(1)
			}
		case len(e.conns) > 0 && room > 0:
			conns := truncRun(e.conns, room)
			u.runs = append(u.runs, connRun{conns: conns})
			u.pooled.Add(int64(len(conns)))
		}
		if e.tab != nil && len(e.tab.heads) >= minPooledTab && len(u.tabs) < maxPooledTabs {
			u.tabs = append(u.tabs, e.tab)
			u.ntabs.Store(int64(len(u.tabs)))
		}
	}
	u.nlimbo.Store(int64(len(u.limbo) - u.limboHead))
}

// newConn returns a zeroed connection for zone z: one from z's spares,
// else from the pool (ending grace periods when it is empty), else a
// new one.
//
// Preconditions: z.mu is held.
func (u *reuse) newConn(z *zone) *Conn {
	if z.spareHead == len(z.spare) {
		z.spare, z.spareHead = z.spare[:0], 0
		if u.pooled.Load() > 0 || (u.nlimbo.Load() > 0 && z.sinceCheck%checkEvery == 0) {
			u.mu.Lock()
			if u.pooled.Load() == 0 {
				u.advanceLocked()
			}
			z.spare = u.takeLocked(z.spare)
			u.mu.Unlock()
		}
		if len(z.spare) == 0 {
			z.sinceCheck++
			return &Conn{}
		}
		z.sinceCheck = 0
	}
	c := z.spare[z.spareHead]
	z.spare[z.spareHead] = nil
	z.spareHead++
	// Nobody reads c any more (grace period): a plain reset is safe.
	*c = Conn{}
	return c
}

// takeLocked appends up to spareChunk pooled connections to dst, the
// flushed zones' runs first, in order.
//
// Preconditions: u.mu is held.
func (u *reuse) takeLocked(dst []*Conn) []*Conn {
	for len(dst) < spareChunk && len(u.runs) > 0 {
		r := &u.runs[0]
		n := min(spareChunk-len(dst), len(r.conns)-r.pos)
		dst = append(dst, r.conns[r.pos:r.pos+n]...)
		clear(r.conns[r.pos : r.pos+n])
		if r.pos += n; r.pos == len(r.conns) {
			if cap(r.conns) >= minPooledTab && len(u.lists) < maxPooledLists {
				u.lists = append(u.lists, r.conns[:0])
				u.nlists.Store(int64(len(u.lists)))
			}
			u.runs[0] = connRun{}
			u.runs = u.runs[1:]
			if len(u.runs) == 0 {
				u.runs = nil
			}
		}
	}
	for len(dst) < spareChunk && len(u.free) > 0 {
		dst = append(dst, u.free[len(u.free)-1])
		u.free[len(u.free)-1] = nil
		u.free = u.free[:len(u.free)-1]
	}
	if len(u.free) == 0 {
		u.free = nil
	}
	u.pooled.Store(u.pooled.Load() - int64(len(dst)))
	u.reused.Add(uint64(len(dst)))
	return dst
}

// truncRun returns the first n of conns, clearing the rest so that the
// array does not keep them from the collector.
func truncRun(conns []*Conn, n int) []*Conn {
	if len(conns) <= n {
		return conns
	}
	clear(conns[n:])
	return conns[:n]
}

// newList returns an empty array for a zone's connection list: a
// consumed run's if one is pooled (no page faults while it fills).
func (u *reuse) newList() []*Conn {
	if u.nlists.Load() == 0 {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	n := len(u.lists)
	if n == 0 {
		return nil
	}
	l := u.lists[n-1]
	u.lists[n-1] = nil
	u.lists = u.lists[:n-1]
	u.nlists.Store(int64(n - 1))
	return l
}

// newTable returns an empty bucket array of n buckets, a flushed zone's
// whose grace period has ended if one of that size is pooled.
func (u *reuse) newTable(n int) *buckets {
	if n >= minPooledTab && u.nlimbo.Load()+u.ntabs.Load() > 0 {
		u.mu.Lock()
		if len(u.tabs) == 0 {
			u.advanceLocked()
		}
		for i, b := range u.tabs {
			if len(b.heads) == n {
				last := len(u.tabs) - 1
				u.tabs[i], u.tabs[last] = u.tabs[last], nil
				u.tabs = u.tabs[:last]
				u.ntabs.Store(int64(len(u.tabs)))
				u.mu.Unlock()
				// Nobody reads b any more (grace period).
				clear(b.heads)
				return b
			}
		}
		u.mu.Unlock()
	}
	return newBuckets(n)
}

// ReuseStats are the counters of connection reuse.
type ReuseStats struct {
	Reused      uint64 // retired connections handed to commits (in chunks)
	ColdDropped uint64 // flushed zones left to the collector because paged out
	Pooled      int64  // connections ready for reuse
	Limbo       int64  // retirements waiting for a grace period
}

// ReuseStats returns the reuse counters.
func (t *Tracker) ReuseStats() ReuseStats { return t.reuse.stats() }

func (u *reuse) stats() ReuseStats {
	return ReuseStats{Reused: u.reused.Load(), ColdDropped: u.coldDropped.Load(), Pooled: u.pooled.Load(), Limbo: u.nlimbo.Load()}
}
