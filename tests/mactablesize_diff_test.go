package tests

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// macTableSizeSteps fill a NORMAL bridge's MAC table, then lower
// other_config:mac-table-size below what it holds (Open vSwitch evicts
// down to the new size at once, counting evictions), learn more, and
// raise the size again.
func macTableSizeSteps() []ofStep {
	s := []ofStep{
		vsctl("set", "bridge", "br0", "other_config:mac-table-size=20"),
		ofctl("add-flow", "br0", "actions=NORMAL"),
	}
	recv := func(i int) ofStep {
		return appctl("netdev-dummy/receive", "p1", fmt.Sprintf("in_port(1),eth(src=50:54:00:00:01:%02x,dst=ff:ff:ff:ff:ff:ff),eth_type(0x1234)", i))
	}
	for i := 0; i < 15; i++ {
		s = append(s, recv(i))
	}
	s = append(s, appctl("fdb/stats-show", "br0"),
		vsctl("set", "bridge", "br0", "other_config:mac-table-size=10"),
		appctl("fdb/stats-show", "br0"), appctl("fdb/show", "br0"))
	for i := 15; i < 18; i++ {
		s = append(s, recv(i))
	}
	s = append(s, appctl("fdb/stats-show", "br0"), appctl("fdb/show", "br0"),
		vsctl("set", "bridge", "br0", "other_config:mac-table-size=30"))
	for i := 18; i < 30; i++ {
		s = append(s, recv(i))
	}
	return append(s, appctl("fdb/stats-show", "br0"))
}

// TestMACTableSizeShrinkEvictsLikeOpenVSwitch: lowering mac-table-size
// below the table's size removes the oldest entries at once (counted as
// expired, as Open vSwitch does), learning then evicts at the new size,
// and raising it lets the table grow again: same counters as Open
// vSwitch.
//
// Which entries of the same age go first is Open vSwitch's global LRU
// order and, in gvs, per shard (a table sharded by hash keeps no order
// across shards within a second): fdb/show is compared by its number of
// entries per port.
func TestMACTableSizeShrinkEvictsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	entries := regexp.MustCompile(`(?m)^ +(\d+) +(\d+) +[0-9a-f:]{17} +\d+$`)
	diffOneBridgeAgainstOpenVSwitch(t, macTableSizeSteps, func(s string) string {
		if !strings.Contains(s, "fdb/show") {
			return s
		}
		n := map[string]int{}
		for _, m := range entries.FindAllStringSubmatch(s, -1) {
			n["port "+m[1]+" vlan "+m[2]]++
		}
		return fmt.Sprint(n)
	})
}
