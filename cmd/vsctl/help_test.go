package vsctl

import (
	"strings"
	"testing"
)

// --help shows every command with its arguments in ovs-vsctl's notation,
// its options before it, and lists no command gvs-vsctl lacks.
func TestHelpShowsArgumentSynopses(t *testing.T) {
	var out strings.Builder
	usage(&out)
	for _, line := range []string{
		"  [--may-exist] add-port BRIDGE PORT [COLUMN[:KEY]=VALUE]...",
		"  [--if-exists] [--with-iface] del-port [BRIDGE] PORT|IFACE",
		"  set-controller BRIDGE TARGET...",
		"  br-set-external-id BRIDGE KEY [VALUE]",
		"  [--if-exists] [--id=] get TBL REC COL[:KEY]...",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("--help lacks %q:\n%s", line, out.String())
		}
	}
	listed := map[string]bool{}
	for _, g := range helpGroups {
		for _, e := range g.entries {
			listed[e.name] = true
		}
	}
	table := map[string]bool{}
	for _, c := range commandTable() {
		table[c.name] = true
		if !listed[c.name] {
			t.Errorf("--help does not list %s", c.name)
		}
	}
	for n := range listed {
		if !table[n] {
			t.Errorf("--help lists %s, which gvs-vsctl does not have", n)
		}
	}
}
