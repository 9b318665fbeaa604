package bond

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/logrl"
	"github.com/gvs-project/gvs/internal/ovsoracle"
	"github.com/gvs-project/gvs/internal/pcapfile"
	"github.com/gvs-project/gvs/ofproto/lacp"
)

type fakeClock struct{ ms int64 }

func (c *fakeClock) Now() int64 { return c.ms }

func mac(last byte) [6]byte { return [6]byte{0xaa, 0x55, 0xaa, 0x55, 0, last} }

// members registers p1..pN (OpenFlow port and MAC N) with their carrier
// up and LACP's leave to be enabled.
func members(b *Bond, n int) {
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("p%d", i)
		b.Register(name, uint16(i), mac(byte(i)), true)
		b.SetMayEnable(name, true)
	}
}

func newBond(t *testing.T, clock *fakeClock, mode string, other map[string]string, updelay, downdelay int64) (*Bond, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	b := New(PortSettings("bond0", mode, updelay, downdelay, "", other, log, nil, 0), Env{Clock: clock, Log: log})
	return b, &logs
}

func TestBondHashIsOpenVSwitchs(t *testing.T) {
	sw := ovsoracle.Start(t, ovsoracle.Options{})
	for _, args := range [][]string{
		{"00:00:00:00:00:01"}, {"aa:55:aa:55:00:01", "10"}, {"50:54:00:00:00:07", "4095", "12345"},
		{"ff:ff:ff:ff:ff:ff", "0", "4294967295"}, {"0:1:2:3:4:5", "7"},
		{"zz"}, {"00:00:00:00:00:01", "x"}, {"00:00:00:00:00:01", "1", "-1"}, {"00:00:00:00:00:02", " +3x", "7y"},
	} {
		want, werr := sw.Try("ovs-appctl", append([]string{"bond/hash"}, args...)...)
		got, gerr := HashCommand(args)
		if gerr != nil {
			got = gerr.Error() + "\novs-appctl: ovs-vswitchd: server returned an error\n"
		} else {
			got += "\n"
		}
		if (werr != nil) != (gerr != nil) || got != want {
			t.Errorf("bond/hash %v: gvs %q (%v), Open vSwitch %q (%v)", args, got, gerr, want, werr)
		}
	}
}

// An active LACP bond whose partner never answered (lacp.at "lacp - multi
// port config"): LACP negotiated, no member may be enabled.
func TestShowOfALACPBondWithoutPartnerIsOpenVSwitchs(t *testing.T) {
	clock := &fakeClock{}
	b, _ := newBond(t, clock, "active-backup", nil, 0, 0)
	b.Register("p1", 1, mac(1), true)
	b.Register("p2", 2, mac(2), true)
	b.Run(lacp.Negotiated)
	const want = `---- bond0 ----
bond_mode: active-backup
bond may use recirculation: no, Recirc-ID : -1
bond-hash-basis: 0
lb_output action: disabled, bond-id: -1
updelay: 0 ms
downdelay: 0 ms
lacp_status: negotiated
lacp_fallback_ab: false
active-backup primary: <none>
active member mac: 00:00:00:00:00:00(none)

member p1: disabled
  may_enable: false

member p2: disabled
  may_enable: false

`
	if got := b.Show(); got != want {
		t.Fatalf("bond/show:\n%s\nwant:\n%s", got, want)
	}
}

func TestActiveBackupPrefersThePrimaryAndFailsOverOnCarrierLoss(t *testing.T) {
	clock := &fakeClock{}
	b, logs := newBond(t, clock, "active-backup", map[string]string{"bond-primary": "p2"}, 0, 0)
	for i, n := range []string{"p1", "p2", "p3"} {
		b.Register(n, uint16(i+1), mac(byte(i+1)), true)
		b.SetMayEnable(n, true)
	}
	b.Run(lacp.Disabled)
	if name, _, _ := b.Output(0); name != "p2" {
		t.Fatalf("active %s, want the primary p2", name)
	}
	if b.Admit("p1", mac(9)) != Drop || b.Admit("p2", mac(9)) != Accept {
		t.Fatal("active-backup admits on a backup member or refuses the active one")
	}
	b.SetCarrier("p2", false)
	if !b.Run(lacp.Disabled) {
		t.Fatal("failover asked for no revalidation")
	}
	if name, _, _ := b.Output(0); name != "p1" {
		t.Fatalf("after p2 lost carrier the active member is %s, want p1", name)
	}
	if m, changed := b.ActiveMACChanged(false); !changed || m != mac(1) {
		t.Fatalf("bond_active_slave %v %v", m, changed)
	}
	b.SetCarrier("p2", true)
	b.Run(lacp.Disabled)
	if name, _, _ := b.Output(0); name != "p2" {
		t.Fatalf("the primary came back, active is %s", name)
	}
	for _, w := range []string{"member p2: disabled", "bond bond0: active member is now p1", "member p2: link state down"} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, logs.String())
		}
	}
	// Multicast on a backup member is dropped.
	if b.Admit("p3", [6]byte{1, 0, 0x5e, 0, 0, 1}) != Drop {
		t.Fatal("multicast admitted on a backup member")
	}
}

func TestUpAndDownDelaysHoldTheMembersState(t *testing.T) {
	clock := &fakeClock{}
	b, logs := newBond(t, clock, "active-backup", nil, 200, 100)
	b.Register("p1", 1, mac(1), true)
	b.Register("p2", 2, mac(2), false)
	b.SetMayEnable("p1", true)
	b.SetMayEnable("p2", true)
	b.Run(lacp.Disabled)
	b.SetCarrier("p2", true)
	b.Run(lacp.Disabled)
	if got := b.Show(); !strings.Contains(got, "member p2: disabled\n  updelay expires in 200 ms\n") {
		t.Fatalf("bond/show:\n%s", got)
	}
	if !strings.Contains(logs.String(), "member p2: will be enabled if it stays up for 200 ms") {
		t.Fatalf("log:\n%s", logs.String())
	}
	if w := b.WakeTime(); w != 200 {
		t.Fatalf("wake at %d", w)
	}
	clock.ms = 200
	b.Run(lacp.Disabled)
	b.SetCarrier("p1", false)
	b.Run(lacp.Disabled)
	if got := b.Show(); !strings.Contains(got, "member p1: enabled\n  active member\n  downdelay expires in 100 ms\n") ||
		!strings.Contains(got, "member p2: enabled\n") {
		t.Fatalf("bond/show:\n%s", got)
	}
	clock.ms = 300
	b.Run(lacp.Disabled)
	if name, _, _ := b.Output(0); name != "p2" {
		t.Fatalf("after p1's downdelay the active member is %s", name)
	}
}

func TestBalanceSLBSpreadsBucketsAndRebalancesByLoad(t *testing.T) {
	clock := &fakeClock{}
	b, logs := newBond(t, clock, "balance-slb", map[string]string{"bond-rebalance-interval": "1000"}, 0, 0)
	members(b, 2)
	b.Run(lacp.Disabled)
	if b.Admit("p2", mac(7)) != DropIfMoved {
		t.Fatal("balance-slb must drop a packet only if its source moved")
	}
	// Buckets take enabled members in turn.
	got := map[string]int{}
	for h := range uint32(8) {
		name, _, ok := b.Output(h)
		if !ok {
			t.Fatal("no member")
		}
		got[name]++
	}
	if got["p1"] != 4 || got["p2"] != 4 {
		t.Fatalf("buckets per member %v", got)
	}
	// All the load in p1's buckets: rebalancing moves some to p2.
	for h := uint32(0); h < 8; h += 2 {
		b.Account(h, 1<<20)
	}
	clock.ms = 1000
	if !b.Rebalance() {
		t.Fatalf("nothing moved:\n%s", b.Show())
	}
	p1, p2 := 0, 0
	for h := uint32(0); h < 8; h += 2 {
		if name, _, _ := b.Output(h); name == "p1" {
			p1++
		} else {
			p2++
		}
	}
	if p1 != 2 || p2 != 2 {
		t.Fatalf("after rebalancing p1 has %d and p2 %d of the loaded buckets", p1, p2)
	}
	if !strings.Contains(logs.String(), "bond bond0: shift 1024kB of load (with hash") {
		t.Fatalf("log:\n%s", logs.String())
	}
	if s := b.Show(); !strings.Contains(s, "all members active: false\n") || !strings.Contains(s, "next rebalance: 1000 ms\n") ||
		!strings.Contains(s, "kB load\n") {
		t.Fatalf("bond/show:\n%s", s)
	}
}

func TestBalanceTCPNeedsLACPUnlessItFallsBack(t *testing.T) {
	clock := &fakeClock{}
	b, _ := newBond(t, clock, "balance-tcp", nil, 0, 0)
	members(b, 1)
	b.Run(lacp.Disabled)
	if _, _, ok := b.Output(3); ok || b.Admit("p1", mac(5)) != Drop {
		t.Fatal("balance-tcp without LACP forwards")
	}
	b.Run(lacp.Configured)
	if _, _, ok := b.Output(3); ok {
		t.Fatal("balance-tcp with LACP not negotiated forwards")
	}
	b.Run(lacp.Negotiated)
	if name, _, ok := b.Output(3); !ok || name != "p1" || b.Admit("p1", mac(5)) != Accept {
		t.Fatal("balance-tcp with LACP negotiated does not forward")
	}
	if s := b.Show(); !strings.Contains(s, "bond may use recirculation: yes, Recirc-ID : 1\n") {
		t.Fatalf("bond/show:\n%s", s)
	}
	fb, _ := newBond(t, clock, "balance-tcp", map[string]string{"lacp-fallback-ab": "true"}, 0, 0)
	fb.Register("p1", 1, mac(1), true)
	fb.SetMayEnable("p1", true)
	fb.Run(lacp.Configured)
	if name, _, ok := fb.Output(3); !ok || name != "p1" {
		t.Fatal("lacp-fallback-ab does not fall back to active-backup")
	}
}

func TestSettingsWarnAsOpenVSwitch(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	rl := logrl.New(1, 1)
	s := PortSettings("b", "", -5, 3, "aa:55:aa:55:00:02", map[string]string{"bond-rebalance-interval": "10", "bond-detect-mode": "arp"}, log, rl, 0)
	PortSettings("b", "", 0, 0, "", nil, log, rl, 1000) // rate-limited: not logged again
	if s.Mode != ActiveBackup || s.UpDelay != 0 || s.DownDelay != 3 || s.RebalanceInterval != 1000 || s.ActiveMemberMAC != mac(2) {
		t.Fatalf("settings %+v", s)
	}
	PortSettings("b", "round-robin", 0, 0, "", nil, log, nil, 0)
	if n := strings.Count(logs.String(), "Using the default bond_mode"); n != 1 {
		t.Errorf("default-mode warning logged %d times, want once a minute", n)
	}
	for _, w := range []string{
		"port b: Using the default bond_mode active-backup. Note that in previous versions, the default bond_mode was balance-slb",
		"port b: unsupported bond-detect-mode arp, defaulting to carrier",
		"port b: unknown bond_mode round-robin, defaulting to active-backup",
	} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("no warning %q:\n%s", w, logs.String())
		}
	}
}

func TestUnixctlCommandsAnswerAsOpenVSwitch(t *testing.T) {
	clock := &fakeClock{}
	var r Registry
	b, _ := newBond(t, clock, "balance-slb", nil, 0, 0)
	r.Add(b)
	b.Register("p1", 1, mac(1), true)
	b.Register("p2", 2, mac(2), false)
	b.SetMayEnable("p1", true)
	b.Run(lacp.Disabled)
	for _, tc := range []struct {
		cmd  func([]string) (string, error)
		args []string
		want string
	}{
		{r.ListCommand, nil, "bond\ttype\trecircID\tmembers\nbond0\tbalance-slb\t1\tp1, p2\n"},
		{r.MigrateCommand, []string{"nope", "1", "p1"}, "error: no such bond"},
		{r.MigrateCommand, []string{"bond0", "x1", "p1"}, "error: bad hash"},
		{r.MigrateCommand, []string{"bond0", "1", "p3"}, "error: no such member"},
		{r.MigrateCommand, []string{"bond0", "1", "p2"}, "error: cannot migrate to disabled member"},
		{r.MigrateCommand, []string{"bond0", "257", "p1"}, "migrated"},
		{r.SetActiveMemberCommand, []string{"bond0", "p2"}, "error: cannot make disabled member active"},
		{r.SetActiveMemberCommand, []string{"bond0", "p1"}, "no change"},
		{r.EnableMemberCommand, []string{"bond0", "p2"}, "enabled"},
		{r.SetActiveMemberCommand, []string{"bond0", "p2"}, "done"},
		{r.DisableMemberCommand, []string{"bond0", "p1"}, "disabled"},
		{r.ShowCommand, []string{"nope"}, "error: no such bond"},
	} {
		got, err := tc.cmd(tc.args)
		if err != nil {
			got = "error: " + err.Error()
		}
		if got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
	if name, _, _ := b.Output(1); name != "p2" {
		t.Fatalf("bucket 1 after migrate and p1 disabled: %s", name)
	}
}

func ExampleHashCommand() {
	h, _ := HashCommand([]string{"00:00:00:00:00:01"})
	fmt.Println(h)
	// Output: 68
}

func FuzzUnixctlArguments(f *testing.F) {
	f.Add("00:00:00:00:00:01", "1", "2")
	f.Add("zz", "-", "+")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		HashCommand([]string{a, b, c})
		var r Registry
		bd := New(Settings{Name: "b", Mode: BalanceSLB}, Env{Clock: &fakeClock{}})
		r.Add(bd)
		bd.Register("p1", 1, mac(1), true)
		r.MigrateCommand([]string{"b", b, "p1"})
		r.SetActiveMemberCommand([]string{a, c})
	})
}

// After a failover an active-backup bond without LACP asks for learning
// packets once; they are byte for byte the RARPs Open vSwitch sends
// (testdata/gen-ovs-learning.sh) and leave by the new active member.
func TestLearningPacketsAfterAFailoverAreOpenVSwitchs(t *testing.T) {
	want, err := pcapfile.ReadFrames("testdata/ovs-learning.pcap")
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{}
	b, _ := newBond(t, clock, "active-backup", nil, 0, 0)
	members(b, 2)
	b.Run(lacp.Disabled)
	b.ShouldSendLearningPackets() // the first choice of an active member
	if b.ShouldSendLearningPackets() {
		t.Fatal("learning packets asked for twice")
	}
	var r Registry
	r.Add(b)
	if _, err := r.SetActiveMemberCommand([]string{"bond0", "p2"}); err != nil {
		t.Fatal(err)
	}
	if !b.ShouldSendLearningPackets() {
		t.Fatal("no learning packets after the failover")
	}
	for i, in := range []struct {
		mac  [6]byte
		vlan uint16
	}{{[6]byte{0x50, 0x54, 0, 0, 0, 7}, 0}, {[6]byte{0x50, 0x54, 0, 0, 0, 8}, 10}} {
		f, ofport, ok := b.LearningPacket(in.mac, in.vlan)
		if !ok || ofport != 2 || !bytes.Equal(f, want[i]) {
			t.Errorf("learning packet %d on port %d (%v):\n got %x\nwant %x", i, ofport, ok, f, want[i])
		}
	}
	// A LACP bond needs none: its partner knows the aggregate.
	lb, _ := newBond(t, clock, "active-backup", nil, 0, 0)
	lb.Register("p1", 1, mac(1), true)
	lb.SetMayEnable("p1", true)
	lb.Run(lacp.Negotiated)
	if lb.ShouldSendLearningPackets() {
		t.Fatal("a negotiated LACP bond asked for learning packets")
	}
}
