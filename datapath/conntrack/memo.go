package conntrack

import (
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// connMemo remembers, for one Reader (one datapath worker), the
// connections its recent ct() calls found or committed, so that the next
// ct() of the same packet in the same zone (the commit after a lookup,
// once the packet has recirculated) takes its connection without hashing
// the key and walking the chain again: Open vSwitch keeps the connection
// in the packet's metadata for this (md.conn). A Go packet cannot hold a
// pointer in its metadata, so the packet carries a handle (CtConn) into
// the memo instead.
//
// As Open vSwitch (conntrack_execute's process_one_fast), a ct()
// without nat, helper or force_commit, in the zone of the packet's
// previous ct() which left it tracked with a connection, takes that
// connection without parsing the packet or updating the connection's
// state: the packet keeps its ct_state, takes the connection's ct_mark
// and ct_label, and a commit only sets those (fast). Otherwise the handle is a hint: it is honoured
// when the packet's key (zone included) equals one of the connection's
// keys, and the packet is looked up as usual if not (match). The memo
// forgets everything when its Reader quiesces or goes offline, so a
// remembered connection is one that was in its zone's table during the
// Reader's current grace period: its memory cannot have been reused, and
// taking it is the same as a lookup that raced with its removal (which
// the lock-free table allows too).
type connMemo struct {
	// gen changes at every forget; handles of an older gen are stale.
	gen uint32
	// n counts the connections remembered in this gen; entry i of the
	// gen is in conns[i%memoSize] while n-i <= memoSize.
	n     uint32
	conns [memoSize]*Conn
}

// memoSize is how many connections the memo holds: two batches' worth,
// so that a worker's other ct() batches between a packet's lookup and its
// commit do not push the packet's entry out.
const memoSize = 64

// hint is a connection from the memo and whether the packet is in its
// reply direction; c is nil for none.
type hint struct {
	c     *Conn
	reply bool
}

// remember stores c and returns its handle for the packet's CtConn (0
// when m or c is nil: no hint).
func (m *connMemo) remember(c *Conn) uintptr {
	if m == nil || c == nil {
		return 0
	}
	m.conns[m.n%memoSize] = c
	m.n++
	// n is at least 1 here, so a handle is never 0.
	return uintptr(m.gen)<<32 | uintptr(m.n)
}

// get returns the connection handle h names, nil if the memo no longer
// holds it. Entries below n were all stored since the last forget,
// whatever gen h carries, so a connection returned is always one of this
// grace period.
func (m *connMemo) get(h uintptr) *Conn {
	if h == 0 || uint32(uint64(h)>>32) != m.gen {
		return nil
	}
	i := uint32(h)
	if i == 0 || i > m.n || m.n-i >= memoSize {
		return nil
	}
	return m.conns[(i-1)%memoSize]
}

// fast runs ct() a on p without a lookup when p's previous ct() in the
// same zone, through this memo, left it with a connection, as Open
// vSwitch's process_one_fast (see connMemo); it reports whether it did.
func (m *connMemo) fast(p *packet.Packet, a *odp.CtParams) bool {
	md := &p.Md
	if m == nil || md.CtConn == 0 || a.NAT != nil || a.ForceCommit || a.Helper != "" ||
		md.CtState&(CsTracked|CsInvalid) != CsTracked || md.CtZone != a.Zone {
		return false
	}
	c := m.get(md.CtConn)
	if c == nil || c.helper != helperNone || c.nodes[0].key.Zone != a.Zone {
		return false
	}
	if a.Commit {
		c.setMarkLabel(a)
	}
	md.CtMark, md.CtLabel = c.markLabel()
	return true
}

// match returns the connection that handle h names if k is one of its
// keys.
func (m *connMemo) match(h uintptr, k *Key) hint {
	c := m.get(h)
	if c == nil {
		return hint{}
	}
	// The keys never change once published.
	if c.nodes[0].key == *k {
		return hint{c: c}
	}
	if c.nodes[1].key == *k {
		return hint{c: c, reply: true}
	}
	return hint{}
}

// forget drops every entry (the Reader is quiescent: it holds nothing).
// The pointers stay until overwritten; they only delay the collector.
func (m *connMemo) forget() {
	if m.n != 0 {
		m.gen++
		m.n = 0
	}
}
