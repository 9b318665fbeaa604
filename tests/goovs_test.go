package tests

import (
	"slices"
	"testing"

	"github.com/digitalocean/go-openvswitch/ovs"

	"github.com/gvs-project/gvs/internal/nstest"
)

// TestGoOpenvswitchClientDrivesGvs configures and programs gvs-vswitchd
// the way controllers built on github.com/digitalocean/go-openvswitch do:
// bridges and ports through its VSwitch service (ovs-vsctl underneath),
// flows through its OpenFlow service with its Flow, Match and Action
// types (ovs-ofctl underneath), read back with its parsers.
func TestGoOpenvswitchClientDrivesGvs(t *testing.T) {
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	nstest.Require(t, "tests")
	_, env := startDaemon(t)
	for _, kv := range env {
		for _, k := range []string{"OVS_RUNDIR=", "OVS_DBDIR=", "OVS_LOGDIR="} {
			if len(kv) > len(k) && kv[:len(k)] == k {
				t.Setenv(k[:len(k)-1], kv[len(k):])
			}
		}
	}
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	c := ovs.New(ovs.Timeout(20))
	a1, _ := nstest.Veth(t)
	a2, _ := nstest.Veth(t)
	if err := c.VSwitch.AddBridge("gobr0"); err != nil {
		t.Fatalf("AddBridge: %v", err)
	}
	for _, p := range []string{a1, a2} {
		if err := c.VSwitch.AddPort("gobr0", p); err != nil {
			t.Fatalf("AddPort %s: %v", p, err)
		}
	}
	ports, err := c.VSwitch.ListPorts("gobr0")
	wantPorts := []string{a1, a2}
	slices.Sort(wantPorts) // ovs-vsctl lists ports by name
	if err != nil || !slices.Equal(ports, wantPorts) {
		t.Fatalf("ListPorts = %v, %v; want [%s %s]", ports, err, a1, a2)
	}
	if br, err := c.VSwitch.PortToBridge(a2); err != nil || br != "gobr0" {
		t.Fatalf("PortToBridge = %q, %v", br, err)
	}

	flow := &ovs.Flow{
		Priority: 100, Protocol: ovs.ProtocolIPv4, InPort: 1, Cookie: 0x42,
		Matches: []ovs.Match{ovs.NetworkDestination("10.0.0.2")},
		Actions: []ovs.Action{ovs.ModDataLinkDestination([]byte{0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}), ovs.Output(2)},
	}
	if err := c.OpenFlow.AddFlow("gobr0", flow); err != nil {
		t.Fatalf("AddFlow: %v", err)
	}
	if err := c.OpenFlow.AddFlow("gobr0", &ovs.Flow{Table: 1, Priority: 5, Actions: []ovs.Action{ovs.Drop()}}); err != nil {
		t.Fatalf("AddFlow table 1: %v", err)
	}
	flows, err := c.OpenFlow.DumpFlows("gobr0")
	if err != nil {
		t.Fatalf("DumpFlows: %v", err)
	}
	var got []string
	for _, f := range flows {
		text, err := f.MarshalText()
		if err != nil {
			t.Fatalf("MarshalText: %v", err)
		}
		got = append(got, string(text))
	}
	slices.Sort(got)
	want := []string{
		"priority=0,table=0,idle_timeout=0,actions=normal",
		"priority=100,ip,in_port=1,nw_dst=10.0.0.2,table=0,idle_timeout=0,cookie=0x0000000000000042,actions=mod_dl_dst:aa:bb:cc:dd:ee:ff,output:2",
		"priority=5,table=1,idle_timeout=0,actions=drop",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("DumpFlows =\n%q\nwant\n%q", got, want)
	}
	if err := c.OpenFlow.DelFlows("gobr0", &ovs.MatchFlow{Cookie: 0x42, CookieMask: ^uint64(0)}); err != nil {
		t.Fatalf("DelFlows: %v", err)
	}
	flows, err = c.OpenFlow.DumpFlows("gobr0")
	if err != nil || len(flows) != 2 {
		t.Fatalf("after DelFlows by cookie: %d flows, %v; want the NORMAL and table 1 flows", len(flows), err)
	}
	if err := c.VSwitch.DeletePort("gobr0", a2); err != nil {
		t.Fatalf("DeletePort: %v", err)
	}
	if err := c.VSwitch.DeleteBridge("gobr0"); err != nil {
		t.Fatalf("DeleteBridge: %v", err)
	}
	if brs, err := c.VSwitch.ListBridges(); err != nil || len(brs) != 0 {
		t.Fatalf("ListBridges after DeleteBridge = %v, %v", brs, err)
	}
}
