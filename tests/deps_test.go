// Package tests holds gvs's end-to-end tests. This file enforces the
// import direction of docs/architecture.md: cmd -> ovsdb -> ofproto ->
// datapath, never back up the chain; packages under cmd/ never import
// each other; and every rule names packages that exist.
package tests

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/gvs-project/gvs"

// badDep is a rule: packages under From must not import anything under To.
type badDep struct {
	From, To, Why string
}

var badDeps = []badDep{
	{"datapath", "ofproto", "the datapath knows flow keys and its own actions, nothing of OpenFlow (dpif is a hard boundary)"},
	{"datapath", "ovsdb", "the datapath is configured through its Go API, never from the database"},
	{"internal/syserr", "ovsdb", "strerror's wording imports nothing of gvs"},
	{"internal/syserr", "ofproto", "strerror's wording imports nothing of gvs"},
	{"internal/sockprobe", "ovsdb", "a raw-socket test aid imports nothing of gvs"},
	{"internal/sockprobe", "cmd", "a raw-socket test aid imports nothing of gvs"},
	{"internal/ovshash", "datapath", "Open vSwitch's hash functions import nothing of gvs"},
	{"internal/ovshash", "ofproto", "Open vSwitch's hash functions import nothing of gvs"},
	{"datapath", "cmd", "only cmd/ composes the layers"},
	{"datapath/packet", "datapath/flow", "packet is the bottom layer"},
	{"datapath/pmd", "datapath", "PMD placement is a pure function of the layout, the settings and the queues; it imports nothing of gvs"},
	{"datapath/pmd", "internal", "PMD placement is a pure function of the layout, the settings and the queues; it imports nothing of gvs"},
	{"datapath/netdev/afxdp", "datapath/dpnetdev", "an AF_XDP port is a device the datapath polls; it knows packets and its kernel objects, not the datapath"},
	{"datapath/netdev/afxdp", "internal", "an AF_XDP port links only netdev, packet and x/sys (nstest only in its tests)"},
	{"ofproto", "ovsdb", "ofproto stays ignorant of OVSDB; the bridge layer translates"},
	{"ofproto", "cmd", "only cmd/ composes the layers"},
	{"ofproto", "datapath/dpnetdev", "ofproto talks to the datapath through dpif only"},
	{"ofproto", "datapath/conntrack", "conntrack is reached only through the datapath ct action"},
	{"ovsdb/jsonrpc", "datapath", "the OVSDB server knows nothing of packets"},
	{"ovsdb/server", "datapath", "the OVSDB server knows nothing of packets"},
	{"ovsdb/server", "ofproto", "the OVSDB server knows nothing of OpenFlow"},
	{"ovsdb/vswitch", "ofproto", "the schema package is data only"},
	{"ovsdb", "cmd", "only cmd/ composes the layers"},
	{"cmd/vsctl", "datapath", "gvs-vsctl is an OVSDB client; it never links the switch"},
	{"cmd/vsctl", "ofproto", "gvs-vsctl is an OVSDB client; it never links the switch"},
	{"cmd/vsctl", "ovsdb/server", "gvs-vsctl is an OVSDB client; it never links the database server"},
	{"unixctl", "datapath", "the unixctl layer knows nothing of the layers that register commands"},
	{"unixctl", "ofproto", "the unixctl layer knows nothing of the layers that register commands"},
	{"unixctl", "ovsdb/server", "the unixctl layer shares only ovsdb/jsonrpc's framing with OVSDB"},
	{"unixctl", "ovsdb/client", "the unixctl layer shares only ovsdb/jsonrpc's framing with OVSDB"},
	{"unixctl", "ovsdb/bridge", "the unixctl layer shares only ovsdb/jsonrpc's framing with OVSDB"},
	{"unixctl", "ovsdb/model", "the unixctl layer shares only ovsdb/jsonrpc's framing with OVSDB"},
	{"unixctl", "cmd", "library code lives outside cmd/ and never imports a command"},
	{"cmd/appctl", "datapath", "gvs-appctl is a unixctl client; it never links the switch"},
	{"cmd/appctl", "ofproto", "gvs-appctl is a unixctl client; it never links the switch"},
	{"cmd/appctl", "ovsdb/server", "gvs-appctl is a unixctl client; it never links the database"},
	{"ovsdb/client", "datapath", "the OVSDB client knows nothing of packets"},
	{"ovsdb/bridge", "datapath", "the bridge layer configures a Switch; it never opens ports itself"},
	{"cmd/gvs-ofctl", "ofproto/xlate", "gvs-ofctl is an OpenFlow client; it never links the switch"},
	// gvs-ofctl reaches datapath/flow and datapath/packet only through
	// the field table (the flow key is the match layout); never the switch.
	{"cmd/ofctl", "datapath/dpnetdev", "gvs-ofctl is an OpenFlow client; it never links the switch"},
	{"cmd/ofctl", "datapath/netdev", "gvs-ofctl is an OpenFlow client; it never links the switch"},
	{"cmd/ofctl", "datapath/dpcls", "gvs-ofctl is an OpenFlow client; it never links the switch"},
	{"cmd/ofctl", "datapath/conntrack", "gvs-ofctl is an OpenFlow client; it never links the switch"},
	{"cmd/ofctl", "datapath/l2fib", "gvs-ofctl is an OpenFlow client; it never links the switch"},
	{"cmd/ofctl", "ofproto/classifier", "gvs-ofctl is an OpenFlow client; it never links the switch's tables"},
	{"cmd/ofctl", "ovsdb", "gvs-ofctl speaks OpenFlow only"},
	{"internal/version", "cmd", "the version string is a leaf every command imports"},
	{"internal/version", "datapath", "the version string is a leaf every command imports"},
	{"internal/version", "ofproto", "the version string is a leaf every command imports"},
	{"internal/version", "ovsdb", "the version string is a leaf every command imports"},
	{"internal/statefile", "cmd", "the state file container knows nothing of what its sections hold"},
	{"internal/statefile", "datapath", "the state file container knows nothing of what its sections hold"},
	{"internal/statefile", "ofproto", "the state file container knows nothing of what its sections hold"},
	{"internal/statefile", "ovsdb", "the state file container knows nothing of what its sections hold"},
	{"datapath/conntrack", "internal/statefile", "conntrack encodes its own section; the daemon frames it"},
	{"internal/fdpass", "datapath", "descriptor passing knows nothing of what the descriptors are"},
	{"internal/fdpass", "ofproto", "descriptor passing knows nothing of what the descriptors are"},
	{"internal/fdpass", "ovsdb", "descriptor passing knows nothing of what the descriptors are"},
	{"internal/fdpass", "cmd", "descriptor passing knows nothing of what the descriptors are"},
	{"vswitchd/handover", "ofproto", "the handover protocol moves descriptors and opaque state; the daemon applies them"},
	{"vswitchd/handover", "ovsdb", "the handover protocol moves descriptors and opaque state; the daemon applies them"},
	{"tests/internal/flowgen", "cmd", "the rule generator writes ovs-ofctl text; it knows nothing of the switch"},
	{"tests/internal/flowgen", "datapath", "the rule generator writes ovs-ofctl text; it knows nothing of the switch"},
	{"tests/internal/flowgen", "ofproto", "the rule generator writes ovs-ofctl text; it knows nothing of the switch"},
	{"tests/internal/flowgen", "ovsdb", "the rule generator writes ovs-ofctl text; it knows nothing of the switch"},
	{"tests/perf/internal/vnet", "cmd", "veth and namespace helpers of the harnesses know nothing of the switch they measure"},
	{"tests/perf/internal/vnet", "datapath", "veth and namespace helpers of the harnesses know nothing of the switch they measure"},
	{"tests/perf/internal/vnet", "ofproto", "veth and namespace helpers of the harnesses know nothing of the switch they measure"},
	{"tests/perf/internal/vnet", "ovsdb", "veth and namespace helpers of the harnesses know nothing of the switch they measure"},
	{"tests/perf/internal/vswitch", "cmd", "the harnesses drive the switch they measure through its daemons and Open vSwitch's utilities only"},
	{"tests/perf/internal/vswitch", "datapath", "the harnesses drive the switch they measure through its daemons and Open vSwitch's utilities only"},
	{"tests/perf/internal/vswitch", "ofproto", "the harnesses drive the switch they measure through its daemons and Open vSwitch's utilities only"},
	{"tests/perf/internal/vswitch", "ovsdb", "the harnesses drive the switch they measure through its daemons and Open vSwitch's utilities only"},
	{"vswitchd/handover", "cmd", "the handover protocol moves descriptors and opaque state; the daemon applies them"},
	{"ofproto/ofprint", "ofproto/ofswitch", "ofp-print formats messages from their bytes; it never links the switch"},
	{"ofproto/ofprint", "ofproto/xlate", "ofp-print formats messages from their bytes; it never links the switch"},
	{"ofproto/ofprint", "ofproto/classifier", "ofp-print formats messages from their bytes; it never links the switch"},
	{"ofproto/ofprint", "datapath/dpnetdev", "ofp-print dissects packets with datapath/flow only; it never links the datapath"},
	{"ofproto/ofprint", "unixctl", "ofp-print is a formatter; its users log or print what it returns"},
	{"ofproto/ofprint", "ovsdb", "ofp-print formats OpenFlow only"},
	{"ofproto/ofprint", "cmd", "library code lives outside cmd/ and never imports a command"},
	{"ofproto", "unixctl", "ofproto registers no commands itself; cmd/vswitchd registers them from above"},
	{"datapath", "unixctl", "the datapath registers no commands itself; cmd/vswitchd registers them from above"},
	{"internal/ovsoracle", "cmd", "the Open vSwitch oracle runs Open vSwitch's binaries; it cannot depend on what it judges"},
	{"internal/ovsoracle", "datapath", "the Open vSwitch oracle runs Open vSwitch's binaries; it cannot depend on what it judges"},
	{"internal/ovsoracle", "ofproto", "the Open vSwitch oracle runs Open vSwitch's binaries; it cannot depend on what it judges"},
	{"internal/ovsoracle", "ovsdb", "the Open vSwitch oracle runs Open vSwitch's binaries; it cannot depend on what it judges"},
	{"ofproto/bond", "datapath", "bond owns the member policy; the switch applies it to packets"},
	{"ofproto/bond", "ofproto/xlate", "bond is below translation, which asks it for members"},
	{"ofproto/bond", "ovsdb", "bond gets its settings from maps, not from the database"},
	{"ofproto/lacp", "datapath", "lacp owns the protocol only; the switch hands it payloads and sends its PDUs"},
	{"ofproto/lacp", "ofproto/xlate", "lacp is below translation"},
	{"ofproto/lacp", "ovsdb", "lacp gets its settings from maps, not from the database"},
	{"ofproto/mcsnoop", "datapath", "mcsnoop owns the snooping database; translation and the switch feed it"},
	{"ofproto/mcsnoop", "ofproto/xlate", "mcsnoop is below translation, which asks it where packets go"},
	{"ofproto/mcsnoop", "ovsdb", "mcsnoop gets its settings as values, not from the database"},
	{"internal/ethaddr", "datapath", "Ethernet address text imports nothing of gvs"},
	{"internal/ethaddr", "ofproto", "Ethernet address text imports nothing of gvs"},
	{"internal/pcapfile", "datapath", "a capture file reader imports nothing of gvs"},
	{"internal/pcapfile", "ofproto", "a capture file reader imports nothing of gvs"},
	{"internal/logrl", "ofproto", "the log rate limit imports nothing of gvs"},
	{"internal/logrl", "datapath", "the log rate limit imports nothing of gvs"},
	{"ofproto/bfd", "datapath", "bfd owns the protocol only; the switch hands it flow fields and payloads"},
	{"ofproto/bfd", "ofproto/xlate", "bfd is below translation, which consults its sessions"},
	{"ofproto/bfd", "ofproto/ofswitch", "bfd is below the switch, which runs its sessions"},
	{"ofproto/cfm", "datapath", "cfm owns the protocol only; the switch hands it flow fields and frames"},
	{"ofproto/cfm", "ofproto/xlate", "cfm is below translation, which consults its maintenance points"},
	{"ofproto/cfm", "ofproto/ofswitch", "cfm is below the switch, which runs its maintenance points"},
	{"ofproto/cfm", "ovsdb", "cfm gets its settings from maps, not from the database"},
	{"ofproto/stp", "datapath", "stp owns the protocol only; the switch hands it BPDUs and sends what it asks"},
	{"ofproto/stp", "ofproto/xlate", "stp is below translation, which reads its port states"},
	{"ofproto/stp", "ofproto/ofswitch", "stp is below the switch, which runs it"},
	{"ofproto/stp", "ovsdb", "stp gets its settings from calls, not from the database"},
	{"ofproto/rstp", "datapath", "rstp owns the protocol only; the switch hands it BPDUs and sends what it asks"},
	{"ofproto/rstp", "ofproto/xlate", "rstp is below translation, which reads its port states"},
	{"ofproto/rstp", "ofproto/ofswitch", "rstp is below the switch, which runs it"},
	{"ofproto/rstp", "ovsdb", "rstp gets its settings from calls, not from the database"},
	{"ofproto/internal/bpdu", "ofproto/stp", "the BPDU wire layout is below both spanning trees"},
	{"ofproto/internal/bpdu", "ofproto/rstp", "the BPDU wire layout is below both spanning trees"},
	{"ofproto/internal/bpdu", "datapath", "the BPDU wire layout imports nothing of gvs"},
	{"datapath/dpif", "datapath/dpnetdev", "dpif (and its fake, dpiftest) is the boundary; the implementation is below it"},
	{"datapath/dpif", "datapath/conntrack", "dpif (and its fake, dpiftest) is the boundary; the implementation is below it"},
	{"ofproto/upcall", "ofproto/ofswitch", "the upcall layer is below the switch, which implements upcall.Switch"},
	{"ofproto/upcall", "ofproto/ofconn", "the upcall layer knows no OpenFlow connection; packet-ins go through upcall.Switch"},
	{"ofproto/upcall", "ovsdb", "the upcall layer is configured through the switch and the daemon"},
	{"ofproto/upcall", "datapath/dpnetdev", "the upcall layer reaches the datapath through dpif only (dpiftest in tests)"},
	{"ofproto/xlate", "ofproto/upcall", "translation is below the upcall layer; it sees it as xlate.Owner"},
	{"ofproto/connmgr", "ofproto/ofswitch", "the connection manager is below the switch, which it reaches through its Config"},
	{"ofproto/connmgr", "ofproto/upcall", "connections know nothing of upcalls"},
	{"ofproto/connmgr", "ofproto/xlate", "connections know nothing of translation"},
	{"ofproto/connmgr", "datapath/dpif", "connections know nothing of the datapath"},
	{"ofproto/connmgr", "ovsdb", "the connection manager is configured through the switch"},
	{"ofproto/upcall", "ofproto/connmgr", "the upcall layer knows no OpenFlow connection; packet-ins go through upcall.Switch"},
	// vswitchd/ is the daemon's library layer, below cmd/ and above
	// ovsdb/bridge, ofproto and datapath: it may import dpnetdev, which
	// ofproto may not.
	{"datapath", "vswitchd", "the datapath is below the daemon's library layer"},
	{"ofproto", "vswitchd", "ofproto is below the daemon's library layer"},
	{"ovsdb", "vswitchd", "the bridge layer configures a Switch; vswitchd/backer implements it"},
	{"internal", "vswitchd", "internal leaves import nothing of the daemon"},
	{"vswitchd", "cmd", "vswitchd/ is the daemon's library layer; cmd/vswitchd composes it and it never links a CLI"},
	{"vswitchd/backer", "ovsdb/server", "the backer is configured through ovsdb/bridge, never from the server"},
	{"vswitchd/dpctl", "ovsdb/server", "the datapath's commands never reach the database server"},
	{"vswitchd/ofcmds", "ovsdb/server", "ofproto's commands never reach the database server"},
	{"vswitchd/ctcmds", "ofproto", "conntrack's commands talk to the datapath's tracker only"},
	{"vswitchd/ctcmds", "vswitchd/backer", "conntrack's commands get their datapath from a resolver"},
	{"vswitchd/ctstate", "ofproto", "the conntrack state file holds datapath state only"},
	{"vswitchd/ctstate", "vswitchd/backer", "the daemon hands the conntrack state its datapaths"},
}

// stdlibAllowed lists the only non-gvs imports allowed per layer prefix.
var thirdPartyAllowed = map[string][]string{
	"datapath":           {"golang.org/x/sys"},
	"internal/version":   nil,
	"internal/statefile": nil,
	"internal/ovsoracle": nil,
}

type pkg struct {
	ImportPath   string
	Name         string
	Deps         []string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Standard     bool
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps=false", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func under(path, prefix string) bool {
	full := module + "/" + prefix
	return path == full || strings.HasPrefix(path, full+"/")
}

func TestDepsImportDirection(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	for _, p := range pkgs {
		for _, d := range p.Deps {
			for _, r := range badDeps {
				if under(p.ImportPath, r.From) && under(d, r.To) {
					t.Errorf("%s depends on %s: %s", p.ImportPath, d, r.Why)
				}
			}
		}
	}
}

func TestDepsThirdPartyImports(t *testing.T) {
	for _, p := range listPackages(t) {
		for layer, allowed := range thirdPartyAllowed {
			if !under(p.ImportPath, layer) {
				continue
			}
		deps:
			for _, d := range p.Deps {
				if strings.HasPrefix(d, module+"/") || !strings.Contains(strings.Split(d, "/")[0], ".") {
					continue // gvs itself or the standard library
				}
				for _, a := range allowed {
					if strings.HasPrefix(d, a) {
						continue deps
					}
				}
				t.Errorf("%s imports third-party %s; %s may import only the standard library and %v", p.ImportPath, d, layer, allowed)
			}
		}
	}
}

// TestRulesNameExistingPackages fails when a rule names a package
// prefix that matches no package: a rule about a package that moved or
// no longer exists checks nothing, so it must be updated with the move.
func TestDepsRulesNameExistingPackages(t *testing.T) {
	pkgs := listPackages(t)
	exists := func(prefix string) bool {
		for _, p := range pkgs {
			if under(p.ImportPath, prefix) {
				return true
			}
		}
		return false
	}
	for _, r := range badDeps {
		for _, prefix := range []string{r.From, r.To} {
			if !exists(prefix) {
				t.Errorf("rule {%q, %q}: no package %s/%s... exists; update or remove the rule", r.From, r.To, module, prefix)
			}
		}
	}
	for layer := range thirdPartyAllowed {
		if !exists(layer) {
			t.Errorf("third-party rule for %q: no package %s/%s... exists", layer, module, layer)
		}
	}
}

// TestCommandsDoNotImportEachOther checks that no package under cmd/
// imports another package under cmd/, tests included: code two commands
// share is library code and lives outside cmd/ (unixctl,
// ofproto/ofprint, ...). The one import allowed is a command's main,
// cmd/gvs-NAME, importing its own package cmd/NAME (the command's logic,
// kept importable so tests can run it in-process).
func TestDepsCommandsDoNotImportEachOther(t *testing.T) {
	cmdPrefix := module + "/cmd/"
	for _, p := range listPackages(t) {
		if !under(p.ImportPath, "cmd") {
			continue
		}
		var own string // the package this command's main may import
		if name, ok := strings.CutPrefix(p.ImportPath, cmdPrefix+"gvs-"); ok && p.Name == "main" {
			own = cmdPrefix + name
		}
		for _, list := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			for _, d := range list {
				if !strings.HasPrefix(d, cmdPrefix) || d == p.ImportPath || d == own {
					continue
				}
				t.Errorf("%s imports %s: packages under cmd/ never import each other; move what they share out of cmd/", p.ImportPath, d)
			}
		}
	}
}
