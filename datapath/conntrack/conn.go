package conntrack

import (
	"sync"
	"sync/atomic"
)

// Conn is one tracked connection. Its two keys are immutable once the
// connection is in a table; the rest is guarded by mu, except expires,
// which lookups and the sweeper read atomically.
type Conn struct {
	// nodes are the connection's two entries in its zone's hash chains.
	nodes [2]node
	// key[0] is the original direction, key[1] the reply direction (the
	// reverse of the original after NAT).
	key [2]Key
	// expires is the expiry time in nanoseconds of the Tracker's clock.
	expires atomic.Int64

	// mark and label are written under mu and read without it.
	mark  atomic.Uint32
	label atomic.Pointer[[16]byte] // nil: all zero (labels are rare, so kept out of line)

	mu sync.Mutex
	// +checklocks:mu
	tcp [2]tcpPeer
	// +checklocks:mu
	pstate uint8 // UDP/other and ICMP state (othersFirst...)
	// +checklocks:mu
	tm timeoutClass // the timeout class last applied

	nat    uint8 // natSrc | natDst, set before the connection is published
	helper uint8 // helperNone, helperFTP, helperTFTP
	flags  uint8 // connAlgRelated
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
func (c *Conn) Key(dir int) Key { return c.key[dir&1] }

func (c *Conn) expired(now int64) bool { return c.expires.Load() <= now }

// setExpiry applies timeout class tm of policy p.
//
// Preconditions: c.mu is held.
func (c *Conn) setExpiry(p *TimeoutPolicy, tm timeoutClass, now int64) {
	c.tm = tm
	c.expires.Store(now + int64(p[tm])*1e9)
}

// markLabel returns the connection's mark and label.
func (c *Conn) markLabel() (uint32, [16]byte) {
	m, l := c.mark.Load(), c.label.Load()
	if l == nil {
		return m, [16]byte{}
	}
	return m, *l
}
