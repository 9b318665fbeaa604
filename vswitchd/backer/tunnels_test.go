package backer

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

func TestParseTunnelReadsGREOptionsAsOpenVSwitch(t *testing.T) {
	for _, c := range []struct {
		typ  string
		opts map[string]string
		text string // dpif/show's "(...)" for the port
	}{
		{"gre", map[string]string{"remote_ip": "1.1.2.92", "key": "456"}, "gre: key=456, remote_ip=1.1.2.92"},
		{"gre", map[string]string{"remote_ip": "1.1.2.92", "key": "456", "seq": "true"}, "gre: key=456, remote_ip=1.1.2.92, seq=true"},
		{"gre", map[string]string{"remote_ip": "1.1.1.1", "local_ip": "2.2.2.3", "csum": "true", "df_default": "false", "ttl": "1"},
			"gre: csum=true, df_default=false, local_ip=2.2.2.3, remote_ip=1.1.1.1, ttl=1"},
		{"gre", map[string]string{"remote_ip": "flow", "in_key": "flow", "out_key": "5"}, "gre: in_key=flow, out_key=5, remote_ip=flow"},
		// dst_port is not a GRE option: warned about and ignored.
		{"gre", map[string]string{"remote_ip": "1.1.2.92", "dst_port": "4789"}, "gre: remote_ip=1.1.2.92"},
		{"gre", map[string]string{"remote_ip": "1.1.2.92", "packet_type": "legacy_l2"}, "gre: remote_ip=1.1.2.92"},
		{"ip6gre", map[string]string{"remote_ip": "2001:cafe::92"}, "ip6gre: remote_ip=2001:cafe::92"},
		// seq is only for GRE.
		{"vxlan", map[string]string{"remote_ip": "1.1.2.92", "seq": "true"}, "vxlan: remote_ip=1.1.2.92"},
	} {
		tc, err := parseTunnel("t1", c.typ, c.opts)
		if err != nil {
			t.Errorf("%s %v: %v", c.typ, c.opts, err)
			continue
		}
		if got := tunnelConfigText(tc, c.opts); got != c.text {
			t.Errorf("%s %v: config text %q, want %q", c.typ, c.opts, got, c.text)
		}
		if tc.DstPort != 0 && c.typ != "vxlan" {
			t.Errorf("%s: DstPort %d", c.typ, tc.DstPort)
		}
	}
	tc, err := parseTunnel("t1", "gre", map[string]string{"remote_ip": "1.1.2.92", "key": "4294967295", "seq": "true"})
	if err != nil || !tc.Seq || !tc.OutKeyPresent || tc.OutKey != 0xffffffff || tc.InKey != 0xffffffff {
		t.Errorf("gre key and seq: %+v, %v", tc, err)
	}
	if got := vportName(tc); got != "gre_sys" {
		t.Errorf("vport %q, want gre_sys", got)
	}
	if tc, _ := parseTunnel("t2", "ip6gre", map[string]string{"remote_ip": "2001:cafe::92"}); vportName(tc) != "ip6gre_sys" {
		t.Errorf("ip6gre vport %q", vportName(tc))
	}
}

func TestParseTunnelRefusesBadGREConfig(t *testing.T) {
	for _, c := range []struct {
		typ  string
		opts map[string]string
		err  string
	}{
		{"gre", map[string]string{}, "t1: gre type requires valid 'remote_ip' argument"},
		{"ip6gre", map[string]string{"remote_ip": "ff02::1"}, "t1: multicast remote_ip=ff02::1 not allowed"},
		{"gre", map[string]string{"remote_ip": "1.1.2.92", "packet_type": "foo"}, "t1: unknown packet_type 'foo'"},
		{"vxlan", map[string]string{"remote_ip": "1.1.2.92", "packet_type": "legacy_l3"},
			"t1: legacy_l3 configured on VXLAN (without GPE) tunnel that cannot carry L3 traffic"},
		{"geneve", map[string]string{"remote_ip": "1.1.2.92", "packet_type": "legacy_l3"},
			"t1: legacy_l3 configured on geneve tunnel that cannot carry L3 traffic"},
		{"gre", map[string]string{"remote_ip": "1.1.2.92", "packet_type": "legacy_l3"}, "packet_type=legacy_l3 is not supported"},
		{"gre", map[string]string{"remote_ip": "1.1.2.92", "local_ip": "2001::1"}, "t1: 'remote_ip' and 'local_ip' has to be of the same address family"},
	} {
		_, err := parseTunnel("t1", c.typ, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s %v: error %v, want %q", c.typ, c.opts, err, c.err)
		}
	}
}

// TestVportTableSharesOneVportPerTypeAndPort checks that tunnel ports of
// one type and UDP port share a datapath vport, counted by its users,
// and that the last release removes it from the datapath.
func TestVportTableSharesOneVportPerTypeAndPort(t *testing.T) {
	dps := &datapathSet{log: slog.New(slog.DiscardHandler), dpLog: func(string) *slog.Logger { return slog.New(slog.DiscardHandler) },
		dps: map[string]*dpnetdev.Datapath{}}
	t.Cleanup(dps.closeAll)
	vt := &vportTable{dps: dps, m: map[string]map[string]*vportRef{}}
	attach := func(name, typ string, opts map[string]string) *dpPort {
		t.Helper()
		p := &dpPort{name: name, typ: typ}
		if err := vt.attach("dummy", &bridge.IfaceConfig{Name: name, Type: typ, Options: opts}, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v1 := attach("v1", "vxlan", map[string]string{"remote_ip": "1.1.1.1"})
	v2 := attach("v2", "vxlan", map[string]string{"remote_ip": "1.1.1.2"})
	g1 := attach("g1", "gre", map[string]string{"remote_ip": "1.1.1.1"})
	if v1.odp != v2.odp || v1.odp == g1.odp {
		t.Fatalf("datapath ports: v1 %d, v2 %d, g1 %d", v1.odp, v2.odp, g1.odp)
	}
	show := func() string {
		var out []string
		for _, v := range vt.list() {
			out = append(out, fmt.Sprintf("%s=%d", v.name, v.refs))
		}
		return strings.Join(out, " ")
	}
	if got := show(); got != "gre_sys=1 vxlan_sys_4789=2" {
		t.Fatalf("vports: %s", got)
	}
	vt.release("dummy", v1.tunnel)
	vt.release("dummy", g1.tunnel)
	if got := show(); got != "vxlan_sys_4789=1" {
		t.Fatalf("vports after two releases: %s", got)
	}
	if _, ok := dps.get("dummy").Port(g1.odp); ok {
		t.Fatal("the released gre vport is still in the datapath")
	}
	if _, ok := dps.get("dummy").Port(v2.odp); !ok {
		t.Fatal("the vxlan vport in use left the datapath")
	}
}
