package conntrack

import "unsafe"

// FlushZone removes every connection of zone z and returns how many there
// were. It detaches the zone's table with one atomic swap, so it costs the
// same for a full and an empty zone and never waits for lookups; the
// connections, and the table, are reused after a grace period (see the
// package doc). Packets already past the lookup finish with the
// connection they found (at most one batch).
func (t *Tracker) FlushZone(z uint16) int {
	t.zones[z].flushes.Add(1)
	if t.zones[z].Load() == nil {
		return 0 // never written: no cache-line transfer for an empty zone
	}
	old := t.zones[z].Swap(nil)
	if old == nil {
		return 0
	}
	old.mu.Lock()
	old.dead = true
	n := old.count.Load()
	conns, tab := old.all, old.tab.Load()
	old.all, old.spare = nil, nil
	old.mu.Unlock()
	if n > 0 {
		t.zones[z].sizeHint.Store(uint32(min(len(tab.heads), maxHintBuckets)))
	}
	t.count.Add(-n)
	t.reuse.retireZone(conns, tab)
	return int(n)
}

// FlushAll removes every connection of every zone.
func (t *Tracker) FlushAll() int {
	n := 0
	for i := range t.zones {
		if t.zones[i].Load() != nil {
			n += t.FlushZone(uint16(i))
		}
	}
	return n
}

// FlushTuple removes the connection of zone k.Zone one of whose keys
// (original or reply direction, as Open vSwitch's flush-conntrack
// ct-tuple) is k. It reports whether one was found.
func (t *Tracker) FlushTuple(k Key) bool {
	ac := t.reuse.enterAnon(unsafe.Pointer(t))
	defer ac.Add(-1)
	z := t.zones[k.Zone].Load()
	if z == nil {
		return false
	}
	if k.Proto == protoICMP || k.Proto == protoICMPv6 {
		// A tuple names the type; fill in the type of the answer.
		k.DstType = icmpTable(k.Family)[k.SrcType].reverse
	}
	c, _ := z.lookup(&k, k.hash(t.seed))
	if c == nil {
		return false
	}
	z.mu.Lock()
	ok := !z.dead && z.removeLocked(c)
	if ok {
		t.reuse.retireLocked(z, c)
	}
	z.mu.Unlock()
	if ok {
		t.count.Add(-1)
	}
	return ok
}

// Sweep removes expired connections, visiting at most budget buckets and
// connections (empty zones cost one unit per 64), and resumes where the
// previous call stopped. It returns the number removed and whether it
// completed a pass over all zones. The datapath calls it periodically;
// nothing ever walks all connections at once.
func (t *Tracker) Sweep(now int64, budget int) (removed int, wrapped bool) {
	t.sweepMu.Lock()
	defer t.sweepMu.Unlock()
	// The chains are walked without the zone lock.
	ac := t.reuse.enterAnon(unsafe.Pointer(t))
	defer ac.Add(-1)
	skipped := 0
	for budget > 0 {
		if t.sweepZone >= NumZones {
			t.sweepZone, t.sweepBucket = 0, 0
			wrapped = true
			break
		}
		z := t.zones[t.sweepZone].Load()
		if z == nil || z.count.Load() == 0 {
			t.sweepZone++
			t.sweepBucket = 0
			if skipped++; skipped == 64 {
				skipped = 0
				budget--
			}
			continue
		}
		b := z.tab.Load()
		if t.sweepBucket >= len(b.heads) {
			t.sweepZone++
			t.sweepBucket = 0
			continue
		}
		var expired [16]*Conn
		n := 0
		for nd := b.heads[t.sweepBucket].Load(); nd != nil; nd = nd.next.Load() {
			budget--
			if !nd.reply && nd.conn().expired(now) && n < len(expired) {
				expired[n] = nd.conn()
				n++
			}
		}
		budget--
		if n > 0 {
			z.mu.Lock()
			for _, c := range expired[:n] {
				// Re-check under the lock: a packet may have refreshed it.
				if !z.dead && c.expired(now) && z.removeLocked(c) {
					t.reuse.retireLocked(z, c)
					t.count.Add(-1)
					removed++
				}
			}
			z.mu.Unlock()
			if n == len(expired) {
				continue // more in this bucket: stay on it
			}
		}
		t.sweepBucket++
	}
	t.swept.Add(uint64(removed))
	return removed, wrapped
}

// ZoneFlushes returns how many times zone z was flushed (FlushZone).
func (t *Tracker) ZoneFlushes(z uint16) uint32 { return t.zones[z].flushes.Load() }
