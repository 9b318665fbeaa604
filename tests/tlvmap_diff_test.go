package tests

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// tlvMapSteps is one session of TLV map changes and dumps, run in order
// (each step sees the table the previous ones left): the mappings and
// option space Open vSwitch allows, each error it reports, and the parse
// errors of ovs-ofctl.
func tlvMapSteps() []onlineStep {
	return []onlineStep{
		oc("dump-tlv-map", "br0"),
		oc("add-tlv-map", "br0", "{class=0xffff,type=0,len=4}->tun_metadata0,{class=0x0102,type=0x80,len=8}->tun_metadata5"),
		oc("dump-tlv-map", "br0"),
		// The same mapping again, a mapped option on a new field, a
		// new option on a mapped field, and both at once.
		oc("add-tlv-map", "br0", "{class=0xffff,type=0,len=4}->tun_metadata0"),
		oc("add-tlv-map", "br0", "{class=0xffff,type=0,len=4}->tun_metadata1"),
		oc("add-tlv-map", "br0", "{class=0xfffe,type=0,len=4}->tun_metadata0"),
		oc("add-tlv-map", "br0", "{class=0xffff,type=0,len=4}->tun_metadata5"),
		// Lengths that are not a multiple of 4 or too long, and a field
		// that does not exist: the switch fails to decode the mod.
		oc("add-tlv-map", "br0", "{class=0xfffe,type=0,len=5}->tun_metadata2"),
		oc("add-tlv-map", "br0", "{class=0xfffe,type=0,len=128}->tun_metadata2"),
		oc("add-tlv-map", "br0", "{class=0xfffe,type=0,len=4}->tun_metadata64"),
		// More option space than the 256 bytes there are: nothing of the
		// mod is applied.
		oc("add-tlv-map", "br0", "{class=0xfffe,type=0,len=124}->tun_metadata10,{class=0xfffe,type=1,len=124}->tun_metadata11"),
		oc("add-tlv-map", "br0", "{class=2,type=2,len=4}->tun_metadata20,{class=2,type=2,len=4}->tun_metadata21"),
		oc("dump-tlv-map", "br0"),
		oc("-O", "OpenFlow13", "add-tlv-map", "br0", "{class= 010,type=-1,len=+8}->tun_metadata 0x10003"),
		oc("add-tlv-map", "br0", ",{class=1,type=1,len=0}->tun_metadata9{class=1,type=2,len=0}->tun_metadata8"),
		oc("-O", "OpenFlow15", "dump-tlv-map", "br0"),
		oc("del-tlv-map", "br0", "{class=0xffff,type=0,len=4}->tun_metadata0,{class=9,type=9,len=4}->tun_metadata7"),
		oc("-O", "OpenFlow12", "dump-tlv-map", "br0"),
		oc("-O", "OpenFlow11", "add-tlv-map", "br0", "{class=0xffff,type=0,len=4}->tun_metadata0"),
		oc("-O", "OpenFlow11", "dump-tlv-map", "br0"),
		oc("add-tlv-map", "br0", "{class=0xffff,type=0,len=4}->tun_metadata0,"),
		oc("del-tlv-map", "br0", "bogus"),
		oc("add-tlv-map", "nosuchbr", "{class=0xffff,type=0,len=4}->tun_metadata0"),
		oc("del-tlv-map", "br0"),
		oc("dump-tlv-map", "br0"),
		// A mod that overflows the option space on its last mapping,
		// after one that is refused for its field: the first error wins.
		// (gvs's flow key holds 64 bytes of options, Open vSwitch's 256,
		// so only mods beyond 256 bytes fail on both.)
		oc("-O", "OpenFlow14", "add-tlv-map", "br0", "{class=3,type=0,len=124}->tun_metadata0,{class=3,type=1,len=124}->tun_metadata63,{class=3,type=2,len=12}->tun_metadata1"),
		oc("add-tlv-map", "br0", "{class=3,type=0,len=124}->tun_metadata0,{class=3,type=1,len=124}->tun_metadata0,{class=3,type=2,len=124}->tun_metadata2"),
		oc("add-tlv-map", "br0", "{class=3,type=0,len=124}->tun_metadata0,{class=3,type=1,len=124}->tun_metadata1,{class=3,type=0,len=4}->tun_metadata2"),
		oc("add-tlv-map", "br0", "{class=3,type=0,len=32}->tun_metadata0,{class=3,type=1,len=32}->tun_metadata63"),
		oc("dump-tlv-map", "br0"),
		oc("del-tlv-map", "br0", "{class=3,type=0,len=124}->tun_metadata0"),
		oc("add-tlv-map", "br0", "{class=3,type=3,len=4}->tun_metadata31"),
		oc("dump-tlv-map", "br0"),
	}
}

// TestTLVMapSessionMatchesOpenVSwitch runs the TLV map session with
// Debian's ovs-ofctl against Open vSwitch's ovs-vswitchd (dummy datapath)
// and against gvs-vswitchd and requires the same transcript: output,
// errors (the error reply and the quoted mod), exit codes. Where
// gvs-ofctl has the TLV commands, it runs the session too and must print
// what ovs-ofctl prints against the same switch.
func TestTLVMapSessionMatchesOpenVSwitch(t *testing.T) {
	t.Parallel()
	gvsOfctl := gvsOfctlBinary(t)
	help, _ := exec.Command(gvsOfctl, "--help").Output()
	withGvsOfctl := strings.Contains(string(help), "add-tlv-map")
	if !withGvsOfctl {
		t.Log("gvs-ofctl's command table lacks the TLV map commands (cmd/ofctl tlvCommands): comparing ovs-ofctl only")
	}
	compareOfctlSessions(t, tlvMapSteps(), withGvsOfctl)
}

// compareOfctlSessions runs steps in order with ovs-ofctl (and gvs-ofctl
// when withGvsOfctl) against a fresh Open vSwitch (dummy datapath) and a
// fresh gvs-vswitchd, each with setUpOfctlBridge's bridges, and reports
// every step whose transcript differs between the switches or the tools.
func compareOfctlSessions(t *testing.T, steps []onlineStep, withGvsOfctl bool) {
	t.Helper()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvsOfctl := gvsOfctlBinary(t)
	transcripts := map[string][]string{}
	for _, sw := range []string{"Open vSwitch", "gvs-vswitchd"} {
		t.Run(sw, func(t *testing.T) {
			tools := []string{"ovs-ofctl"}
			if withGvsOfctl {
				tools = append(tools, gvsOfctl)
			}
			for _, tool := range tools {
				env := ofctlSwitch(t, sw)
				dir := t.TempDir()
				var out []string
				for _, st := range steps {
					out = append(out, "$ ofctl "+strings.Join(st.args, " ")+"\n"+runOnline(t, env, dir, tool, st))
				}
				if prev, ok := transcripts[sw]; ok {
					reportStepDiffs(t, "ovs-ofctl against "+sw, "gvs-ofctl", prev, out)
				}
				transcripts[sw] = out
			}
		})
	}
	reportStepDiffs(t, "Open vSwitch", "gvs-vswitchd", transcripts["Open vSwitch"], transcripts["gvs-vswitchd"])
}

// reportStepDiffs reports each step whose transcript differs.
func reportStepDiffs(t *testing.T, nameA, nameB string, a, b []string) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s ran %d steps, %s %d", nameA, len(a), nameB, len(b))
		return
	}
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("step %d differs\n--- %s:\n%s--- %s:\n%s", i, nameA, a[i], nameB, b[i])
		}
	}
}
