package backer

import (
	"testing"

	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// TestViewShowsBridgesPortsAndNumbersAsTheCommandsPrint checks what the
// commands read through the view: bridge names, dpif/show's lines, port
// numbers by name, datapath ports by name or number (a patch port's own
// MAC table number), the MAC table's port names, and the ports that have
// devices.
func TestViewShowsBridgesPortsAndNumbersAsTheCommandsPrint(t *testing.T) {
	s := newTestBacker(t)
	addBridge(t, s, "br1")
	addBridge(t, s, "br0")
	addPort(t, s, "br0", bridge.IfaceConfig{Name: "p1", Type: "dummy"})
	addPort(t, s, "br0", bridge.IfaceConfig{Name: "patch-a", Type: "patch", OfportRequest: 7, Options: map[string]string{"peer": "patch-b"}})
	v := s.View()
	if got := v.BridgeNames(); len(got) != 2 || got[0] != "br0" || got[1] != "br1" {
		t.Fatalf("BridgeNames() = %v", got)
	}
	want := "  br0:\n    p1 1/1: (dummy)\n    patch-a 7/none: (patch: peer=patch-b)\n  br1:\n"
	if got := v.DpifShowBridges("dummy"); got != want {
		t.Errorf("DpifShowBridges(dummy) =\n%s\nwant\n%s", got, want)
	}
	if no, ok := v.PortNumber("br0", "patch-a"); !ok || no != 7 {
		t.Errorf("PortNumber(br0, patch-a) = %d, %v", no, ok)
	}
	if _, ok := v.PortNumber("br0", "p9"); ok {
		t.Error("PortNumber found a port that does not exist")
	}
	odp1, ok := v.FDBPort("br0", "1")
	if byName, _ := v.FDBPort("br0", "p1"); !ok || odp1 != byName {
		t.Errorf("FDBPort(br0, 1) = %d, %v; by name %d", odp1, ok, byName)
	}
	_, names, ok := v.BridgeFDB("br0")
	if !ok || names(odp1) != "1" || names(12345) != "?" {
		t.Errorf("BridgeFDB(br0) names: %v %q %q", ok, names(odp1), names(12345))
	}
	var samples []string
	for _, ps := range v.PortSamples() {
		samples = append(samples, ps.Bridge+"/"+ps.Port)
	}
	if len(samples) != 1 || samples[0] != "br0/p1" {
		t.Errorf("PortSamples() = %v (patch ports have no device)", samples)
	}
	if of := v.OFBridges(); len(of) != 2 || of[0].Name() != "br0" || v.OFBridge("br2") != nil {
		t.Errorf("OFBridges() = %d bridges", len(of))
	}
}
