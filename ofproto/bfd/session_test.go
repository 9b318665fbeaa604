package bfd

import (
	"bytes"
	"encoding/hex"
	"log/slog"
	"strings"
	"testing"
)

type fakeClock struct{ ms int64 }

func (c *fakeClock) Now() int64 { return c.ms }

// pair is two sessions joined by a wire the test controls.
type pair struct {
	clk     *fakeClock
	a, b    *Session
	cut     bool // packets are lost in both directions
	logs    *bytes.Buffer
	aRxData uint64
}

func newPair(t *testing.T, cfgA, cfgB map[string]string) *pair {
	t.Helper()
	p := &pair{clk: &fakeClock{ms: 1000}, logs: &bytes.Buffer{}}
	log := slog.New(slog.NewTextHandler(p.logs, nil))
	env := Env{Clock: p.clk, Rand: func(int) int { return 0 }, Log: log, RxPackets: func() uint64 { return p.aRxData }}
	p.a = New("p0", 0x1111, 49152, cfgA, env)
	p.b = New("p1", 0x2222, 49153, cfgB, env)
	return p
}

// deliver sends s's packet to peer when due.
func (p *pair) step(s, peer *Session) {
	if s.ShouldSend() {
		f, _ := s.PutPacket([6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 1})
		if !p.cut && peer != nil {
			pl, ttl, ok := UDPPayload(f)
			if !ok {
				panic("own frame not parsed")
			}
			peer.Process(ttl, pl)
		}
	}
	s.Run()
}

// run advances the clock by ms in 1 ms steps.
func (p *pair) run(ms int64) {
	for range ms {
		p.clk.ms++
		p.step(p.a, p.b)
		p.step(p.b, p.a)
	}
}

func checkShow(t *testing.T, s *Session, want map[string]string) {
	t.Helper()
	show := s.Show()
	for k, v := range want {
		if !strings.Contains(show, "  "+k+": "+v+"\n") {
			t.Errorf("%s: want %q: %q in\n%s", s.name, k, v, show)
		}
	}
}

func TestSessionsComeUpAndExpireAsOpenVSwitch(t *testing.T) {
	cfg := map[string]string{"enable": "true", "min_rx": "100", "min_tx": "100"}
	p := newPair(t, cfg, cfg)
	p.run(4100)
	for _, s := range []*Session{p.a, p.b} {
		checkShow(t, s, map[string]string{"Forwarding": "true", "Local Session State": "up", "Remote Session State": "up",
			"Local Diagnostic": "No Diagnostic", "TX Interval": "Approx 100ms", "RX Interval": "Approx 100ms",
			"Local Flags": "none", "Remote Detect Multiplier": "3"})
	}
	if st := p.a.Status(); st["flap_count"] != "1" || st["forwarding"] != "true" || st["state"] != "up" {
		t.Errorf("status %v", st)
	}
	// The peer goes silent: down after the detect time (3 x 100 ms).
	p.b = nil
	for range 199 {
		p.clk.ms++
		p.step(p.a, nil)
	}
	if !p.a.Forwarding() {
		t.Fatalf("down before the detect time:\n%s", p.a.Show())
	}
	for range 102 {
		p.clk.ms++
		p.step(p.a, nil)
	}
	checkShow(t, p.a, map[string]string{"Forwarding": "false", "Local Session State": "down",
		"Local Diagnostic": "Control Detection Time Expired", "Remote Session State": "down", "Remote Diagnostic": "No Diagnostic",
		"TX Interval": "Approx 1000ms"})
	want := map[string]string{"forwarding": "false", "state": "down", "diagnostic": "Control Detection Time Expired", "flap_count": "2",
		"remote_state": "down", "remote_diagnostic": "No Diagnostic"}
	if st := p.a.Status(); !mapsEqual(st, want) {
		t.Errorf("status %v, want %v", st, want)
	}
	if !strings.Contains(p.logs.String(), `p0: BFD state change: up->down \"No Diagnostic\"->\"Control Detection Time Expired\".`) {
		t.Errorf("no state change log:\n%s", p.logs)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestOptionsParsedAsOpenVSwitch(t *testing.T) {
	for _, tc := range []struct {
		cfg          map[string]string
		mult, minRx  string
		minTx, decay string
	}{
		{map[string]string{"min_rx": "0", "min_tx": "-5", "mult": "0"}, "3", "1ms", "1000ms", ""},
		{map[string]string{"min_rx": "abc", "min_tx": "12x", "mult": "256"}, "3", "1000ms", "1000ms", ""},
		{map[string]string{"min_rx": " 300", "mult": "+7"}, "7", "300ms", "1000ms", ""},
		{map[string]string{"min_rx": "300", "decay_min_rx": "200"}, "3", "300ms", "1000ms", "p0: decay_min_rx cannot be less than 300 ms"},
	} {
		cfg := map[string]string{"enable": "TRUE"}
		for k, v := range tc.cfg {
			cfg[k] = v
		}
		var logs bytes.Buffer
		s := New("p0", 1, 49152, cfg, Env{Clock: &fakeClock{}, Log: slog.New(slog.NewTextHandler(&logs, nil))})
		checkShow(t, s, map[string]string{"Detect Multiplier": tc.mult, "Local Minimum RX Interval": tc.minRx, "Local Minimum TX Interval": tc.minTx})
		if tc.decay != "" && !strings.Contains(logs.String(), tc.decay) {
			t.Errorf("%v: log %q lacks %q", tc.cfg, logs.String(), tc.decay)
		}
	}
	if New("p0", 1, 1, map[string]string{"enable": "yes"}, Env{}) != nil {
		t.Error("enable=yes enabled BFD; Open vSwitch wants \"true\"")
	}
}

func TestFrameAsOpenVSwitchBuildsIt(t *testing.T) {
	s := New("p0", 0x01020304, 49152, map[string]string{"enable": "true"}, Env{Clock: &fakeClock{}, Rand: func(int) int { return 0 }})
	f, oam := s.PutPacket([6]byte{0xaa, 0x55, 0xaa, 0x55, 0x00, 0x01})
	// Ethernet to 00:23:20:00:00:01, IPv4 169.254.1.1 -> 169.254.1.0 TTL
	// 255 TOS 0xc0, UDP 49152 -> 3784 without checksum, then the message:
	// version 1, state down, mult 3, length 24, my_disc, your_disc 0,
	// min_tx 1 s (not up), min_rx 1 s, echo 0.
	want := "002320000001aa55aa550001080045c0003400000000ff11" + "64fb" + "a9fe0101a9fe0100" + "c0000ec8002000 00" +
		"20400318" + "01020304" + "00000000" + "000f4240" + "000f4240" + "00000000"
	want = strings.ReplaceAll(want, " ", "")
	if got := hex.EncodeToString(f); got != want || oam {
		t.Errorf("frame\n got %s\nwant %s", got, want)
	}
	if ipChecksum(f[14:34]) != 0 {
		t.Error("bad IPv4 checksum")
	}
}

func TestShouldProcessMasksAsOpenVSwitch(t *testing.T) {
	s := New("p0", 1, 49152, map[string]string{"enable": "true", "check_tnl_key": "true"}, Env{})
	var wc Wildcards
	if s.ShouldProcess(&Flow{DlType: 0x0800, NwProto: 17, TpDst: 3785}, &wc) || wc != (Wildcards{NwProto: true, TpDst: 0x0001}) {
		t.Errorf("port 3785: %+v", wc)
	}
	wc = Wildcards{}
	if !s.ShouldProcess(&Flow{DlType: 0x0800, NwProto: 17, TpDst: 3784}, &wc) || wc != (Wildcards{NwProto: true, TpDst: 0xffff, TunID: true}) {
		t.Errorf("bfd: %+v", wc)
	}
	wc = Wildcards{}
	if s.ShouldProcess(&Flow{DlType: 0x0800, NwProto: 17, TpDst: 3784, TunID: 5}, &wc) {
		t.Error("tunnel key 5 accepted with check_tnl_key")
	}
	wc = Wildcards{}
	if s.ShouldProcess(&Flow{DlType: 0x86dd}, &wc) || wc != (Wildcards{}) {
		t.Errorf("ipv6: %+v", wc)
	}
}

func TestMalformedPacketsDroppedAndCounted(t *testing.T) {
	var logs bytes.Buffer
	s := New("p0", 7, 49152, map[string]string{"enable": "true"}, Env{Clock: &fakeClock{}, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	good := Msg{VersDiag: 1 << 5, Flags: uint8(StateDown), Mult: 3, Length: 24, MyDisc: 9}
	bad := []struct {
		ttl uint8
		m   func(m *Msg)
		raw []byte
		log string
	}{
		{254, func(*Msg) {}, nil, ""},
		{255, nil, []byte{0x20, 0x40, 3}, "Received too-short BFD control message (only 3 bytes long, at least 24 required)."},
		{255, func(m *Msg) { m.VersDiag = 2 << 5 }, nil, "Incorrect version"},
		{255, func(m *Msg) { m.Flags |= FlagAuth }, nil, "Authenticated control message with authentication disabled"},
		{255, func(m *Msg) { m.Length = 20 }, nil, "Unexpected length"},
		{255, func(m *Msg) { m.Mult = 0 }, nil, "Zero multiplier"},
		{255, func(m *Msg) { m.Flags |= FlagMultipoint }, nil, "Unsupported multipoint flag"},
		{255, func(m *Msg) { m.MyDisc = 0 }, nil, "NULL my_disc"},
		{255, func(m *Msg) { m.YourDisc = 8 }, nil, "Incorrect your_disc"},
		{255, func(m *Msg) { m.Flags = uint8(StateUp) }, nil, "Null your_disc"},
	}
	for i, b := range bad {
		raw := b.raw
		if raw == nil {
			m := good
			b.m(&m)
			raw = m.Encode(nil)
		}
		s.Process(b.ttl, raw)
		if s.Dropped() != uint64(i+1) {
			t.Errorf("case %d not counted", i)
		}
		if !strings.Contains(logs.String(), b.log) {
			t.Errorf("case %d: log lacks %q", i, b.log)
		}
	}
	checkShow(t, s, map[string]string{"Local Session State": "down", "Remote Discriminator": "0x0"})
	// A good one moves the session to init.
	s.Process(255, good.Encode(nil))
	checkShow(t, s, map[string]string{"Local Session State": "init", "Remote Discriminator": "0x9"})
}

func TestDecayAndPollSequence(t *testing.T) {
	cfg := map[string]string{"enable": "true", "min_rx": "100", "min_tx": "100", "decay_min_rx": "300"}
	p := newPair(t, cfg, map[string]string{"enable": "true", "min_rx": "100", "min_tx": "100"})
	p.run(4100)
	// No data traffic: p0's min_rx decays to 300 ms after a poll
	// sequence, and p1's TX interval follows.
	checkShow(t, p.a, map[string]string{"Local Minimum RX Interval": "300ms", "Local Session State": "up"})
	checkShow(t, p.b, map[string]string{"TX Interval": "Approx 300ms", "Remote Minimum RX Interval": "300ms"})
	if !strings.Contains(p.logs.String(), "p0: Initiating poll sequence") || !strings.Contains(p.logs.String(), "Poll sequence terminated") {
		t.Errorf("no poll sequence in the logs")
	}
	// Data traffic ends decay.
	for range 40 {
		p.aRxData += 100
		p.run(100)
	}
	checkShow(t, p.a, map[string]string{"Local Minimum RX Interval": "100ms"})
}

func TestCPathDownAndOverride(t *testing.T) {
	cfg := map[string]string{"enable": "true", "min_rx": "100", "min_tx": "100"}
	p := newPair(t, cfg, cfg)
	p.run(2000)
	p.a.Configure(map[string]string{"enable": "true", "min_rx": "100", "min_tx": "100", "cpath_down": "true"})
	p.run(2000)
	checkShow(t, p.b, map[string]string{"Forwarding": "false", "Local Session State": "up", "Remote Diagnostic": "Concatenated Path Down"})
	checkShow(t, p.a, map[string]string{"Concatenated Path Down": "true", "Local Diagnostic": "Concatenated Path Down"})

	r := NewRegistry()
	r.sessions["p1"] = p.b
	for _, c := range []struct {
		args []string
		out  string
		err  string
	}{
		{[]string{"p1", "true"}, "OK", ""},
		{[]string{"p9", "true"}, "", "no such BFD object"},
		{[]string{"maybe"}, "", "unknown fault string"},
	} {
		out, err := r.SetForwardingCommand(c.args)
		if out != c.out || (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("%v: %q %v", c.args, out, err)
		}
	}
	if !p.b.Forwarding() {
		t.Error("override true ignored")
	}
	if _, err := r.ShowCommand([]string{"p9"}); err == nil || err.Error() != "no such bfd object" {
		t.Errorf("show p9: %v", err)
	}
	if out, _ := r.ShowCommand(nil); !strings.HasPrefix(out, "---- p1 ----\n  Forwarding: true\n") {
		t.Errorf("show: %q", out)
	}
}

func TestForwardingIfRxKeepsForwardingOnDataAsOpenVSwitch(t *testing.T) {
	cfg := map[string]string{"enable": "true", "min_rx": "100", "min_tx": "100", "forwarding_if_rx": "true"}
	p := newPair(t, cfg, map[string]string{"enable": "true", "min_rx": "100", "min_tx": "100"})
	p.run(3000)
	if !p.a.Forwarding() {
		t.Fatalf("not up:\n%s", p.a.Show())
	}
	// Control packets are lost, data keeps arriving: the session
	// expires but forwarding holds while data comes and a control packet
	// was seen in the last 100 x min_rx.
	p.cut = true
	for range 20 {
		p.a.AccountRx(1)
		p.run(100)
	}
	checkShow(t, p.a, map[string]string{"Local Session State": "down", "Forwarding": "true"})
	// Data stops: forwarding ends after max(rx interval x mult, 2 s).
	p.run(2100)
	checkShow(t, p.a, map[string]string{"Forwarding": "false"})
	// Without forwarding_if_rx data does not count.
	if p.b.Forwarding() {
		t.Errorf("p1 forwards without control packets:\n%s", p.b.Show())
	}
}

func TestLogRateLimitAsOpenVSwitch(t *testing.T) {
	var logs bytes.Buffer
	clk := &fakeClock{ms: 5000}
	s := New("p0", 7, 49152, map[string]string{"enable": "true"}, Env{Clock: clk, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	logs.Reset()
	bad := Msg{VersDiag: 2 << 5, Flags: uint8(StateDown), Mult: 3, Length: 24, MyDisc: 9}
	for range 24 {
		s.Process(255, bad.Encode(nil))
	}
	// The state change at creation took one of the burst of 20.
	if n := strings.Count(logs.String(), "Incorrect version"); n != 19 {
		t.Errorf("%d messages logged in the burst, want 19", n)
	}
	// A message a minute / 20: one more after 3 s, after the summary.
	clk.ms += 3000
	s.Process(255, bad.Encode(nil))
	if !strings.Contains(logs.String(), "Dropped 5 log messages in last 3 seconds (most recently, 3 seconds ago) due to excessive rate") {
		t.Errorf("no summary of the dropped messages:\n%s", logs.String())
	}
	if n := strings.Count(logs.String(), "Incorrect version"); n != 20 {
		t.Errorf("%d messages logged, want 20", n)
	}
	if s.Dropped() != 25 {
		t.Errorf("dropped %d, want 25", s.Dropped())
	}
}
