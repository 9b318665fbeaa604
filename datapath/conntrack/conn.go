package conntrack

import (
	"sync"
	"sync/atomic"

	"github.com/gvs-project/gvs/datapath/odp"
)

// Conn is one tracked connection. Its two keys are immutable once the
// connection is in a table; the TCP state is guarded by mu; expires (with
// the UDP and ICMP state in it) is atomic.
//
// The layout is for the lookup: a Conn is 192 bytes, a size class whose
// objects are 64-byte aligned, so that each direction's chain node with
// its key is one cache line and everything a packet of an established
// connection reads or writes besides (expiry, lock, protocol state, mark
// and label) is one more (see the size assertions in table.go).
type Conn struct {
	// nodes are the connection's two keys: nodes[0] the original
	// direction, nodes[1] the reply direction (the reverse of the
	// original after NAT), each an entry in its zone's hash chains.
	nodes [2]node
	// expires is the expiry time in nanoseconds of the Tracker's clock,
	// a multiple of expiryResolution, plus in its low bits (below the
	// resolution) the UDP/other or ICMP state (othersFirst..., icmps...):
	// a packet of such a connection updates both with one
	// compare-and-swap, and none when neither changes, instead of taking
	// mu. Read it with expiry and pstate.
	expires atomic.Int64

	mu sync.Mutex

	// label and mark are written under mu and read without it.
	label atomic.Pointer[[16]byte] // nil: all zero (labels are rare, so kept out of line)
	mark  atomic.Uint32

	helper uint8 // helperNone, helperFTP, helperTFTP
	flags  uint8 // connAlgRelated

	// guarded by mu
	tcp [2]tcpPeer
}

const (
	natSrc = 1 << 0
	natDst = 1 << 1

	connAlgRelated = 1 << 0
)

// Other (UDP and the rest) and ICMP connection states, as OVS's
// OTHERS_* and ICMPS_*.
const (
	othersFirst    = 0
	othersMultiple = 1
	othersBidir    = 2
)

// Key returns the connection's key in direction dir (0 original, 1 reply).
func (c *Conn) Key(dir int) Key { return c.nodes[dir&1].key }

// expiryResolution is the granularity of expiry times (Open vSwitch's:
// it keeps them in milliseconds). Expiries are rounded up to it, which
// leaves the low bits of Conn.expires to the protocol state.
const expiryResolution = 1e6

// pstateMask selects the protocol state in Conn.expires (a multiple of
// expiryResolution = 2^6 * 15625 has its 6 low bits clear).
const pstateMask = 3

// expiryAt returns the expiry of timeout class tm of policy p at time
// now, rounded up to expiryResolution.
func expiryAt(p *TimeoutPolicy, tm timeoutClass, now int64) int64 {
	e := now + int64(p[tm])*1e9
	r := e % expiryResolution
	if r < 0 {
		r += expiryResolution
	}
	if r > 0 {
		e += expiryResolution - r
	}
	return e
}

// expiry returns the connection's expiry time.
func (c *Conn) expiry() int64 { return c.expires.Load() &^ pstateMask }

func (c *Conn) expired(now int64) bool { return c.expiry() <= now }

// pstate returns the UDP/other or ICMP state.
func (c *Conn) pstate() uint8 { return uint8(c.expires.Load() & pstateMask) }

// setExpiry applies timeout class tm of policy p (TCP), storing only
// when the expiry changes: an atomic store is a full barrier (XCHG on
// amd64), and the packets of a busy connection mostly arrive within the
// same millisecond.
//
// Preconditions: c.mu is held (or c is not published yet).
func (c *Conn) setExpiry(p *TimeoutPolicy, tm timeoutClass, now int64) {
	if e := expiryAt(p, tm, now); c.expires.Load() != e {
		c.expires.Store(e)
	}
}

// setState sets the UDP/other or ICMP state st and timeout class tm of
// policy p before c is published.
func (c *Conn) setState(st uint8, p *TimeoutPolicy, tm timeoutClass, now int64) {
	c.expires.Store(expiryAt(p, tm, now) | int64(st))
}

// casState replaces c.expires from old (as read) to the state st with
// the expiry of timeout class tm, and reports whether no other update
// came in between (then the caller retries from a fresh read). Storing
// nothing when nothing changes keeps the cache line shared.
func (c *Conn) casState(old int64, st uint8, p *TimeoutPolicy, tm timeoutClass, now int64) bool {
	v := expiryAt(p, tm, now) | int64(st)
	return v == old || c.expires.CompareAndSwap(old, v)
}

// markLabel returns the connection's mark and label.
func (c *Conn) markLabel() (uint32, [16]byte) {
	m, l := c.mark.Load(), c.label.Load()
	if l == nil {
		return m, [16]byte{}
	}
	return m, *l
}

// markLabelIs reports whether setting a's mark and label would change
// nothing (read without the lock: a concurrent setter orders after).
func (c *Conn) markLabelIs(a *odp.CtParams) bool {
	if a.MarkMask != 0 {
		if m := c.mark.Load(); m&a.MarkMask != a.Mark&a.MarkMask {
			return false
		}
	}
	if a.LabelMask != ([16]byte{}) {
		var l [16]byte
		if old := c.label.Load(); old != nil {
			l = *old
		}
		for i := range l {
			if l[i]&a.LabelMask[i] != a.Label[i]&a.LabelMask[i] {
				return false
			}
		}
	}
	return true
}

// setMarkLabel applies the ct action's ct_mark and ct_label (under
// their masks) to c.
func (c *Conn) setMarkLabel(a *odp.CtParams) {
	if a.MarkMask == 0 && a.LabelMask == ([16]byte{}) {
		return
	}
	if c.markLabelIs(a) {
		// OVN commits every packet of a connection with the same
		// mark and label: no lock when nothing changes.
		return
	}
	c.mu.Lock()
	if a.MarkMask != 0 {
		c.mark.Store(c.mark.Load()&^a.MarkMask | a.Mark&a.MarkMask)
	}
	if a.LabelMask != ([16]byte{}) {
		var l [16]byte
		if old := c.label.Load(); old != nil {
			l = *old
		}
		for i := range l {
			l[i] = l[i]&^a.LabelMask[i] | a.Label[i]&a.LabelMask[i]
		}
		c.label.Store(&l)
	}
	c.mu.Unlock()
}
