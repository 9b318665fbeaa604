package rstp

import (
	"strings"
	"testing"
)

// link joins ports of bridges: a BPDU sent on one is queued for the
// other end.
type net struct {
	peer  map[*Port]*Port
	queue []func()
}

func (n *net) bridge(t *testing.T, name string, addr uint64, ports int) *Bridge {
	var b *Bridge
	b = New(name, addr, Env{Send: func(aux any, bpdu []byte) {
		from := aux.(*Port)
		if to := n.peer[from]; to != nil {
			n.queue = append(n.queue, func() { to.Received(bpdu) })
		}
	}})
	for i := 0; i < ports; i++ {
		p := b.AddPort()
		p.Set(PortSettings{Number: i + 1, Priority: DefaultPortPriority, PathCost: DefaultPortPathCost, AutoEdge: true,
			AdminUp: true, AdminP2P: P2PForceTrue}, name+"p"+string(rune('1'+i)), p)
	}
	return b
}

func (n *net) connect(a, b *Port) {
	n.peer[a], n.peer[b] = b, a
	a.SetMACOperational(true)
	b.SetMACOperational(true)
}

func (n *net) drain() {
	for i := 0; len(n.queue) > 0 && i < 100000; i++ {
		f := n.queue[0]
		n.queue = n.queue[1:]
		f()
	}
}

func (n *net) run(bridges []*Bridge, secs int) {
	n.drain()
	for i := 0; i < secs; i++ {
		for _, b := range bridges {
			b.Tick()
		}
		n.drain()
	}
}

func summary(b *Bridge) string {
	var s []string
	for _, p := range b.ports {
		st := p.Status()
		s = append(s, st.Role.String()+"/"+st.State.String())
	}
	return strings.Join(s, " ")
}

// TestProposalAgreementForwardsAtOnce: two bridges on a point-to-point
// link forward without waiting for the forward delay: the root's
// designated port proposes, the other's root port agrees.
func TestProposalAgreementForwardsAtOnce(t *testing.T) {
	n := &net{peer: map[*Port]*Port{}}
	b0 := n.bridge(t, "br0", 0xaa55aa550000, 1)
	b1 := n.bridge(t, "br1", 0xaa66aa660000, 1)
	n.connect(b0.ports[0], b1.ports[0])
	n.run([]*Bridge{b0, b1}, 0)
	if got := summary(b0) + " | " + summary(b1); got != "Designated/Forwarding | Root/Forwarding" {
		t.Fatalf("after the handshake: %s", got)
	}
}

// TestLoopBlocksAlternate: two bridges joined twice: the non-root
// bridge's second port is an alternate and discards.
func TestLoopBlocksAlternate(t *testing.T) {
	n := &net{peer: map[*Port]*Port{}}
	b0 := n.bridge(t, "br0", 0xaa55aa550000, 2)
	b1 := n.bridge(t, "br1", 0xaa66aa660000, 2)
	n.connect(b0.ports[0], b1.ports[0])
	n.connect(b0.ports[1], b1.ports[1])
	n.run([]*Bridge{b0, b1}, 40)
	if got := summary(b0) + " | " + summary(b1); got != "Designated/Forwarding Designated/Forwarding | Root/Forwarding Alternate/Discarding" {
		t.Fatalf("states: %s", got)
	}
	var sb strings.Builder
	b1.Show(&sb)
	if !strings.Contains(sb.String(), "  root-port       br1p1\n  root-path-cost  2000\n") ||
		!strings.Contains(sb.String(), "  br1p2      Alternate  Discarding 2000     128.2\n") {
		t.Fatalf("show:\n%s", sb.String())
	}
	// The root port's link fails: the alternate takes over at once.
	b1.ports[0].SetMACOperational(false)
	b0.ports[0].SetMACOperational(false)
	n.run([]*Bridge{b0, b1}, 3)
	if got := summary(b1); got != "Disabled/Discarding Root/Forwarding" {
		t.Fatalf("after the link failure: %s", got)
	}
}
