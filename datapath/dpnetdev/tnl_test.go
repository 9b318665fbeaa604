package dpnetdev

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/datapath/netdev/vport"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/datapath/tnl"
)

// tunnelSwitch is a test switch with dummy ports 1 and 2 and the tunnel
// ports genev_sys_6081 and vxlan_sys_4789 numbered as Open vSwitch's
// netdev datapath numbers them (their UDP port).
func tunnelSwitch(t *testing.T) *testSwitch {
	t.Helper()
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	for _, typ := range []tnl.Type{tnl.TypeGeneve, tnl.TypeVXLAN} {
		d, err := vport.New("", typ, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.dp.AddPort(d, uint32(d.DstPort())); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ovsPushGolden reads the frames Open vSwitch 3.1 sent for the oracle
// cases of datapath/tnl (see datapath/tnl/oracle_test.go).
func ovsPushGolden(t *testing.T) map[[2]string][]byte {
	t.Helper()
	f, err := os.Open("../tnl/testdata/ovs-push.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[[2]string][]byte{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 3 && !strings.HasPrefix(fs[0], "#") {
			m[[2]string{fs[0], fs[1]}] = unhex(t, fs[2])
		}
	}
	return m
}

// TestTunnelPushMegaflowSendsOpenVSwitchBytes installs the megaflow Open
// vSwitch was given (in_port(1) -> tnl_push(...),2) and checks that port 2
// sends exactly the frames Open vSwitch sent, UDP source port included.
func TestTunnelPushMegaflowSendsOpenVSwitchBytes(t *testing.T) {
	golden := ovsPushGolden(t)
	inner := map[string]string{
		"icmp4": "fe71d883724fbeb6f4e1494a080045000054ba200000400184861e0000011e00000200004227e75400030af3195500000000f265010000000000101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334353637",
		"udp4":  "00000000000200000000000108004500002c00010000401166be0a0000010a00000204d2162e0018000068656c6c6f206776732074756e6e656c",
		"tcp6":  "00000000000200000000000186dd600000000014064020010db800000000000000000000000120010db800000000000000000000000203e8005000000001000000005002ffff00000000",
	}
	for _, c := range []struct{ name, action string }{
		{"geneve4", `tnl_push(tnl_port(6081),header(size=50,type=5,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=6081,csum=0x0),geneve(vni=0x7b)),out_port(100)),2`},
		{"vxlan4-csum", `tnl_push(tnl_port(4789),header(size=50,type=4,eth(dst=f8:bc:12:44:34:b7,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.93,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=4789,csum=0xffff),vxlan(flags=0x8000000,vni=0x7c)),out_port(100)),2`},
		{"geneve6-opts", `tnl_push(tnl_port(6081),header(size=78,type=5,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x86dd),ipv6(src=2001:cafe::88,dst=2001:cafe::92,label=0,proto=17,tclass=0x0,hlimit=64),udp(src=0,dst=6081,csum=0xffff),geneve(crit,vni=0x7b,options({class=0xffff,type=0x80,len=4,0xa}))),out_port(100)),2`},
		{"vxlan6", `tnl_push(tnl_port(4789),header(size=70,type=4,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x86dd),ipv6(src=2001:cafe::88,dst=2001:cafe::92,label=0,proto=17,tclass=0x0,hlimit=64),udp(src=0,dst=4789,csum=0xffff),vxlan(flags=0x8000000,vni=0x7b)),out_port(100)),2`},
	} {
		s := tunnelSwitch(t)
		putFlow(t, s.dp, inPortMatch(1), c.action)
		for _, name := range []string{"icmp4", "udp4", "tcp6"} {
			s.send(1, unhex(t, inner[name]))
			got := s.ports[2].Captured()
			want := golden[[2]string{c.name, name}]
			if len(want) == 0 {
				t.Fatalf("no golden frame for %s/%s", c.name, name)
			}
			if len(got) != 1 || !bytes.Equal(got[0], want) {
				t.Errorf("%s/%s: port 2 sent %x\nwant %x", c.name, name, got, want)
			}
		}
		if n := len(s.ports[1].Captured()); n != 0 {
			t.Errorf("%s: port 1 sent %d frames", c.name, n)
		}
	}
}

// recordingHandler keeps the keys of miss upcalls and answers with
// output to port 2, installing a megaflow on the tunnel key and in_port.
type recordingHandler struct {
	mu   sync.Mutex
	keys []flow.Key
}

func (h *recordingHandler) Miss(u *dpif.Upcall, r *dpif.MissReply) error {
	h.mu.Lock()
	h.keys = append(h.keys, *u.Key)
	h.mu.Unlock()
	r.Actions = odp.Actions{odp.Output(2)}
	m := wildMask()
	m.TunID, m.TunDst = ^uint64(0), ^uint32(0)
	r.Mask = m
	r.Install = true
	return nil
}

func (h *recordingHandler) Userspace(*dpif.Upcall) {}

// The Geneve frame Open vSwitch's tests/tunnel-push-pop.at receives on
// p0 (options tun_metadata0=0xa and one more), and the megaflow Open
// vSwitch installs for it after tnl_pop(6081).
const (
	ovsGeneveFrame    = "aa55aa550000001b213cab64080045000096794640004011ba5b0101025c01010258308817c1008200000400655800007b00ffff80010000000affff00010000000bfe71d883724fbeb6f4e1494a080045000054ba200000400184861e0000011e00000200004227e75400030af3195500000000f265010000000000101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334353637"
	ovsGeneveMegaflow = "tunnel(tun_id=0x7b,src=1.1.2.92,dst=1.1.2.88,geneve({class=0xffff,type=0x80,len=4,0xa/0xf}{class=0xffff,type=0,len=4}),flags(-df-csum+key)),recirc_id(0),in_port(6081),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(frag=no)"
)

// TestTunnelPopMissUpcallsWithTheTunnelKey receives the Geneve frame on
// port 1 with megaflow in_port(1) -> tnl_pop(6081): the decapsulated
// packet misses and upcalls with in_port(6081) and the tunnel key, which
// the megaflow Open vSwitch installs for it matches; the reply's output
// sends the inner frame and the next frame hits the installed megaflow.
func TestTunnelPopMissUpcallsWithTheTunnelKey(t *testing.T) {
	s := tunnelSwitch(t)
	h := &recordingHandler{}
	s.dp.SetUpcallHandler(h)
	putFlow(t, s.dp, inPortMatch(1), "tnl_pop(6081)")
	frame := unhex(t, ovsGeneveFrame)
	s.send(1, frame)
	if len(h.keys) != 1 {
		t.Fatalf("%d upcalls, want 1", len(h.keys))
	}
	k := h.keys[0]
	exact := flow.Match{Key: k, Mask: flow.All()}
	for _, want := range []string{
		",tunnel(tun_id=0x7b,src=1.1.2.92,dst=1.1.2.88,ttl=64,tp_src=12424,tp_dst=6081,geneve({class=0xffff,type=0x80,len=4,0xa}{class=0xffff,type=0,len=4,0xb}),flags(key)),",
		",recirc_id(0),dp_hash(0),in_port(6081),packet_type(ns=0,id=0),eth(src=be:b6:f4:e1:49:4a,dst=fe:71:d8:83:72:4f),eth_type(0x0800),ipv4(src=30.0.0.1,dst=30.0.0.2,proto=1,tos=0,ttl=64,frag=no),icmp(type=0,code=0)",
	} {
		if got := exact.String(); !strings.Contains(got, want) {
			t.Errorf("upcall key:\n got %s\nwant it to contain %s", got, want)
		}
	}
	if k.RecircID != 0 || k.InPort != 6081 || k.TunFlags != packet.TunFlagKey|flow.TunFlagUDPIF || k.TunMetaPresent != 16 {
		t.Errorf("key recirc_id=%d in_port=%d tun_flags=%#x meta=%d", k.RecircID, k.InPort, k.TunFlags, k.TunMetaPresent)
	}
	ovs, err := flow.ParseMatch(ovsGeneveMegaflow)
	if err != nil {
		t.Fatal(err)
	}
	// Open vSwitch prints an option whose data is wildcarded without the
	// data ({class=0xffff,type=0,len=4}) but reads that text back as
	// data 0, exact; its megaflow had the data wildcarded.
	clear(ovs.Mask.TunMeta[12:16])
	if !ovs.Matches(&k) {
		t.Errorf("Open vSwitch's megaflow\n%s\ndoes not match the upcall key\n%s", ovsGeneveMegaflow, exact.String())
	}
	got := s.ports[2].Captured()
	if inner := frame[14+20+8+8+16:]; len(got) != 1 || !bytes.Equal(got[0], inner) {
		t.Errorf("port 2 sent %x, want the inner frame %x", got, inner)
	}
	s.send(1, frame)
	if len(h.keys) != 1 || len(s.ports[2].Captured()) != 1 {
		t.Errorf("second frame: %d upcalls in all, want 1 (megaflow hit)", len(h.keys))
	}
	if st := s.dp.Stats(); st.Recirc != 2 {
		t.Errorf("recirc count %d, want 2", st.Recirc)
	}
}

func TestTunnelPopDropsAndCountsMalformedFrames(t *testing.T) {
	s := tunnelSwitch(t)
	h := &recordingHandler{}
	s.dp.SetUpcallHandler(h)
	putFlow(t, s.dp, inPortMatch(1), "tnl_pop(6081)")
	good := unhex(t, ovsGeneveFrame)
	badCsum := append([]byte{}, good...)
	badCsum[24] ^= 0xff
	vxlanOnGeneve := append([]byte{}, good...)
	vxlanOnGeneve[42] = 0x40 // Geneve version 1
	s.send(1, badCsum, good, vxlanOnGeneve)
	if st := s.dp.TunnelStats(); st.PopErrors != 2 || st.InvalidPort != 0 {
		t.Errorf("tunnel stats %+v, want 2 pop errors", st)
	}
	if len(h.keys) != 1 {
		t.Errorf("%d upcalls, want 1 (the good frame)", len(h.keys))
	}
	// tnl_pop naming a port that is not a tunnel port drops everything.
	putFlow(t, s.dp, inPortMatch(2), "tnl_pop(1)")
	s.send(2, good)
	if st := s.dp.TunnelStats(); st.InvalidPort != 1 {
		t.Errorf("tunnel stats %+v, want 1 invalid port", st)
	}
}

func TestTunnelPushNamingANonTunnelPortDrops(t *testing.T) {
	s := tunnelSwitch(t)
	putFlow(t, s.dp, inPortMatch(1), `tnl_push(tnl_port(2),header(size=50,type=5,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=6081,csum=0x0),geneve(vni=0x7b)),out_port(100)),2`)
	s.send(1, udpFrame(1))
	if n := len(s.ports[2].Captured()); n != 0 {
		t.Errorf("port 2 sent %d frames, want 0", n)
	}
	if st := s.dp.TunnelStats(); st.InvalidPort != 1 {
		t.Errorf("tunnel stats %+v, want 1 invalid port", st)
	}
}

// TestTunnelPushThenPopThroughTheWorkers runs the real poll loop: port 1
// encapsulates towards port 2, whose frames are patched back into port 2's
// rx and decapsulated by tnl_pop(4789); the upcall sees the VXLAN key.
func TestTunnelPushThenPopThroughTheWorkers(t *testing.T) {
	s := tunnelSwitch(t)
	h := &recordingHandler{}
	s.dp.SetUpcallHandler(h)
	putFlow(t, s.dp, inPortMatch(1), `tnl_push(tnl_port(4789),header(size=50,type=4,eth(dst=f8:bc:12:44:34:b7,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.93,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=4789,csum=0xffff),vxlan(flags=0x8000000,vni=0x7c)),out_port(100)),2`)
	putFlow(t, s.dp, inPortMatch(3), "tnl_pop(4789)")
	// Frames leaving port 2 come back in on port 3 (a dummy "wire").
	d3, err := dummy.New(dummy.Config{Name: "p3", CaptureLen: 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d3.Close() })
	if _, err := s.dp.AddPort(d3, 3); err != nil {
		t.Fatal(err)
	}
	s.ports[2].OnTransmit(func(f []byte) { d3.Inject(f) })
	if err := s.dp.Start(); err != nil {
		t.Fatal(err)
	}
	// Tunnel ports have no receive queues: the worker polls p1, p2, p3.
	var polled []string
	for _, q := range s.dp.WorkerRxQueues(0) {
		polled = append(polled, q.Port)
	}
	if got := strings.Join(polled, ","); got != "p1,p2,p3" {
		t.Errorf("worker polls %s, want p1,p2,p3", got)
	}
	s.ports[1].Inject(udpFrame(7))
	deadline := time.Now().Add(5 * time.Second)
	for {
		h.mu.Lock()
		n := len(h.keys)
		h.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.keys) != 1 {
		t.Fatalf("%d upcalls, want 1", len(h.keys))
	}
	k := h.keys[0]
	if k.InPort != 4789 || k.TunID != 0x7c || k.TunSrc != 0x01010258 || k.TunDst != 0x0101025d || k.TunTpDst != 4789 ||
		k.TunTTL != 64 || k.TunFlags != packet.TunFlagCsum|packet.TunFlagKey || k.TunTpSrc < tnl.SrcPortMin || k.TunTpSrc >= tnl.SrcPortMax {
		m := flow.Match{Key: k, Mask: flow.All()}
		t.Errorf("upcall key %s", m.String())
	}
}

// TestTunnelPushAndPopAllocateNothing encapsulates on one megaflow and
// decapsulates and recirculates on another, measuring allocations per
// batch.
func TestTunnelPushAndPopAllocateNothing(t *testing.T) {
	s := tunnelSwitch(t)
	sink, _ := dummy.New(dummy.Config{Name: "sink"}) // no capture: captures copy
	defer sink.Close()
	if _, err := s.dp.AddPort(sink, 3); err != nil {
		t.Fatal(err)
	}
	putFlow(t, s.dp, inPortMatch(1), `tnl_push(tnl_port(6081),header(size=58,type=5,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=6081,csum=0xffff),geneve(crit,vni=0x7b,options({class=0xffff,type=0x80,len=4,0xa}))),out_port(100)),3`)
	putFlow(t, s.dp, inPortMatch(2), "tnl_pop(6081)")
	putFlow(t, s.dp, inPortMatch(6081), "3")
	inner := [][]byte{udpFrame(1), udpFrame(2), udpFrame(3)}
	outer := [][]byte{unhex(t, ovsGeneveFrame), unhex(t, ovsGeneveFrame)}
	s.send(1, inner...)
	s.send(2, outer...)
	if st := sink.Stats(); st.TxPackets != 5 {
		t.Fatalf("sink sent %d packets, want 5", st.TxPackets)
	}
	if n := testing.AllocsPerRun(100, func() { s.send(1, inner...) }); n != 0 {
		t.Errorf("tnl_push allocated %.1f times per batch", n)
	}
	if n := testing.AllocsPerRun(100, func() { s.send(2, outer...) }); n != 0 {
		t.Errorf("tnl_pop allocated %.1f times per batch", n)
	}
}
