package upcall_test

import (
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/dpif/dpiftest"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/upcall"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// The bridge of these tests has OpenFlow ports 1-3 on datapath ports 1-3,
// as the xlate tests' (and Open vSwitch's dummy bridge with
// ofport_request).
func testPorts() []*xlate.Port {
	return []*xlate.Port{
		{OFPort: 1, ODP: 1, Name: "p1", Tag: -1},
		{OFPort: 2, ODP: 2, Name: "p2", Tag: -1},
		{OFPort: 3, ODP: 3, Name: "p3", Tag: -1},
		{OFPort: xlate.PortLocal, ODP: 100, Name: "br0", Tag: -1},
	}
}

const (
	pktTCP = "in_port(1),eth(src=00:00:00:00:00:01,dst=00:00:00:00:00:02),eth_type(0x0800)," +
		"ipv4(src=1.2.3.4,dst=10.1.2.3,proto=6,tos=0,ttl=64,frag=no),tcp(src=1000,dst=80)"
)

// fakeSwitch is the OpenFlow switch as the handler sees it: packet-ins
// are recorded, learned flows applied to the tables.
type fakeSwitch struct {
	tables *oftable.Tables
	mu     sync.Mutex
	pins   []xlate.PacketIn
}

func (s *fakeSwitch) SendPacketIns(pis []xlate.PacketIn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pins = append(s.pins, pis...)
}

func (s *fakeSwitch) ApplyFlowMods(fms []*oftable.FlowMod) error {
	x := s.tables.Begin()
	for _, fm := range fms {
		if err := x.Apply(fm); err != nil {
			x.Abort()
			return err
		}
	}
	x.Commit()
	return nil
}

func (s *fakeSwitch) SlowPath(*dpif.Upcall)    {}
func (s *fakeSwitch) Sample(*dpif.Upcall) bool { return false }
func (s *fakeSwitch) NetFlowAccount(*flow.Key, uint16, uint64, uint64, uint16, time.Time) {
}
func (s *fakeSwitch) NetFlowExpire(*flow.Key) {}

type env struct {
	dp     *dpiftest.Datapath
	tables *oftable.Tables
	h      *upcall.Handler
	sw     *fakeSwitch
}

// newEnv builds a bridge over a fake datapath with flows (ovs-ofctl
// add-flow syntax, OpenFlow 1.3) and its handler, without the
// revalidator goroutine: the tests run rounds with Revalidate.
func newEnv(t *testing.T, flows ...string) *env {
	t.Helper()
	rt := xlate.NewRecircTable()
	tb, err := oftable.New(oftable.Config{Readers: &rt.Readers})
	if err != nil {
		t.Fatal(err)
	}
	x := xlate.New(tb, rt)
	x.SetSnapshot(xlate.NewSnapshot("br0", 7, testPorts()))
	e := &env{dp: dpiftest.New("dummy@ovs-dummy"), tables: tb, sw: &fakeSwitch{tables: tb}}
	e.h = upcall.New(upcall.Config{Name: "br0", DP: e.dp, Xlator: x, Recirc: rt, Switch: e.sw})
	tb.OnChange(e.h.Changed)
	e.dp.SetUpcallHandler(e.h)
	t.Cleanup(e.h.Close)
	e.apply(t, ofp.FlowAdd, flows...)
	return e
}

func (e *env) apply(t *testing.T, cmd uint8, flows ...string) {
	t.Helper()
	x := e.tables.Begin()
	for _, s := range flows {
		fl, err := ofptext.ParseFlow(s, 4)
		if err != nil {
			t.Fatalf("parse flow %q: %v", s, err)
		}
		fm := &oftable.FlowMod{Command: cmd, Table: 0, Match: fl.Match, Priority: fl.Priority,
			OutPort: oftable.PortAny, OutGroup: oftable.GroupAny, Actions: fl.Actions}
		if err := x.Apply(fm); err != nil {
			x.Abort()
			t.Fatalf("flow_mod %q: %v", s, err)
		}
	}
	x.Commit()
}

func key(t *testing.T, s string) flow.Key {
	t.Helper()
	m, err := flow.ParseMatch(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return m.Key
}

// miss injects a miss for pktTCP and returns the one megaflow it made.
func (e *env) miss(t *testing.T) dpif.Flow {
	t.Helper()
	if _, err := e.dp.Miss(key(t, pktTCP), nil); err != nil {
		t.Fatal(err)
	}
	fs := e.dp.Flows()
	if len(fs) != 1 {
		t.Fatalf("%d megaflows after a miss, want 1", len(fs))
	}
	e.dp.Reset()
	return fs[0]
}

func TestMissPutsMegaflowWithTranslatedActionsAndMask(t *testing.T) {
	e := newEnv(t, "priority=100,in_port=1 actions=output:2")
	r, err := e.dp.Miss(key(t, pktTCP), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Install {
		t.Fatal("miss reply does not install a megaflow")
	}
	puts := e.dp.Puts()
	if len(puts) != 1 {
		t.Fatalf("%d puts, want 1", len(puts))
	}
	p := puts[0]
	m := flow.Match{Key: p.Match.Key.Masked(&p.Match.Mask), Mask: p.Match.Mask}
	const wantMatch = "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(frag=no)"
	if got := m.String(); got != wantMatch {
		t.Errorf("put match %s, want %s", got, wantMatch)
	}
	if got := p.Actions.String(); got != "2" {
		t.Errorf("put actions %q, want %q", got, "2")
	}
	if c := e.h.Counters(); c.Upcalls != 1 || c.Ukeys != 1 {
		t.Errorf("counters %+v, want 1 upcall and 1 ukey", c)
	}
}

func TestRevalidateKeepsUnchangedMegaflow(t *testing.T) {
	e := newEnv(t, "priority=100,in_port=1 actions=output:2")
	e.miss(t)
	// A change elsewhere in the tables makes every megaflow be
	// translated again; this one's translation is the same.
	e.apply(t, ofp.FlowAdd, "priority=100,in_port=3 actions=output:1")
	e.h.Revalidate()
	if puts, dels := e.dp.Puts(), e.dp.Dels(); len(puts) != 0 || len(dels) != 0 {
		t.Fatalf("revalidation of an unchanged megaflow made puts %v and deletes %v", puts, dels)
	}
	if c := e.h.Counters(); c.Revalidated != 1 || c.MegaflowsDeleted != 0 {
		t.Errorf("counters %+v, want 1 revalidated, none deleted", c)
	}
}

func TestRevalidateModifiesChangedMegaflowInPlace(t *testing.T) {
	e := newEnv(t, "priority=100,in_port=1 actions=output:2")
	f := e.miss(t)
	e.apply(t, ofp.FlowModify, "priority=100,in_port=1 actions=output:3")
	e.h.Revalidate()
	puts := e.dp.Puts()
	if len(puts) != 1 || puts[0].Flags != dpif.PutModify || puts[0].UFID != f.UFID || puts[0].Actions.String() != "3" {
		t.Fatalf("puts %+v, want one modify of %s to actions 3", puts, f.UFID)
	}
	if dels := e.dp.Dels(); len(dels) != 0 {
		t.Fatalf("deletes %v, want none", dels)
	}
	got, err := e.dp.FlowGet(f.UFID)
	if err != nil || got.Actions.String() != "3" {
		t.Fatalf("megaflow after revalidation: %+v, %v", got, err)
	}
}

func TestRevalidateDeletesMegaflowWhoseRuleWentAway(t *testing.T) {
	e := newEnv(t, "priority=100,in_port=1 actions=output:2")
	f := e.miss(t)
	// The rule goes; what matches now needs the IPv4 destination, which
	// the megaflow does not match: it cannot be modified, only deleted.
	e.apply(t, ofp.FlowDeleteStrict, "priority=100,in_port=1 actions=drop")
	e.apply(t, ofp.FlowAdd, "priority=50,ip,nw_dst=10.1.2.3 actions=output:3")
	e.dp.SetFlowStats(f.UFID, dpif.FlowStats{Packets: 2, Bytes: 120})
	e.h.Revalidate()
	if dels := e.dp.Dels(); len(dels) != 1 || dels[0] != f.UFID {
		t.Fatalf("deletes %v, want %s", dels, f.UFID)
	}
	if puts := e.dp.Puts(); len(puts) != 0 {
		t.Fatalf("puts %+v, want none", puts)
	}
	if n := e.dp.FlowCount(); n != 0 {
		t.Fatalf("%d megaflows left, want 0", n)
	}
	if c := e.h.Counters(); c.MegaflowsDeleted != 1 || c.Ukeys != 0 {
		t.Errorf("counters %+v, want 1 deleted and no ukey", c)
	}
}

func TestRevalidatePushesDatapathStatisticsToRules(t *testing.T) {
	e := newEnv(t, "priority=100,in_port=1 actions=output:2")
	f := e.miss(t)
	var rule *oftable.Rule
	for r := range e.tables.Rules(0, nil) {
		rule = r
	}
	if rule == nil {
		t.Fatal("no rule")
	}
	// The miss's own packet (none here) is credited by the miss.
	p0, b0 := rule.Stats.Packets.Load(), rule.Stats.Bytes.Load()
	e.dp.SetFlowStats(f.UFID, dpif.FlowStats{Packets: 5, Bytes: 300, Used: time.Now()})
	e.h.Revalidate()
	if p, b := rule.Stats.Packets.Load(), rule.Stats.Bytes.Load(); p-p0 != 5 || b-b0 != 300 {
		t.Fatalf("rule counts %d packets %d bytes after a round, want 5 and 300 more than %d/%d", p, b, p0, b0)
	}
	// The next round pushes only what is new.
	e.dp.SetFlowStats(f.UFID, dpif.FlowStats{Packets: 7, Bytes: 420, Used: time.Now()})
	e.h.Revalidate()
	if p, b := rule.Stats.Packets.Load(), rule.Stats.Bytes.Load(); p-p0 != 7 || b-b0 != 420 {
		t.Fatalf("rule counts %d packets %d bytes after two rounds, want 7 and 420 more than %d/%d", p, b, p0, b0)
	}
}

func TestMissOverFlowLimitIsExecutedWithoutMegaflow(t *testing.T) {
	e := newEnv(t, "priority=100,in_port=1 actions=output:2")
	e.h.FlowLimit().Set(0)
	r, err := e.dp.Miss(key(t, pktTCP), []byte("packet"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Install || len(e.dp.Puts()) != 0 {
		t.Fatalf("miss over the flow limit installed a megaflow (reply %+v, puts %+v)", r, e.dp.Puts())
	}
	if ex := e.dp.Executes(); len(ex) != 1 || ex[0].Actions.String() != "2" {
		t.Fatalf("executes %+v, want the packet with actions 2", ex)
	}
	if st := e.h.FlowLimit().Status(); st.Hits != 1 {
		t.Fatalf("flow limit hits %d, want 1", st.Hits)
	}
}

func TestLearnActionOfMissInstallsFlow(t *testing.T) {
	e := newEnv(t, "priority=100,in_port=1 actions=learn(table=1,priority=10,NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],output:NXM_OF_IN_PORT[]),output:2")
	e.miss(t)
	var learned []*oftable.Rule
	for r := range e.tables.Rules(1, nil) {
		learned = append(learned, r)
	}
	if len(learned) != 1 || learned[0].Priority != 10 {
		t.Fatalf("table 1 after the miss: %d rules, want the learned flow", len(learned))
	}
}

// Prewarm puts the megaflow a miss would, with its ukey (revalidation
// keeps it), without crediting any rule; a recirculation pass's key is
// not prewarmed, and an existing megaflow is left alone.
func TestPrewarmInstallsTheMegaflowAMissWouldWithoutSideEffects(t *testing.T) {
	e := newEnv(t, "priority=100,in_port=1 actions=output:2")
	k := key(t, pktTCP)
	if ok, err := e.h.Prewarm(&k); !ok || err != nil {
		t.Fatalf("Prewarm: %v, %v", ok, err)
	}
	puts := e.dp.Puts()
	if len(puts) != 1 || puts[0].Actions.String() != "2" || puts[0].Flags != dpif.PutCreate {
		t.Fatalf("puts %+v, want one create with actions 2", puts)
	}
	m := flow.Match{Key: puts[0].Match.Key.Masked(&puts[0].Match.Mask), Mask: puts[0].Match.Mask}
	if got := m.String(); got != "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(frag=no)" {
		t.Errorf("put match %s", got)
	}
	if c := e.h.Counters(); c.Upcalls != 0 || c.Ukeys != 1 {
		t.Errorf("counters %+v, want no upcall and 1 ukey", c)
	}
	for r := range e.tables.Rules(0, nil) {
		if n := r.Stats.Packets.Load(); n != 0 {
			t.Fatalf("the rule was credited %d packets", n)
		}
	}
	// Already there (a packet of a port polled during a handover got
	// there first): not an error, the handover goes on.
	if ok, err := e.h.Prewarm(&k); ok || err != nil {
		t.Fatalf("an existing megaflow: Prewarm = %v, %v; want false, nil", ok, err)
	}
	e.dp.Reset()
	e.h.Revalidate()
	if dels := e.dp.Dels(); len(dels) != 0 {
		t.Fatalf("revalidation deleted the prewarmed megaflow: %v", dels)
	}
	r := k
	r.RecircID = 5
	if ok, _ := e.h.Prewarm(&r); ok {
		t.Fatal("a recirculation pass was prewarmed")
	}
}
