package lacp

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/pcapfile"
)

type fakeClock struct{ ms int64 }

func (c *fakeClock) Now() int64 { return c.ms }

// readPcap returns the frames of a capture.
func readPcap(t *testing.T, path string) [][]byte {
	t.Helper()
	frames, err := pcapfile.ReadFrames(path)
	if err != nil {
		t.Fatal(err)
	}
	return frames
}

// The bond of testdata/gen-ovs-lacpdu.sh: p1 and p2 on a bridge with
// hwaddr aa:55:aa:55:00:00, lacp=active, lacp-time=fast, key 7.
func capturedBond(clock Clock) *LACP {
	s, _ := PortSettings("bond0", "active", map[string]string{"lacp-time": "fast"}, [6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 0}, 2, slog.New(slog.DiscardHandler))
	l := New(s, Env{Clock: clock})
	for i, name := range []string{"p1", "p2"} {
		l.Register(MemberSettingsFor(name, uint16(i+1), map[string]string{"lacp-aggregation-key": "7"}))
	}
	return l
}

func TestPDUsAreByteForByteOpenVSwitchsCapturedOnes(t *testing.T) {
	frames := readPcap(t, "testdata/ovs-lacpdu.pcap")
	if len(frames) == 0 {
		t.Fatal("no frames in the capture")
	}
	for i, f := range frames {
		payload, ok := Payload(f)
		if !ok {
			t.Fatalf("frame %d: not a Slow Protocols frame", i)
		}
		pdu, err := Decode(payload)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		var src [6]byte
		copy(src[:], f[6:12])
		if got := Frame(src, &pdu); !bytes.Equal(got, f) {
			t.Fatalf("frame %d re-encoded:\n got %x\nwant %x", i, got, f)
		}
	}

	// The same bond here sends the same first PDU on p1.
	clock := &fakeClock{ms: 1}
	l := capturedBond(clock)
	l.CarrierChanged("p1", true)
	l.CarrierChanged("p2", true)
	var sent [][]byte
	l.Run(func(m string, p *PDU) {
		if m == "p1" {
			sent = append(sent, Frame([6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 1}, p))
		}
	})
	if len(sent) != 1 || !bytes.Equal(sent[0], frames[0]) {
		t.Fatalf("first PDU on p1:\n got %x\nwant %x", sent, frames[0])
	}
	// Then one a second (the partner's timeout bit is set while it is
	// expired), as in the capture.
	clock.ms += 999
	l.Run(func(string, *PDU) { t.Fatal("sent before the interval") })
	clock.ms++
	n := 0
	l.Run(func(m string, p *PDU) {
		if m == "p1" && bytes.Equal(Frame([6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 1}, p), frames[1]) {
			n++
		}
	})
	if n != 1 {
		t.Fatal("second PDU on p1 differs from the capture's")
	}
}

func TestDecodeRefusesWhatOpenVSwitchRefuses(t *testing.T) {
	good := (&PDU{}).Encode(nil)
	for name, tc := range map[string]struct {
		mutate func([]byte) []byte
		want   error
	}{
		"short":           {func(b []byte) []byte { return b[:PDULen-1] }, ErrUnparsed},
		"marker":          {func(b []byte) []byte { b[0] = 2; return b[:1] }, ErrMarker},
		"subtype 3":       {func(b []byte) []byte { b[0] = 3; return b }, ErrUnparsed},
		"actor length":    {func(b []byte) []byte { b[3] = 19; return b }, ErrUnparsed},
		"partner type":    {func(b []byte) []byte { b[22] = 1; return b }, ErrUnparsed},
		"version ignored": {func(b []byte) []byte { b[1] = 9; return b }, nil},
	} {
		_, err := Decode(tc.mutate(bytes.Clone(good)))
		if err != tc.want {
			t.Errorf("%s: got %v, want %v", name, err, tc.want)
		}
	}
}

// wantSingle is Open vSwitch's lacp/show of an active one-member bond
// with no partner (lacp.at "lacp - config").
const wantSingle = `---- p1 ----
  status: active negotiated
  sys_id: aa:55:aa:55:00:00
  sys_priority: 65535
  aggregation key: 1
  lacp_time: slow

member: p1: expired attached
  port_id: 1
  port_priority: 65535
  may_enable: false

  actor sys_id: aa:55:aa:55:00:00
  actor sys_priority: 65535
  actor port_id: 1
  actor port_priority: 65535
  actor key: 1
  actor state: activity synchronized collecting distributing expired

  partner sys_id: 00:00:00:00:00:00
  partner sys_priority: 0
  partner port_id: 0
  partner port_priority: 0
  partner key: 0
  partner state: timeout
`

func TestShowOfAnUnansweredSingleMemberPortIsOpenVSwitchs(t *testing.T) {
	clock := &fakeClock{}
	s, ok := PortSettings("p1", "active", nil, [6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 0}, 1, slog.New(slog.DiscardHandler))
	if !ok {
		t.Fatal("settings refused")
	}
	l := New(s, Env{Clock: clock})
	l.Register(MemberSettingsFor("p1", 1, nil))
	for range 3 {
		clock.ms += 100
		l.Run(func(string, *PDU) {})
	}
	if got := l.Show(); got != wantSingle {
		t.Fatalf("lacp/show:\n%s\nwant:\n%s", got, wantSingle)
	}
	if l.Status() != Negotiated || l.MayEnable("p1") {
		t.Fatalf("status %v, may_enable %v", l.Status(), l.MayEnable("p1"))
	}
}

func TestShowOfAConfiguredBondUsesTheConfiguredIDs(t *testing.T) {
	clock := &fakeClock{}
	cfg := map[string]string{"lacp-time": "fast", "lacp-system-id": "11:22:33:44:55:66", "lacp-system-priority": "54321"}
	s, _ := PortSettings("bond", "active", cfg, [6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 0}, 2, slog.New(slog.DiscardHandler))
	l := New(s, Env{Clock: clock})
	l.Register(MemberSettingsFor("p1", 1, map[string]string{"lacp-port-id": "11", "lacp-port-priority": "111", "lacp-aggregation-key": "3333"}))
	l.Register(MemberSettingsFor("p2", 2, map[string]string{"lacp-port-id": "22", "lacp-port-priority": "222", "lacp-aggregation-key": "3333"}))
	l.Run(func(string, *PDU) {})
	got := l.Show()
	for _, want := range []string{
		"  sys_id: 11:22:33:44:55:66\n  sys_priority: 54321\n  aggregation key: 3333\n  lacp_time: fast\n",
		"member: p1: expired attached\n  port_id: 11\n  port_priority: 111\n  may_enable: false\n",
		"  actor port_id: 22\n  actor port_priority: 222\n  actor key: 3333\n  actor state: activity timeout aggregation synchronized collecting distributing expired\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacp/show lacks %q:\n%s", want, got)
		}
	}
}

// link joins two bonds' members back to back.
type link struct {
	peers map[string]string // member -> the peer member
	bonds map[string]*LACP  // member -> its bond
	cut   map[string]bool   // frames sent by this member are lost
}

func (k *link) run(ls ...*LACP) {
	for _, l := range ls {
		l.Run(func(m string, p *PDU) {
			if k.cut[m] {
				return
			}
			peer := k.peers[m]
			k.bonds[peer].Process(peer, p.Encode(nil))
		})
	}
}

func negotiatedPair(t *testing.T, clock *fakeClock) (*LACP, *LACP, *link) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	fast := map[string]string{"lacp-time": "fast"}
	s0, _ := PortSettings("bond0", "active", fast, [6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 0}, 2, log)
	s1, _ := PortSettings("bond1", "active", fast, [6]byte{0xaa, 0x66, 0xaa, 0x66, 0, 0}, 2, log)
	b0, b1 := New(s0, Env{Clock: clock}), New(s1, Env{Clock: clock})
	k := &link{peers: map[string]string{}, bonds: map[string]*LACP{}, cut: map[string]bool{}}
	for i, pair := range [][2]string{{"p0", "p2"}, {"p1", "p3"}} {
		b0.Register(MemberSettingsFor(pair[0], uint16(i+1), map[string]string{"lacp-aggregation-key": "2"}))
		b1.Register(MemberSettingsFor(pair[1], uint16(i+3), map[string]string{"lacp-aggregation-key": "4"}))
		k.peers[pair[0]], k.peers[pair[1]] = pair[1], pair[0]
		k.bonds[pair[0]], k.bonds[pair[1]] = b0, b1
	}
	for _, m := range []string{"p0", "p1"} {
		b0.CarrierChanged(m, true)
	}
	for _, m := range []string{"p2", "p3"} {
		b1.CarrierChanged(m, true)
	}
	for i := 0; ; i++ {
		s0, s1 := b0.Show(), b1.Show()
		if strings.Contains(s0, "negotiated") && strings.Contains(s1, "negotiated") &&
			!strings.Contains(s0+s1, "expired") {
			return b0, b1, k
		}
		if i == 50 {
			t.Fatalf("not negotiated after 5 s:\n%s%s", s0, s1)
		}
		clock.ms += 100
		k.run(b0, b1)
	}
}

// memberShow is one member's block of lacp/show for two negotiated bonds
// (lacp.at "lacp - negotiation").
func memberShow(name string, port, key int, sys string, pport, pkey int, psys string) string {
	const tmpl = `
member: %s: current attached
  port_id: %d
  port_priority: 65535
  may_enable: true

  actor sys_id: %s
  actor sys_priority: 65534
  actor port_id: %d
  actor port_priority: 65535
  actor key: %d
  actor state: activity timeout aggregation synchronized collecting distributing

  partner sys_id: %s
  partner sys_priority: 65534
  partner port_id: %d
  partner port_priority: 65535
  partner key: %d
  partner state: activity timeout aggregation synchronized collecting distributing
`
	return fmt.Sprintf(tmpl, name, port, sys, port, key, psys, pport, pkey)
}

func TestTwoBondsNegotiateAsOpenVSwitchsDo(t *testing.T) {
	clock := &fakeClock{}
	b0, b1, _ := negotiatedPair(t, clock)
	const a, b = "aa:55:aa:55:00:00", "aa:66:aa:66:00:00"
	want0 := "---- bond0 ----\n  status: active negotiated\n  sys_id: " + a + "\n  sys_priority: 65534\n  aggregation key: 2\n  lacp_time: fast\n" +
		memberShow("p0", 1, 2, a, 3, 4, b) + memberShow("p1", 2, 2, a, 4, 4, b)
	want1 := "---- bond1 ----\n  status: active negotiated\n  sys_id: " + b + "\n  sys_priority: 65534\n  aggregation key: 4\n  lacp_time: fast\n" +
		memberShow("p2", 3, 4, b, 1, 2, a) + memberShow("p3", 4, 4, b, 2, 2, a)
	if got := b0.Show(); got != want0 {
		t.Errorf("bond0:\n%s\nwant:\n%s", got, want0)
	}
	if got := b1.Show(); got != want1 {
		t.Errorf("bond1:\n%s\nwant:\n%s", got, want1)
	}
	for _, m := range []string{"p0", "p1"} {
		if !b0.MayEnable(m) || !b0.IsCurrent(m) {
			t.Errorf("%s: may_enable %v current %v", m, b0.MayEnable(m), b0.IsCurrent(m))
		}
	}
}

func TestASilentPartnerExpiresThenDefaultsAndDisablesTheMember(t *testing.T) {
	clock := &fakeClock{}
	var changes int
	b0, b1, k := negotiatedPair(t, clock)
	b0.env.Changed = func() { changes++ }
	k.cut["p2"] = true // bond1 stops sending on p2: p0 hears nothing
	step := func(ms int64) {
		for end := clock.ms + ms; clock.ms < end; {
			clock.ms += 100
			k.run(b0, b1)
		}
	}
	step(3000) // three fast intervals: expired
	if got := b0.Show(); !strings.Contains(got, "member: p0: expired attached") {
		t.Fatalf("after 3 s:\n%s", got)
	}
	if b0.MayEnable("p0") || !b0.MayEnable("p1") {
		t.Fatalf("may_enable p0 %v p1 %v", b0.MayEnable("p0"), b0.MayEnable("p1"))
	}
	step(3000)
	if got := b0.Show(); !strings.Contains(got, "member: p0: defaulted detached") || !strings.Contains(got, "member: p1: current attached") {
		t.Fatalf("after 6 s:\n%s", got)
	}
	if b0.IsCurrent("p0") {
		t.Fatal("a defaulted member is current")
	}
	st, _ := b0.Stats("p0")
	if st.LinkExpired != 1 || st.LinkDefaulted != 1 {
		t.Fatalf("stats %+v", st)
	}
	if changes == 0 {
		t.Fatal("Changed never called")
	}
	// When every member is defaulted the bond is no longer negotiated
	// and nothing may be enabled, unless lacp-fallback-ab lets the
	// defaulted members work as an active-backup bond.
	k.cut["p3"] = true
	step(6000)
	if b0.Status() != Configured || b0.MayEnable("p0") || b0.MayEnable("p1") {
		t.Fatalf("all defaulted: status %v:\n%s", b0.Status(), b0.Show())
	}
	s := b0.set
	s.FallbackAB = true
	b0.Configure(s)
	step(100)
	if b0.Status() != Configured || !b0.MayEnable("p0") || !b0.MayEnable("p1") {
		t.Fatalf("fallback-ab: status %v:\n%s", b0.Status(), b0.Show())
	}
}

func TestMembersOfAnotherPartnerSystemAreNotAttached(t *testing.T) {
	clock := &fakeClock{}
	b0, _, _ := negotiatedPair(t, clock)
	// p1's partner turns out to be a third system, of lower priority
	// than bond1: p0 keeps the aggregator.
	other := PDU{Actor: Info{SysPriority: 65535, SysID: [6]byte{2, 0, 0, 0, 0, 9}, Key: 4, PortID: 9, PortPriority: 1,
		State: StateActivity | StateTimeout | StateAggregation | StateSync | StateCollecting | StateDistributing}}
	b0.Process("p1", other.Encode(nil))
	b0.Run(func(string, *PDU) {})
	got := b0.Show()
	if !strings.Contains(got, "member: p0: current attached") || !strings.Contains(got, "member: p1: current detached") {
		t.Fatalf("lacp/show:\n%s", got)
	}
}

func TestALoopedBackMemberIsWarnedAndNeverAttached(t *testing.T) {
	var logs bytes.Buffer
	clock := &fakeClock{}
	s, _ := PortSettings("bond0", "active", nil, [6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 0}, 2, slog.New(slog.DiscardHandler))
	l := New(s, Env{Clock: clock, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	l.Register(MemberSettingsFor("p0", 1, nil))
	l.Register(MemberSettingsFor("p1", 2, nil))
	l.CarrierChanged("p0", true)
	l.CarrierChanged("p1", true)
	l.Run(func(m string, p *PDU) {
		if m == "p0" {
			l.Process("p1", p.Encode(nil)) // p0 is cabled to p1
		}
	})
	l.Run(func(string, *PDU) {})
	if !strings.Contains(logs.String(), "member p1: Loopback detected. Interface is connected to its own bond") {
		t.Fatalf("log: %s", logs.String())
	}
	if strings.Contains(l.Show(), "member: p1: current attached") {
		t.Fatalf("looped member attached:\n%s", l.Show())
	}
}

func TestBadPDUsAreCountedAndWarned(t *testing.T) {
	var logs bytes.Buffer
	clock := &fakeClock{}
	l := capturedBond(clock)
	l.env.Log = slog.New(slog.NewTextHandler(&logs, nil))
	l.CarrierChanged("p1", true)
	l.Process("p1", []byte{1, 1, 0})
	l.Process("p1", []byte{2})
	if l.Process("nope", (&PDU{}).Encode(nil)) {
		t.Fatal("a PDU on an unknown member enabled it")
	}
	want := "---- bond0 statistics ----\n\nmember: p1:\n  TX PDUs: 0\n  RX PDUs: 2\n  RX Bad PDUs: 1\n  RX Marker Request PDUs: 1\n" +
		"  Link Expired: 0\n  Link Defaulted: 0\n  Carrier Status Changed: 1\n\nmember: p2:\n  TX PDUs: 0\n  RX PDUs: 0\n" +
		"  RX Bad PDUs: 0\n  RX Marker Request PDUs: 0\n  Link Expired: 0\n  Link Defaulted: 0\n  Carrier Status Changed: 0\n"
	if got := l.ShowStats(); got != want {
		t.Fatalf("lacp/show-stats:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(logs.String(), "bond0: received an unparsable LACP PDU.") {
		t.Fatalf("log: %s", logs.String())
	}
}

func TestPortSettingsFollowOpenVSwitchsDefaultsAndWarnings(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	mac := [6]byte{0xaa, 0, 0, 0, 0, 1}
	if _, ok := PortSettings("b", "off", nil, mac, 2, log); ok {
		t.Error("lacp=off runs LACP")
	}
	if _, ok := PortSettings("b", "sometimes", nil, mac, 2, log); ok {
		t.Error("unknown mode runs LACP")
	}
	if _, ok := PortSettings("b", "active", map[string]string{"lacp-system-id": "zz"}, mac, 2, log); ok {
		t.Error("bad system ID accepted")
	}
	if _, ok := PortSettings("b", "active", nil, [6]byte{}, 2, log); ok {
		t.Error("zero system ID accepted")
	}
	for _, w := range []string{"port b: unknown LACP mode sometimes", "port b: LACP system ID (zz) must be an Ethernet address.", "port b: Invalid zero LACP system ID."} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("no warning %q in %s", w, logs.String())
		}
	}
	s, ok := PortSettings("b", "passive", map[string]string{"lacp-system-priority": "70000", "lacp-fallback-ab": "true", "lacp-time": "FAST"}, mac, 1, log)
	if !ok || s.Active || s.SysPriority != 65535 || !s.FallbackAB || !s.Fast || s.SysID != mac {
		t.Errorf("settings %+v", s)
	}
	m := MemberSettingsFor("p", 5, map[string]string{"lacp-port-id": "0", "lacp-port-priority": "x", "lacp-aggregation-key": "65536"})
	if m != (MemberSettings{Name: "p", PortID: 5, PortPriority: 65535, Key: 0}) {
		t.Errorf("member settings %+v", m)
	}
}

func TestRegistryShowsAllBondsOrOneByName(t *testing.T) {
	var r Registry
	clock := &fakeClock{}
	b0, b1, _ := negotiatedPair(t, clock)
	r.Add(b0)
	r.Add(b1)
	all, _ := r.ShowCommand(nil)
	if all != b0.Show()+b1.Show() {
		t.Fatal("lacp/show is not every bond in order")
	}
	one, _ := r.ShowCommand([]string{"bond1"})
	if one != b1.Show() {
		t.Fatal("lacp/show bond1")
	}
	if _, err := r.ShowStatsCommand([]string{"nope"}); err == nil || err.Error() != "no such lacp object" {
		t.Fatalf("err %v", err)
	}
	r.Remove(b0)
	if r.Lookup("bond0") != nil {
		t.Fatal("removed bond still found")
	}
}

func FuzzProcess(f *testing.F) {
	f.Add((&PDU{}).Encode(nil))
	f.Add([]byte{2})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		clock := &fakeClock{}
		l := capturedBond(clock)
		l.CarrierChanged("p1", true)
		l.Process("p1", b)
		l.Run(func(string, *PDU) {})
		if p, err := Decode(b); err == nil {
			got := p.Encode(nil)
			if !bytes.Equal(got[offActor:offActor+infoLen], b[offActor:offActor+infoLen]) ||
				!bytes.Equal(got[offPartner:offPartner+infoLen], b[offPartner:offPartner+infoLen]) {
				t.Fatalf("actor/partner did not round-trip: %x", got)
			}
		}
	})
}
