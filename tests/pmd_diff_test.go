package tests

import (
	"regexp"
	"testing"

	"github.com/gvs-project/gvs/cmd/vswitchd"
	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/ovsoracle"
)

// pmdDummyNUMA is the NUMA layout both switches are given: cores 0 and
// 1 on node 1, 2 and 3 on node 0 (pmd.at's "dual NUMA").
const pmdDummyNUMA = "1,1,0,0"

// pmdSteps place dummy-pmd ports' rx queues on PMD threads as pmd.at
// does: queues of a port on node 1 over the mask's cores (also on the
// other node when its own has none), each assignment algorithm,
// pmd-rxq-affinity pinning with and without isolation, a port's queue
// count and node changed, then the threads shown by pmd-stats-show and
// the flows dumped per thread.
func pmdSteps() []ofStep {
	show := appctl("dpif-netdev/pmd-rxq-show")
	return []ofStep{
		vsctl("add-port", "br0", "p0", "--", "set", "Interface", "p0", "type=dummy-pmd", "ofport_request=5", "options:n_rxq=8", "options:numa_id=1"),
		appctl("dpif/show"),
		show,
		vsctl("set", "Open_vSwitch", ".", "other_config:pmd-cpu-mask=0x3"),
		show,
		vsctl("set", "Open_vSwitch", ".", "other_config:pmd-rxq-assign=roundrobin"),
		show,
		vsctl("set", "Open_vSwitch", ".", "other_config:pmd-rxq-assign=group"),
		show,
		vsctl("set", "Open_vSwitch", ".", "other_config:pmd-cpu-mask=0xc"),
		show,
		vsctl("set", "Open_vSwitch", ".", "other_config:pmd-cpu-mask=0x6"),
		show,
		vsctl("set", "Open_vSwitch", ".", "other_config:pmd-rxq-assign=cycles", "other_config:pmd-cpu-mask=0xf"),
		vsctl("set", "Interface", "p0", "other_config:pmd-rxq-affinity=0:3,1:3,2:0"),
		show,
		vsctl("set", "Open_vSwitch", ".", "other_config:pmd-rxq-assign=group", "other_config:pmd-rxq-isolate=false"),
		show,
		vsctl("set", "Interface", "p0", "options:n_rxq=3", "options:numa_id=0"),
		appctl("dpif/show"),
		show,
		appctl("dpif-netdev/pmd-rxq-show", "-pmd", "3", "-secs", "7"),
		ofctl("add-flow", "br0", "actions=drop"),
		appctl("netdev-dummy/receive", "p0", "--qid", "2", "in_port(5),eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:0a),eth_type(0x0800),ipv4(src=10.0.0.2,dst=10.0.0.1,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"),
		settle,
		appctl("dpctl/dump-flows"),
		vsctl("del-port", "br0", "p0"),
		show,
	}
}

// usedRE masks how long ago a megaflow was used.
var usedRE = regexp.MustCompile(`used:[0-9.]+s`)

// TestPMDThreadsAndRxQueueAssignmentLikeOpenVSwitch runs pmdSteps
// against Open vSwitch and gvs, both given --dummy-numa: pmd-rxq-show
// (threads, nodes, isolation, queues), dpif/show's queue counts and the
// per-thread flow dump read the same.
func TestPMDThreadsAndRxQueueAssignmentLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	o := ovsoracle.Start(t, ovsoracle.Options{VswitchdArgs: []string{"--dummy-numa=" + pmdDummyNUMA}})
	setUpOneBridge(t, o.Env)
	want := runSteps(t, o.Env, "ovs-vswitchd", pmdSteps())
	o.Stop()
	_, gvsEnv := startDaemonWith(t, func(c *vswitchd.Config) { c.DummyNUMA = pmdDummyNUMA })
	setUpOneBridge(t, gvsEnv)
	got := runSteps(t, gvsEnv, "gvs-vswitchd", pmdSteps())
	for i := range want {
		w, g := usedRE.ReplaceAllString(want[i], "used:<t>"), usedRE.ReplaceAllString(got[i], "used:<t>")
		if g != w {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, w, g)
		}
	}
}
