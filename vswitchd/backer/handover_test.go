package backer

import (
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/statefile"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// handoverSwitch is br0 on the dummy datapath with p1 (OpenFlow port 1)
// and p5 (port req).
func handoverSwitch(t *testing.T, req int64) *Backer {
	t.Helper()
	s := newTestBacker(t)
	addBridge(t, s, "br0")
	addPort(t, s, "br0", bridge.IfaceConfig{Name: "p1", Type: "dummy"})
	addPort(t, s, "br0", bridge.IfaceConfig{Name: "p5", Type: "dummy", OfportRequest: req})
	return s
}

// TestFrozenStateAppliesToTheSameSwitchOnly: a frozen backer's state
// (OpenFlow, MAC table, port numbers, conntrack) applies to a backer
// with the same bridges and port numbers, which then has the same flows;
// one whose port has another OpenFlow number, a section of another
// version or a bridge it lacks is refused before anything is applied.
func TestFrozenStateAppliesToTheSameSwitchOnly(t *testing.T) {
	s := handoverSwitch(t, 5)
	x := s.View().OFBridge("br0").Tables().Begin()
	if err := x.Apply(&oftable.FlowMod{Command: ofp.FlowAdd, Table: 2, Priority: 9, NewCookie: 0x77, IdleTimeout: 60,
		OutPort: oftable.PortAny, OutGroup: oftable.GroupAny,
		Actions: []ofp.Action{{Type: ofp.ActOutput, Raw: ofp.RawActOFPAT10_OUTPUT, Port: xlate.PortNormal}}}); err != nil {
		t.Fatal(err)
	}
	x.Commit()
	fr, err := s.Handover().Freeze(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Datapaths()[0].Paused() {
		t.Fatal("the datapath is not paused while frozen")
	}
	fr.Thaw()
	if s.Datapaths()[0].Paused() {
		t.Fatal("the datapath is still paused after Thaw")
	}
	var names []string
	for _, sec := range fr.Sections {
		names = append(names, sec.Name)
	}
	if got := strings.Join(names, " "); got != "openflow/br0 mac/br0 ports/br0 conntrack/dummy megaflows/dummy" {
		t.Fatalf("sections: %s", got)
	}
	f := &statefile.File{GVSVersion: "test", Written: time.Now(), Sections: fr.Sections}

	same := newTestBacker(t)
	same.Handover().Adopt(nil)
	addBridge(t, same, "br0")
	addPort(t, same, "br0", bridge.IfaceConfig{Name: "p1", Type: "dummy"})
	addPort(t, same, "br0", bridge.IfaceConfig{Name: "p5", Type: "dummy", OfportRequest: 5})
	if !same.Datapaths()[0].Paused() {
		t.Fatal("a datapath created while adopting is not paused")
	}
	if err := same.Handover().CheckState(f, StateVersions()); err != nil {
		t.Fatal(err)
	}
	if _, err := same.Handover().ApplyState(f); err != nil {
		t.Fatal(err)
	}
	same.Handover().ResumeDatapaths()
	if same.Datapaths()[0].Paused() {
		t.Fatal("the datapath is still paused after ResumeDatapaths")
	}
	if a, b := s.View().OFBridge("br0").Tables().Count(), same.View().OFBridge("br0").Tables().Count(); a != b || a == 0 {
		t.Fatalf("%d flows after applying, %d before", b, a)
	}

	other := handoverSwitch(t, 6)
	err = other.Handover().CheckState(f, StateVersions())
	if err == nil || err.Error() != "state section ports/br0: port p5 is OpenFlow port 6 here, 5 before" {
		t.Fatalf("another port number: %v", err)
	}
	v := StateVersions()
	v["mac/"]++
	err = same.Handover().CheckState(f, v)
	if err == nil || !strings.HasPrefix(err.Error(), "state section mac/br0 has version 1 (written by gvs test); this gvs reads version 2") {
		t.Fatalf("another version: %v", err)
	}
	none := newTestBacker(t)
	addBridge(t, none, "br1")
	if err := none.Handover().CheckState(f, StateVersions()); err == nil || err.Error() != "state section openflow/br0: no bridge br0 here" {
		t.Fatalf("another bridge: %v", err)
	}
}
