// Package tests holds gvs's end-to-end tests. This file enforces the
// import direction of docs/architecture.md: cmd -> ovsdb -> ofproto ->
// datapath, never back up the chain.
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
	{"cmd/appctl", "datapath", "the unixctl layer knows nothing of the layers that register commands"},
	{"cmd/appctl", "ofproto", "the unixctl layer knows nothing of the layers that register commands"},
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
	{"internal/ovsoracle", "cmd", "the Open vSwitch oracle runs Open vSwitch's binaries; it cannot depend on what it judges"},
	{"internal/ovsoracle", "datapath", "the Open vSwitch oracle runs Open vSwitch's binaries; it cannot depend on what it judges"},
	{"internal/ovsoracle", "ofproto", "the Open vSwitch oracle runs Open vSwitch's binaries; it cannot depend on what it judges"},
	{"internal/ovsoracle", "ovsdb", "the Open vSwitch oracle runs Open vSwitch's binaries; it cannot depend on what it judges"},
	{"ofproto/bfd", "datapath", "bfd owns the protocol only; the switch hands it flow fields and payloads"},
	{"ofproto/bfd", "ofproto/xlate", "bfd is below translation, which consults its sessions"},
	{"ofproto/bfd", "ofproto/ofswitch", "bfd is below the switch, which runs its sessions"},
}

// stdlibAllowed lists the only non-gvs imports allowed per layer prefix.
var thirdPartyAllowed = map[string][]string{
	"datapath":           {"golang.org/x/sys"},
	"internal/version":   nil,
	"internal/statefile": nil,
	"internal/ovsoracle": nil,
}

type pkg struct {
	ImportPath string
	Deps       []string
	Standard   bool
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

func TestImportDirection(t *testing.T) {
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

func TestDatapathImportsOnlyStdlibAndXSys(t *testing.T) {
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
