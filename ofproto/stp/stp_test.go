package stp

import (
	"fmt"
	"strings"
	"testing"
)

// lanNet joins bridges' ports to LANs and delivers every BPDU sent on a
// LAN to the other ports on it.
type lanNet struct {
	bridges []*Bridge
	lans    map[string][]*Port
	byPort  map[*Port]string
	queue   []func()
}

func newNet() *lanNet { return &lanNet{lans: map[string][]*Port{}, byPort: map[*Port]string{}} }

func (n *lanNet) bridge(id uint64, lans ...string) *Bridge {
	var b *Bridge
	b = New(fmt.Sprintf("stp%x", id), id, Env{Send: func(no int, bpdu []byte) {
		from := b.Port(no)
		for _, q := range n.lans[n.byPort[from]] {
			if q != from {
				q, bpdu := q, bpdu
				n.queue = append(n.queue, func() { q.Received(bpdu) })
			}
		}
	}})
	for i, l := range lans {
		p := b.Port(i)
		p.SetName(l)
		n.lans[l] = append(n.lans[l], p)
		n.byPort[p] = l
		p.Enable()
	}
	n.bridges = append(n.bridges, b)
	return b
}

func (n *lanNet) run(ms int) {
	for t := 0; t < ms; t += 100 {
		for _, b := range n.bridges {
			b.Tick(100)
		}
		for len(n.queue) > 0 {
			f := n.queue[0]
			n.queue = n.queue[1:]
			f()
		}
	}
}

func states(b *Bridge, n int) string {
	var s []string
	for i := 0; i < n; i++ {
		st := b.Port(i).Status()
		s = append(s, st.Role.String()+"/"+st.State.String())
	}
	return strings.Join(s, " ")
}

// TestRootSelectionTwoBridges is IOL's STP.op.3.1: the lower bridge ID
// becomes root, the other's port on the shared LAN its root port, and
// both forward after twice the forward delay.
func TestRootSelectionTwoBridges(t *testing.T) {
	n := newNet()
	b0 := n.bridge(0x111, "a")
	b1 := n.bridge(0x222, "a")
	if got := states(b0, 1); got != "designated/listening" {
		t.Fatalf("b0 before: %s", got)
	}
	n.run(60000)
	if st := b0.Status(); st.DesignatedRoot != b0.Status().BridgeID || st.RootPathCost != 0 {
		t.Fatalf("b0 status %+v", st)
	}
	if st := b1.Status(); st.DesignatedRoot != 0x8000000000000111 || st.RootPathCost != 2 {
		t.Fatalf("b1 status %+v", st)
	}
	if got := states(b0, 1) + " | " + states(b1, 1); got != "designated/forwarding | root/forwarding" {
		t.Fatalf("states: %s", got)
	}
}

// TestLoopBlocksOnePort is two bridges joined by two LANs: the non-root
// bridge's second port (the worse path to the root) blocks.
func TestLoopBlocksOnePort(t *testing.T) {
	n := newNet()
	b0 := n.bridge(0x111, "a", "b")
	b1 := n.bridge(0x222, "a", "b")
	n.run(60000)
	if got := states(b0, 2) + " | " + states(b1, 2); got != "designated/forwarding designated/forwarding | root/forwarding alternate/blocking" {
		t.Fatalf("states: %s", got)
	}
	var sb strings.Builder
	b1.Show(&sb)
	want := `---- stp222 ----
Root ID:
  stp-priority  32768
  stp-system-id   00:00:00:00:01:11
  stp-hello-time  2s
  stp-max-age     20s
  stp-fwd-delay   15s
  root-port       a
  root-path-cost  2

Bridge ID:
  stp-priority  32768
  stp-system-id   00:00:00:00:02:22
  stp-hello-time  2s
  stp-max-age     20s
  stp-fwd-delay   15s

  Interface  Role       State      Cost  Pri.Nbr 
  ---------- ---------- ---------- ----- -------
  a          root       forwarding 2     128.1
  b          alternate  blocking   2     128.2

`
	if sb.String() != want {
		t.Fatalf("show:\n%s\nwant:\n%s", sb.String(), want)
	}
	// The link of the root port fails: the blocked port takes over.
	b1.Port(0).Disable()
	n.run(60000)
	if got := states(b1, 2); got != "designated/disabled root/forwarding" {
		t.Fatalf("after link failure: %s", got)
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	d := BPDU{Type: TypeConfig, Flags: FlagTopologyChange, RootID: 0x8000aa66aa660000, RootPathCost: 4,
		BridgeID: 0x8000aa66aa660001, PortID: 0x8002, MessageAge: 256, MaxAge: 5120, HelloTime: 512, FwdDelay: 3840}
	f := Frame([6]byte{2}, d.Encode())
	if len(f) != 14+3+35 {
		t.Fatalf("frame length %d", len(f))
	}
	padded := append(f, make([]byte, 60-len(f))...)
	pl, ok := Payload(padded)
	if !ok {
		t.Fatal("no payload")
	}
	got, err := Decode(pl)
	if err != nil || got != d {
		t.Fatalf("decode: %+v %v", got, err)
	}
	if _, err := Decode([]byte{0, 0, 0, TypeTCN, 0}); err == nil {
		t.Fatal("5-byte TCN accepted")
	}
}
