package l2fib

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/datapath/odp"
)

// MAC is an Ethernet address.
type MAC [6]byte

// String formats the address as Open vSwitch does (lower-case hex).
func (m MAC) String() string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

// ParseMAC parses xx:xx:xx:xx:xx:xx.
func ParseMAC(s string) (MAC, error) {
	var m MAC
	if len(s) != 17 {
		return m, fmt.Errorf("l2fib: bad MAC address %q", s)
	}
	for i := range m {
		if i > 0 && s[3*i-1] != ':' {
			return m, fmt.Errorf("l2fib: bad MAC address %q", s)
		}
		hi, ok1 := unhex(s[3*i])
		lo, ok2 := unhex(s[3*i+1])
		if !ok1 || !ok2 {
			return m, fmt.Errorf("l2fib: bad MAC address %q", s)
		}
		m[i] = hi<<4 | lo
	}
	return m, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c|0x20 >= 'a' && c|0x20 <= 'f':
		return c | 0x20 - 'a' + 10, true
	}
	return 0, false
}

// Defaults. DefaultCapacity is 4 Mi entries per bridge (Open vSwitch
// defaults to 8,192 and clamps mac-table-size to 1 M); see the package
// documentation for what it costs (about 176 MiB full).
const (
	DefaultCapacity     = 1 << 22
	DefaultAgingTime    = 300 * time.Second
	DefaultMoveLimit    = 5
	DefaultMoveWindow   = 10 * time.Second
	DefaultMoveLockTime = 20 * time.Second
	DefaultWarnInterval = 5 * time.Second
	// MaxCapacity bounds mac-table-size: entry indexes are 32-bit per
	// shard and memory is the real limit long before.
	MaxCapacity = 1 << 30
	// EntryBytes is the size of one entry (the bucket word comes on top).
	EntryBytes = 40
)

// Config is a table's configuration: the Bridge other_config keys
// mac-table-size and mac-aging-time, plus gvs's flap damping.
type Config struct {
	// Capacity is the maximum number of entries (mac-table-size);
	// 0 means DefaultCapacity.
	Capacity int
	// AgingTime is how long an entry lives without being refreshed
	// (mac-aging-time); 0 means DefaultAgingTime. Whole seconds.
	AgingTime time.Duration
	// A MAC that moves between ports more than MoveLimit times within
	// MoveWindow is locked to its current port for MoveLockTime: moves
	// during the lock are refused and counted. 0 means the default;
	// a negative MoveLimit disables damping.
	MoveLimit    int
	MoveWindow   time.Duration
	MoveLockTime time.Duration
	// Shards is the number of insert-lock shards, a power of two;
	// 0 picks one shard per 16 Ki entries of capacity, up to 256.
	// Each shard may hold its share of Capacity plus 1/8 slack.
	Shards int
	// Warn, if set, receives rate-limited warnings (at most one per
	// kind per WarnInterval, default DefaultWarnInterval) with the
	// number suppressed since the last one. It is called on the packet
	// path without locks held and must not block.
	Warn         func(Warning)
	WarnInterval time.Duration
	// StaticMoves, if set, counts moves refused because the entry is
	// static (Open vSwitch's mac_learning_static_none_move coverage
	// counter). A resized table keeps the old table's.
	StaticMoves odp.Counter
	// Seed seeds the hash (0: random).
	Seed uint64
}

// WarnKind says what a Warning is about.
type WarnKind uint8

const (
	// WarnEvicting: the table is full and learning evicts entries.
	WarnEvicting WarnKind = iota
	// WarnFull: the table is full of static entries; a MAC was not learned.
	WarnFull
	// WarnMACFlap: a MAC moved too often and is locked to its port.
	WarnMACFlap
	numWarnKinds
)

var warnNames = [numWarnKinds]string{"evicting", "full", "mac-flap"}

func (k WarnKind) String() string {
	if k < numWarnKinds {
		return warnNames[k]
	}
	return "unknown"
}

// Warning is one rate-limited event for the owner to log.
type Warning struct {
	Kind       WarnKind
	VLAN       uint16
	MAC        MAC
	Port       uint32 // the port learned (or refused)
	OldPort    uint32 // WarnEvicting: the evicted entry's port; WarnMACFlap: the locked port
	Suppressed uint64 // warnings of this kind dropped by the rate limit since the last one
}

// Stats are the table's counters (fdb/stats-show, coverage, metrics).
type Stats struct {
	Current  uint64 // entries now, static included
	Max      uint64 // capacity
	Static   uint64 // static entries now
	Learned  uint64 // dynamic entries created by learning
	Expired  uint64 // entries removed by aging
	Evicted  uint64 // entries removed to make room
	Moved    uint64 // entries that moved to another port
	Locked   uint64 // times a flapping MAC was locked to its port
	Blocked  uint64 // moves refused because the MAC was locked
	Refused  uint64 // MACs not learned: the table was full of static entries
	Flooded  uint64 // packets flooded (unknown, broadcast, multicast destination)
	Unicast  uint64 // packets sent to a learned port
	Hairpin  uint64 // packets dropped: the destination is on the input port
	Runts    uint64 // packets dropped: shorter than an Ethernet header
	NoRoomTx uint64 // packet copies dropped: no room to push a VLAN tag
	// Reflected counts packets dropped by drop_if_moved: their source
	// was learned on another port (a bond's reflected flood).
	Reflected uint64
}

// Entry is one table entry as Dump reports it.
type Entry struct {
	Port   uint32
	VLAN   uint16
	MAC    MAC
	Age    uint32 // seconds since last refresh
	Static bool
}

// Entry flags.
const (
	flagStatic = 1 << 0
)

// keyValid marks a live key; a zero key word is a free slot.
const keyValid = 1 << 63

func makeKey(vlan uint16, mac MAC) uint64 {
	return keyValid | uint64(vlan&0xfff)<<48 | uint64(mac[0])<<40 | uint64(mac[1])<<32 |
		uint64(mac[2])<<24 | uint64(mac[3])<<16 | uint64(mac[4])<<8 | uint64(mac[5])
}

func keyVLAN(k uint64) uint16 { return uint16(k>>48) & 0xfff }

func keyMAC(k uint64) MAC {
	return MAC{byte(k >> 40), byte(k >> 32), byte(k >> 24), byte(k >> 16), byte(k >> 8), byte(k)}
}

// entry is one (VLAN, MAC) → port mapping. Chunks of entries hold no
// pointers, so the GC never scans them. Fields read by lock-free lookups
// are atomics; the rest is guarded by the shard's mu.
type entry struct {
	key  atomic.Uint64 // keyValid|vlan<<48|mac, 0 when free
	port atomic.Uint32
	used atomic.Uint32 // clock second of the last refresh
	next atomic.Uint32 // hash chain, index+1 (0 ends)

	lprev, lnext uint32 // port list (free list uses lnext), index+1
	moveStart    uint32 // start of the current flap-damping window
	lockUntil    uint32 // moves refused before this second
	moves        uint8
	flags        uint8
}

const (
	chunkBits = 10
	chunkSize = 1 << chunkBits
	chunkMask = chunkSize - 1
	// maxChain bounds a lock-free walk. A walk that wanders through
	// entries freed and reused under it (it can then follow another
	// chain) ends as a miss instead of looping.
	maxChain = 64
)

type chunk [chunkSize]entry

// list is a doubly linked list of entries of one port (head/tail index+1).
type list struct {
	head, tail uint32
	n          int
}

// portLists are one port's entries in one shard, dynamic and static apart
// so that eviction never walks static entries.
type portLists struct {
	dyn, static list
}

// shard owns the entries whose hash falls in it.
type shard struct {
	// Lock-free readers load buckets and chunks; writers hold mu.
	buckets atomic.Pointer[[]atomic.Uint32]
	chunks  []atomic.Pointer[chunk] // fixed length, filled on demand
	mem     *arena                  // the table's, where chunks and buckets live
	n       atomic.Int64            // live entries, for Stats without mu

	mu sync.Mutex
	// guarded by mu
	top uint32 // entries ever handed out from chunks
	// guarded by mu
	free uint32 // free list head, index+1
	// guarded by mu
	limit int
	// guarded by mu
	ports map[uint32]*portLists
	// guarded by mu
	sweep uint32 // next index the aging sweep visits

	_ [64]byte // keep neighbouring shards' locks apart
}

// Table is one bridge's MAC learning table.
//
// Lock order: shard locks are taken one at a time, never nested.
type Table struct {
	aging                atomic.Uint32 // seconds; SetAgingTime changes it
	moveWindow, moveLock uint32        // seconds
	moveLimit            int
	warnInterval         uint32
	warnFn               func(Warning)
	staticMoves          odp.Counter
	capacity             atomic.Int64 // SetCapacity lowers or raises it up to allocated
	allocated            int          // the capacity the shards were sized for
	shardShift           uint
	bucketMask           uint32
	seed                 uint64
	shards               []shard
	mem                  *arena

	clock atomic.Uint32 // coarse time in seconds (Tick); refresh stamps use it
	count atomic.Int64  // entries, reserved before insertion (capacity check)
	// changes counts inserts, moves and removals (not refreshes): NORMAL
	// translated per MAC address revalidates its megaflows when it moves.
	changes atomic.Uint64

	learned, expired, evicted, moved, locked, blocked, refused atomic.Uint64
	flooded, unicast, hairpin, runts, noRoom                   atomic.Uint64
	reflected                                                  atomic.Uint64
	static                                                     atomic.Int64

	// visits counts entries flushes visit (to test that a port flush
	// costs only that port's entries).
	visits atomic.Uint64

	warnLast [numWarnKinds]atomic.Uint32
	warnSupp [numWarnKinds]atomic.Uint64
}

// ErrBadConfig reports an invalid Config.
var ErrBadConfig = errors.New("l2fib: bad configuration")

// New returns an empty table. now sets the table clock (see Tick).
func New(cfg Config, now time.Time) (*Table, error) {
	if cfg.Capacity == 0 {
		cfg.Capacity = DefaultCapacity
	}
	if cfg.Capacity < 1 || cfg.Capacity > MaxCapacity {
		return nil, fmt.Errorf("%w: capacity %d not in 1..%d", ErrBadConfig, cfg.Capacity, MaxCapacity)
	}
	if cfg.AgingTime == 0 {
		cfg.AgingTime = DefaultAgingTime
	}
	if cfg.AgingTime < time.Second {
		return nil, fmt.Errorf("%w: aging time %v under 1s", ErrBadConfig, cfg.AgingTime)
	}
	if cfg.MoveLimit == 0 {
		cfg.MoveLimit = DefaultMoveLimit
	}
	if cfg.MoveWindow == 0 {
		cfg.MoveWindow = DefaultMoveWindow
	}
	if cfg.MoveLockTime == 0 {
		cfg.MoveLockTime = DefaultMoveLockTime
	}
	if cfg.WarnInterval == 0 {
		cfg.WarnInterval = DefaultWarnInterval
	}
	if cfg.Shards == 0 {
		cfg.Shards = defaultShards(cfg.Capacity)
	}
	if cfg.Shards < 1 || cfg.Shards > 1<<16 || cfg.Shards&(cfg.Shards-1) != 0 || cfg.Shards > cfg.Capacity {
		return nil, fmt.Errorf("%w: shards %d not a power of two in 1..min(capacity,65536)", ErrBadConfig, cfg.Shards)
	}
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64() | 1
	}
	perShard := (cfg.Capacity + cfg.Shards - 1) / cfg.Shards
	nb := 1
	for nb < perShard {
		nb *= 2
	}
	t := &Table{
		moveWindow:   secs(cfg.MoveWindow),
		moveLock:     secs(cfg.MoveLockTime),
		moveLimit:    cfg.MoveLimit,
		warnInterval: secs(cfg.WarnInterval),
		warnFn:       cfg.Warn,
		staticMoves:  cfg.StaticMoves,
		allocated:    cfg.Capacity,
		shardShift:   uint(64 - bits.TrailingZeros(uint(cfg.Shards))), // 64 for one shard: h>>64 == 0
		bucketMask:   uint32(nb - 1),
		seed:         cfg.Seed,
		shards:       make([]shard, cfg.Shards),
		mem:          &arena{},
	}
	// Lock-free readers hold the *Table while they touch its memory, so
	// unmapping once the table is unreachable is safe.
	runtime.AddCleanup(t, func(a *arena) { a.release() }, t.mem)
	for i := range t.shards {
		s := &t.shards[i]
		s.limit = perShard
		if cfg.Shards > 1 {
			s.limit += perShard/8 + 64 // slack for uneven hashing
		}
		s.chunks = make([]atomic.Pointer[chunk], (s.limit+chunkSize-1)/chunkSize)
		s.ports = make(map[uint32]*portLists)
		s.mem = t.mem
	}
	t.capacity.Store(int64(cfg.Capacity))
	t.aging.Store(secs(cfg.AgingTime))
	t.Tick(now)
	return t, nil
}

// defaultShards is one shard per 16 Ki entries of capacity, up to 256.
func defaultShards(capacity int) int {
	n := 1
	for n < 256 && n*16384 < capacity {
		n *= 2
	}
	return n
}

func secs(d time.Duration) uint32 {
	s := d / time.Second
	if s < 1 {
		return 1
	}
	if s > 1<<30 {
		return 1 << 30
	}
	return uint32(s)
}

// Capacity returns the configured maximum number of entries.
func (t *Table) Capacity() int { return int(t.capacity.Load()) }

// Resize applies configuration c's capacity (mac-table-size) and returns
// the table to use from then on. Where t's shards fit the new capacity it
// is t, changed in place (SetCapacity); otherwise a new table, sized and
// sharded for it, takes over t's entries and counters (the oldest dynamic
// entries beyond the new capacity removed and counted as expired, as
// SetCapacity does), and the caller installs it in t's place. Learning
// that happens in t while a new table is filled is not carried over.
func (t *Table) Resize(c Config, now time.Time) (*Table, error) {
	n := c.Capacity
	if n == 0 {
		n = DefaultCapacity
	}
	if n == t.Capacity() {
		return t, nil
	}
	shards := c.Shards
	if shards == 0 {
		shards = defaultShards(n)
	}
	if n <= t.allocated && shards == len(t.shards) {
		_, err := t.SetCapacity(n)
		return t, err
	}
	if c.StaticMoves == nil {
		c.StaticMoves = t.staticMoves
	}
	nt, err := New(c, now)
	if err != nil {
		return nil, err
	}
	nt.clock.Store(t.clock.Load())
	static, dyn := t.byAge()
	dropped := min(max(0, len(static)+len(dyn)-nt.Capacity()), len(dyn))
	for _, e := range append(static, dyn[dropped:]...) {
		var w Warning
		nt.learnSlow(e.key, nt.hash(e.key), e.port, e.used, e.static, &w)
	}
	ncounters := nt.counters()
	for i, c := range t.counters() {
		ncounters[i].Store(c.Load())
	}
	nt.expired.Add(uint64(dropped))
	return nt, nil
}

// aged is an entry as byAge lists it.
type aged struct {
	shard, idx uint32
	key        uint64
	port, used uint32
	pos        int
	static     bool
}

// byAge lists t's static entries, and its dynamic ones oldest first
// (within a second, in their port list's learning order).
func (t *Table) byAge() (static, dyn []aged) {
	for si := range t.shards {
		s := &t.shards[si]
		s.mu.Lock()
		for port, pl := range s.ports {
			for _, l := range []*list{&pl.static, &pl.dyn} {
				pos := 0
				for idx := l.head; idx != 0; idx = s.at(idx).lnext {
					e := s.at(idx)
					a := aged{uint32(si), idx, e.key.Load(), port, e.used.Load(), pos, e.flags&flagStatic != 0}
					if a.static {
						static = append(static, a)
					} else {
						dyn = append(dyn, a)
					}
					pos++
				}
			}
		}
		s.mu.Unlock()
	}
	now := t.now()
	slices.SortStableFunc(dyn, func(a, b aged) int {
		if c := cmp.Compare(now-a.used, now-b.used); c != 0 {
			return -c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	return static, dyn
}

// ErrCapacityTooLarge is SetCapacity's answer to a capacity above the one
// the table was created with: its memory is laid out for that one, so the
// caller makes a new table instead.
var ErrCapacityTooLarge = errors.New("l2fib: capacity above the table's allocation")

// SetCapacity changes mac-table-size in place, up to the capacity the
// table was created with. Lowering it below the entries held removes the
// least recently used dynamic entries at once, as Open vSwitch's
// mac_learning_run trims its table to a new max_entries, and counts them
// as expired, as it does; static entries stay. It returns how many were
// removed.
func (t *Table) SetCapacity(n int) (int, error) {
	if n < 1 || n > t.allocated {
		return 0, fmt.Errorf("%w: %d (allocated %d)", ErrCapacityTooLarge, n, t.allocated)
	}
	t.capacity.Store(int64(n))
	excess := int(t.count.Load()) - n
	if excess <= 0 {
		return 0, nil
	}
	_, dyn := t.byAge()
	removed := 0
	for _, c := range dyn {
		if removed >= excess {
			break
		}
		s := &t.shards[c.shard]
		s.mu.Lock()
		if e := s.at(c.idx); e.key.Load() == c.key && e.flags&flagStatic == 0 {
			t.remove(s, c.idx, e)
			removed++
		}
		s.mu.Unlock()
	}
	t.expired.Add(uint64(removed))
	return removed, nil
}

// AgingTime returns the configured aging time.
func (t *Table) AgingTime() time.Duration { return time.Duration(t.aging.Load()) * time.Second }

// SetAgingTime changes the aging time (mac-aging-time changed); d under
// a second counts as one second. The next sweeps apply it.
func (t *Table) SetAgingTime(d time.Duration) { t.aging.Store(secs(d)) }

// Tick advances the table's coarse clock, which stamps refreshes on the
// packet path. The owner calls it about once a second (with Sweep).
func (t *Table) Tick(now time.Time) {
	s := uint32(now.Unix())
	if t.clock.Load() != s {
		t.clock.Store(s)
	}
}

// now returns the coarse clock.
func (t *Table) now() uint32 { return t.clock.Load() }

func (t *Table) hash(k uint64) uint64 {
	h := (k ^ t.seed) * 0x9e3779b97f4a7c15
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 32
	return h
}

func (t *Table) shardOf(h uint64) *shard {
	return &t.shards[(h>>t.shardShift)&uint64(len(t.shards)-1)]
}

// at returns entry idx (index+1). The chunk exists: indexes are published
// only after their chunk.
func (s *shard) at(idx uint32) *entry {
	c := s.chunks[(idx-1)>>chunkBits].Load()
	return &c[(idx-1)&chunkMask]
}

// lookup finds the live entry for k without locks. The caller validates
// what it reads from the entry by re-reading key (see Lookup).
func (t *Table) lookup(k, h uint64) *entry {
	s := t.shardOf(h)
	b := s.buckets.Load()
	if b == nil {
		return nil
	}
	idx := (*b)[uint32(h)&t.bucketMask].Load()
	for steps := 0; idx != 0 && steps < maxChain; steps++ {
		c := s.chunks[(idx-1)>>chunkBits].Load()
		if c == nil {
			return nil
		}
		e := &c[(idx-1)&chunkMask]
		if e.key.Load() == k {
			return e
		}
		idx = e.next.Load()
	}
	return nil
}

// Get returns the entry for (vlan, mac): its port and whether it is
// static. It takes the entry's shard lock.
func (t *Table) Get(vlan uint16, mac MAC) (port uint32, static, ok bool) {
	k := makeKey(vlan, mac)
	h := t.hash(k)
	s := t.shardOf(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, _ := t.find(s, k, h)
	if e == nil {
		return 0, false, false
	}
	return e.port.Load(), e.flags&flagStatic != 0, true
}

// Lookup returns the port learned for (vlan, mac). It takes no lock.
func (t *Table) Lookup(vlan uint16, mac MAC) (port uint32, ok bool) {
	k := makeKey(vlan, mac)
	return t.lookupKey(k, t.hash(k))
}

func (t *Table) lookupKey(k, h uint64) (uint32, bool) {
	e := t.lookup(k, h)
	if e == nil {
		return 0, false
	}
	p := e.port.Load()
	if e.key.Load() != k { // freed and reused under us
		return 0, false
	}
	return p, true
}

// Learn records that (vlan, mac) was seen on port at the table clock:
// a refresh if it is already there (lock-free), else an insert or a move
// under the shard lock. Static entries are not changed by learning.
func (t *Table) Learn(vlan uint16, mac MAC, port uint32) {
	k := makeKey(vlan, mac)
	t.learnKey(k, t.hash(k), port, t.now())
}

func (t *Table) learnKey(k, h uint64, port, now uint32) {
	if e := t.lookup(k, h); e != nil && e.port.Load() == port {
		// The refresh stamp is written only when the second changes,
		// so hot entries do not bounce a cache line between workers.
		if e.used.Load() != now {
			e.used.Store(now)
		}
		if e.key.Load() == k {
			return
		}
	}
	var w Warning
	if t.learnSlow(k, h, port, now, false, &w) {
		t.warn(w, now)
	}
}

// find returns the entry for k and its index (mu held).
//
// guarded by s.mu
func (t *Table) find(s *shard, k, h uint64) (*entry, uint32) {
	b := s.buckets.Load()
	if b == nil {
		return nil, 0
	}
	for idx := (*b)[uint32(h)&t.bucketMask].Load(); idx != 0; {
		e := s.at(idx)
		if e.key.Load() == k {
			return e, idx
		}
		idx = e.next.Load()
	}
	return nil, 0
}

// learnSlow inserts, moves or (static) sets an entry under the shard
// lock. It reports whether *w holds a warning to emit once unlocked.
func (t *Table) learnSlow(k, h uint64, port, now uint32, static bool, w *Warning) bool {
	s := t.shardOf(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, idx := t.find(s, k, h)
	if e != nil {
		old := e.port.Load()
		isStatic := e.flags&flagStatic != 0
		switch {
		case static:
			if !isStatic {
				s.unlinkList(idx, e)
				e.flags |= flagStatic
				t.static.Add(1)
			} else {
				s.unlinkList(idx, e)
			}
			e.port.Store(port)
			e.used.Store(now)
			s.linkList(idx, e, port)
			t.changes.Add(1)
			return false
		case isStatic:
			if old != port && t.staticMoves != nil {
				t.staticMoves.Add(1)
			}
			return false
		case old == port:
			e.used.Store(now)
			return false
		}
		// A move. Flap damping first.
		if t.moveLimit > 0 {
			if int32(now-e.lockUntil) < 0 {
				t.blocked.Add(1)
				return false
			}
			if now-e.moveStart >= t.moveWindow {
				e.moveStart, e.moves = now, 0
			}
			if e.moves < 255 {
				e.moves++
			}
			if int(e.moves) > t.moveLimit {
				e.lockUntil = now + t.moveLock
				e.moves = 0
				e.moveStart = now
				t.locked.Add(1)
				*w = Warning{Kind: WarnMACFlap, VLAN: keyVLAN(k), MAC: keyMAC(k), Port: port, OldPort: old}
				return true
			}
		}
		s.unlinkList(idx, e)
		e.port.Store(port)
		e.used.Store(now)
		s.linkList(idx, e, port)
		t.moved.Add(1)
		t.changes.Add(1)
		return false
	}
	warned := false
	// The table is full when it holds capacity entries; a shard is also
	// full at its own limit, which has slack for uneven hashing so that
	// the table as a whole fills to exactly its capacity.
	reserved := t.reserve()
	if !reserved || int(s.n.Load()) >= s.limit {
		vidx, ve := s.victim()
		if ve == nil {
			if reserved {
				t.count.Add(-1)
			}
			t.refused.Add(1)
			*w = Warning{Kind: WarnFull, VLAN: keyVLAN(k), MAC: keyMAC(k), Port: port}
			return true
		}
		*w = Warning{Kind: WarnEvicting, VLAN: keyVLAN(k), MAC: keyMAC(k), Port: port, OldPort: ve.port.Load()}
		warned = true
		if !reserved {
			// The new entry takes the evicted one's place: count it
			// before remove uncounts the victim, so no other shard can
			// reserve the slot in between.
			t.count.Add(1)
		}
		t.remove(s, vidx, ve)
		t.evicted.Add(1)
	}
	idx = s.alloc()
	e = s.at(idx)
	e.port.Store(port)
	e.used.Store(now)
	e.moveStart, e.lockUntil, e.moves, e.flags = now, now, 0, 0
	if static {
		e.flags = flagStatic
		t.static.Add(1)
	} else {
		t.learned.Add(1)
	}
	b := s.buckets.Load()
	if b == nil {
		nb := t.mem.newBuckets(int(t.bucketMask + 1))
		b = &nb
		s.buckets.Store(b)
	}
	head := &(*b)[uint32(h)&t.bucketMask]
	e.next.Store(head.Load())
	e.key.Store(k) // publish: readers see port and used before key
	head.Store(idx)
	s.linkList(idx, e, port)
	s.n.Add(1)
	t.changes.Add(1)
	return warned
}

// alloc returns a free entry index, taking a new chunk when needed. The
// caller has checked the shard's limit.
//
// guarded by s.mu
func (s *shard) alloc() uint32 {
	if idx := s.free; idx != 0 {
		s.free = s.at(idx).lnext
		return idx
	}
	s.top++
	idx := s.top
	ci := (idx - 1) >> chunkBits
	if s.chunks[ci].Load() == nil {
		s.chunks[ci].Store(s.mem.newChunk())
	}
	return idx
}

// guarded by s.mu
func (s *shard) lists(port uint32) *portLists {
	pl := s.ports[port]
	if pl == nil {
		pl = &portLists{}
		s.ports[port] = pl
	}
	return pl
}

func (s *shard) listOf(pl *portLists, e *entry) *list {
	if e.flags&flagStatic != 0 {
		return &pl.static
	}
	return &pl.dyn
}

// linkList appends entry idx to its port's list.
//
// guarded by s.mu
func (s *shard) linkList(idx uint32, e *entry, port uint32) {
	l := s.listOf(s.lists(port), e)
	e.lprev, e.lnext = l.tail, 0
	if l.tail != 0 {
		s.at(l.tail).lnext = idx
	} else {
		l.head = idx
	}
	l.tail = idx
	l.n++
}

// unlinkList removes entry idx from its port's list.
//
// guarded by s.mu
func (s *shard) unlinkList(idx uint32, e *entry) {
	port := e.port.Load()
	pl := s.ports[port]
	if pl == nil {
		return
	}
	l := s.listOf(pl, e)
	if e.lprev != 0 {
		s.at(e.lprev).lnext = e.lnext
	} else {
		l.head = e.lnext
	}
	if e.lnext != 0 {
		s.at(e.lnext).lprev = e.lprev
	} else {
		l.tail = e.lprev
	}
	e.lprev, e.lnext = 0, 0
	l.n--
	if pl.dyn.n == 0 && pl.static.n == 0 {
		delete(s.ports, port)
	}
}

// remove deletes entry idx: off its hash chain (readers already on it
// continue through its next link), off its port list, onto the free list.
//
// guarded by s.mu
func (t *Table) remove(s *shard, idx uint32, e *entry) {
	k := e.key.Load()
	h := t.hash(k)
	b := s.buckets.Load()
	slot := &(*b)[uint32(h)&t.bucketMask]
	if cur := slot.Load(); cur == idx {
		slot.Store(e.next.Load())
	} else {
		for cur != 0 {
			ce := s.at(cur)
			nx := ce.next.Load()
			if nx == idx {
				ce.next.Store(e.next.Load())
				break
			}
			cur = nx
		}
	}
	e.key.Store(0)
	s.unlinkList(idx, e)
	if e.flags&flagStatic != 0 {
		t.static.Add(-1)
	}
	e.flags = 0
	e.lnext = s.free
	s.free = idx
	s.n.Add(-1)
	t.count.Add(-1)
	t.changes.Add(1)
}

// reserve counts one more entry unless the table is at its capacity.
func (t *Table) reserve() bool {
	for {
		c := t.count.Load()
		if c >= t.capacity.Load() {
			return false
		}
		if t.count.CompareAndSwap(c, c+1) {
			return true
		}
	}
}

// evictScan bounds how many entries at the head of the victim port's list
// are compared to pick the least recently used one.
const evictScan = 8

// victim picks the entry to evict: from the port holding the most dynamic
// entries in this shard, the least recently refreshed of the oldest few.
//
// guarded by s.mu
func (s *shard) victim() (uint32, *entry) {
	var best *portLists
	var bestPort uint32
	for port, pl := range s.ports {
		if pl.dyn.n > 0 && (best == nil || pl.dyn.n > best.dyn.n || pl.dyn.n == best.dyn.n && port < bestPort) {
			best, bestPort = pl, port
		}
	}
	if best == nil {
		return 0, nil
	}
	vidx := best.dyn.head
	ve := s.at(vidx)
	idx := ve.lnext
	for i := 1; i < evictScan && idx != 0; i++ {
		e := s.at(idx)
		if int32(e.used.Load()-ve.used.Load()) < 0 {
			vidx, ve = idx, e
		}
		idx = e.lnext
	}
	return vidx, ve
}

// warn emits w unless the rate limit for its kind suppresses it.
func (t *Table) warn(w Warning, now uint32) {
	if t.warnFn == nil {
		return
	}
	last := &t.warnLast[w.Kind]
	l := last.Load()
	if l != 0 && now-l < t.warnInterval || !last.CompareAndSwap(l, now|1) {
		t.warnSupp[w.Kind].Add(1)
		return
	}
	w.Suppressed = t.warnSupp[w.Kind].Swap(0)
	t.warnFn(w)
}

// AddStatic adds or replaces a static entry (fdb/add): never aged, never
// evicted, not moved by learning. It fails when the shard is full of
// static entries.
func (t *Table) AddStatic(vlan uint16, mac MAC, port uint32) error {
	k := makeKey(vlan, mac)
	var w Warning
	if t.learnSlow(k, t.hash(k), port, t.now(), true, &w) {
		if w.Kind == WarnFull {
			return fmt.Errorf("l2fib: add static %s vlan %d: table full of static entries", mac, vlan)
		}
		t.warn(w, t.now())
	}
	return nil
}

// DelStatic removes a static entry (fdb/del). It reports whether one was
// there; dynamic entries are left alone, as Open vSwitch.
func (t *Table) DelStatic(vlan uint16, mac MAC) bool {
	k := makeKey(vlan, mac)
	h := t.hash(k)
	s := t.shardOf(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, idx := t.find(s, k, h)
	if e == nil || e.flags&flagStatic == 0 {
		return false
	}
	t.remove(s, idx, e)
	return true
}

// Delete removes the entry for (vlan, mac), static or not.
func (t *Table) Delete(vlan uint16, mac MAC) bool {
	k := makeKey(vlan, mac)
	h := t.hash(k)
	s := t.shardOf(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, idx := t.find(s, k, h)
	if e == nil {
		return false
	}
	t.remove(s, idx, e)
	return true
}

// FlushPort removes port's dynamic entries, and its static ones too if
// static is set (the port was deleted rather than brought down). It
// visits only that port's entries (plus one map lookup per shard) and
// returns how many it removed.
func (t *Table) FlushPort(port uint32, static bool) int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		if pl := s.ports[port]; pl != nil {
			n += t.flushList(s, &pl.dyn)
			if static {
				n += t.flushList(s, &pl.static)
			}
		}
		s.mu.Unlock()
	}
	return n
}

// guarded by s.mu
func (t *Table) flushList(s *shard, l *list) int {
	n := 0
	for l.head != 0 {
		t.visits.Add(1)
		idx := l.head
		t.remove(s, idx, s.at(idx))
		n++
	}
	return n
}

// FlushVLAN removes the VLAN's entries (static too if static is set).
// It walks the whole table.
func (t *Table) FlushVLAN(vlan uint16, static bool) int {
	return t.filter(func(k uint64, e *entry) bool {
		return keyVLAN(k) == vlan&0xfff && (static || e.flags&flagStatic == 0)
	})
}

// Flush removes every entry (fdb/flush), static ones too if static is set.
func (t *Table) Flush(static bool) int {
	return t.filter(func(k uint64, e *entry) bool { return static || e.flags&flagStatic == 0 })
}

// filter removes the entries del selects, one shard lock at a time.
func (t *Table) filter(del func(uint64, *entry) bool) int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		t.visits.Add(uint64(s.top))
		for idx := uint32(1); idx <= s.top; idx++ {
			e := s.at(idx)
			if k := e.key.Load(); k != 0 && del(k, e) {
				t.remove(s, idx, e)
				n++
			}
		}
		s.mu.Unlock()
	}
	return n
}

// sweepPeriod is how many Sweep calls make one pass over a table whose
// aging time allows it: entries expire at most this many seconds late.
func (t *Table) sweepPeriod() uint32 {
	return max(1, min(10, t.aging.Load()/30))
}

// Sweep ticks the clock to now and removes aged entries from a slice of
// the table, so that calls once a second cover the whole table every
// min(10, aging/30) seconds. It returns the number removed.
func (t *Table) Sweep(now time.Time) int {
	t.Tick(now)
	return t.expire(t.sweepPeriod())
}

// Expire ticks the clock to now and removes every entry not refreshed
// for the aging time, walking the whole table.
func (t *Table) Expire(now time.Time) int {
	t.Tick(now)
	return t.expire(1)
}

func (t *Table) expire(parts uint32) int {
	now, aging := t.now(), t.aging.Load()
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		if s.top > 0 {
			budget := (s.top + parts - 1) / parts
			for ; budget > 0; budget-- {
				s.sweep++
				if s.sweep > s.top {
					s.sweep = 1
				}
				e := s.at(s.sweep)
				if k := e.key.Load(); k != 0 && e.flags&flagStatic == 0 && now-e.used.Load() >= aging && int32(now-e.used.Load()) > 0 {
					t.remove(s, s.sweep, e)
					n++
				}
			}
		}
		s.mu.Unlock()
	}
	t.expired.Add(uint64(n))
	return n
}

// Changes counts the entries inserted, moved and removed so far (a
// refresh is not a change).
func (t *Table) Changes() uint64 { return t.changes.Load() }

// Count returns the number of entries from the table-wide count: one
// atomic load, where Len adds up the shards. An insert in progress may
// be counted already.
func (t *Table) Count() int { return int(t.count.Load()) }

// Len returns the number of entries.
func (t *Table) Len() int {
	n := int64(0)
	for i := range t.shards {
		n += t.shards[i].n.Load()
	}
	return int(n)
}

// Stats returns the counters.
func (t *Table) Stats() Stats {
	return Stats{
		Current: uint64(t.Len()), Max: uint64(t.capacity.Load()), Static: uint64(t.static.Load()),
		Learned: t.learned.Load(), Expired: t.expired.Load(), Evicted: t.evicted.Load(),
		Moved: t.moved.Load(), Locked: t.locked.Load(), Blocked: t.blocked.Load(),
		Refused: t.refused.Load(), Flooded: t.flooded.Load(), Unicast: t.unicast.Load(),
		Hairpin: t.hairpin.Load(), Runts: t.runts.Load(), NoRoomTx: t.noRoom.Load(),
		Reflected: t.reflected.Load(),
	}
}

// ClearStats zeroes the totals (fdb/stats-clear); current counts stay.
func (t *Table) ClearStats() {
	for _, c := range []*atomic.Uint64{&t.learned, &t.expired, &t.evicted, &t.moved, &t.locked,
		&t.blocked, &t.refused, &t.flooded, &t.unicast, &t.hairpin, &t.runts, &t.noRoom, &t.reflected} {
		c.Store(0)
	}
}

// PortCount returns how many entries port holds (dynamic, static).
func (t *Table) PortCount(port uint32) (dynamic, static int) {
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		if pl := s.ports[port]; pl != nil {
			dynamic += pl.dyn.n
			static += pl.static.n
		}
		s.mu.Unlock()
	}
	return dynamic, static
}

// Dump returns every entry, oldest refresh first and static entries last
// (the order fdb/show prints).
func (t *Table) Dump() []Entry {
	now := t.now()
	var out []Entry
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		for idx := uint32(1); idx <= s.top; idx++ {
			e := s.at(idx)
			k := e.key.Load()
			if k == 0 {
				continue
			}
			age := uint32(0)
			if u := e.used.Load(); int32(now-u) > 0 {
				age = now - u
			}
			out = append(out, Entry{Port: e.port.Load(), VLAN: keyVLAN(k), MAC: keyMAC(k), Age: age, Static: e.flags&flagStatic != 0})
		}
		s.mu.Unlock()
	}
	sortEntries(out)
	return out
}
