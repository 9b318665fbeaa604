package xlate_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// vlanPorts mirrors the Open vSwitch 3.1 oracle bridge of
// TestNormalVLANModesMatchOpenVSwitch:
//
//	ovs-vsctl add-br br0 -- set bridge br0 datapath_type=dummy \
//	  -- add-port br0 p1 tag=10 \
//	  -- add-port br0 p2 \
//	  -- add-port br0 p3 tag=10 vlan_mode=native-tagged trunks=20 \
//	  -- add-port br0 p4 tag=10 vlan_mode=native-untagged trunks=20 \
//	  -- add-port br0 p5 trunks=0,20 \
//	  -- add-port br0 p6 vlan_mode=access \
//	  -- add-port br0 p7 trunks=10,20 \
//	  -- add-port br0 p8 vlan_mode=native-untagged trunks=0,10,30 tag=30 \
//	  -- add-port br0 p9 vlan_mode=native-tagged trunks=0,20 \
//	  -- add-port br0 p10 vlan_mode=trunk tag=20 trunks=20 \
//	  -- add-port br0 p11 tag=0 \
//	  -- add-port br0 p12 vlan_mode=native-untagged
//
// (each with type=dummy ofport_request=N: OpenFlow and datapath port N;
// LOCAL is datapath port 100).
func vlanPorts() []*xlate.Port {
	return []*xlate.Port{
		{OFPort: 1, ODP: 1, Name: "p1", Tag: 10},
		{OFPort: 2, ODP: 2, Name: "p2", Tag: -1},
		{OFPort: 3, ODP: 3, Name: "p3", Tag: 10, Trunks: []uint16{20}, VLANMode: xlate.VLANNativeTagged},
		{OFPort: 4, ODP: 4, Name: "p4", Tag: 10, Trunks: []uint16{20}, VLANMode: xlate.VLANNativeUntagged},
		{OFPort: 5, ODP: 5, Name: "p5", Tag: -1, Trunks: []uint16{0, 20}},
		{OFPort: 6, ODP: 6, Name: "p6", Tag: -1, VLANMode: xlate.VLANAccess},
		{OFPort: 7, ODP: 7, Name: "p7", Tag: -1, Trunks: []uint16{10, 20}},
		{OFPort: 8, ODP: 8, Name: "p8", Tag: 30, Trunks: []uint16{0, 10, 30}, VLANMode: xlate.VLANNativeUntagged},
		{OFPort: 9, ODP: 9, Name: "p9", Tag: -1, Trunks: []uint16{0, 20}, VLANMode: xlate.VLANNativeTagged},
		{OFPort: 10, ODP: 10, Name: "p10", Tag: 20, Trunks: []uint16{20}, VLANMode: xlate.VLANTrunk},
		{OFPort: 11, ODP: 11, Name: "p11", Tag: 0},
		{OFPort: 12, ODP: 12, Name: "p12", Tag: -1, VLANMode: xlate.VLANNativeUntagged},
		{OFPort: xlate.PortLocal, ODP: 100, Name: "br0", Tag: -1},
	}
}

// vlanOracle lists, for a broadcast received on a port with an outer TCI
// (0: untagged; VLANCFI set: tagged, so 0x1000 is VID 0 with PCP 0), the
// TCI every copy leaves with (0x0000: untagged), from Open vSwitch 3.1's
// `ovs-appctl ofproto/trace br0 in_port=N,dl_dst=ff:ff:ff:ff:ff:ff,
// vlan_tci=T` on the vlanPorts bridge; the comments are its datapath
// actions.
var vlanOracle = []struct {
	in   uint16
	tci  uint16
	want string
}{
	{1, 0, "2:0x100a 3:0x100a 4:0x0000 7:0x100a 8:0x100a 12:0x100a 100:0x100a"},      // push_vlan(vid=10,pcp=0),7,100,2,3,pop_vlan,4,push_vlan(vid=10,pcp=0),12,8
	{1, 0x1000, "2:0x100a 3:0x100a 4:0x0000 7:0x100a 8:0x100a 12:0x100a 100:0x100a"}, // pop_vlan,push_vlan(vid=10,pcp=0),7,100,2,3,pop_vlan,4,push_vlan(vid=10,pcp=0),12,8
	{1, 0xb000, "2:0xb00a 3:0xb00a 4:0x0000 7:0xb00a 8:0xb00a 12:0xb00a 100:0xb00a"}, // pop_vlan,push_vlan(vid=10,pcp=5),7,100,2,3,pop_vlan,4,push_vlan(vid=10,pcp=5),12,8
	{1, 0x100a, "drop"}, // drop
	{1, 0xb00a, "drop"}, // drop
	{1, 0xb014, "drop"}, // drop
	{1, 0xb01e, "drop"}, // drop
	{1, 0x301e, "drop"}, // drop
	{2, 0, "5:0x0000 6:0x0000 9:0x0000 11:0x0000 12:0x0000 100:0x0000"},                        // 6,100,5,11,9,12
	{2, 0x1000, "5:0x0000 6:0x0000 9:0x0000 11:0x0000 12:0x0000 100:0x0000"},                   // pop_vlan,6,100,5,11,9,12
	{2, 0xb000, "5:0xb000 6:0x0000 9:0xb000 11:0x0000 12:0x0000 100:0xb000"},                   // pop_vlan,6,push_vlan(vid=0,pcp=5),100,5,pop_vlan,11,push_vlan(vid=0,pcp=5),9,pop_vlan,12
	{2, 0x100a, "1:0x0000 3:0x100a 4:0x0000 7:0x100a 8:0x100a 12:0x100a 100:0x100a"},           // 7,100,3,pop_vlan,1,4,push_vlan(vid=10,pcp=0),12,8
	{2, 0xb00a, "1:0x0000 3:0xb00a 4:0x0000 7:0xb00a 8:0xb00a 12:0xb00a 100:0xb00a"},           // 7,100,3,pop_vlan,1,4,push_vlan(vid=10,pcp=5),12,8
	{2, 0xb014, "3:0xb014 4:0xb014 5:0xb014 7:0xb014 9:0xb014 10:0xb014 12:0xb014 100:0xb014"}, // 7,100,3,4,5,10,9,12
	{2, 0xb01e, "8:0x0000 12:0xb01e 100:0xb01e"},                                               // 100,12,pop_vlan,8
	{2, 0x301e, "8:0x0000 12:0x301e 100:0x301e"},                                               // 100,12,pop_vlan,8
	{3, 0, "1:0x0000 2:0x100a 4:0x0000 7:0x100a 8:0x100a 12:0x100a 100:0x100a"},                // push_vlan(vid=10,pcp=0),7,100,2,pop_vlan,1,4,push_vlan(vid=10,pcp=0),12,8
	{3, 0x1000, "1:0x0000 2:0x100a 4:0x0000 7:0x100a 8:0x100a 12:0x100a 100:0x100a"},           // pop_vlan,push_vlan(vid=10,pcp=0),7,100,2,pop_vlan,1,4,push_vlan(vid=10,pcp=0),12,8
	{3, 0xb000, "1:0x0000 2:0xb00a 4:0x0000 7:0xb00a 8:0xb00a 12:0xb00a 100:0xb00a"},           // pop_vlan,push_vlan(vid=10,pcp=5),7,100,2,pop_vlan,1,4,push_vlan(vid=10,pcp=5),12,8
	{3, 0x100a, "1:0x0000 2:0x100a 4:0x0000 7:0x100a 8:0x100a 12:0x100a 100:0x100a"},           // 7,100,2,pop_vlan,1,4,push_vlan(vid=10,pcp=0),12,8
	{3, 0xb00a, "1:0x0000 2:0xb00a 4:0x0000 7:0xb00a 8:0xb00a 12:0xb00a 100:0xb00a"},           // 7,100,2,pop_vlan,1,4,push_vlan(vid=10,pcp=5),12,8
	{3, 0xb014, "2:0xb014 4:0xb014 5:0xb014 7:0xb014 9:0xb014 10:0xb014 12:0xb014 100:0xb014"}, // 7,100,2,4,5,10,9,12
	{3, 0xb01e, "drop"}, // drop
	{3, 0x301e, "drop"}, // drop
	{4, 0, "1:0x0000 2:0x100a 3:0x100a 7:0x100a 8:0x100a 12:0x100a 100:0x100a"},                // push_vlan(vid=10,pcp=0),7,100,2,3,pop_vlan,1,push_vlan(vid=10,pcp=0),12,8
	{4, 0x1000, "1:0x0000 2:0x100a 3:0x100a 7:0x100a 8:0x100a 12:0x100a 100:0x100a"},           // pop_vlan,push_vlan(vid=10,pcp=0),7,100,2,3,pop_vlan,1,push_vlan(vid=10,pcp=0),12,8
	{4, 0xb000, "1:0x0000 2:0xb00a 3:0xb00a 7:0xb00a 8:0xb00a 12:0xb00a 100:0xb00a"},           // pop_vlan,push_vlan(vid=10,pcp=5),7,100,2,3,pop_vlan,1,push_vlan(vid=10,pcp=5),12,8
	{4, 0x100a, "1:0x0000 2:0x100a 3:0x100a 7:0x100a 8:0x100a 12:0x100a 100:0x100a"},           // 7,100,2,3,pop_vlan,1,push_vlan(vid=10,pcp=0),12,8
	{4, 0xb00a, "1:0x0000 2:0xb00a 3:0xb00a 7:0xb00a 8:0xb00a 12:0xb00a 100:0xb00a"},           // 7,100,2,3,pop_vlan,1,push_vlan(vid=10,pcp=5),12,8
	{4, 0xb014, "2:0xb014 3:0xb014 5:0xb014 7:0xb014 9:0xb014 10:0xb014 12:0xb014 100:0xb014"}, // 7,100,2,3,5,10,9,12
	{4, 0xb01e, "drop"}, // drop
	{4, 0x301e, "drop"}, // drop
	{5, 0, "2:0x0000 6:0x0000 9:0x0000 11:0x0000 12:0x0000 100:0x0000"},      // 6,100,2,11,9,12
	{5, 0x1000, "2:0x0000 6:0x0000 9:0x0000 11:0x0000 12:0x0000 100:0x0000"}, // pop_vlan,6,100,2,11,9,12
	{5, 0xb000, "2:0xb000 6:0x0000 9:0xb000 11:0x0000 12:0x0000 100:0xb000"}, // pop_vlan,6,push_vlan(vid=0,pcp=5),100,2,pop_vlan,11,push_vlan(vid=0,pcp=5),9,pop_vlan,12
	{5, 0x100a, "drop"}, // drop
	{5, 0xb00a, "drop"}, // drop
	{5, 0xb014, "2:0xb014 3:0xb014 4:0xb014 7:0xb014 9:0xb014 10:0xb014 12:0xb014 100:0xb014"}, // 7,100,2,3,4,10,9,12
	{5, 0xb01e, "drop"}, // drop
	{5, 0x301e, "drop"}, // drop
	{6, 0, "2:0x0000 5:0x0000 9:0x0000 11:0x0000 12:0x0000 100:0x0000"},      // 100,2,5,11,9,12
	{6, 0x1000, "2:0x0000 5:0x0000 9:0x0000 11:0x0000 12:0x0000 100:0x0000"}, // pop_vlan,100,2,5,11,9,12
	{6, 0xb000, "2:0xb000 5:0xb000 9:0xb000 11:0x0000 12:0x0000 100:0xb000"}, // 100,2,5,pop_vlan,11,push_vlan(vid=0,pcp=5),9,pop_vlan,12
	{6, 0x100a, "drop"}, // drop
	{6, 0xb00a, "drop"}, // drop
	{6, 0xb014, "drop"}, // drop
	{6, 0xb01e, "drop"}, // drop
	{6, 0x301e, "drop"}, // drop
	{7, 0, "drop"},      // drop
	{7, 0x1000, "drop"}, // drop
	{7, 0xb000, "drop"}, // drop
	{7, 0x100a, "1:0x0000 2:0x100a 3:0x100a 4:0x0000 8:0x100a 12:0x100a 100:0x100a"},           // 100,2,3,pop_vlan,1,4,push_vlan(vid=10,pcp=0),12,8
	{7, 0xb00a, "1:0x0000 2:0xb00a 3:0xb00a 4:0x0000 8:0xb00a 12:0xb00a 100:0xb00a"},           // 100,2,3,pop_vlan,1,4,push_vlan(vid=10,pcp=5),12,8
	{7, 0xb014, "2:0xb014 3:0xb014 4:0xb014 5:0xb014 9:0xb014 10:0xb014 12:0xb014 100:0xb014"}, // 100,2,3,4,5,10,9,12
	{7, 0xb01e, "drop"},                          // drop
	{7, 0x301e, "drop"},                          // drop
	{8, 0, "2:0x101e 12:0x101e 100:0x101e"},      // push_vlan(vid=30,pcp=0),100,2,12
	{8, 0x1000, "2:0x101e 12:0x101e 100:0x101e"}, // pop_vlan,push_vlan(vid=30,pcp=0),100,2,12
	{8, 0xb000, "2:0xb01e 12:0xb01e 100:0xb01e"}, // pop_vlan,push_vlan(vid=30,pcp=5),100,2,12
	{8, 0x100a, "1:0x0000 2:0x100a 3:0x100a 4:0x0000 7:0x100a 12:0x100a 100:0x100a"}, // 7,100,2,3,pop_vlan,1,4,push_vlan(vid=10,pcp=0),12
	{8, 0xb00a, "1:0x0000 2:0xb00a 3:0xb00a 4:0x0000 7:0xb00a 12:0xb00a 100:0xb00a"}, // 7,100,2,3,pop_vlan,1,4,push_vlan(vid=10,pcp=5),12
	{8, 0xb014, "drop"},                                                      // drop
	{8, 0xb01e, "2:0xb01e 12:0xb01e 100:0xb01e"},                             // 100,2,12
	{8, 0x301e, "2:0x301e 12:0x301e 100:0x301e"},                             // 100,2,12
	{9, 0, "2:0x0000 5:0x0000 6:0x0000 11:0x0000 12:0x0000 100:0x0000"},      // 6,100,2,5,11,12
	{9, 0x1000, "2:0x0000 5:0x0000 6:0x0000 11:0x0000 12:0x0000 100:0x0000"}, // pop_vlan,6,100,2,5,11,12
	{9, 0xb000, "2:0xb000 5:0xb000 6:0x0000 11:0x0000 12:0x0000 100:0xb000"}, // pop_vlan,6,push_vlan(vid=0,pcp=5),100,2,5,pop_vlan,11,12
	{9, 0x100a, "drop"}, // drop
	{9, 0xb00a, "drop"}, // drop
	{9, 0xb014, "2:0xb014 3:0xb014 4:0xb014 5:0xb014 7:0xb014 10:0xb014 12:0xb014 100:0xb014"}, // 7,100,2,3,4,5,10,12
	{9, 0xb01e, "drop"},  // drop
	{9, 0x301e, "drop"},  // drop
	{10, 0, "drop"},      // drop
	{10, 0x1000, "drop"}, // drop
	{10, 0xb000, "drop"}, // drop
	{10, 0x100a, "drop"}, // drop
	{10, 0xb00a, "drop"}, // drop
	{10, 0xb014, "2:0xb014 3:0xb014 4:0xb014 5:0xb014 7:0xb014 9:0xb014 12:0xb014 100:0xb014"}, // 7,100,2,3,4,5,9,12
	{10, 0xb01e, "drop"}, // drop
	{10, 0x301e, "drop"}, // drop
	{11, 0, "2:0x0000 5:0x0000 6:0x0000 9:0x0000 12:0x0000 100:0x0000"},      // 6,100,2,5,9,12
	{11, 0x1000, "2:0x0000 5:0x0000 6:0x0000 9:0x0000 12:0x0000 100:0x0000"}, // pop_vlan,6,100,2,5,9,12
	{11, 0xb000, "2:0xb000 5:0xb000 6:0x0000 9:0xb000 12:0x0000 100:0xb000"}, // pop_vlan,6,push_vlan(vid=0,pcp=5),100,2,5,9,pop_vlan,12
	{11, 0x100a, "drop"}, // drop
	{11, 0xb00a, "drop"}, // drop
	{11, 0xb014, "drop"}, // drop
	{11, 0xb01e, "drop"}, // drop
	{11, 0x301e, "drop"}, // drop
	{12, 0, "2:0x0000 5:0x0000 6:0x0000 9:0x0000 11:0x0000 100:0x0000"},                        // 6,100,2,5,11,9
	{12, 0x1000, "2:0x0000 5:0x0000 6:0x0000 9:0x0000 11:0x0000 100:0x0000"},                   // pop_vlan,6,100,2,5,11,9
	{12, 0xb000, "2:0xb000 5:0xb000 6:0x0000 9:0xb000 11:0x0000 100:0xb000"},                   // pop_vlan,6,push_vlan(vid=0,pcp=5),100,2,5,pop_vlan,11,push_vlan(vid=0,pcp=5),9
	{12, 0x100a, "1:0x0000 2:0x100a 3:0x100a 4:0x0000 7:0x100a 8:0x100a 100:0x100a"},           // 7,100,2,3,pop_vlan,1,4,push_vlan(vid=10,pcp=0),8
	{12, 0xb00a, "1:0x0000 2:0xb00a 3:0xb00a 4:0x0000 7:0xb00a 8:0xb00a 100:0xb00a"},           // 7,100,2,3,pop_vlan,1,4,push_vlan(vid=10,pcp=5),8
	{12, 0xb014, "2:0xb014 3:0xb014 4:0xb014 5:0xb014 7:0xb014 9:0xb014 10:0xb014 100:0xb014"}, // 7,100,2,3,4,5,10,9
	{12, 0xb01e, "2:0xb01e 8:0x0000 100:0xb01e"},                                               // 100,2,pop_vlan,8
	{12, 0x301e, "2:0x301e 8:0x0000 100:0x301e"},                                               // 100,2,pop_vlan,8
}

// runNormal plays a translation's actions on a packet whose outer TCI is
// tci and returns the TCI of every copy, by datapath port, as the
// datapath would send them (mac_learn flooding, as for a broadcast).
func runNormal(t *testing.T, acts odp.Actions, in uint32, tci uint16) string {
	t.Helper()
	var outs []string
	for _, a := range acts {
		switch a.Kind {
		case odp.KindPopVLAN:
			tci = 0
		case odp.KindPushVLAN:
			if tci != 0 {
				t.Fatalf("push_vlan on a tagged packet: %s", acts)
			}
			tci = uint16(a.Arg)
		case odp.KindOutput:
			outs = append(outs, fmt.Sprintf("%d:0x%04x", a.Arg, tci))
		case odp.KindMACLearn:
			m := a.MACLearn
			if m.InTagged != (tci != 0) {
				t.Fatalf("mac_learn in_tagged=%v on TCI %#x: %s", m.InTagged, tci, acts)
			}
			for _, p := range m.Ports {
				if p.Port == in {
					continue // never back to the input port
				}
				out := tci
				switch {
				case p.Tagged && !m.InTagged:
					out = m.VLAN | flow.VLANCFI
				case !p.Tagged && m.InTagged:
					out = 0
				}
				outs = append(outs, fmt.Sprintf("%d:0x%04x", p.Port, out))
			}
		case odp.KindDrop:
		default:
			t.Fatalf("unexpected action in %s", acts)
		}
	}
	if len(outs) == 0 {
		return "drop"
	}
	slices.SortFunc(outs, func(a, b string) int {
		var x, y int
		fmt.Sscanf(a, "%d:", &x)
		fmt.Sscanf(b, "%d:", &y)
		return x - y
	})
	return strings.Join(outs, " ")
}

// vlanKey is a broadcast received on port in with outer TCI tci.
func vlanKey(t *testing.T, in uint16, tci uint16) flow.Key {
	k := key(t, pktUDP)
	k.InPort = uint32(in)
	k.EthDst = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if tci != 0 {
		k.VLANs[0] = flow.VLAN{TPID: flow.EthTypeVLAN, TCI: tci}
	}
	return k
}

// TestNormalVLANModesMatchOpenVSwitch translates a broadcast from every
// port of a bridge with every VLAN mode, untagged, priority-tagged (with
// and without a priority) and tagged, and requires the ports and tags
// Open vSwitch floods it to: access, trunk, native-tagged and
// native-untagged membership, trunks with and without VLAN 0, the native
// VLAN sent untagged, and priority-tagged frames keeping their PCP.
func TestNormalVLANModesMatchOpenVSwitch(t *testing.T) {
	e := newEnv(t, mf.OF10, "actions=NORMAL")
	e.x.SetSnapshot(xlate.NewSnapshot("br0", 7, vlanPorts()))
	for _, tc := range vlanOracle {
		out := e.translate(vlanKey(t, tc.in, tc.tci))
		if out.Err != nil {
			t.Fatalf("in_port=%d tci=0x%04x: %v", tc.in, tc.tci, out.Err)
		}
		if got := runNormal(t, out.Actions, uint32(tc.in), tc.tci); got != tc.want {
			t.Errorf("in_port=%d tci=0x%04x: %s\n got %s\nwant %s", tc.in, tc.tci, out.Actions, got, tc.want)
		}
		if out.Mask.VLANs[0].TCI != 0xffff {
			t.Errorf("in_port=%d tci=0x%04x: VLAN TCI mask %#x", tc.in, tc.tci, out.Mask.VLANs[0].TCI)
		}
	}
}

// TestNormalVLANFromPatchPortMatchesOpenVSwitch is the oracle table for
// packets that enter through a patch port (no datapath port, so NORMAL
// emits one output per member with the tag that port needs instead of
// mac_learn): the same VLAN decisions must come out.
func TestNormalVLANFromPatchPortMatchesOpenVSwitch(t *testing.T) {
	for _, in := range []uint16{1, 2, 3, 4, 8, 12} {
		ports := vlanPorts()
		ports[in-1].ODP, ports[in-1].PeerBridge, ports[in-1].PeerPort = xlate.NoODP, "br1", 1
		e := newEnv(t, mf.OF10)
		e.x.SetSnapshot(xlate.NewSnapshot("br0", 7, ports))
		normal := flowMod(t, mf.OF10, "actions=NORMAL").Actions
		for _, tc := range vlanOracle {
			if tc.in != in {
				continue
			}
			// A packet-out with in_port the patch port runs NORMAL as
			// a packet from the peer bridge would.
			var out xlate.Out
			e.x.Translate(&xlate.In{Key: vlanKey(t, tc.in, tc.tci), OFActions: normal, InPort: in}, &out)
			if got := runNormal(t, out.Actions, uint32(tc.in), tc.tci); got != tc.want {
				t.Errorf("patch in_port=%d tci=0x%04x: %s\n got %s\nwant %s", tc.in, tc.tci, out.Actions, got, tc.want)
			}
		}
	}
}

// A priority tag on an access port is rewritten to the access VLAN with
// its priority before mac_learn (Open vSwitch: pop_vlan,
// push_vlan(vid=10,pcp=5)), and an output after NORMAL sees the packet
// as received.
func TestNormalRewritesPriorityTagOnAccessPort(t *testing.T) {
	e := newEnv(t, mf.OF10, "actions=NORMAL,output:2")
	ports := testPorts()
	ports[0].Tag = 10
	e.x.SetSnapshot(xlate.NewSnapshot("br0", 7, ports))
	out := e.translate(vlanKey(t, 1, 0xb000))
	want := "pop_vlan,push_vlan(vid=10,pcp=5),mac_learn(table=7,vlan=10,in_tagged,ports(1,2:tagged,3:tagged,100:tagged)),pop_vlan,push_vlan(vid=0,pcp=5),2"
	if got := out.Actions.String(); got != want {
		t.Fatalf("actions\n got %s\nwant %s", got, want)
	}
}

// Frames with a truncated VLAN header (Ethertype 0x8100 but no tag) are
// dropped, as Open vSwitch's "partial VLAN tag".
func TestNormalDropsPartialVLANTag(t *testing.T) {
	e := newEnv(t, mf.OF10, "actions=NORMAL")
	k := key(t, pktUDP)
	k.EthType = flow.EthTypeVLAN
	if got := e.translate(k).Actions.String(); got != "drop" {
		t.Fatalf("actions %s", got)
	}
}

// Only the outer tag decides (Open vSwitch's default vlan-limit of 1:
// its trace of this frame gives 7,100,3,pop_vlan,1,4,...): a
// double-tagged frame reaches the access port of its outer VLAN with the
// outer tag removed.
func TestNormalDoubleTaggedUsesOuterTagOnly(t *testing.T) {
	e := newEnv(t, mf.OF10, "actions=NORMAL")
	ports := testPorts()
	ports[0].Tag = 10
	e.x.SetSnapshot(xlate.NewSnapshot("br0", 7, ports))
	k := vlanKey(t, 2, 0x100a)
	k.VLANs[0].TPID = flow.EthTypeQinQ
	k.VLANs[1] = flow.VLAN{TPID: flow.EthTypeVLAN, TCI: 0x1014}
	out := e.translate(k)
	if got := out.Actions.String(); got != "mac_learn(table=7,vlan=10,in_tagged,ports(1,2:tagged,3:tagged,100:tagged))" {
		t.Fatalf("actions %s", got)
	}
}

func TestParseVLANMode(t *testing.T) {
	for s, want := range map[string]xlate.VLANMode{"": xlate.VLANModeDefault, "access": xlate.VLANAccess, "trunk": xlate.VLANTrunk,
		"native-tagged": xlate.VLANNativeTagged, "native-untagged": xlate.VLANNativeUntagged} {
		if m, ok := xlate.ParseVLANMode(s); !ok || m != want {
			t.Errorf("ParseVLANMode(%q) = %v, %v", s, m, ok)
		}
	}
	for _, s := range []string{"dot1q-tunnel", "Access", "x"} {
		if _, ok := xlate.ParseVLANMode(s); ok {
			t.Errorf("ParseVLANMode(%q) accepted", s)
		}
	}
}
