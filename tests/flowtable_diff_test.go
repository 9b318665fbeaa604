package tests

import (
	"strconv"
	"testing"

	"github.com/gvs-project/gvs/internal/ovsoracle"
)

// vsctl is an ovs-vsctl step (runSteps gives it --timeout=10).
func vsctl(args ...string) ofStep { return ofStep{"ovs-vsctl", args} }

// maskUUIDs hides the row UUIDs ovs-vsctl create prints.
func maskUUIDs(s string) string { return ovsoracle.MaskUUIDs(s) }

// flowTableConfigSteps are Open vSwitch's "flow table configuration" and
// "table features" checks: Flow_Table names and flow limits show in
// dump-tables (OpenFlow 1.0, 1.2, 1.3) and dump-table-features.
func flowTableConfigSteps() []ofStep {
	dumps := func() []ofStep {
		return []ofStep{
			ofctl("dump-tables", "br0"),
			ofctl("-O", "OpenFlow12", "dump-tables", "br0"),
			ofctl("-O", "OpenFlow13", "dump-tables", "br0"),
			ofctl("-O", "OpenFlow13", "dump-table-features", "br0"),
			ofctl("-O", "OpenFlow15", "dump-table-features", "br0"),
		}
	}
	s := dumps()
	s = append(s, vsctl("--", "--id=@t0", "create", "Flow_Table", "name=main",
		"--", "--id=@t1", "create", "Flow_Table", "flow-limit=1024",
		"--", "set", "bridge", "br0", "flow_tables={1=@t1,0=@t0}"))
	s = append(s, dumps()...)
	// Names in flow syntax: ovs-ofctl resolves them from the table
	// features the switch reports.
	s = append(s,
		vsctl("--", "--id=@t2", "create", "Flow_Table", "name=two", "--", "set", "bridge", "br0", "flow_tables:2=@t2"),
		ofStep{"file", []string{"flows.txt", "table=main in_port=p2 actions=p1,resubmit(,two)\n" +
			"table=two,in_port=p1,ip,actions=ct(table=main)\n"}},
		ofctl("add-flows", "br0", "flows.txt"),
		ofctl("--names", "--no-stats", "dump-flows", "br0"),
		ofctl("--no-names", "--no-stats", "dump-flows", "br0"),
		// Removing a table's row removes its name and limit.
		vsctl("remove", "bridge", "br0", "flow_tables", "1"),
		ofctl("-O", "OpenFlow15", "dump-table-features", "br0"),
		ofctl("dump-tables", "br0"),
	)
	return s
}

// TestFlowTableConfigurationLikeOpenVSwitch: Flow_Table name and
// flow_limit appear in table stats and features as in Open vSwitch, and
// table names work in flow syntax.
func TestFlowTableConfigurationLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, flowTableConfigSteps, maskUUIDs)
}

// flowLimitSteps are Open vSwitch's "hard limits on flow table size"
// checks: with the default refuse policy a new flow fails with
// OFPFMFC_TABLE_FULL (an OpenFlow 1.0 mod-flows that would add too), while
// replacing or modifying a flow works.
func flowLimitSteps() []ofStep {
	s := []ofStep{vsctl("--", "--id=@t0", "create", "Flow_Table", "flow-limit=4", "--", "set", "bridge", "br0", "flow_tables:0=@t0")}
	for _, v := range []string{"OpenFlow10", "OpenFlow12"} {
		s = append(s, ofctl("del-flows", "br0"))
		for _, p := range []string{"1", "2", "3", "4"} {
			s = append(s, ofctl("-O", v, "add-flow", "br0", "in_port="+p+",actions=drop"))
		}
		s = append(s,
			ofctl("-O", v, "add-flow", "br0", "in_port=5,actions=drop"),
			ofctl("-O", v, "mod-flows", "br0", "in_port=5,actions=drop"),
			ofctl("-O", v, "add-flow", "br0", "in_port=4,actions=normal"),
			ofctl("-O", v, "mod-flows", "br0", "in_port=3,actions=output:1"),
			ofctl("-O", v, "dump-flows", "br0"),
			ofctl("-O", v, "dump-tables", "br0"),
		)
	}
	return s
}

func TestFlowLimitRefusesLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, flowLimitSteps, maskUUIDs)
}

// evictionSteps are Open vSwitch's "eviction upon table overflow" checks:
// the flow that expires first goes, flows without timeouts never do, a
// lower importance goes first (with eviction turned on by OpenFlow 1.4
// mod-table), the largest fairness group loses first, and shrinking the
// limit evicts. An OpenFlow 1.4 monitor-less controller is not needed:
// the dumps show what was evicted.
func evictionSteps() []ofStep {
	s := []ofStep{vsctl("--", "--id=@t0", "create", "Flow_Table", "name=evict", "flow-limit=4", "overflow-policy=evict",
		"--", "set", "bridge", "br0", "flow_tables:0=@t0")}
	for _, p := range []string{"4", "3", "2", "1"} {
		s = append(s, ofctl("add-flow", "br0", "idle_timeout="+p+"0,in_port="+p+",actions=drop"))
	}
	s = append(s,
		ofctl("add-flow", "br0", "in_port=5,actions=drop"),
		ofctl("dump-flows", "br0"),
		ofctl("mod-flows", "br0", "in_port=6,actions=drop"),
		ofctl("add-flow", "br0", "in_port=4,actions=normal"),
		ofctl("mod-flows", "br0", "in_port=3,actions=output:1"),
		ofctl("dump-flows", "br0"),
		ofctl("add-flow", "br0", "in_port=7,actions=normal"),
		ofctl("add-flow", "br0", "in_port=8,actions=drop"),
		ofctl("dump-flows", "br0"),

		// Importance, with eviction on through OpenFlow 1.4 only.
		ofctl("del-flows", "br0"),
		vsctl("set", "Flow_Table", "evict", "overflow-policy=refuse"),
		ofctl("-O", "OpenFlow14", "mod-table", "br0", "0", "evict"),
		ofctl("-O", "OpenFlow14", "dump-table-desc", "br0"),
	)
	for _, p := range []int{4, 3, 2, 1} {
		s = append(s, ofctl("-O", "OpenFlow14", "add-flow", "br0",
			"importance="+strconv.Itoa(p+30)+",priority="+strconv.Itoa(p+5)+",hard_timeout="+strconv.Itoa(p+500)+",actions=drop"))
	}
	s = append(s,
		ofctl("-O", "OpenFlow14", "add-flow", "br0", "hard_timeout=505,importance=35,priority=10,in_port=2,actions=drop"),
		ofctl("-O", "OpenFlow14", "dump-flows", "br0"),
		ofctl("-O", "OpenFlow14", "mod-table", "br0", "0", "noevict"),
		ofctl("-O", "OpenFlow14", "add-flow", "br0", "hard_timeout=506,importance=36,priority=11,actions=drop"),
		ofctl("-O", "OpenFlow14", "mod-flows", "br0", "in_port=2,actions=NORMAL"),
		ofctl("mod-flows", "br0", "in_port=5,actions=drop"),
		ofctl("-O", "OpenFlow14", "dump-flows", "br0"),

		// Fairness groups by in_port.
		ofctl("del-flows", "br0"),
		vsctl("set", "Flow_Table", "evict", "overflow-policy=evict", `groups="NXM_OF_IN_PORT[]"`),
		ofStep{"file", []string{"flows.txt", "idle_timeout=10 in_port=2 dl_src=00:44:55:66:77:88 actions=drop\n" +
			"idle_timeout=20 in_port=1 dl_src=00:11:22:33:44:55 actions=drop\n" +
			"idle_timeout=30 in_port=1 dl_src=00:22:33:44:55:66 actions=drop\n" +
			"idle_timeout=40 in_port=1 dl_src=00:33:44:55:66:77 actions=drop\n"}},
		ofctl("add-flows", "br0", "flows.txt"),
		ofctl("add-flow", "br0", "in_port=2,dl_src=00:55:66:77:88:99,actions=drop"),
		ofctl("dump-flows", "br0"),
		vsctl("set", "Flow_Table", "evict", "groups=[]", "flow-limit=7"),
		ofStep{"file", []string{"flows.txt", "idle_timeout=50 in_port=2 dl_src=00:66:77:88:99:aa actions=drop\n" +
			"idle_timeout=60 in_port=2 dl_src=00:77:88:99:aa:bb actions=drop\n" +
			"idle_timeout=70 in_port=2 dl_src=00:88:99:aa:bb:cc actions=drop\n"}},
		ofctl("add-flows", "br0", "flows.txt"),
		ofctl("add-flow", "br0", "idle_timeout=80 in_port=2 dl_src=00:99:aa:bb:cc:dd actions=drop"),
		ofctl("dump-flows", "br0"),
		vsctl("set", "Flow_Table", "evict", "flow-limit=4"),
		ofctl("dump-flows", "br0"),
		ofctl("-O", "OpenFlow13", "dump-table-features", "br0"),

		// A modification restarts a hard timeout: in_port=1 (13 s,
		// modified after 4 s) outlives in_port=2 (16 s).
		ofctl("del-flows", "br0"),
	)
	for _, p := range []int{4, 3, 2, 1} {
		s = append(s, ofctl("add-flow", "br0", "hard_timeout="+strconv.Itoa(10+3*p)+",in_port="+strconv.Itoa(p)+",actions=drop"))
	}
	s = append(s,
		ofStep{tool: "sleep", args: []string{"4s"}},
		ofctl("mod-flows", "br0", "in_port=1,actions=drop"),
		ofctl("add-flow", "br0", "in_port=5,actions=drop"),
		ofctl("dump-flows", "br0"),
	)
	return s
}

func TestFlowTableEvictionLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, evictionSteps, maskUUIDs)
}

// flowTableNameSteps are Open vSwitch's "flow table names" checks: names
// set by OpenFlow (1.3 and 1.5 table features requests through
// mod-table), overridden by OVSDB, refused (OFPTFFC_EPERM) when they
// would change an OVSDB name, and set again once OVSDB lets go.
func flowTableNameSteps() []ofStep {
	features := ofctl("-O", "OpenFlow15", "dump-table-features", "br0")
	return []ofStep{
		ofctl("-O", "OpenFlow13", "mod-table", "br0", "0", "name:xyzzy"),
		ofctl("-O", "OpenFlow15", "mod-table", "br0", "1", "name:quux"),
		features,
		vsctl("--", "--id=@t0", "create", "Flow_Table", "name=zero",
			"--", "--id=@t1", "create", "Flow_Table", "name=one",
			"--", "--id=@t2", "create", "Flow_Table", "name=two",
			"--", "set", "bridge", "br0", "flow_tables={0=@t0,1=@t1,2=@t2}"),
		features,
		ofStep{"file", []string{"flows.txt", "table=zero in_port=p2 actions=p1,resubmit(,one)\n" +
			"table=one,in_port=p1,ip,actions=ct(table=two)\n" +
			"table=one,in_port=p1,arp,actions=goto_table(two)\n"}},
		ofctl("add-flows", "br0", "flows.txt"),
		ofctl("--names", "--no-stats", "dump-flows", "br0"),
		ofctl("--no-names", "--no-stats", "dump-flows", "br0"),
		ofctl("-O", "OpenFlow13", "mod-table", "br0", "0", "name:zero"),
		ofctl("-O", "OpenFlow15", "mod-table", "br0", "1", "name:one"),
		features,
		// Refused: OVSDB named table 1. (Over OpenFlow 1.3 the request
		// spans many messages and Open vSwitch's error quotes the last
		// one, gvs's none: not compared.)
		ofctl("-O", "OpenFlow15", "mod-table", "br0", "1", "name:quux"),
		ofctl("-O", "OpenFlow13", "mod-table", "br0", "3", "name:three"),
		features,
		vsctl("remove", "bridge", "br0", "Flow_Table", "2"),
		features,
		ofctl("-O", "OpenFlow13", "mod-table", "br0", "2", "name:foobar"),
		features,
		ofctl("-O", "OpenFlow13", "mod-table", "br0", "2", "name:"),
		features,
		ofctl("-O", "OpenFlow13", "dump-tables", "br0"),
	}
}

func TestFlowTableNamesLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, flowTableNameSteps, maskUUIDs)
}
