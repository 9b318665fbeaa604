package xlate_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// realPacket composes the packet the datapath text s describes, as
// `ovs-appctl netdev-dummy/receive` does, with its offsets extracted.
func realPacket(t testing.TB, s string) *packet.Packet {
	t.Helper()
	b, err := flow.ComposeString(s)
	if err != nil {
		t.Fatal(err)
	}
	p := packet.FromBytes(b)
	var k flow.Key
	flow.Extract(p, &k)
	return p
}

func TestConntrackRecirculatesAndResumeRestoresRegisters(t *testing.T) {
	e := newEnv(t, mf.OF10,
		"cookie=1,table=0,tcp actions=load:0x7->NXM_NX_REG3[],ct(commit,zone=5,table=2)",
		"cookie=2,table=2,reg3=7,ct_state=+trk actions=output:2")
	k := key(t, pktTCP)
	out := e.translate(k)
	if out.Err != nil || out.Actions.String() != "ct(commit,zone=5),recirc(0x1)" || !slices.Equal(cookies(out.Rules), []uint64{1}) {
		t.Fatalf("first pass: %s err=%v rules=%v", out.Actions, out.Err, cookies(out.Rules))
	}
	// Open vSwitch 3.1 (ovs-appctl dpctl/dump-flows after netdev-dummy/receive).
	wantMegaflow(t, k, out.Mask, "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(proto=6,frag=no)")
	// The same state reuses the id.
	if again := e.translate(k); again.Actions.String() != out.Actions.String() || e.recirc.Len() != 1 {
		t.Fatalf("second translation: %s, %d ids", again.Actions, e.recirc.Len())
	}

	k2 := k
	k2.RecircID = 1
	k2.CtState = flow.CsTracked | flow.CsNew
	k2.CtZone = 5
	out = e.translate(k2)
	if out.Err != nil || out.Actions.String() != "2" || !slices.Equal(cookies(out.Rules), []uint64{2}) {
		t.Fatalf("resumed pass: %s err=%v rules=%v", out.Actions, out.Err, cookies(out.Rules))
	}
	// Open vSwitch: ct_state(+trk),recirc_id(0xd),... (its id differs).
	wantMegaflow(t, k2, out.Mask, "ct_state(+trk),recirc_id(0x1),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(frag=no)")

	// Without the frozen register the resumed pass misses.
	e2 := newEnv(t, mf.OF10, "cookie=2,table=2,reg3=7,ct_state=+trk actions=output:2")
	if out := e2.translate(k2); !errors.Is(out.Err, xlate.ErrNoRecirc) || out.Actions.String() != "drop" {
		t.Fatalf("unknown recirc id: %s err=%v", out.Actions, out.Err)
	}
}

func TestControllerActionEmitsUserspaceAndPacketIn(t *testing.T) {
	e := newEnv(t, mf.OF10, "cookie=0x55,tcp actions=controller")
	k := key(t, pktTCP)
	out := e.translate(k)
	// Open vSwitch 3.1 prints the same (its recirc_id differs).
	if want := "userspace(pid=0,controller(reason=1,dont_send=0,continuation=0,recirc_id=1,rule_cookie=0x55,controller_id=0,max_len=65535))"; out.Actions.String() != want || !out.Slow || len(out.PacketIns) != 0 {
		t.Fatalf("without side effects: %s slow=%v packet-ins=%d", out.Actions, out.Slow, len(out.PacketIns))
	}
	if a := out.Actions[0]; a.Kind != odp.KindUserspace || !xlate.IsControllerCookie(a.Userspace.Userdata) {
		t.Fatalf("userspace action %+v is not a controller cookie", a)
	}
	wantMegaflow(t, k, out.Mask, "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(proto=6,frag=no)")

	p := realPacket(t, pktTCP)
	var out2 xlate.Out
	e.x.Translate(&xlate.In{Key: k, Packet: p, SideEffects: true}, &out2)
	if len(out2.PacketIns) != 1 {
		t.Fatalf("packet-ins %d, want 1", len(out2.PacketIns))
	}
	pi := out2.PacketIns[0]
	if pi.Reason != xlate.ReasonAction || pi.TableID != 0 || pi.Cookie != 0x55 || pi.Flow.InPort != 1 || !bytes.Equal(pi.Data, p.Data()) {
		t.Fatalf("packet-in %+v", pi)
	}
}

func TestControllerSeesHeaderChangesMadeBeforeIt(t *testing.T) {
	e := newEnv(t, mf.OF10, "tcp actions=mod_dl_dst:aa:bb:cc:dd:ee:ff,controller")
	k := key(t, pktTCP)
	var out xlate.Out
	e.x.Translate(&xlate.In{Key: k, Packet: realPacket(t, pktTCP), SideEffects: true}, &out)
	if out.Actions.String() != "set(eth(dst=aa:bb:cc:dd:ee:ff)),userspace(pid=0,controller(reason=1,dont_send=0,continuation=0,recirc_id=1,rule_cookie=0,controller_id=0,max_len=65535))" || len(out.PacketIns) != 1 {
		t.Fatalf("%s, %d packet-ins", out.Actions, len(out.PacketIns))
	}
	if d := out.PacketIns[0].Data; !bytes.Equal(d[:6], []byte{0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}) {
		t.Fatalf("packet-in eth_dst % x", d[:6])
	}
}

func TestDecTTLAtOneSendsInvalidTTLPacketInAndStops(t *testing.T) {
	e := newEnv(t, mf.OF10, "ip actions=dec_ttl,output:2")
	k := key(t, pktTTL1)
	var out xlate.Out
	e.x.Translate(&xlate.In{Key: k, Packet: realPacket(t, pktTTL1), SideEffects: true}, &out)
	// Open vSwitch: userspace(pid=0,controller(reason=2,...)) and no output.
	if out.Actions.String() != "userspace(pid=0,controller(reason=2,dont_send=0,continuation=0,recirc_id=1,rule_cookie=0,controller_id=0,max_len=65535))" || !out.Slow {
		t.Fatalf("actions %s", out.Actions)
	}
	if len(out.PacketIns) != 1 || out.PacketIns[0].Reason != xlate.ReasonInvalidTTL {
		t.Fatalf("packet-ins %+v", out.PacketIns)
	}
	// Open vSwitch 3.1 megaflow.
	want := "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(proto=6,ttl=1,frag=no)"
	if m, _ := flow.ParseMatch(want); m.Mask != out.Mask {
		t.Errorf("megaflow %s, Open vSwitch %s", megaflow(k, out.Mask), want)
	}
}

func TestNormalTranslatesToMACLearn(t *testing.T) {
	e := newEnv(t, mf.OF10, "actions=NORMAL")
	k := key(t, pktTCP)
	out := e.translate(k)
	if got := out.Actions.String(); got != "mac_learn(table=7,ports(1,2,3,100))" {
		t.Fatalf("untagged: %s", got)
	}
	// One megaflow for every MAC address; the VLAN is always consulted.
	want := flow.Mask{InPort: ^uint32(0), RecircID: ^uint32(0), PacketType: ^uint32(0), EthType: 0xffff, NwFrag: flow.FragMask}
	want.VLANs[0].TCI = 0xffff
	if out.Mask != want {
		t.Fatalf("mask %s (%s)", megaflow(k, out.Mask), maskDiff(&out.Mask, &want))
	}
	kv := key(t, pktVLAN)
	if got := e.translate(kv).Actions.String(); got != "mac_learn(table=7,vlan=10,in_tagged,ports(1:tagged,2:tagged,3:tagged,100:tagged))" {
		t.Fatalf("tagged on trunks: %s", got)
	}

	// Port 1 access VLAN 10, port 2 trunk of VLAN 20 only, port 3 trunk
	// of everything: an untagged packet on port 1 reaches port 3 tagged.
	ports := testPorts()
	ports[0].Tag = 10
	ports[1].Trunks = []uint16{20}
	e.x.SetSnapshot(xlate.NewSnapshot("br0", 7, ports))
	if got := e.translate(k).Actions.String(); got != "mac_learn(table=7,vlan=10,ports(1,3:tagged,100:tagged))" {
		t.Fatalf("access port: %s", got)
	}
	// A tagged packet on an access port is dropped.
	if got := e.translate(kv).Actions.String(); got != "drop" {
		t.Fatalf("tagged packet on access port: %s", got)
	}
}

func TestSetFieldWithoutPrerequisitesIsSkipped(t *testing.T) {
	e := newEnv(t, mf.OF13)
	// OpenFlow 1.3 keeps set_field (1.0 would make it mod_tp_dst, which
	// Open vSwitch applies to any IP protocol). ovs-ofctl refuses set_field tcp_dst without a tcp match; a rule
	// matching all IP with these actions meets a UDP packet.
	fm := flowMod(t, mf.OF13, "tcp actions=set_field:5->tcp_dst,output:2")
	fm.Match = flowMod(t, mf.OF13, "ip actions=drop").Match
	x := e.tables.Begin()
	if err := x.Apply(fm); err != nil {
		t.Fatal(err)
	}
	x.Commit()
	k := key(t, pktUDP)
	out := e.translate(k)
	if out.Actions.String() != "2" {
		t.Fatalf("actions %s, want 2", out.Actions)
	}
	// Checking the prerequisite consulted nw_proto.
	if out.Mask.NwProto != 0xff || out.Mask.TpDst != 0 {
		t.Fatalf("mask %s", megaflow(k, out.Mask))
	}
}

// Learned flows are reported with or without side effects: the switch
// applies them on the upcall and again whenever packets hit the megaflow
// (Open vSwitch's xlate cache), so revalidation must report them too.
func TestLearnReturnsTheLearnedFlowWithSideEffects(t *testing.T) {
	e := newEnv(t, mf.OF10, "table=0 actions=learn(table=1,hard_timeout=30,priority=7,NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],output:NXM_OF_IN_PORT[]),output:2")
	k := key(t, pktTCP)
	if out := e.translate(k); len(out.Learned) != 1 || out.Actions.String() != "2" {
		t.Fatalf("without side effects: learned %d, actions %s", len(out.Learned), out.Actions)
	}
	var out xlate.Out
	e.x.Translate(&xlate.In{Key: k, SideEffects: true}, &out)
	if len(out.Learned) != 1 {
		t.Fatalf("learned %d flows", len(out.Learned))
	}
	// Open vSwitch 3.1 installs (ovs-ofctl dump-flows br0 table=1):
	// table=1, hard_timeout=30, priority=7,dl_dst=00:00:00:00:00:01 actions=output:1
	lf := out.Learned[0]
	want := flowMod(t, mf.OF10, "dl_dst=00:00:00:00:00:01 actions=drop").Match
	if lf.Table != 1 || lf.Priority != 7 || lf.HardTimeout != 30 || lf.Match != want {
		t.Fatalf("learned %+v", lf)
	}
	if len(lf.Actions) != 1 || lf.Actions[0].Type != ofp.ActOutput || lf.Actions[0].Port != 1 {
		t.Fatalf("learned actions %+v", lf.Actions)
	}
}

func TestTranslationSeesOnlyPublishedRules(t *testing.T) {
	e := newEnv(t, mf.OF10, "priority=1 actions=output:2")
	k := key(t, pktTCP)
	x := e.tables.Begin()
	if err := x.Apply(flowMod(t, mf.OF10, "priority=5,tcp actions=output:3")); err != nil {
		t.Fatal(err)
	}
	if got := e.translate(k).Actions.String(); got != "2" {
		t.Fatalf("staged rule used: %s", got)
	}
	x.Commit()
	if got := e.translate(k).Actions.String(); got != "3" {
		t.Fatalf("committed rule not used: %s", got)
	}
	x = e.tables.Begin()
	if err := x.Apply(&oftable.FlowMod{Command: ofp.FlowDelete, Table: 0xff, OutPort: oftable.PortAny, OutGroup: oftable.GroupAny}); err != nil {
		t.Fatal(err)
	}
	x.Abort()
	if got := e.translate(k).Actions.String(); got != "3" {
		t.Fatalf("after an aborted delete: %s", got)
	}
}

func TestPacketOutActionsAndOutputTable(t *testing.T) {
	e := newEnv(t, mf.OF10, "cookie=9,in_port=1 actions=output:3")
	acts := flowMod(t, mf.OF10, "actions=mod_dl_src:00:00:00:00:00:aa,output:2,output:table").Actions
	var out xlate.Out
	e.x.Translate(&xlate.In{Key: key(t, pktTCP), OFActions: acts, InPort: 1}, &out)
	if got := out.Actions.String(); got != "set(eth(src=00:00:00:00:00:aa)),2,3" || !slices.Equal(cookies(out.Rules), []uint64{9}) {
		t.Fatalf("packet-out: %s rules %v err %v", got, cookies(out.Rules), out.Err)
	}
}

func TestResubmitLimitsDropEverything(t *testing.T) {
	e := newEnv(t, mf.OF10, "table=0 actions=output:2,resubmit(,0)")
	out := e.translate(key(t, pktTCP))
	// The first rule plus 64 nested resubmits, as Open vSwitch's trace shows.
	if !errors.Is(out.Err, xlate.ErrTooDeep) || len(out.Actions) != 0 || len(out.Rules) != xlate.MaxDepth+1 {
		t.Fatalf("depth: err %v, %d actions, %d rules", out.Err, len(out.Actions), len(out.Rules))
	}
	// Open vSwitch allows 4096 resubmits per translation: the root
	// resubmits twice into a tree of 2*2046 resubmits, then m times to a
	// leaf table.
	for _, tc := range []struct {
		extra int
		err   error
	}{{2, nil}, {3, xlate.ErrTooManyResubs}} {
		root := "table=0 actions=resubmit(,1),resubmit(,1)" + strings.Repeat(",resubmit(,30)", tc.extra)
		e = newEnv(t, mf.OF10, append(fanFrom(1, 10), root, "table=30 actions=drop")...)
		out = e.translate(key(t, pktTCP))
		if !errors.Is(out.Err, tc.err) || (tc.err == nil) != (len(out.Actions) == 2048) {
			t.Fatalf("%d resubmits: err %v, %d actions", 4094+tc.extra, out.Err, len(out.Actions))
		}
	}
}

func TestTranslateAllocations(t *testing.T) {
	e := newBenchEnv(t)
	k := key(t, pktTCP)
	var out xlate.Out
	in := xlate.In{Key: k}
	// Translation runs per upcall, not per packet; the bound catches
	// regressions (10 at the time of writing: ctx, actions, rules, set
	// images and field scratch buffers).
	if n := testing.AllocsPerRun(100, func() { e.x.Translate(&in, &out) }); n > 16 {
		t.Fatalf("%.0f allocations per translation of a 3-table pipeline, want <= 16", n)
	}
}

// TestTranslateDuringCommits translates while the rule it hits is
// modified and replaced: every translation sees one complete version.
func TestTranslateDuringCommits(t *testing.T) {
	e := newEnv(t, mf.OF10, "priority=5,tcp actions=output:2")
	k := key(t, pktTCP)
	stop := make(chan struct{})
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			var out xlate.Out
			in := xlate.In{Key: k}
			for {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				e.x.Translate(&in, &out)
				if s := out.Actions.String(); s != "2" && s != "3" {
					errs <- errors.New("translated to " + s)
					return
				}
			}
		}()
	}
	for i := range 200 {
		if i%2 == 0 {
			e.add(t, mf.OF10, "priority=5,tcp actions=output:3")
		} else {
			x := e.tables.Begin()
			fm := flowMod(t, mf.OF10, "priority=5,tcp actions=output:2")
			fm.Command = ofp.FlowModifyStrict
			if err := x.Apply(fm); err != nil {
				t.Fatal(err)
			}
			x.Commit()
		}
	}
	close(stop)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// immediateLearner is an Owner that learns now and answers in.
type immediateLearner struct {
	xlate.Owner
	in      bool
	learned int
}

func (l *immediateLearner) LearnNow(*xlate.LearnedFlow) bool { l.learned++; return l.in }

// A learn's result_dst is written as Open vSwitch writes it: with side
// effects, whether the flow is in its table (learned now); in a
// revalidation, success (its xlate cache); in a trace without side
// effects, nothing.
func TestLearnResultDependsOnHowThePacketIsTranslated(t *testing.T) {
	e := newEnv(t, mf.OF10, "table=0 actions=learn(table=1,limit=1,result_dst=NXM_NX_REG0[0],NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[]),resubmit(,1)",
		"table=1 reg0=1 actions=output:2", "table=1 reg0=0 actions=output:3")
	owner := &immediateLearner{Owner: e.x.Owner}
	e.x.Owner = owner
	k := key(t, pktTCP)
	for _, c := range []struct {
		name string
		in   xlate.In
		ok   bool
		want string
	}{
		{"upcall, over the limit", xlate.In{Key: k, SideEffects: true}, false, "3"},
		{"upcall, learned", xlate.In{Key: k, SideEffects: true}, true, "2"},
		{"revalidation", xlate.In{Key: k}, false, "2"},
		{"trace", xlate.In{Key: k, Trace: func(*xlate.TraceEvent) {}}, true, "3"},
	} {
		owner.in = c.ok
		var out xlate.Out
		e.x.Translate(&c.in, &out)
		if got := out.Actions.String(); got != c.want {
			t.Errorf("%s: actions %s, want %s", c.name, got, c.want)
		}
	}
	if owner.learned != 2 {
		t.Errorf("learned now %d times, want 2 (the upcalls only)", owner.learned)
	}
}
