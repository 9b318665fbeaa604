package backer

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/datapath/dpnetdev"
)

// TestNewDatapathLogsItsProbesInOpenVSwitchsWords: OVN's system tests
// look for "Datapath supports ct_zero_snat" in the log; what gvs lacks is
// logged as Open vSwitch logs a missing feature.
func TestNewDatapathLogsItsProbesInOpenVSwitchsWords(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
			return slog.Attr{}
		}
		return a
	}}))
	logProbes(log, "netdev@ovs-netdev", dpnetdev.Capabilities())
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		got = append(got, strings.Trim(strings.TrimPrefix(l, "msg="), `"`))
	}
	for _, want := range []string{
		"netdev@ovs-netdev: Datapath supports recirculation",
		"netdev@ovs-netdev: MPLS label stack length probed as 1",
		"netdev@ovs-netdev: Datapath does not support eventmask in conntrack action",
		"netdev@ovs-netdev: Datapath supports ct_zero_snat",
		"netdev@ovs-netdev: Datapath supports IPv6 ND Extensions",
	} {
		if !strings.Contains(strings.Join(got, "\n"), want) {
			t.Errorf("missing %q in\n%s", want, strings.Join(got, "\n"))
		}
	}
	if len(got) != 22 || got[0] != "netdev@ovs-netdev: Datapath supports recirculation" || got[21] != "netdev@ovs-netdev: Datapath supports IPv6 ND Extensions" {
		t.Errorf("%d lines, want Open vSwitch's 22 from recirculation to ND extensions:\n%s", len(got), strings.Join(got, "\n"))
	}
}
