package tnlneigh

import (
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/ofproto/internal/ovscmd"
)

// Defaults and limits, in Open vSwitch's units.
const (
	DefaultAging     = 900 * time.Second // NEIGH_ENTRY_DEFAULT_IDLE_TIME_MS
	MaxAging         = 3600 * time.Second
	DefaultRetrans   = time.Second
	MaxRetrans       = 60 * time.Second
	maxPending       = 4096 // bound on INCOMPLETE addresses
	bridgeNameMaxLen = 15   // IFNAMSIZ - 1; longer names are truncated as in OVS
)

type key struct {
	bridge string
	ip     [16]byte // IPv4 as IPv4-mapped
}

type entry struct {
	key
	mac     [6]byte
	expires atomic.Int64 // unix nanoseconds
	seq     uint64       // insertion order, for listing
}

type pending struct {
	next    int64 // earliest time of the next request, unix nanoseconds
	expires int64
}

// Cache is the neighbour cache. The zero value is not usable; call New.
type Cache struct {
	// Now returns the current time; tests replace it before use.
	Now func() time.Time

	aging   atomic.Int64 // nanoseconds
	retrans atomic.Int64 // nanoseconds

	// entries is copy-on-write: readers load it without locking, writers
	// (holding mu) replace it with a modified copy.
	entries atomic.Pointer[map[key]*entry]

	mu      sync.Mutex
	pending map[key]*pending // guarded by mu; INCOMPLETE addresses
	seq     uint64           // guarded by mu
}

// New returns an empty cache with the default aging and retransmit times.
func New() *Cache {
	c := &Cache{Now: time.Now, pending: make(map[key]*pending)}
	c.entries.Store(&map[key]*entry{})
	c.aging.Store(int64(DefaultAging))
	c.retrans.Store(int64(DefaultRetrans))
	return c
}

func mkKey(bridge string, ip netip.Addr) key {
	if len(bridge) > bridgeNameMaxLen {
		bridge = bridge[:bridgeNameMaxLen]
	}
	return key{bridge, ip.As16()}
}

func (c *Cache) now() int64 { return c.Now().UnixNano() }

// Aging returns the idle time after which entries expire.
func (c *Cache) Aging() time.Duration { return time.Duration(c.aging.Load()) }

// SetAging sets the idle time and shortens the remaining life of every
// entry that would outlive it, as tnl/neigh/aging does.
func (c *Cache) SetAging(d time.Duration) {
	c.aging.Store(int64(d))
	exp := c.now() + int64(d)
	for _, e := range *c.entries.Load() {
		if exp < e.expires.Load() {
			e.expires.Store(exp)
		}
	}
}

// RetransTime returns the minimum interval between two requests for the
// same address.
func (c *Cache) RetransTime() time.Duration { return time.Duration(c.retrans.Load()) }

// SetRetransTime sets the interval between requests for an address.
func (c *Cache) SetRetransTime(d time.Duration) { c.retrans.Store(int64(d)) }

// Lookup returns the MAC of ip on bridge. A hit restarts the entry's idle
// timer. It does not allocate.
func (c *Cache) Lookup(bridge string, ip netip.Addr) (mac [6]byte, ok bool) {
	k := mkKey(bridge, ip)
	now := c.now()
	e := (*c.entries.Load())[k]
	if e != nil {
		if exp := e.expires.Load(); exp > now {
			// Refresh at most once per millisecond of drift so that parallel
			// lookups of one entry do not keep writing its cache line.
			if next := now + c.aging.Load(); next-exp > int64(time.Millisecond) {
				e.expires.Store(next)
			}
			mac, ok = e.mac, true
		}
	}
	return mac, ok
}

// Set binds ip to mac on bridge (tnl/neigh/set, or a snooped reply). A
// binding to the same MAC only restarts the idle timer.
func (c *Cache) Set(bridge string, ip netip.Addr, mac [6]byte) {
	k := mkKey(bridge, ip)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, k)
	if e := (*c.entries.Load())[k]; e != nil && e.expires.Load() > now {
		if e.mac == mac {
			e.expires.Store(now + c.aging.Load())
			return
		}
	}
	// A new or changed binding is a new entry, listed last.
	c.seq++
	e := &entry{key: k, mac: mac, seq: c.seq}
	e.expires.Store(now + c.aging.Load())
	m := maps.Clone(*c.entries.Load())
	m[k] = e
	c.entries.Store(&m)
}

// ShouldSendRequest reports whether the caller should send an ARP request
// or Neighbor Solicitation for ip on bridge now: the address has no valid
// entry and no request was sent within the retransmit time. A true result
// marks the address INCOMPLETE until it is learned or ages out.
func (c *Cache) ShouldSendRequest(bridge string, ip netip.Addr) bool {
	k := mkKey(bridge, ip)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := (*c.entries.Load())[k]; e != nil && e.expires.Load() > now {
		return false
	}
	if p := c.pending[k]; p != nil && p.expires > now {
		if now < p.next {
			return false
		}
		p.next = now + c.retrans.Load()
		return true
	}
	if len(c.pending) >= maxPending {
		c.expireLocked(now)
		if len(c.pending) >= maxPending {
			return true // no room to remember; do not rate-limit
		}
	}
	c.pending[k] = &pending{next: now + c.retrans.Load(), expires: now + c.aging.Load()}
	return true
}

// Incomplete reports whether a request for ip on bridge is outstanding.
func (c *Cache) Incomplete(bridge string, ip netip.Addr) bool {
	k := mkKey(bridge, ip)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[k]
	return p != nil && p.expires > now
}

// Expire drops expired entries and INCOMPLETE marks; it reports whether any
// entry was dropped (Open vSwitch then bumps the tunnel config sequence).
func (c *Cache) Expire() bool {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.expireLocked(now)
}

// Preconditions: c.mu is held for writing.
func (c *Cache) expireLocked(now int64) bool {
	changed := false
	m := maps.Clone(*c.entries.Load())
	for k, e := range m {
		if e.expires.Load() <= now {
			delete(m, k)
			changed = true
		}
	}
	if changed {
		c.entries.Store(&m)
	}
	for k, p := range c.pending {
		if p.expires <= now {
			delete(c.pending, k)
		}
	}
	return changed
}

// Flush removes every entry; with bridge != "" only that bridge's (as
// Open vSwitch does when a bridge's IP device goes away).
func (c *Cache) Flush(bridge string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := false
	m := maps.Clone(*c.entries.Load())
	for k := range m {
		if bridge == "" || k.bridge == bridge {
			delete(m, k)
			changed = true
		}
	}
	c.entries.Store(&m)
	for k := range c.pending {
		if bridge == "" || k.bridge == bridge {
			delete(c.pending, k)
		}
	}
	return changed
}

// Entry is one binding, as listed by Entries.
type Entry struct {
	Bridge string
	IP     netip.Addr
	MAC    [6]byte
}

// Entries drops expired entries and returns the rest, oldest binding first.
func (c *Cache) Entries() []Entry {
	now := c.now()
	c.mu.Lock()
	c.expireLocked(now)
	m := *c.entries.Load()
	es := make([]*entry, 0, len(m))
	for _, e := range m {
		es = append(es, e)
	}
	c.mu.Unlock()
	slices.SortFunc(es, func(a, b *entry) int { return int(a.seq - b.seq) })
	out := make([]Entry, len(es))
	for i, e := range es {
		out[i] = Entry{Bridge: e.bridge, IP: netip.AddrFrom16(e.ip).Unmap(), MAC: e.mac}
	}
	return out
}

// Show formats the cache as tnl/neigh/show does.
func (c *Cache) Show() string {
	var b strings.Builder
	b.WriteString("IP                                            MAC                 Bridge\n")
	b.WriteString("==========================================================================\n")
	for _, e := range c.Entries() {
		ip := ovscmd.FormatAddr(e.IP)
		b.WriteString(ip)
		for i := len(ip); i < 46; i++ { // INET6_ADDRSTRLEN
			b.WriteByte(' ')
		}
		b.WriteString(formatMAC(e.MAC))
		b.WriteString("   ")
		b.WriteString(e.Bridge)
		b.WriteByte('\n')
	}
	return b.String()
}

const hexDigits = "0123456789abcdef"

func formatMAC(m [6]byte) string {
	var b [17]byte
	for i, x := range m {
		if i > 0 {
			b[i*3-1] = ':'
		}
		b[i*3], b[i*3+1] = hexDigits[x>>4], hexDigits[x&15]
	}
	return string(b[:])
}
