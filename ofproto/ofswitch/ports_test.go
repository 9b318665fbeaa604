package ofswitch

import (
	"testing"

	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// newTestPortTable is a port table with its own notifier, without a
// bridge.
func newTestPortTable(t *testing.T) *portTable {
	t.Helper()
	n := newTestNotifier(t)
	return &portTable{name: "br0", xl: n.xl, up: n.up, notify: n, logf: t.Logf, ports: map[uint16]*Port{}}
}

func testPort(no uint16, name string, mac byte) Port {
	return Port{Port: xlate.Port{OFPort: no, Name: name, ODP: uint32(no)}, HWAddr: [6]byte{0, 0, 0, 0, 0, mac}}
}

// portStatus returns the next message, which must be a port-status.
func portStatus(t *testing.T, s *fmSender) *ofp.PortStatus {
	t.Helper()
	m := s.next(t)
	ps, ok := m.Body.(*ofp.PortStatus)
	if !ok {
		t.Fatalf("got %s, want a port status", m.Raw)
	}
	return ps
}

// TestPortTableAnnouncesAddedChangedAndDeletedPorts checks that set
// publishes the ports to translation and sends one port-status per
// change, and that port_mod's configuration stays with a port of the
// same name.
func TestPortTableAnnouncesAddedChangedAndDeletedPorts(t *testing.T) {
	pt := newTestPortTable(t)
	s := newFMSender(4)
	pt.notify.conns.Get(s, true)
	pt.set([]Port{testPort(1, "p1", 1)})
	// Installed not live, then enabled, as Open vSwitch announces it.
	if ps := portStatus(t, s); ps.Reason != reasonAdd || ps.Desc.PortNo != 1 || ps.Desc.State != 0 {
		t.Fatalf("add: %+v", ps)
	}
	if ps := portStatus(t, s); ps.Reason != reasonModify || ps.Desc.PortNo != 1 || ps.Desc.State != 4 {
		t.Fatalf("enable: %+v", ps)
	}
	if p := pt.xl.Snapshot().Ports[1]; p == nil || p.Name != "p1" {
		t.Fatalf("translation's port 1: %+v", p)
	}
	pt.ports[1].OFConfig = ofp.PCNoFlood // as a port_mod leaves it
	p1 := testPort(1, "p1", 1)
	p1.LinkDown = true
	pt.set([]Port{p1, testPort(2, "p2", 2)})
	got := map[uint8][]uint32{}
	for range 3 {
		ps := portStatus(t, s)
		got[ps.Reason] = append(got[ps.Reason], ps.Desc.PortNo)
	}
	if len(got[reasonModify]) != 2 || len(got[reasonAdd]) != 1 || got[reasonAdd][0] != 2 {
		t.Fatalf("port statuses by reason: %v", got)
	}
	if ps := pt.list(); len(ps) != 2 || ps[0].OFConfig != ofp.PCNoFlood || !ps[0].LinkDown {
		t.Fatalf("ports: %+v", ps)
	}
	pt.set([]Port{testPort(2, "p2", 2)})
	if ps := portStatus(t, s); ps.Reason != reasonDelete || ps.Desc.PortNo != 1 {
		t.Fatalf("delete: %+v", ps)
	}
}

// TestPortTablePortModChecksAndAnnounces checks port_mod: an unknown port
// or another address is refused; a change reaches translation and the
// other connections, not an OpenFlow 1.3 sender.
func TestPortTablePortModChecksAndAnnounces(t *testing.T) {
	pt := newTestPortTable(t)
	sender, other := newFMSender(4), newFMSender(4)
	pt.notify.conns.Get(sender, true)
	pt.notify.conns.Get(other, true)
	pt.set([]Port{testPort(1, "p1", 1)})
	for range 2 { // ADD, then MOD enabling it
		portStatus(t, sender)
		portStatus(t, other)
	}
	req := &ofp.Msg{Version: 4, XID: 5}
	for _, c := range []struct {
		pm   ofp.PortMod
		code ofp.ErrCode
	}{
		{ofp.PortMod{PortNo: 9, HWAddr: [6]byte{0, 0, 0, 0, 0, 1}}, ofp.OFPPMFC_BAD_PORT},
		{ofp.PortMod{PortNo: 1, HWAddr: [6]byte{0, 0, 0, 0, 0, 2}}, ofp.OFPPMFC_BAD_HW_ADDR},
	} {
		if err := pt.portMod(sender, req, &c.pm); ofp.CodeOf(err) != c.code {
			t.Errorf("port_mod %+v: %v, want code %v", c.pm, err, c.code)
		}
	}
	pm := &ofp.PortMod{PortNo: 1, HWAddr: [6]byte{0, 0, 0, 0, 0, 1}, Config: ofp.PCNoFwd, Mask: ofp.PCNoFwd}
	if err := pt.portMod(sender, req, pm); err != nil {
		t.Fatal(err)
	}
	if ps := portStatus(t, other); ps.Reason != reasonModify || ps.Desc.Config&ofp.PCNoFwd == 0 {
		t.Fatalf("other connection: %+v", ps)
	}
	if len(sender.msgs) != 0 {
		t.Fatal("the OpenFlow 1.3 sender heard of its own port_mod")
	}
	if p := pt.xl.Snapshot().Ports[1]; p == nil || !p.NoFwd {
		t.Fatalf("translation's port 1: %+v", p)
	}
}

// TestPortTableTLVModChecksMappings checks the TLV table's rules: a
// mapped field or option is refused, the table lists by field, and a
// clear empties it.
func TestPortTableTLVModChecksMappings(t *testing.T) {
	pt := newTestPortTable(t)
	add := func(ms ...ofp.TLVMap) error {
		return pt.tlvMod(&ofp.TLVTableMod{Command: ofp.TLVAdd, Mappings: ms})
	}
	if err := add(ofp.TLVMap{OptClass: 0xffff, OptType: 1, OptLen: 4, Index: 3}, ofp.TLVMap{OptClass: 0xffff, OptType: 2, OptLen: 8, Index: 0}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m    ofp.TLVMap
		code ofp.ErrCode
	}{
		{ofp.TLVMap{OptClass: 0xffff, OptType: 3, OptLen: 4, Index: 3}, ofp.NXTTMFC_ALREADY_MAPPED},
		{ofp.TLVMap{OptClass: 0xffff, OptType: 1, OptLen: 4, Index: 4}, ofp.NXTTMFC_DUP_ENTRY},
		{ofp.TLVMap{OptClass: 0xffff, OptType: 5, OptLen: 6, Index: 5}, ofp.NXTTMFC_BAD_OPT_LEN},
	} {
		if err := add(c.m); ofp.CodeOf(err) != c.code {
			t.Errorf("add %+v: %v, want code %v", c.m, err, c.code)
		}
	}
	rep := pt.tlvTable()
	if len(rep.Mappings) != 2 || rep.Mappings[0].Index != 0 || rep.Mappings[1].Index != 3 {
		t.Fatalf("mappings: %+v", rep.Mappings)
	}
	if err := pt.tlvMod(&ofp.TLVTableMod{Command: ofp.TLVClear}); err != nil {
		t.Fatal(err)
	}
	if rep := pt.tlvTable(); len(rep.Mappings) != 0 {
		t.Fatalf("after clear: %+v", rep.Mappings)
	}
}

// TestPortTableReaddedPortIsAnnouncedWithItsState: a port deleted and
// added again at once with the same name and number (the bridge layer
// re-adds an interface whose options changed, which Open vSwitch
// reconfigures in place) is announced with its state in the ADD, and
// no MOD follows.
func TestPortTableReaddedPortIsAnnouncedWithItsState(t *testing.T) {
	pt := newTestPortTable(t)
	s := newFMSender(4)
	pt.notify.conns.Get(s, true)
	pt.set([]Port{testPort(1, "p1", 1)})
	portStatus(t, s)
	portStatus(t, s)
	pt.set(nil)
	if ps := portStatus(t, s); ps.Reason != reasonDelete {
		t.Fatalf("delete: %+v", ps)
	}
	pt.set([]Port{testPort(1, "p1", 1)})
	if ps := portStatus(t, s); ps.Reason != reasonAdd || ps.Desc.State != 4 {
		t.Fatalf("re-add: %+v", ps)
	}
	if len(s.msgs) != 0 {
		t.Fatalf("%d more messages after the re-add", len(s.msgs))
	}
}
