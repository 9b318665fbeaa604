package ofcmds

import (
	"testing"

	"strings"

	"slices"
)

// ofproto/trace's br_flow may name its input port (ofproto-dpif.at:
// "in_port=p1"); the name becomes the port's OpenFlow number.
func TestResolveInPortNameRewritesPortNames(t *testing.T) {
	ports := map[string]int64{"p1": 1, "p21": 21, "br0": 65534}
	lookup := func(n string) (int64, bool) { no, ok := ports[n]; return no, ok }
	for in, want := range map[string]string{
		"in_port=p1,dl_type=0x0800":          "in_port=1,dl_type=0x0800",
		"icmp,in_port=p21":                   "icmp,in_port=21",
		`tcp in_port="p1",tp_dst=80`:         "tcp in_port=1,tp_dst=80",
		"in_port=7,dl_src=00:00:00:00:00:01": "in_port=7,dl_src=00:00:00:00:00:01",
		"in_port=LOCAL":                      "in_port=LOCAL",
		"in_port=nosuch":                     "in_port=nosuch",
		"dl_type=0x0800":                     "dl_type=0x0800",
		"xin_port=p1":                        "xin_port=p1",
	} {
		if got := resolveInPortName(in, lookup); got != want {
			t.Errorf("resolveInPortName(%q) = %q, want %q", in, got, want)
		}
	}
}

// ofproto/trace's options may come anywhere among its arguments, as in
// Open vSwitch (ofproto-dpif.at: "ofproto/trace br0 FLOW -generate").
func TestTraceOptionsSplitsOpenVSwitchsOptions(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		rest     []string
		generate bool
		l7       int
		ctNext   []uint8
		err      string
	}{
		{[]string{"br0", "in_port=1", "-generate"}, []string{"br0", "in_port=1"}, true, 0, nil, ""},
		{[]string{"--generate", "br0", "in_port=1"}, []string{"br0", "in_port=1"}, true, 0, nil, ""},
		{[]string{"br0", "in_port=1", "--l7", "0a0b0c", "-generate"}, []string{"br0", "in_port=1"}, true, 3, nil, ""},
		{[]string{"br0", "in_port=1", "--l7-len", "10", "-generate"}, []string{"br0", "in_port=1"}, true, 10, nil, ""},
		{[]string{"-consistent", "br0", "in_port=1", "0102"}, []string{"br0", "in_port=1", "0102"}, false, 0, nil, ""},
		{[]string{"br0", "in_port=1,tcp", "--ct-next", "trk,est", "--ct-next", "trk rpl,est"},
			[]string{"br0", "in_port=1,tcp"}, false, 0, []uint8{0x22, 0x2a}, ""},
		{[]string{"br0", "in_port=1", "--l7"}, nil, false, 0, nil, "Missing argument for option --l7"},
		{[]string{"br0", "in_port=1", "--ct-next"}, nil, false, 0, nil, "Missing argument for option --ct-next"},
		{[]string{"br0", "in_port=1", "--ct-next", "trk,bogus"}, nil, false, 0, nil, "bogus: unknown connection tracking state flag"},
		{[]string{"br0", "in_port=1", "--ct-next", "new,est"}, nil, false, 0, nil,
			"new|est: invalid connection state: If \"trk\" is unset, no other flags are set\n" +
				"new|est: invalid connection state: \"new\" and \"est\" are mutually exclusive\n"},
		{[]string{"br0", "in_port=1", "--l7-len", "64001"}, nil, false, 0, nil, "64001: too much L7 data"},
		{[]string{"br0", "in_port=1", "--bogus"}, nil, false, 0, nil, "--bogus: unknown option"},
	} {
		rest, o, err := traceOptions(tc.args)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%v: err %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || o.generate != tc.generate || len(o.l7) != tc.l7 || strings.Join(rest, " ") != strings.Join(tc.rest, " ") ||
			!slices.Equal(o.ctNext, tc.ctNext) {
			t.Errorf("%v: rest %q generate %v l7 %d ct-next %#x err %v; want %q %v %d %#x",
				tc.args, rest, o.generate, len(o.l7), o.ctNext, err, tc.rest, tc.generate, tc.l7, tc.ctNext)
		}
	}
}

// A datapath flow's in_port may name the port (ofproto-dpif.at
// "ofproto/trace command 1": "in_port(p1)").
func TestResolveODPInPortNameRewritesPortNames(t *testing.T) {
	lookup := func(n string) (uint32, bool) {
		return map[string]uint32{"p1": 1, "br0": 100}[n], n == "p1" || n == "br0"
	}
	for in, want := range map[string]string{
		"in_port(p1)": "in_port(1)",
		"recirc_id(0),in_port(br0),eth_type(0x0800)": "recirc_id(0),in_port(100),eth_type(0x0800)",
		"in_port(3),eth_type(0x0800)":                "in_port(3),eth_type(0x0800)",
		"in_port(nosuch)":                            "in_port(nosuch)",
		"eth_type(0x0800)":                           "eth_type(0x0800)",
	} {
		if got := resolveODPInPortName(in, lookup); got != want {
			t.Errorf("resolveODPInPortName(%q) = %q, want %q", in, got, want)
		}
	}
}
