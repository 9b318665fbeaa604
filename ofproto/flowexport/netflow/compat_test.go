package netflow

import (
	"encoding/binary"
	"fmt"
	"github.com/gvs-project/gvs/ofproto/flowexport/internal/exporttest"
	"testing"
	"time"

	"github.com/netsampler/goflow2/v2/decoders/netflowlegacy"
)

// ipv4Frame builds an Ethernet/IPv4 frame with a TCP, UDP or ICMP header.
func ipv4Frame(k FlowKey, tcpFlags uint8) []byte {
	b := []byte{0x02, 0, 0, 0, 0, 0xbb, 0x02, 0, 0, 0, 0, 0xaa, 0x08, 0x00}
	var l4 []byte
	switch k.Proto {
	case 6:
		l4 = make([]byte, 20)
		l4[12], l4[13] = 5<<4, tcpFlags
	default:
		l4 = make([]byte, 8)
	}
	if k.Proto == 1 {
		l4[0], l4[1] = byte(k.SrcPort), byte(k.DstPort)
	} else {
		binary.BigEndian.PutUint16(l4[0:], k.SrcPort)
		binary.BigEndian.PutUint16(l4[2:], k.DstPort)
	}
	if k.Proto == 17 {
		binary.BigEndian.PutUint16(l4[4:], 8)
	}
	h := make([]byte, 20)
	h[0], h[1], h[8], h[9] = 0x45, k.TOS, 64, k.Proto
	binary.BigEndian.PutUint16(h[2:], uint16(20+len(l4)))
	copy(h[12:], k.Src[:])
	copy(h[16:], k.Dst[:])
	return append(append(b, h...), l4...)
}

// TestSameRecordsAsOpenVSwitch configures NetFlow on a real ovs-vswitchd
// (dummy datapath, NORMAL switching), injects frames, deletes the
// datapath flows, and checks that this package, given the same statistics,
// sends records with the same values (times aside).
func TestSameRecordsAsOpenVSwitch(t *testing.T) {
	exporttest.RequireOpenVSwitch(t, "ofproto/flowexport/netflow")
	o := exporttest.StartOpenVSwitch(t)
	c := exporttest.NewCollector(t)
	o.Vsctl("--", "set", "Bridge", "br0", "netflow=@n", "--", "--id=@n", "create", "NetFlow",
		fmt.Sprintf("targets=%q", c.Addr()), "engine_type=3", "engine_id=5", "active_timeout=60")
	flows := []struct {
		k     FlowKey
		flags []uint8
	}{
		{FlowKey{InPort: 1, Src: ip4("10.0.0.1"), Dst: ip4("10.0.0.2"), Proto: 6, TOS: 0x2b, SrcPort: 40000, DstPort: 80}, []uint8{0x02, 0x10, 0x18}},
		{FlowKey{InPort: 1, Src: ip4("10.0.0.1"), Dst: ip4("10.0.0.3"), Proto: 1, SrcPort: 8, DstPort: 0}, []uint8{0, 0}},
		{FlowKey{InPort: 2, Src: ip4("10.0.0.4"), Dst: ip4("10.0.0.1"), Proto: 17, SrcPort: 53, DstPort: 5353}, []uint8{0}},
	}
	for _, f := range flows {
		for _, fl := range f.flags {
			o.Receive(fmt.Sprintf("p%d", f.k.InPort), ipv4Frame(f.k, fl))
		}
	}
	o.Run("ovs-appctl", "revalidator/purge")
	sent := 0
	for _, f := range flows {
		sent += len(f.flags)
	}
	var ovs []*netflowlegacy.PacketNetFlowV5
	pkts := 0
	deadline := time.Now().Add(10 * time.Second)
	for pkts < sent && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		msgs := c.Msgs()
		ovs, pkts = nil, 0
		for _, m := range msgs {
			p := decodeV5(t, m)
			ovs = append(ovs, p)
			for _, r := range p.Records {
				pkts += int(r.DPkts)
			}
		}
	}
	if pkts != sent {
		t.Fatalf("Open vSwitch reported %d packets of %d", pkts, sent)
	}

	// What Open vSwitch counted per flow matches the frames sent: the
	// upcalled first packet may be reported in a record of its own.
	for _, f := range flows {
		var pkts, bytes uint64
		var flags uint8
		for _, m := range ovs {
			for _, r := range m.Records {
				if r.Input != f.k.InPort || r.DstAddr != netflowlegacy.IPAddress(binary.BigEndian.Uint32(f.k.Dst[:])) {
					continue
				}
				pkts += uint64(r.DPkts)
				bytes += uint64(r.DOctets)
				flags |= r.TCPFlags
				if r.Output != OutputFlood {
					t.Errorf("flow %+v: output %#x, want NF_OUT_FLOOD", f.k, r.Output)
				}
			}
		}
		var want uint8
		for _, fl := range f.flags {
			want |= fl
		}
		n := uint64(len(f.flags))
		if pkts != n || bytes != n*uint64(len(ipv4Frame(f.k, 0))) || flags != want {
			t.Errorf("flow %+v: %d packets %d bytes flags %#x", f.k, pkts, bytes, flags)
		}
	}

	// Replaying the same statistics, message by message, gives the same
	// messages.
	g := exporttest.NewCollector(t)
	e, err := New(Config{Targets: []string{g.Addr()}, EngineType: 3, EngineID: 5, ActiveTimeout: time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	now := time.Now()
	for _, m := range ovs {
		for _, r := range m.Records {
			for _, f := range flows {
				if r.Input == f.k.InPort && r.DstAddr == netflowlegacy.IPAddress(binary.BigEndian.Uint32(f.k.Dst[:])) {
					e.Account(f.k, r.Output, uint64(r.DPkts), uint64(r.DOctets), r.TCPFlags, now)
					e.Expire(f.k)
				}
			}
		}
		e.Run()
	}
	gotMsgs := g.Wait(t, len(ovs))
	for i, want := range ovs {
		got := decodeV5(t, gotMsgs[i])
		if got.Count != want.Count || got.EngineType != want.EngineType || got.EngineId != want.EngineId ||
			got.FlowSequence != want.FlowSequence || got.SamplingInterval != want.SamplingInterval {
			t.Errorf("message %d: header %+v, Open vSwitch %+v", i, got, want)
		}
		for j, w := range want.Records {
			r := got.Records[j]
			r.First, r.Last, w.First, w.Last = 0, 0, 0, 0
			if r != w {
				t.Errorf("message %d record %d:\n got %+v\nwant %+v", i, j, r, w)
			}
		}
	}
}
