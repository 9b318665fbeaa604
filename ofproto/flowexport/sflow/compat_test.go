package sflow

import (
	"fmt"
	"github.com/gvs-project/gvs/ofproto/flowexport/internal/exporttest"
	"net/netip"
	"testing"
	"time"

	gfsflow "github.com/netsampler/goflow2/v2/decoders/sflow"
)

// TestSameSamplesAsOpenVSwitch configures sFlow on a real ovs-vswitchd
// (dummy datapath with ifindexes on the ports), injects frames and waits
// for counter polls, then checks that this package, fed the same samples
// and counters, writes the same flow and counter samples.
func TestSameSamplesAsOpenVSwitch(t *testing.T) {
	exporttest.RequireOpenVSwitch(t, "ofproto/flowexport/sflow")
	o := exporttest.StartOpenVSwitch(t)
	c := exporttest.NewCollector(t)
	o.Vsctl("--", "set", "Bridge", "br0", "sflow=@s", "--", "--id=@s", "create", "sFlow",
		fmt.Sprintf("targets=%q", c.Addr()), "agent=127.0.0.1", "sampling=1", "header=64", "polling=1")
	frames := [][]byte{testFrame(100), testFrame(60), testFrame(1400)}
	for i, f := range frames {
		copy(f[6:12], []byte{2, 0, 0, 0, 0, byte(i)})
		o.Receive("p1", f)
	}
	var ovs []*gfsflow.Packet
	var flows []gfsflow.FlowSample
	counters := map[uint32]gfsflow.CounterSample{} // first counter sample per port
	deadline := time.Now().Add(15 * time.Second)
	for (len(flows) < len(frames) || counters[1001].Header.Format == 0 || counters[1002].Header.Format == 0) &&
		time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		msgs := c.Msgs()
		ovs, flows = nil, nil
		clear(counters)
		for _, m := range msgs {
			p := decode(t, m)
			ovs = append(ovs, p)
			for _, s := range p.Samples {
				switch s := s.(type) {
				case gfsflow.FlowSample:
					flows = append(flows, s)
				case gfsflow.CounterSample:
					if _, ok := counters[s.Header.SourceIdValue]; !ok && s.Header.SourceIdType == 0 {
						counters[s.Header.SourceIdValue] = s
					}
				}
			}
		}
	}
	if len(flows) < len(frames) || counters[1001].Header.Format == 0 || counters[1002].Header.Format == 0 {
		t.Fatalf("Open vSwitch sent %d flow samples and counters for %d ports", len(flows), len(counters))
	}
	for i, p := range ovs {
		if p.SequenceNumber != uint32(i+1) || p.Version != 5 {
			t.Errorf("Open vSwitch datagram %d: version %d sequence %d", i, p.Version, p.SequenceNumber)
		}
	}
	agent := netip.AddrFrom4([4]byte(ovs[0].AgentIP))

	// Replay: the same flow samples, then one poll of the same counters.
	g := exporttest.NewCollector(t)
	clk := exporttest.NewFakeClock()
	ports := &portList{}
	for _, ifindex := range []uint32{1001, 1002} {
		ifc := counters[ifindex].Records[len(counters[ifindex].Records)-1].Data.(gfsflow.IfCounters)
		ports.ports = append(ports.ports, PortCounters{
			Ifindex: ifindex, Name: fmt.Sprintf("p%d", ifindex-1000), OFPort: ifindex - 1000, Up: true,
			RxPackets: uint64(ifc.IfInUcastPkts), RxBytes: ifc.IfInOctets, RxDrops: uint64(ifc.IfInDiscards), RxErrors: uint64(ifc.IfInErrors),
			TxPackets: uint64(ifc.IfOutUcastPkts), TxBytes: ifc.IfOutOctets, TxDrops: uint64(ifc.IfOutDiscards), TxErrors: uint64(ifc.IfOutErrors),
			RxMulticast: uint64(ifc.IfInMulticastPkts), RxBroadcast: uint64(ifc.IfInBroadcastPkts),
			TxMulticast: uint64(ifc.IfOutMulticastPkts), TxBroadcast: uint64(ifc.IfOutBroadcastPkts),
		})
	}
	e, err := New(Config{Targets: []string{g.Addr()}, Sampling: 1, Header: 64, Polling: time.Second,
		Agent: agent, SubID: ovs[0].SubAgentId, DatapathID: 0xabc}, clk.Now, ports.get)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for i, fs := range flows[:len(frames)] {
		sw := fs.Records[0].Data.(gfsflow.ExtendedSwitch)
		e.Sample(&Sample{Packet: frames[i], InIfindex: fs.Input, OutIfindex: fs.Output,
			InVLAN: uint16(sw.SrcVlan), InPriority: uint8(sw.SrcPriority), OutVLAN: uint16(sw.DstVlan), OutPriority: uint8(sw.DstPriority)})
	}
	e.Run() // schedules the first polls
	clk.Advance(5 * time.Second)
	e.Run()
	var mine []gfsflow.FlowSample
	myCounters := map[uint32]gfsflow.CounterSample{}
	for _, m := range g.Wait(t, 2) {
		p := decode(t, m)
		if string(p.AgentIP) != string(ovs[0].AgentIP) || p.SubAgentId != ovs[0].SubAgentId || p.IPVersion != ovs[0].IPVersion {
			t.Errorf("datagram header %+v, Open vSwitch %+v", p, ovs[0])
		}
		for _, s := range p.Samples {
			switch s := s.(type) {
			case gfsflow.FlowSample:
				mine = append(mine, s)
			case gfsflow.CounterSample:
				myCounters[s.Header.SourceIdValue] = s
			}
		}
	}
	for i := range frames {
		if got, want := fmt.Sprintf("%+v", mine[i]), fmt.Sprintf("%+v", flows[i]); got != want {
			t.Errorf("flow sample %d:\n got %s\nwant %s", i, got, want)
		}
	}
	for _, ifindex := range []uint32{1001, 1002} {
		got, want := myCounters[ifindex], counters[ifindex]
		got.Header.SampleSequenceNumber, want.Header.SampleSequenceNumber = 0, 0
		if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
			t.Errorf("counter sample of %d:\n got %s\nwant %s", ifindex, g, w)
		}
	}
}
