package ipfix

import (
	"fmt"
	"github.com/gvs-project/gvs/ofproto/flowexport/internal/exporttest"
	"net/netip"
	"slices"
	"testing"
	"time"

	gfnetflow "github.com/netsampler/goflow2/v2/decoders/netflow"
)

// TestSameTemplatesAndRecordsAsOpenVSwitch configures bridge IPFIX on a
// real ovs-vswitchd (dummy datapath), injects frames, and checks that
// this package, fed the same samples, announces the same templates (IDs,
// field lists, split into messages) and sends the same record values,
// flow start/end deltas aside.
func TestSameTemplatesAndRecordsAsOpenVSwitch(t *testing.T) {
	exporttest.RequireOpenVSwitch(t, "ofproto/flowexport/ipfix")
	o := exporttest.StartOpenVSwitch(t)
	c := exporttest.NewCollector(t)
	o.Vsctl("--", "set", "Bridge", "br0", "ipfix=@i", "--", "--id=@i", "create", "IPFIX",
		fmt.Sprintf("targets=%q", c.Addr()), "obs_domain_id=7", "obs_point_id=9", "sampling=1")
	frames := [][]byte{
		frame{src: macA, dst: macB, ip: netip.MustParseAddr("10.0.0.1"), ipDst: netip.MustParseAddr("10.0.0.2"),
			proto: 6, tos: 0x28, ttl: 64, sport: 40000, dport: 80, tcpFlags: 0x12, payload: 10}.bytes(),
		frame{src: macB, dst: macA, vlan: 3<<13 | 10, ip: netip.MustParseAddr("2001:db8::2"), ipDst: netip.MustParseAddr("2001:db8::1"),
			proto: 17, ttl: 7, sport: 53, dport: 3333, flowLabel: 0xabcde, payload: 20}.bytes(),
		frame{src: macA, dst: [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, ethType: 0x0806}.bytes(),
	}
	ports := map[string]uint32{"p1": 1001, "p2": 1002}
	inject := []string{"p1", "p2", "p1"}
	for i, f := range frames {
		o.Receive(inject[i], f)
	}
	// Wait until Open vSwitch has sent a data record for every frame in
	// each direction it samples, then decode everything.
	var ovs *decoded
	deadline := time.Now().Add(10 * time.Second)
	for {
		msgs := c.Msgs()
		ovs = decodeAll(t, msgs)
		if len(ovs.records) >= len(frames) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	ovsMsgs := c.Msgs()
	ovs = decodeAll(t, ovsMsgs)
	if len(ovs.records) < len(frames) {
		t.Fatalf("Open vSwitch sent %d records for %d frames", len(ovs.records), len(frames))
	}

	// Feed the same samples, in the order Open vSwitch exported them, to
	// this package.
	g := exporttest.NewCollector(t)
	e, err := New(Config{Targets: []string{g.Addr()}, ObsDomainID: 7, ObsPointID: 9}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, r := range ovs.records {
		var f []byte
		src := r.vals[idSrcMAC][0]
		for _, fr := range frames {
			if string(fr[6:12]) == string(src) && fr[0] == r.vals[idDstMAC][0][0] {
				f = fr
			}
		}
		s := &Sample{Packet: f, InName: r.s(idIfName, 0), InPort: ports[r.s(idIfName, 0)], PacketDeltaCount: r.u(idPacketDelta)}
		if r.u(idDirection) == 1 {
			s.Egress = true
			s.OutName = r.s(idIfName, 1)
			s.OutPort = ports[s.OutName]
		}
		s.Dropped = r.u(idDroppedPkts) != 0
		e.Sample(s)
	}
	gvs := decodeAll(t, g.Wait(t, len(ovsMsgs)))

	// Templates: same IDs, same fields, same split into messages.
	if len(gvs.templates) != len(ovs.templates) {
		t.Errorf("%d templates, Open vSwitch %d", len(gvs.templates), len(ovs.templates))
	}
	for id, want := range ovs.templates {
		if got := gvs.templates[id]; !slices.Equal(got, want) {
			t.Errorf("template %d:\n got %v\nwant %v", id, got, want)
		}
	}
	if got, want := templateMessages(gvs), templateMessages(ovs); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("template messages:\n got %v\nwant %v", got, want)
	}

	// Records: same template, domain, sequence and values.
	if len(gvs.records) != len(ovs.records) {
		t.Fatalf("%d records, Open vSwitch %d", len(gvs.records), len(ovs.records))
	}
	for i, w := range ovs.records {
		r := gvs.records[i]
		if r.template != w.template || r.domain != w.domain || r.seq != w.seq {
			t.Errorf("record %d: template %d domain %d seq %d, Open vSwitch %d %d %d", i, r.template, r.domain, r.seq, w.template, w.domain, w.seq)
		}
		for id, wv := range w.vals {
			if id == idStartDelta || id == idEndDelta {
				continue
			}
			if !slices.EqualFunc(r.vals[id], wv, func(a, b []byte) bool { return string(a) == string(b) }) {
				t.Errorf("record %d (template %d): element %d = %x, Open vSwitch %x", i, w.template, id, r.vals[id], wv)
			}
		}
	}
	// The exporting-process statistics record.
	if len(gvs.options) != len(ovs.options) {
		t.Errorf("%d statistics records, Open vSwitch %d", len(gvs.options), len(ovs.options))
	}
	for i := range min(len(gvs.options), len(ovs.options)) {
		if got, want := fmt.Sprint(gvs.options[i]), fmt.Sprint(ovs.options[i]); got != want {
			t.Errorf("statistics record %d: %s, Open vSwitch %s", i, got, want)
		}
	}
	n := 0
	for _, r := range ovs.records {
		n += len(r.vals)
	}
	t.Logf("compared %d templates, %d records with %d elements (templates %v), %d statistics records",
		len(ovs.templates), len(ovs.records), n, recordTemplates(ovs), len(ovs.options))
}

// templateMessages lists the template IDs of each template message.
func templateMessages(d *decoded) [][]uint16 {
	var out [][]uint16
	for _, m := range d.msgs {
		var ids []uint16
		for _, fs := range m.FlowSets {
			switch fs := fs.(type) {
			case gfnetflow.TemplateFlowSet:
				for _, r := range fs.Records {
					ids = append(ids, r.TemplateId)
				}
			case gfnetflow.IPFIXOptionsTemplateFlowSet:
				for _, r := range fs.Records {
					ids = append(ids, r.TemplateId)
				}
			}
		}
		if ids != nil {
			out = append(out, ids)
		}
	}
	return out
}

func recordTemplates(d *decoded) []uint16 {
	var ids []uint16
	for _, r := range d.records {
		ids = append(ids, r.template)
	}
	return ids
}
