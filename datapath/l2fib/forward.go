package l2fib

import (
	"encoding/binary"
	"sync"
	"sync/atomic"

	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// Registry maps the table ids that mac_learn(table=N) names to tables.
// Readers (every worker, per batch) load an immutable snapshot; writers
// (bridge add/delete) copy it.
type Registry struct {
	mu   sync.Mutex // serialises writers
	snap atomic.Pointer[map[uint32]*Table]
}

// Set installs t as table id, replacing any previous one (nil deletes).
func (r *Registry) Set(id uint32, t *Table) {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := make(map[uint32]*Table)
	if old := r.snap.Load(); old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	if t == nil {
		delete(next, id)
	} else {
		next[id] = t
	}
	r.snap.Store(&next)
}

// Get returns table id, or nil.
func (r *Registry) Get(id uint32) *Table {
	if m := r.snap.Load(); m != nil {
		return (*m)[id]
	}
	return nil
}

// Decisions for one packet of a batch, besides an index into Ports.
const (
	decFlood = -1
	decDrop  = -2
	decDone  = -3
)

// Forwarder executes mac_learn for one worker. It owns the scratch state
// that keeps the action allocation-free; it is not safe for concurrent
// use (one per poll-mode worker, like odp.Context).
type Forwarder struct {
	reg *Registry
	// NoTable counts packets dropped because the action named a table
	// the registry does not hold (bridge being deleted).
	NoTable uint64

	out   packet.Batch
	dec   [packet.BatchSize]int32
	last  [packet.BatchSize]int32 // flood: index in Ports of the last port the packet goes to
	flood [packet.BatchSize]uint8
	// Per packet i: [2i] source, [2i+1] destination (key 0: none).
	keys   [2 * packet.BatchSize]uint64
	hashes [2 * packet.BatchSize]uint64
	heads  [2 * packet.BatchSize]uint32
	sink   uint32

	flooded, unicast, hairpin, runts, noRoom, reflected uint64
}

// NewForwarder returns a forwarder resolving tables through reg.
func NewForwarder(reg *Registry) *Forwarder { return &Forwarder{reg: reg} }

// Forward runs a mac_learn action on b, which it owns (odp.Datapath's
// MACLearn contract): every packet is output through ctx.DP.Output or
// returned to ctx.Pool (counted in ctx.Dropped) before it returns.
func (f *Forwarder) Forward(ctx *odp.Context, a *odp.Action, b *packet.Batch) {
	var t *Table
	if a.MACLearn != nil && f.reg != nil {
		t = f.reg.Get(a.MACLearn.Table)
	}
	if t == nil {
		f.NoTable += uint64(b.N)
		drop(ctx, b)
		return
	}
	f.ForwardTable(ctx, t, a.MACLearn, b)
}

func drop(ctx *odp.Context, b *packet.Batch) {
	for _, p := range b.Slice() {
		ctx.Pool.Put(p)
	}
	ctx.Dropped += uint64(b.N)
	b.Clear()
}

// ForwardTable learns each packet's source in t on the packet's in_port
// (m.LearnPort instead when set) within m.VLAN, looks its destination up
// and outputs it: to the learned port if that port is a member of the
// VLAN and not the input port (hairpin: dropped, as Open vSwitch), else to
// every member port but the input port (flood: unknown, broadcast and
// multicast destinations). Packets leave tagged or untagged per port as m
// says; a member with Recirc is recirculated instead of output. Packets
// to one port go out as one batch, in arrival order.
func (f *Forwarder) ForwardTable(ctx *odp.Context, t *Table, m *odp.MACLearnParams, b *packet.Batch) {
	n := b.N
	vlan := uint64(m.VLAN&0xfff) << 48
	// Stage 1 computes every key and hash; stages 2 and 3 load every
	// bucket head, then every head entry, in loops with independent
	// iterations, so that the cache misses of the batch overlap instead
	// of queueing one after another in stage 4.
	for i := 0; i < n; i++ {
		d := b.Pkts[i].Data()
		var ks, kd uint64
		if len(d) >= 14 {
			if d[6]&1 == 0 { // never learn a multicast source
				ks = keyValid | vlan | uint64(binary.BigEndian.Uint16(d[6:]))<<32 | uint64(binary.BigEndian.Uint32(d[8:]))
			}
			if d[0]&1 == 0 {
				kd = keyValid | vlan | uint64(binary.BigEndian.Uint16(d[0:]))<<32 | uint64(binary.BigEndian.Uint32(d[2:]))
			}
		}
		f.keys[2*i], f.keys[2*i+1] = ks, kd
		f.hashes[2*i], f.hashes[2*i+1] = t.hash(ks), t.hash(kd)
	}
	for j := 0; j < 2*n; j++ {
		f.heads[j] = 0
		if f.keys[j] != 0 {
			h := f.hashes[j]
			if bk := t.shardOf(h).buckets.Load(); bk != nil {
				f.heads[j] = (*bk)[uint32(h)&t.bucketMask].Load()
			}
		}
	}
	// Walk all chains one hop per round, so that the second and later
	// entries of colliding chains are fetched in parallel too.
	var sink uint64
	for round := 0; round < 4; round++ {
		pending := false
		for j := 0; j < 2*n; j++ {
			idx := f.heads[j]
			if idx == 0 {
				continue
			}
			c := t.shardOf(f.hashes[j]).chunks[(idx-1)>>chunkBits].Load()
			if c == nil {
				f.heads[j] = 0
				continue
			}
			e := &c[(idx-1)&chunkMask]
			k := e.key.Load()
			sink += k
			if k == f.keys[j] {
				f.heads[j] = 0
			} else {
				f.heads[j] = e.next.Load()
				pending = true
			}
		}
		if !pending {
			break
		}
	}
	f.sink += uint32(sink)
	now := t.now()
	// Stage 4: learn, then look up, packet by packet (a batch may hold
	// both directions of a conversation).
	for i := 0; i < n; i++ {
		p := b.Pkts[i]
		ks, kd := f.keys[2*i], f.keys[2*i+1]
		if ks == 0 && kd == 0 && len(p.Data()) < 14 {
			f.runts++
			f.dec[i] = decDrop
			continue
		}
		in := inPortOf(m, p)
		if ks != 0 {
			if m.DropIfMoved {
				if at, ok := t.lookupKey(ks, f.hashes[2*i]); ok && at != in {
					f.reflected++
					f.dec[i] = decDrop
					continue
				}
			}
			t.learnKey(ks, f.hashes[2*i], in, now)
		}
		f.dec[i] = decFlood
		if kd == 0 {
			continue
		}
		port, ok := t.lookupKey(kd, f.hashes[2*i+1])
		if !ok {
			continue
		}
		if port == in {
			f.hairpin++
			f.dec[i] = decDrop
			continue
		}
		if j, ok := portIndex(m, port); ok {
			f.dec[i] = int32(j)
		}
		// A learned port outside the VLAN (configuration changed and
		// the flush has not run yet) floods rather than black-holes.
	}
	// Drops, then unicast groups, then floods.
	nflood := 0
	for i := 0; i < n; i++ {
		switch d := f.dec[i]; {
		case d == decDrop:
			ctx.Pool.Put(b.Pkts[i])
			ctx.Dropped++
		case d == decFlood:
			f.flood[nflood] = uint8(i)
			nflood++
		}
	}
	for i := 0; i < n; i++ {
		d := f.dec[i]
		if d < 0 {
			continue
		}
		mp := m.Ports[d]
		for j := i; j < n; j++ {
			if f.dec[j] == d {
				f.dec[j] = decDone
				f.emit(ctx, m, mp, b.Pkts[j])
			}
		}
		f.unicast += uint64(f.out.N)
		f.send(ctx, mp)
	}
	if nflood > 0 {
		f.floodAll(ctx, m, b, nflood)
	}
	b.Clear()
	f.flush(t)
}

// inPortOf is the port p came in on as far as the MAC table is
// concerned.
func inPortOf(m *odp.MACLearnParams, p *packet.Packet) uint32 {
	if m.LearnPort != 0 {
		return m.LearnPort
	}
	return p.Md.InPort
}

// portIndex finds port among m's members.
func portIndex(m *odp.MACLearnParams, port uint32) (int, bool) {
	lo, hi := 0, len(m.Ports)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if m.Ports[mid].Port < port {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(m.Ports) && m.Ports[lo].Port == port
}

// floodAll sends the flood packets to every member port but their input
// port: copies for all but the last port, which gets the original.
func (f *Forwarder) floodAll(ctx *odp.Context, m *odp.MACLearnParams, b *packet.Batch, nflood int) {
	for x := 0; x < nflood; x++ {
		in := inPortOf(m, b.Pkts[f.flood[x]])
		last := len(m.Ports) - 1
		if last >= 0 && m.Ports[last].Port == in {
			last--
		}
		f.last[x] = int32(last)
		if last < 0 { // no port to flood to
			ctx.Pool.Put(b.Pkts[f.flood[x]])
			ctx.Dropped++
		} else {
			f.flooded++
		}
	}
	for pi, mp := range m.Ports {
		for x := 0; x < nflood; x++ {
			p := b.Pkts[f.flood[x]]
			if int(f.last[x]) < pi || inPortOf(m, p) == mp.Port {
				continue
			}
			if int(f.last[x]) > pi {
				c := ctx.Pool.Get()
				c.CopyFrom(p)
				p = c
			}
			f.emit(ctx, m, mp, p)
		}
		f.send(ctx, mp)
	}
}

// emit adds p to the output batch, tagging or untagging it for mp.
func (f *Forwarder) emit(ctx *odp.Context, m *odp.MACLearnParams, mp odp.MACLearnPort, p *packet.Packet) {
	switch {
	case mp.Tagged && !m.InTagged:
		tag, err := p.InsertAt(12, 4)
		if err != nil {
			f.noRoom++
			ctx.Pool.Put(p)
			ctx.Dropped++
			return
		}
		binary.BigEndian.PutUint16(tag, 0x8100)
		binary.BigEndian.PutUint16(tag[2:], m.VLAN&0xfff)
	case !mp.Tagged && m.InTagged:
		if d := p.Data(); len(d) >= 18 {
			if tp := binary.BigEndian.Uint16(d[12:]); tp == 0x8100 || tp == 0x88a8 {
				p.RemoveAt(12, 4)
			}
		}
	}
	f.out.Add(p)
}

// send hands the output batch to the datapath, which takes ownership:
// output on mp's port (a bond's chosen member), or recirculation for a
// patch port.
func (f *Forwarder) send(ctx *odp.Context, mp odp.MACLearnPort) {
	if f.out.N == 0 {
		return
	}
	switch {
	case mp.Recirc != 0:
		for _, p := range f.out.Slice() {
			p.Md.RecircID = mp.Recirc
		}
		ctx.DP.Recirc(ctx, mp.Recirc, &f.out)
	case mp.Out != 0:
		ctx.DP.Output(ctx, mp.Out, &f.out)
	default:
		ctx.DP.Output(ctx, mp.Port, &f.out)
	}
	f.out.Clear()
}

// flush moves the batch's counters to the table: one atomic add per
// non-zero counter per batch, not per packet.
func (f *Forwarder) flush(t *Table) {
	if f.flooded != 0 {
		t.flooded.Add(f.flooded)
		f.flooded = 0
	}
	if f.unicast != 0 {
		t.unicast.Add(f.unicast)
		f.unicast = 0
	}
	if f.hairpin != 0 {
		t.hairpin.Add(f.hairpin)
		f.hairpin = 0
	}
	if f.runts != 0 {
		t.runts.Add(f.runts)
		f.runts = 0
	}
	if f.noRoom != 0 {
		t.noRoom.Add(f.noRoom)
		f.noRoom = 0
	}
	if f.reflected != 0 {
		t.reflected.Add(f.reflected)
		f.reflected = 0
	}
}

// Range calls fn for every installed table (for housekeeping such as
// aging sweeps).
func (r *Registry) Range(fn func(id uint32, t *Table)) {
	if m := r.snap.Load(); m != nil {
		for id, t := range *m {
			fn(id, t)
		}
	}
}
