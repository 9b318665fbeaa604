package cfm

import (
	"slices"
	"strings"
	"testing"
)

type fakeClock struct{ ms int64 }

func (c *fakeClock) Now() int64 { return c.ms }

// pair is two maintenance points joined by a wire that delivers every
// CCM at once, stepped as Open vSwitch's monitor steps them.
type pair struct {
	clk  *fakeClock
	a, b *Session
	cut  bool // CCMs from b are lost
}

func newPair(t *testing.T, sa, sb Settings) *pair {
	t.Helper()
	p := &pair{clk: &fakeClock{ms: 1}}
	p.a, p.b = New("p0", Env{Clock: p.clk}), New("p1", Env{Clock: p.clk})
	if !p.a.Configure(sa) || !p.b.Configure(sb) {
		t.Fatal("Configure refused valid settings")
	}
	return p
}

func (p *pair) step(ms int64) {
	for range ms / 100 {
		p.clk.ms += 100
		if p.a.ShouldSend() {
			p.b.Process(p.a.Compose([6]byte{2, 0, 0, 0, 0, 1}))
		}
		if p.b.ShouldSend() {
			f := p.b.Compose([6]byte{2, 0, 0, 0, 0, 2})
			if !p.cut {
				p.a.Process(f)
			}
		}
		p.a.Run()
		p.b.Run()
	}
}

func ext(mpid uint64, interval int) Settings {
	return Settings{MPID: mpid, Interval: interval, Extended: true, OpUp: true}
}

func TestTwoExtendedPointsComeUpWithFullHealth(t *testing.T) {
	p := newPair(t, ext(1, 300), ext(2, 300))
	p.step(10100)
	st := p.a.Status()
	if st.Faults != 0 || st.Health != 100 || !slices.Equal(st.RemoteMPIDs, []uint64{2}) || st.RemoteOpState != 1 || st.FlapCount != 0 {
		t.Fatalf("status %+v", st)
	}
	show := p.a.Show()
	for _, want := range []string{"---- p0 ----\nMPID 1: extended\n  average health: 100\n  opstate: up\n  remote_opstate: up\n  interval: 300ms\n",
		"Remote MPID 2\n  recv since check: ", "  opstate: up\n"} {
		if !strings.Contains(show, want) {
			t.Fatalf("cfm/show lacks %q:\n%s", want, show)
		}
	}
}

func TestLostCCMsRaiseRecvFaultAndCountFlaps(t *testing.T) {
	p := newPair(t, ext(1, 100), ext(2, 100))
	p.step(10100)
	p.cut = true
	p.step(1100)
	if st := p.a.Status(); st.Faults != FaultRecv || st.FlapCount != 1 || len(st.RemoteMPIDs) != 0 || p.a.Live() {
		t.Fatalf("after loss: %+v live=%t", st, p.a.Live())
	}
	p.cut = false
	p.step(1100)
	if st := p.a.Status(); st.Faults != 0 || st.FlapCount != 2 || !p.a.Live() {
		t.Fatalf("after recovery: %+v", st)
	}
}

func TestFaultOverrideShowsAndClears(t *testing.T) {
	p := newPair(t, ext(1, 100), ext(2, 100))
	p.step(1000)
	p.b.SetFaultOverride(1)
	if st := p.b.Status(); st.Faults != FaultOverride || !strings.Contains(p.b.Show(), "MPID 2: extended fault_override\n  fault: override\n") {
		t.Fatalf("override: %+v\n%s", st, p.b.Show())
	}
	p.b.SetFaultOverride(-1)
	if strings.Contains(p.b.Show(), "fault_override") || p.b.Fault() != 0 {
		t.Fatalf("normal:\n%s", p.b.Show())
	}
}

func TestStandardModeDoesNotHearExtendedCCMs(t *testing.T) {
	std := Settings{MPID: 2, Interval: 300, OpUp: true}
	p := newPair(t, ext(1, 300), std)
	var wc Wildcards
	f := p.a.Compose([6]byte{2})
	if p.b.ShouldProcess(&Flow{DlDst: [6]byte(f[:6]), DlType: EtherType}, &wc) || !wc.DlDst {
		t.Fatal("a standard point took an extended CCM")
	}
	if !p.a.ShouldProcess(&Flow{DlDst: AddrCCMX, DlType: EtherType}, &wc) {
		t.Fatal("an extended point refused its CCM")
	}
}

func TestComposeLayout(t *testing.T) {
	s := New("p0", Env{Clock: &fakeClock{ms: 5}})
	s.Configure(Settings{MPID: 7, Interval: 1000, OpUp: true, CCMVLAN: 10, CCMPCP: 3})
	f := s.Compose([6]byte{2, 0, 0, 0, 0, 9})
	if len(f) != 18+Len || [6]byte(f[:6]) != AddrCCM || f[12] != 0x81 || f[14] != 0x60 || f[15] != 10 || f[16] != 0x89 || f[17] != 0x02 {
		t.Fatalf("frame % x", f)
	}
	pl, _, ok := Payload(f)
	m, err := Decode(pl)
	if !ok || err != nil || m.Opcode != OpcodeCCM || m.MPID != 7 || m.Seq != 1 || m.Flags != 4 || m.TLVOffset != 70 || m.MAID != ovsMAID() {
		t.Fatalf("ccm %+v err %v", m, err)
	}
}

func TestParseSettingsAsOpenVSwitch(t *testing.T) {
	got := ParseSettings(5, map[string]string{"cfm_interval": "x", "cfm_ccm_vlan": "random", "cfm_extended": "TRUE", "cfm_opstate": "down"}, false)
	want := Settings{MPID: 5, Interval: 1000, CCMVLAN: RandomVLAN, Extended: true}
	if got != want {
		t.Fatalf("got %+v want %+v", got, want)
	}
	if s := New("x", Env{}); s.Configure(Settings{MPID: 9000, Interval: 100}) {
		t.Fatal("MPID 9000 accepted outside extended mode")
	}
}
