package odp

import (
	"testing"
)

// The expected texts are what Open vSwitch 3.1.0's `ovs-appctl
// dpctl/dump-flows` printed for a dummy bridge with sFlow, IPFIX and a
// Flow_Sample_Collector_Set configured.
var cookieTextCases = []string{
	`sample(sample=25.0%,actions(userspace(pid=0,sFlow(vid=0,pcp=0,output=2147483649),actions))),sample(sample=50.0%,actions(userspace(pid=0,ipfix(output_port=4294967295)))),sample(sample=50.0%,actions(userspace(pid=0,ipfix(output_port=2)))),2`,
	`userspace(pid=0,sFlow(vid=0,pcp=0,output=2147483649),actions),userspace(pid=0,ipfix(output_port=4294967295)),userspace(pid=0,flow_sample(probability=65535,collector_set_id=5,obs_domain_id=11,obs_point_id=12,output_port=4294967295)),sample(sample=10.0%,actions(userspace(pid=0,flow_sample(probability=6553,collector_set_id=5,obs_domain_id=11,obs_point_id=13,output_port=2,egress)))),userspace(pid=0,ipfix(output_port=2)),2`,
	`userspace(pid=0,sFlow(vid=4095,pcp=7,output=7))`,
	`userspace(pid=0,flow_sample(probability=1,collector_set_id=0,obs_domain_id=0,obs_point_id=0,output_port=3,ingress))`,
}

func TestCookieTextRoundTripsOpenVSwitchOutput(t *testing.T) {
	for _, in := range cookieTextCases {
		acts, err := ParseActions(in)
		if err != nil {
			t.Fatalf("ParseActions(%q): %v", in, err)
		}
		if got := acts.String(); got != in {
			t.Errorf("round trip:\n got %s\nwant %s", got, in)
		}
	}
}

func TestCookieMarshalParse(t *testing.T) {
	cases := []Cookie{
		{Type: CookieSFlow, InPort: 3, Bridge: [16]byte{1, 2, 3}, VLANTCI: 0x2064, SFlowOutput: 0x80000002},
		{Type: CookieIPFIX, InPort: 1, OutputPort: PortNone},
		{Type: CookieFlowSample, InPort: 0xffff, Probability: 6553, CollectorSetID: 5, ObsDomainID: 11,
			ObsPointID: 13, OutputPort: 2, Direction: SampleDirEgress},
	}
	for _, c := range cases {
		b := c.Marshal()
		if len(b) != CookieLen {
			t.Fatalf("len %d", len(b))
		}
		got, ok := ParseCookie(b)
		if !ok || got != c {
			t.Errorf("ParseCookie(Marshal(%+v)) = %+v, %v", c, got, ok)
		}
	}
}

func TestParseCookieRejectsOtherUserdata(t *testing.T) {
	bad := [][]byte{
		nil,
		[]byte("gvsctrl\x00"),
		make([]byte, CookieLen), // type 0
		append([]byte{2, 0}, make([]byte, CookieLen-2)...), // slow path without a reason
		append([]byte{1, 0}, make([]byte, CookieLen)...),   // wrong length
	}
	fs := (&Cookie{Type: CookieFlowSample}).Marshal()
	fs[ckFSDir] = 3
	bad = append(bad, fs)
	for _, b := range bad {
		if c, ok := ParseCookie(b); ok {
			t.Errorf("ParseCookie(%x) = %+v, want not a cookie", b, c)
		}
	}
}

func TestSetSFlowOutputRewritesInPlace(t *testing.T) {
	c := Cookie{Type: CookieSFlow, InPort: 1}
	b := c.Marshal()
	if !SetSFlowOutput(b, 0x000a, 5) {
		t.Fatal("SetSFlowOutput refused an sFlow cookie")
	}
	a := Userspace(0, UserspaceParams{Userdata: b, WithActions: true})
	if got, want := a.String(), "userspace(pid=0,sFlow(vid=10,pcp=0,output=5),actions)"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if SetSFlowOutput((&Cookie{Type: CookieIPFIX}).Marshal(), 0, 1) {
		t.Error("SetSFlowOutput accepted an ipfix cookie")
	}
}

func TestParseCookieTextErrors(t *testing.T) {
	for _, in := range []string{
		`userspace(pid=0,sFlow(vid=4096,pcp=0,output=1))`,
		`userspace(pid=0,sFlow(vid=1,output=1))`,
		`userspace(pid=0,ipfix(output_port=1)`,
		`userspace(pid=0,flow_sample(probability=65536,collector_set_id=0,obs_domain_id=0,obs_point_id=0,output_port=1))`,
		`userspace(pid=0,flow_sample(probability=1,collector_set_id=0,obs_domain_id=0,obs_point_id=0,output_port=1,sideways))`,
	} {
		if acts, err := ParseActions(in); err == nil {
			t.Errorf("ParseActions(%q) = %s, want an error", in, acts)
		}
	}
}

// FuzzParseCookie: any userdata either is not a cookie or decodes to one
// that marshals back to the same bytes and formats without panicking.
func FuzzParseCookie(f *testing.F) {
	for _, c := range []Cookie{
		{Type: CookieSFlow, InPort: 1, VLANTCI: 0x200a, SFlowOutput: 7},
		{Type: CookieIPFIX, OutputPort: PortNone},
		{Type: CookieFlowSample, Probability: 1, CollectorSetID: 2, ObsDomainID: 3, ObsPointID: 4, OutputPort: 5, Direction: SampleDirIngress},
		{Type: CookieController, InPort: 0xffff, Continuation: true, Reason: 1, RecircID: 9, RuleCookie: 0x7a205761, MaxLen: 65535},
	} {
		f.Add(c.Marshal())
	}
	f.Add([]byte("gvsctrl\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, ok := ParseCookie(b)
		if !ok {
			return
		}
		m := c.Marshal()
		if c2, ok := ParseCookie(m); !ok || c2 != c {
			t.Fatalf("re-parse of %x: %+v %v, want %+v", m, c2, ok, c)
		}
		a := Userspace(0, UserspaceParams{Userdata: b})
		if _, err := ParseActions(a.String()); err != nil {
			t.Fatalf("%s does not parse back: %v", a.String(), err)
		}
	})
}

// Open vSwitch 3.1 prints a controller action's cookie this way (the
// dpctl/dump-flows of an OVN router's ARP resolution flow).
func TestControllerCookieTextRoundTrips(t *testing.T) {
	const text = "userspace(pid=0,controller(reason=1,dont_send=0,continuation=0,recirc_id=12,rule_cookie=0x7a205761,controller_id=0,max_len=65535))"
	acts, err := ParseActions(text)
	if err != nil {
		t.Fatal(err)
	}
	if got := acts.String(); got != text {
		t.Fatalf("printed %s, want %s", got, text)
	}
	c, ok := ParseCookie(acts[0].Userspace.Userdata)
	if !ok || c.Type != CookieController || c.RecircID != 12 || c.RuleCookie != 0x7a205761 || c.MaxLen != 65535 || c.Reason != 1 {
		t.Fatalf("cookie %+v %v", c, ok)
	}
	zero := "userspace(pid=0,controller(reason=2,dont_send=1,continuation=1,recirc_id=1,rule_cookie=0,controller_id=3,max_len=128))"
	if acts, err := ParseActions(zero); err != nil || acts.String() != zero {
		t.Fatalf("%s: %v %v", zero, acts, err)
	}
}
