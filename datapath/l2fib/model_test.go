package l2fib

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// model is a deliberately simple reference: a map plus per-port slices in
// insertion order, with the table's documented policies written out
// longhand.
type model struct {
	capacity                     int
	aging, window, lock          uint32
	limit                        int
	m                            map[uint64]*mEntry
	order                        map[uint32][]uint64 // dynamic entries per port, oldest first
	learned, expired, evicted    uint64
	moved, locked, blocked, refd uint64
}

type mEntry struct {
	port, used           uint32
	static               bool
	moves                uint8
	moveStart, lockUntil uint32
}

func newModel(capacity int, aging, window, lock uint32, limit int) *model {
	return &model{capacity: capacity, aging: aging, window: window, lock: lock, limit: limit,
		m: map[uint64]*mEntry{}, order: map[uint32][]uint64{}}
}

func (md *model) unorder(k uint64, port uint32) {
	o := md.order[port]
	i := slices.Index(o, k)
	md.order[port] = slices.Delete(o, i, i+1)
}

func (md *model) del(k uint64) {
	e := md.m[k]
	if !e.static {
		md.unorder(k, e.port)
	}
	delete(md.m, k)
}

// makeRoom evicts if full; false if nothing can be evicted.
func (md *model) makeRoom() bool {
	if len(md.m) < md.capacity {
		return true
	}
	best, bestN := uint32(0), 0
	for p, o := range md.order {
		if len(o) > bestN || len(o) == bestN && len(o) > 0 && p < best {
			best, bestN = p, len(o)
		}
	}
	if bestN == 0 {
		md.refd++
		return false
	}
	o := md.order[best]
	v := o[0]
	for _, k := range o[1:min(len(o), evictScan)] {
		if int32(md.m[k].used-md.m[v].used) < 0 {
			v = k
		}
	}
	md.del(v)
	md.evicted++
	return true
}

func (md *model) learn(k uint64, port, now uint32) {
	if e := md.m[k]; e != nil {
		switch {
		case e.static:
			if e.port == port { // the lock-free refresh does not look at flags
				e.used = now
			}
		case e.port == port:
			e.used = now
		case int32(now-e.lockUntil) < 0:
			md.blocked++
		default:
			if now-e.moveStart >= md.window {
				e.moveStart, e.moves = now, 0
			}
			e.moves++
			if int(e.moves) > md.limit {
				e.lockUntil, e.moves, e.moveStart = now+md.lock, 0, now
				md.locked++
				return
			}
			md.unorder(k, e.port)
			md.order[port] = append(md.order[port], k)
			e.port, e.used = port, now
			md.moved++
		}
		return
	}
	if !md.makeRoom() {
		return
	}
	md.m[k] = &mEntry{port: port, used: now, moveStart: now, lockUntil: now}
	md.order[port] = append(md.order[port], k)
	md.learned++
}

func (md *model) addStatic(k uint64, port, now uint32) bool {
	if e := md.m[k]; e != nil {
		if !e.static {
			md.unorder(k, e.port)
		}
		e.static, e.port, e.used = true, port, now
		return true
	}
	if !md.makeRoom() {
		return false
	}
	md.m[k] = &mEntry{port: port, used: now, static: true}
	return true
}

func (md *model) filter(del func(k uint64, e *mEntry) bool) int {
	n := 0
	for k, e := range md.m {
		if del(k, e) {
			md.del(k)
			n++
		}
	}
	return n
}

func (md *model) dump(now uint32) []Entry {
	var out []Entry
	for k, e := range md.m {
		age := uint32(0)
		if int32(now-e.used) > 0 {
			age = now - e.used
		}
		out = append(out, Entry{Port: e.port, VLAN: keyVLAN(k), MAC: keyMAC(k), Age: age, Static: e.static})
	}
	sortEntries(out)
	return out
}

func TestTableMatchesReferenceModelOnRandomOperations(t *testing.T) {
	for _, tc := range []struct {
		name             string
		capacity, shards int
	}{
		{"one shard, evicting", 24, 1},
		{"eight shards, never full", 10000, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sum Stats
			for seed := uint64(1); seed <= 20; seed++ {
				s := runModel(t, seed, tc.capacity, tc.shards)
				sum.Learned += s.Learned
				sum.Expired += s.Expired
				sum.Evicted += s.Evicted
				sum.Moved += s.Moved
				sum.Locked += s.Locked
				sum.Blocked += s.Blocked
			}
			// The random operations must have exercised every policy.
			if sum.Learned == 0 || sum.Expired == 0 || sum.Moved == 0 || sum.Locked == 0 || sum.Blocked == 0 ||
				(sum.Evicted == 0) != (tc.shards > 1) {
				t.Errorf("operations did not exercise every policy: %+v", sum)
			}
		})
	}
}

func runModel(t *testing.T, seed uint64, capacity, shards int) Stats {
	rng := rand.New(rand.NewPCG(seed, 7))
	start := time.Unix(1_000_000, 0)
	now := uint32(start.Unix())
	tb, err := New(Config{Capacity: capacity, Shards: shards, AgingTime: 20 * time.Second,
		MoveLimit: 3, MoveWindow: 10 * time.Second, MoveLockTime: 15 * time.Second, Seed: seed}, start)
	if err != nil {
		t.Fatal(err)
	}
	md := newModel(capacity, 20, 10, 15, 3)
	key := func() (uint16, MAC) {
		if rng.IntN(3) == 0 { // a few hot MACs, so that some flap
			return 0, MAC{0x50, 0x54, 0, 0, 0, byte(rng.IntN(3))}
		}
		return uint16(rng.IntN(3)), MAC{0x50, 0x54, 0, 0, 0, byte(rng.IntN(40))}
	}
	for step := 0; step < 3000; step++ {
		op := rng.IntN(100)
		var desc string
		switch {
		case op < 60:
			v, m := key()
			port := uint32(1 + rng.IntN(5))
			desc = fmt.Sprintf("learn %d %s %d", v, m, port)
			tb.Learn(v, m, port)
			md.learn(makeKey(v, m), port, now)
		case op < 72:
			d := uint32(rng.IntN(4))
			if rng.IntN(20) == 0 {
				d = 25
			}
			now += d
			desc = fmt.Sprintf("tick +%d", d)
			tb.Tick(time.Unix(int64(now), 0))
		case op < 78:
			desc = "expire"
			got := tb.Expire(time.Unix(int64(now), 0))
			want := md.filter(func(_ uint64, e *mEntry) bool {
				return !e.static && now-e.used >= md.aging && int32(now-e.used) > 0
			})
			md.expired += uint64(want)
			if got != want {
				t.Fatalf("seed %d step %d: expire removed %d, model %d", seed, step, got, want)
			}
		case op < 84:
			v, m := key()
			port := uint32(1 + rng.IntN(5))
			desc = fmt.Sprintf("add static %d %s %d", v, m, port)
			err := tb.AddStatic(v, m, port)
			if ok := md.addStatic(makeKey(v, m), port, now); ok != (err == nil) {
				t.Fatalf("seed %d step %d: %s: err %v, model ok %v", seed, step, desc, err, ok)
			}
		case op < 88:
			v, m := key()
			desc = fmt.Sprintf("del static %d %s", v, m)
			k := makeKey(v, m)
			want := md.m[k] != nil && md.m[k].static
			if want {
				md.del(k)
			}
			if got := tb.DelStatic(v, m); got != want {
				t.Fatalf("seed %d step %d: %s = %v, model %v", seed, step, desc, got, want)
			}
		case op < 93:
			port, static := uint32(1+rng.IntN(5)), rng.IntN(2) == 0
			desc = fmt.Sprintf("flush port %d static=%v", port, static)
			got := tb.FlushPort(port, static)
			want := md.filter(func(_ uint64, e *mEntry) bool { return e.port == port && (static || !e.static) })
			if got != want {
				t.Fatalf("seed %d step %d: %s removed %d, model %d", seed, step, desc, got, want)
			}
		case op < 97:
			v, static := uint16(rng.IntN(3)), rng.IntN(2) == 0
			desc = fmt.Sprintf("flush vlan %d static=%v", v, static)
			got := tb.FlushVLAN(v, static)
			want := md.filter(func(k uint64, e *mEntry) bool { return keyVLAN(k) == v && (static || !e.static) })
			if got != want {
				t.Fatalf("seed %d step %d: %s removed %d, model %d", seed, step, desc, got, want)
			}
		default:
			static := rng.IntN(2) == 0
			desc = fmt.Sprintf("flush static=%v", static)
			got := tb.Flush(static)
			want := md.filter(func(_ uint64, e *mEntry) bool { return static || !e.static })
			if got != want {
				t.Fatalf("seed %d step %d: %s removed %d, model %d", seed, step, desc, got, want)
			}
		}
		if got, want := tb.Dump(), md.dump(now); !slices.Equal(got, want) {
			t.Fatalf("seed %d step %d after %s:\ntable %v\nmodel %v", seed, step, desc, got, want)
		}
		s := tb.Stats()
		ws := Stats{Current: uint64(len(md.m)), Max: uint64(capacity), Learned: md.learned, Expired: md.expired,
			Evicted: md.evicted, Moved: md.moved, Locked: md.locked, Blocked: md.blocked, Refused: md.refd}
		for _, e := range md.m {
			if e.static {
				ws.Static++
			}
		}
		if s != ws {
			t.Fatalf("seed %d step %d after %s: stats\n%+v\nmodel\n%+v", seed, step, desc, s, ws)
		}
		v, m := key()
		gp, gok := tb.Lookup(v, m)
		e := md.m[makeKey(v, m)]
		if gok != (e != nil) || e != nil && gp != e.port {
			t.Fatalf("seed %d step %d: Lookup(%d, %s) = %d, %v; model %+v", seed, step, v, m, gp, gok, e)
		}
	}
	return tb.Stats()
}
