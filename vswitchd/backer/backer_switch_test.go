package backer

import (
	"context"
	"log/slog"
	"testing"

	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// newTestBacker is a backer over dummy devices only (--disable-system),
// with no run directory and its logs discarded.
func newTestBacker(t *testing.T) *Backer {
	t.Helper()
	s := New(context.Background(), Config{
		DisableSystem: true, DisableSystemRoute: true,
		Logger: func(string) *slog.Logger { return slog.New(slog.DiscardHandler) },
	})
	t.Cleanup(func() {
		s.Close()
		s.CloseDatapaths()
	})
	return s
}

func addBridge(t *testing.T, s *Backer, name string) {
	t.Helper()
	if err := s.AddBridge(&bridge.BridgeConfig{Name: name, DatapathType: "dummy", UUID: "5ad515c0-0000-4000-8000-00000000000" + name[len(name)-1:]}); err != nil {
		t.Fatalf("AddBridge(%s): %v", name, err)
	}
}

func addPort(t *testing.T, s *Backer, br string, ic bridge.IfaceConfig) int64 {
	t.Helper()
	no, err := s.AddPort(br, &ic)
	if err != nil {
		t.Fatalf("AddPort(%s, %s): %v", br, ic.Name, err)
	}
	return no
}

// Bridges of one datapath type share one datapath, as Open vSwitch's
// dpif-backer keeps one per type.
func TestBridgesOfOneTypeShareOneDatapath(t *testing.T) {
	s := newTestBacker(t)
	addBridge(t, s, "br0")
	addBridge(t, s, "br1")
	dps := s.Datapaths()
	if len(dps) != 1 || dps[0].Name() != "ovs-dummy" {
		var names []string
		for _, dp := range dps {
			names = append(names, dp.Name())
		}
		t.Fatalf("datapaths = %v, want [ovs-dummy]", names)
	}
	if got := s.View().DumpDps(); got != "dummy@br0\ndummy@br1\n" {
		t.Errorf("DumpDps() = %q", got)
	}
}

// OpenFlow port numbers: an ofport_request is honoured when free;
// otherwise the next number from a rotating cursor; a freed number is
// not handed out again at once (flows for the old port may linger).
func TestOfportAllocationHonoursRequestsAndDelaysReuse(t *testing.T) {
	s := newTestBacker(t)
	addBridge(t, s, "br0")
	if no := addPort(t, s, "br0", bridge.IfaceConfig{Name: "p1", Type: "dummy"}); no != 1 {
		t.Errorf("p1: ofport %d, want 1", no)
	}
	if no := addPort(t, s, "br0", bridge.IfaceConfig{Name: "p5", Type: "dummy", OfportRequest: 5}); no != 5 {
		t.Errorf("p5: ofport %d, want 5", no)
	}
	if no := addPort(t, s, "br0", bridge.IfaceConfig{Name: "p1b", Type: "dummy", OfportRequest: 1}); no != 2 {
		t.Errorf("p1b asking for the taken 1: ofport %d, want 2", no)
	}
	if err := s.DelPort("br0", "p1"); err != nil {
		t.Fatal(err)
	}
	if no := addPort(t, s, "br0", bridge.IfaceConfig{Name: "p3", Type: "dummy"}); no != 3 {
		t.Errorf("p3: ofport %d, want 3", no)
	}
	if no, ok := s.View().PortNumber("br0", "p5"); !ok || no != 5 {
		t.Errorf("PortNumber(br0, p5) = %d, %v", no, ok)
	}
}

// A patch port without its peer reports Open vSwitch's error; once the
// peer exists on a bridge of the same datapath, both ports see each
// other (the OpenFlow switch's port carries the peer's bridge and number).
func TestPatchPortsPeerAcrossBridgesOfOneDatapath(t *testing.T) {
	s := newTestBacker(t)
	addBridge(t, s, "br0")
	addBridge(t, s, "br1")
	addPort(t, s, "br0", bridge.IfaceConfig{Name: "patch-a", Type: "patch", Options: map[string]string{"peer": "patch-b"}})
	if got, want := s.IfaceStatus("br0", "patch-a").Error, "No usable peer 'patch-b' exists in 'dummy' datapath."; got != want {
		t.Errorf("unpeered: error %q, want %q", got, want)
	}
	nb := addPort(t, s, "br1", bridge.IfaceConfig{Name: "patch-b", Type: "patch", Options: map[string]string{"peer": "patch-a"}})
	if got := s.IfaceStatus("br0", "patch-a").Error; got != "" {
		t.Errorf("peered: error %q", got)
	}
	for _, p := range s.View().OFBridge("br0").Ports() {
		if p.Name == "patch-a" {
			if p.PeerBridge != "br1" || int64(p.PeerPort) != nb {
				t.Errorf("patch-a's peer = %s:%d, want br1:%d", p.PeerBridge, p.PeerPort, nb)
			}
			return
		}
	}
	t.Error("br0's OpenFlow switch has no port patch-a")
}

// Bad patch options are refused with Open vSwitch's messages.
func TestPatchPortOptionsAreChecked(t *testing.T) {
	s := newTestBacker(t)
	addBridge(t, s, "br0")
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{nil, "p: patch type requires valid 'peer' argument"},
		{map[string]string{"peer": "p"}, "p: patch peer must not be self"},
		{map[string]string{"peer": "q", "x": "1"}, "p: patch type takes only a 'peer' argument"},
	} {
		_, err := s.AddPort("br0", &bridge.IfaceConfig{Name: "p", Type: "patch", Options: tc.opts})
		if err == nil || err.Error() != tc.want {
			t.Errorf("options %v: %v, want %q", tc.opts, err, tc.want)
		}
	}
}
