package vsctl

import (
	"fmt"
	"io"
	"strings"
)

// helpEntry is one line of --help: a command with its arguments in
// ovs-vsctl's notation ([OPTIONAL], REPEATED..., A|B) and what it does.
type helpEntry struct {
	name, args, what string
}

// helpGroups is --help's command list, grouped and ordered as ovs-vsctl
// groups its commands; every command of commandTable appears (a test
// checks it). A command may have several lines, one per form.
var helpGroups = []struct {
	title   string
	entries []helpEntry
}{
	{"Open vSwitch commands", []helpEntry{
		{"init", "", "create the Open_vSwitch record if there is none"},
		{"show", "", "summarize the whole configuration"},
	}},
	{"Bridge commands", []helpEntry{
		{"add-br", "BRIDGE", "add bridge BRIDGE"},
		{"add-br", "BRIDGE PARENT VLAN", "add fake bridge BRIDGE on VLAN of bridge PARENT"},
		{"del-br", "BRIDGE", "remove BRIDGE with its ports"},
		{"list-br", "", "list the bridges' names"},
		{"br-exists", "BRIDGE", "exit with status 2 unless BRIDGE exists"},
		{"br-to-vlan", "BRIDGE", "print BRIDGE's VLAN (0 for a real bridge)"},
		{"br-to-parent", "BRIDGE", "print the bridge BRIDGE is part of"},
		{"br-set-external-id", "BRIDGE KEY [VALUE]", "set BRIDGE's external-id KEY, or remove it without VALUE"},
		{"br-get-external-id", "BRIDGE [KEY]", "print BRIDGE's external-id KEY, or all of them"},
	}},
	{"Port commands", []helpEntry{
		{"list-ports", "BRIDGE", "list the ports of BRIDGE"},
		{"add-port", "BRIDGE PORT [COLUMN[:KEY]=VALUE]...", "add network device PORT to BRIDGE"},
		{"del-port", "[BRIDGE] PORT|IFACE", "remove PORT (or the port of IFACE)"},
		{"port-to-br", "PORT", "print the bridge that has PORT"},
	}},
	{"Interface commands", []helpEntry{
		{"list-ifaces", "BRIDGE", "list the interfaces of BRIDGE"},
		{"iface-to-br", "IFACE", "print the bridge that has IFACE"},
	}},
	{"Controller commands", []helpEntry{
		{"get-controller", "BRIDGE", "print BRIDGE's controllers"},
		{"del-controller", "BRIDGE", "remove BRIDGE's controllers"},
		{"set-controller", "BRIDGE TARGET...", "make TARGETs BRIDGE's controllers"},
		{"get-fail-mode", "BRIDGE", "print BRIDGE's fail mode"},
		{"del-fail-mode", "BRIDGE", "clear BRIDGE's fail mode"},
		{"set-fail-mode", "BRIDGE MODE", "set BRIDGE's fail mode (standalone or secure)"},
	}},
	{"Manager commands", []helpEntry{
		{"get-manager", "", "print the managers"},
		{"del-manager", "", "remove the managers"},
		{"set-manager", "TARGET...", "make TARGETs the managers"},
	}},
	{"Database commands", []helpEntry{
		{"list", "TBL [REC]", "print record REC of table TBL, or all its records"},
		{"find", "TBL CONDITION...", "print the records of TBL that meet every CONDITION"},
		{"get", "TBL REC COL[:KEY]...", "print COLumns (or a KEY of one) of record REC"},
		{"set", "TBL REC COL[:KEY]=VALUE...", "set COLumns (or a KEY of one) of record REC"},
		{"add", "TBL REC COL [KEY=]VALUE...", "add VALUEs (or KEY=VALUE pairs) to COLumn of REC"},
		{"remove", "TBL REC COL [KEY=]VALUE...", "remove VALUEs, KEYs or pairs from COLumn of REC"},
		{"clear", "TBL REC COL...", "empty COLumns of record REC"},
		{"create", "TBL COL[:KEY]=VALUE...", "add a record to TBL and print its UUID"},
		{"destroy", "TBL REC...", "delete records of TBL"},
	}},
}

// usage prints --help: the commands with their arguments and options,
// then the global options.
func usage(w io.Writer) {
	opts := map[string][]string{}
	for _, c := range commandTable() {
		opts[c.name] = c.options
	}
	fmt.Fprintf(w, "%s: configures gvs (or Open vSwitch) through its Open_vSwitch database\n", Program)
	fmt.Fprintf(w, "usage: %s [OPTIONS] COMMAND [ARG...] [-- [OPTIONS] COMMAND [ARG...]]...\n", Program)
	for _, g := range helpGroups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, e := range g.entries {
			syn := e.name
			if e.args != "" {
				syn += " " + e.args
			}
			if o := opts[e.name]; len(o) > 0 {
				syn = "[" + strings.Join(o, "] [") + "] " + syn
			}
			if len(syn) < 34 {
				fmt.Fprintf(w, "  %-34s%s\n", syn, e.what)
			} else {
				fmt.Fprintf(w, "  %s\n  %-34s%s\n", syn, "", e.what)
			}
		}
	}
	fmt.Fprint(w, `
Options:
  --db=DATABASE         connect to DATABASE (default: unix:$OVS_RUNDIR/db.sock)
  --no-wait             return without waiting for the switch to apply changes
  -t, --timeout=SECS    give up after SECS seconds
  --dry-run             do not commit changes to the database
  --oneline             print each command's output on one line
  -f, --format=FORMAT   output format of list and find: list or table
  --bare                values only, without column names
  --no-headings, --data=FORMAT
  -h, --help            print this text
  -V, --version         print the version
`)
}
