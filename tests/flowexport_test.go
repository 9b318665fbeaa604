package tests

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netsampler/goflow2/v2/decoders/netflow"
	"github.com/netsampler/goflow2/v2/decoders/netflowlegacy"
	"github.com/netsampler/goflow2/v2/decoders/sflow"

	"github.com/gvs-project/gvs/internal/nstest"
)

// collector is a loopback UDP socket that keeps every datagram it gets.
type collector struct {
	conn *net.UDPConn
	mu   sync.Mutex
	msgs [][]byte
}

func newCollector(t *testing.T) *collector {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadBuffer(4 << 20)
	c := &collector{conn: conn}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 65536)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			c.mu.Lock()
			c.msgs = append(c.msgs, bytes.Clone(buf[:n]))
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() { conn.Close(); <-done })
	return c
}

func (c *collector) target() string { return c.conn.LocalAddr().String() }

func (c *collector) snapshot() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.msgs...)
}

// flowPort is a namespace with one veth end in it; the other end, Host,
// is a gvs system port.
type flowPort struct {
	ns, ip, host string
	ifindex      uint32
}

func flowVethPort(t *testing.T, vsctl func(...string) string, ip string, ofport int) flowPort {
	t.Helper()
	ns := nstest.Netns(t)
	a, b := nstest.Veth(t)
	nstest.Run(t, "ip", "link", "set", b, "netns", ns)
	ex := func(args ...string) { nstest.Run(t, append([]string{"ip", "netns", "exec", ns}, args...)...) }
	ex("python3", "-c", ethtoolOff, b)
	ex("ip", "addr", "add", ip+"/24", "dev", b)
	ex("ip", "link", "set", b, "up")
	vsctl("add-port", "br0", a, "--", "set", "interface", a, fmt.Sprintf("ofport_request=%d", ofport))
	ifc, err := net.InterfaceByName(a)
	if err != nil {
		t.Fatal(err)
	}
	return flowPort{ns: ns, ip: ip, host: a, ifindex: uint32(ifc.Index)}
}

// The traffic: nUDP datagrams of udpPayload bytes from 10.31.0.1:40031 to
// 10.31.0.2:9031.
const (
	nUDP       = 300
	udpPayload = 100
	udpIPLen   = 20 + 8 + udpPayload
	udpFrame   = 14 + udpIPLen
	udpSrcPort = 40031
	udpDstPort = 9031
)

// TestFlowExportToGoflow2 configures NetFlow, per-bridge IPFIX, per-flow
// IPFIX (a Flow_Sample_Collector_Set and an OpenFlow sample action) and
// sFlow with Debian's ovs-vsctl exactly as on Open vSwitch, sends a known
// UDP stream between two namespaces through gvs system ports, and decodes
// what reaches loopback collectors with goflow2's decoders.
func TestFlowExportToGoflow2(t *testing.T) {
	parallelHolding(t, &br0Devices)
	env, vsctl := secureBridge(t)
	a := flowVethPort(t, vsctl, "10.31.0.1", 1)
	b := flowVethPort(t, vsctl, "10.31.0.2", 2)
	for _, f := range []string{
		"priority=100,arp,actions=NORMAL",
		"priority=50,ip,in_port=1,actions=sample(probability=65535,collector_set_id=5,obs_domain_id=11,obs_point_id=12),output:2",
		"priority=50,ip,in_port=2,actions=output:1",
	} {
		run(t, env, "ovs-ofctl", "add-flow", "br0", f)
	}
	nfC, ipC, setC, sfC := newCollector(t), newCollector(t), newCollector(t), newCollector(t)
	vsctl("--", "set", "Bridge", "br0", "netflow=@nf",
		"--", "--id=@nf", "create", "NetFlow", fmt.Sprintf("targets=%q", nfC.target()), "active_timeout=60")
	vsctl("--", "set", "Bridge", "br0", "ipfix=@i",
		"--", "--id=@i", "create", "IPFIX", fmt.Sprintf("targets=%q", ipC.target()), "sampling=1", "obs_domain_id=7", "obs_point_id=9")
	vsctl("--", "--id=@br", "get", "Bridge", "br0",
		"--", "--id=@fi", "create", "IPFIX", fmt.Sprintf("targets=%q", setC.target()),
		"--", "create", "Flow_Sample_Collector_Set", "id=5", "bridge=@br", "ipfix=@fi")
	vsctl("--", "set", "Bridge", "br0", "sflow=@s",
		"--", "--id=@s", "create", "sFlow", "agent=lo", fmt.Sprintf("targets=%q", sfC.target()), "sampling=2", "polling=1", "header=128")

	// ovs-vsctl waited for each change to apply (cur_cfg).
	out := nstest.InNetns(t, a.ns, "python3", "-c", fmt.Sprintf(`
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('10.31.0.1', %d))
s.sendto(b'w', ('10.31.0.2', 1))  # resolves ARP first; port 1 differs from the measured flow
time.sleep(0.3)
for i in range(%d):
    s.sendto(b'x' * %d, ('10.31.0.2', %d))
    time.sleep(0.002)
print('sent')`, udpSrcPort, nUDP, udpPayload, udpDstPort))
	if strings.TrimSpace(out) != "sent" {
		t.Fatalf("sender: %s", out)
	}

	dump := run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/dump-flows")
	t.Run("DumpFlowsShowsOpenVSwitchSamplingActions", func(t *testing.T) {
		for _, want := range []string{
			fmt.Sprintf("sample(sample=50.0%%,actions(userspace(pid=0,sFlow(vid=0,pcp=0,output=%d),actions)))", b.ifindex),
			"userspace(pid=0,ipfix(output_port=4294967295))",
			"userspace(pid=0,flow_sample(probability=65535,collector_set_id=5,obs_domain_id=11,obs_point_id=12,output_port=4294967295))",
			"ipv4(src=10.31.0.1,dst=10.31.0.2,proto=17,tos=0/0xfc,frag=no),udp(src=40031,dst=9031)",
		} {
			if !strings.Contains(dump, want) {
				t.Errorf("dpctl/dump-flows lacks %s:\n%s", want, dump)
			}
		}
	})

	t.Run("IPFIXPerBridge", func(t *testing.T) {
		var recs []ipfixRecord
		var pr problems
		waitDecoded(t, "per-bridge IPFIX records", func() bool {
			pr = nil
			recs = decodeIPFIX(ipC.snapshot(), 7, &pr)
			return countIPFIX(recs, a, b, false) >= nUDP && countIPFIX(recs, a, b, true) >= nUDP
		}, func() string { return fmt.Sprintf("%d records, problems %q", len(recs), pr) })
		pr.report(t)
		checkIPFIX(t, recs, a, b, 9)
		// ovs-ofctl dump-ipfix-bridge reads the exporter's counters.
		out := run(t, env, "ovs-ofctl", "dump-ipfix-bridge", "br0")
		if n := ipfixCounter(t, out, "sampled pkts"); n < 2*nUDP {
			t.Errorf("dump-ipfix-bridge: sampled pkts=%d, want at least %d:\n%s", n, 2*nUDP, out)
		}
		if n := ipfixCounter(t, out, "tx pkts"); n == 0 {
			t.Errorf("dump-ipfix-bridge: no tx pkts:\n%s", out)
		}
	})
	t.Run("IPFIXPerFlow", func(t *testing.T) {
		var recs []ipfixRecord
		var pr problems
		waitDecoded(t, "per-flow IPFIX records", func() bool {
			pr = nil
			recs = decodeIPFIX(setC.snapshot(), 11, &pr)
			return countIPFIX(recs, a, b, false) >= nUDP
		}, func() string { return fmt.Sprintf("%d records, problems %q", len(recs), pr) })
		pr.report(t)
		checkIPFIX(t, recs, a, b, 12)
		if n := countIPFIX(recs, a, b, true); n != 0 {
			t.Errorf("%d egress records from an ingress sample action", n)
		}
		out := run(t, env, "ovs-ofctl", "dump-ipfix-flow", "br0")
		if !strings.Contains(out, "1 ids") || !strings.Contains(out, "id   5: ") {
			t.Errorf("dump-ipfix-flow does not list collector set 5:\n%s", out)
		}
		if n := ipfixCounter(t, out, "sampled pkts"); n < nUDP {
			t.Errorf("dump-ipfix-flow: sampled pkts=%d, want at least %d:\n%s", n, nUDP, out)
		}
	})
	t.Run("SFlow", func(t *testing.T) {
		waitDecoded(t, "sFlow counter samples", func() bool {
			return sflowCounterSeen(sfC.snapshot(), a.ifindex) && sflowCounterSeen(sfC.snapshot(), b.ifindex)
		}, func() string { return fmt.Sprintf("%d datagrams", len(sfC.snapshot())) })
		checkSFlow(t, sfC.snapshot(), a, b)
	})
	t.Run("NetFlow", func(t *testing.T) {
		// The NetFlow flow expires when its megaflow goes (as in Open
		// vSwitch, changing the OpenFlow flow only modifies the megaflow
		// in place): deleting the datapath flows makes the revalidator
		// forget them within two rounds. Their statistics were pushed
		// while the IPFIX and sFlow checks ran.
		run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "revalidator/wait")
		run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/del-flows")
		var recs []netflowlegacy.RecordsNetFlowV5
		var pr problems
		waitDecoded(t, "the NetFlow record", func() bool {
			pr = nil
			recs = decodeNetFlow(nfC.snapshot(), &pr)
			var pk uint32
			for _, r := range recs {
				if isUDPFlow(r, a, b) {
					pk += r.DPkts
				}
			}
			return pk >= nUDP
		}, func() string { return fmt.Sprintf("%+v, problems %q", recs, pr) })
		pr.report(t)
		var pk, oct uint32
		for _, r := range recs {
			if !isUDPFlow(r, a, b) {
				continue
			}
			pk += r.DPkts
			oct += r.DOctets
			if r.Input != 1 || r.Output != 2 || r.Tos != 0 {
				t.Errorf("record input %d output %d tos %d, want 1, 2, 0", r.Input, r.Output, r.Tos)
			}
			if r.Last < r.First {
				t.Errorf("record last %d before first %d", r.Last, r.First)
			}
		}
		if pk != nUDP || oct != nUDP*udpFrame {
			t.Errorf("NetFlow counted %d packets, %d bytes; want %d, %d", pk, oct, nUDP, nUDP*udpFrame)
		}
	})
	t.Run("Reconfigure", func(t *testing.T) {
		// A target without a port is refused (NetFlow has no default
		// port) and logged; the bridge keeps working.
		nf := strings.TrimSpace(vsctl("--bare", "--columns=_uuid", "list", "NetFlow"))
		vsctl("set", "NetFlow", nf, `targets="127.0.0.1"`)
		logFile := ""
		for _, e := range env {
			if dir, ok := strings.CutPrefix(e, "OVS_LOGDIR="); ok {
				logFile = dir + "/gvs-vswitchd.log"
			}
		}
		waitDecoded(t, "the bad NetFlow target in the log", func() bool {
			b, _ := os.ReadFile(logFile)
			return strings.Contains(string(b), `bridge br0: netflow: collector "127.0.0.1"`)
		}, func() string { b, _ := os.ReadFile(logFile); return string(b) })
		// Everything off: new megaflows have no sampling actions and no
		// NetFlow fields in their masks.
		vsctl("clear", "Bridge", "br0", "netflow", "sflow", "ipfix", "--", "--all", "destroy", "Flow_Sample_Collector_Set")
		nstest.InNetns(t, a.ns, "python3", "-c", fmt.Sprintf(`
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('10.31.0.1', %d))
s.sendto(b'y', ('10.31.0.2', %d))`, udpSrcPort+1, udpDstPort))
		var dump string
		waitDecoded(t, "the megaflow without sampling", func() bool {
			dump = run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/dump-flows")
			return strings.Contains(dump, "in_port(") && strings.Contains(dump, "eth_type(0x0800)")
		}, func() string { return dump })
		if strings.Contains(dump, "userspace(") || strings.Contains(dump, "tos=0/0xfc") {
			t.Errorf("flow export off, yet megaflows sample or match NetFlow fields:\n%s", dump)
		}
	})
}

// problems collects what a decoder found wrong; reported once at the
// end, as the decoders run on every poll.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

func (p problems) report(t *testing.T) {
	t.Helper()
	for _, s := range p {
		t.Error(s)
	}
}

// waitDecoded polls cond every 100 ms for up to 10 s; on a timeout it
// fails with what cond last saw.
func waitDecoded(t *testing.T, what string, cond func() bool, saw func() string) {
	t.Helper()
	end := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s; decoded:\n%s", what, saw())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// decodeNetFlow decodes NetFlow v5 datagrams, checking that the flow
// sequence numbers continue from one datagram to the next. Open vSwitch
// puts the number of the datagram's last record there (netflow_cnt,
// counted from 0), so each datagram's number is the previous one plus
// its own record count.
func decodeNetFlow(msgs [][]byte, pr *problems) []netflowlegacy.RecordsNetFlowV5 {
	var recs []netflowlegacy.RecordsNetFlowV5
	var next uint32
	for i, m := range msgs {
		var p netflowlegacy.PacketNetFlowV5
		if err := netflowlegacy.DecodeMessageVersion(bytes.NewBuffer(m), &p); err != nil {
			pr.add("NetFlow datagram %d: %v", i, err)
			continue
		}
		if p.Version != 5 || int(p.Count) != len(p.Records) {
			pr.add("NetFlow datagram %d: version %d count %d records %d", i, p.Version, p.Count, len(p.Records))
		}
		// No engine ids configured: those Open vSwitch's userspace
		// datapath ("ovs-netdev") reports.
		if p.EngineType != 47 || p.EngineId != 209 {
			pr.add("NetFlow datagram %d: engine type %d id %d, want 47 209", i, p.EngineType, p.EngineId)
		}
		if want := next + uint32(p.Count) - 1; p.FlowSequence != want {
			pr.add("NetFlow datagram %d: flow sequence %d, want %d", i, p.FlowSequence, want)
		}
		next = p.FlowSequence + 1
		recs = append(recs, p.Records...)
	}
	return recs
}

func ip4(s string) uint32 {
	a := netip.MustParseAddr(s).As4()
	return binary.BigEndian.Uint32(a[:])
}

func isUDPFlow(r netflowlegacy.RecordsNetFlowV5, a, b flowPort) bool {
	return uint32(r.SrcAddr) == ip4(a.ip) && uint32(r.DstAddr) == ip4(b.ip) && r.Proto == 17 &&
		r.SrcPort == udpSrcPort && r.DstPort == udpDstPort
}

// ipfixRecord is one IPFIX data record by information element (the last
// value of an element that appears twice, except interface names, kept
// in order).
type ipfixRecord struct {
	domain uint32
	ie     map[uint16][]byte
	names  []string
}

func (r ipfixRecord) uint(id uint16) uint64 {
	var v uint64
	for _, c := range r.ie[id] {
		v = v<<8 | uint64(c)
	}
	return v
}

// decodeIPFIX decodes IPFIX messages with one template system, as a
// collector does: templates must come before the data sets that use
// them, every message must be version 10 for obs domain domain, and the
// sequence number must count the data records of the messages before.
func decodeIPFIX(msgs [][]byte, domain uint32, pr *problems) []ipfixRecord {
	ts := netflow.CreateTemplateSystem()
	var recs []ipfixRecord
	var next uint32
	seen := false
	for i, m := range msgs {
		var p netflow.IPFIXPacket
		var p9 netflow.NFv9Packet
		if err := netflow.DecodeMessageVersion(bytes.NewBuffer(m), ts, &p9, &p); err != nil {
			pr.add("IPFIX message %d: %v", i, err)
			continue
		}
		if p.Version != 10 || int(p.Length) != len(m) {
			pr.add("IPFIX message %d: version %d length %d of %d", i, p.Version, p.Length, len(m))
		}
		if seen && p.SequenceNumber != next {
			pr.add("IPFIX message %d: sequence %d, want %d", i, p.SequenceNumber, next)
		}
		seen = true
		next = p.SequenceNumber
		for _, fs := range p.FlowSets {
			switch s := fs.(type) {
			case netflow.RawFlowSet:
				pr.add("IPFIX message %d: data set %d arrived before its template", i, s.Id)
			case netflow.DataFlowSet:
				next += uint32(len(s.Records))
				if p.ObservationDomainId != domain {
					pr.add("IPFIX message %d: observation domain %d, want %d", i, p.ObservationDomainId, domain)
				}
				for _, dr := range s.Records {
					r := ipfixRecord{domain: p.ObservationDomainId, ie: map[uint16][]byte{}}
					for _, f := range dr.Values {
						v, _ := f.Value.([]byte)
						if f.PenProvided {
							continue
						}
						if f.Type == 82 {
							r.names = append(r.names, string(v))
						}
						r.ie[f.Type] = v
					}
					recs = append(recs, r)
				}
			case netflow.OptionsDataFlowSet:
				next += uint32(len(s.Records))
			}
		}
	}
	return recs
}

// isUDPRecord reports whether r is the measured UDP flow in the given
// direction (flowDirection 61: 0 ingress, 1 egress).
func isUDPRecord(r ipfixRecord, a, b flowPort, egress bool) bool {
	dir := uint64(0)
	if egress {
		dir = 1
	}
	return r.uint(4) == 17 && r.uint(8) == uint64(ip4(a.ip)) && r.uint(12) == uint64(ip4(b.ip)) &&
		r.uint(7) == udpSrcPort && r.uint(11) == udpDstPort && r.uint(61) == dir
}

func countIPFIX(recs []ipfixRecord, a, b flowPort, egress bool) uint64 {
	var n uint64
	for _, r := range recs {
		if isUDPRecord(r, a, b, egress) {
			n += r.uint(2)
		}
	}
	return n
}

// checkIPFIX checks the measured flow's records: exact packet and octet
// counts (sampling 1), interfaces, names and the observation point.
func checkIPFIX(t *testing.T, recs []ipfixRecord, a, b flowPort, point uint64) {
	t.Helper()
	for _, egress := range []bool{false, true} {
		var pk, oct, l2 uint64
		n := 0
		for _, r := range recs {
			if !isUDPRecord(r, a, b, egress) {
				continue
			}
			n++
			pk += r.uint(2)
			oct += r.uint(1)
			l2 += r.uint(352)
			if n > 1 {
				continue
			}
			if got := r.uint(138); got != point {
				t.Errorf("egress=%v: observationPointId %d, want %d", egress, got, point)
			}
			if got := r.uint(10); got != uint64(a.ifindex) {
				t.Errorf("egress=%v: ingressInterface %d, want %d", egress, got, a.ifindex)
			}
			if len(r.names) == 0 || r.names[0] != a.host {
				t.Errorf("egress=%v: interface names %q, want %s first", egress, r.names, a.host)
			}
			if egress {
				if got := r.uint(14); got != uint64(b.ifindex) {
					t.Errorf("egressInterface %d, want %d", got, b.ifindex)
				}
				if len(r.names) != 2 || r.names[1] != b.host {
					t.Errorf("egress interface names %q, want [%s %s]", r.names, a.host, b.host)
				}
			}
		}
		if n == 0 {
			if !egress || point == 9 {
				t.Errorf("egress=%v: no record of the UDP flow", egress)
			}
			continue
		}
		if pk != nUDP || oct != nUDP*udpIPLen || l2 != nUDP*udpFrame {
			t.Errorf("egress=%v: %d packets, %d octets, %d layer-2 octets; want %d, %d, %d",
				egress, pk, oct, l2, nUDP, nUDP*udpIPLen, nUDP*udpFrame)
		}
	}
}

// decodeSFlow decodes sFlow v5 datagrams, checking the datagram sequence
// numbers are continuous.
func decodeSFlow(msgs [][]byte, pr *problems) []sflow.Packet {
	var out []sflow.Packet
	for i, m := range msgs {
		var p sflow.Packet
		if err := sflow.DecodeMessageVersion(bytes.NewBuffer(m), &p); err != nil {
			pr.add("sFlow datagram %d: %v", i, err)
			continue
		}
		if len(out) > 0 && p.SequenceNumber != out[len(out)-1].SequenceNumber+1 {
			pr.add("sFlow datagram %d: sequence %d after %d", i, p.SequenceNumber, out[len(out)-1].SequenceNumber)
		}
		out = append(out, p)
	}
	return out
}

func sflowCounterSeen(msgs [][]byte, ifindex uint32) bool {
	var pr problems
	for _, p := range decodeSFlow(msgs, &pr) {
		for _, s := range p.Samples {
			cs, ok := s.(sflow.CounterSample)
			if !ok {
				continue
			}
			for _, r := range cs.Records {
				if ic, ok := r.Data.(sflow.IfCounters); ok && ic.IfIndex == ifindex {
					return true
				}
			}
		}
	}
	return false
}

// checkSFlow checks the flow samples of the measured flow: their number
// is within five standard deviations of nUDP/2 (1-in-2 sampling), each
// carries the frame's header, the input and output ifindexes, and the
// flow samples' sequence numbers are continuous.
func checkSFlow(t *testing.T, msgs [][]byte, a, b flowPort) {
	t.Helper()
	var pr problems
	pkts := decodeSFlow(msgs, &pr)
	pr.report(t)
	if len(pkts) == 0 {
		t.Fatal("no sFlow datagram")
	}
	if got, _ := netip.AddrFromSlice(pkts[0].AgentIP); got != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("agent %s, want 127.0.0.1 (agent=lo)", got)
	}
	var samples int
	var lastSeq uint32
	seqSeen := false
	var counterIf = map[uint32]sflow.IfCounters{}
	for _, p := range pkts {
		for _, s := range p.Samples {
			switch fs := s.(type) {
			case sflow.FlowSample:
				if seqSeen && fs.Header.SampleSequenceNumber != lastSeq+1 {
					t.Errorf("flow sample sequence %d after %d", fs.Header.SampleSequenceNumber, lastSeq)
				}
				seqSeen, lastSeq = true, fs.Header.SampleSequenceNumber
				if fs.SamplingRate != 2 {
					t.Errorf("sampling rate %d, want 2", fs.SamplingRate)
				}
				for _, r := range fs.Records {
					h, ok := r.Data.(sflow.SampledHeader)
					if !ok || !isMeasuredFrame(h.HeaderData, a, b) {
						continue
					}
					samples++
					if fs.Input != a.ifindex || fs.Output != b.ifindex {
						t.Errorf("flow sample input %d output %d, want %d %d", fs.Input, fs.Output, a.ifindex, b.ifindex)
					}
					if h.FrameLength != udpFrame+4 {
						t.Errorf("sampled frame length %d, want %d (with FCS)", h.FrameLength, udpFrame+4)
					}
				}
			case sflow.CounterSample:
				for _, r := range fs.Records {
					if ic, ok := r.Data.(sflow.IfCounters); ok {
						counterIf[ic.IfIndex] = ic
					}
				}
			}
		}
	}
	// 1-in-2 sampling of nUDP packets: mean nUDP/2, sd sqrt(nUDP)/2.
	lo, hi := nUDP/2-5*9, nUDP/2+5*9
	if samples < lo || samples > hi {
		t.Errorf("%d flow samples of the UDP flow, want %d..%d", samples, lo, hi)
	}
	ca, ok := counterIf[a.ifindex]
	if !ok {
		t.Fatalf("no counter sample for %s (ifindex %d)", a.host, a.ifindex)
	}
	if ca.IfInUcastPkts < nUDP {
		t.Errorf("%s counters: %d packets in, want at least %d", a.host, ca.IfInUcastPkts, nUDP)
	}
}

// isMeasuredFrame reports whether a sampled header is the measured UDP
// flow's frame (Ethernet, IPv4, UDP, no VLAN).
func isMeasuredFrame(h []byte, a, b flowPort) bool {
	if len(h) < 14+20+8 || binary.BigEndian.Uint16(h[12:]) != 0x0800 {
		return false
	}
	ip := h[14:]
	ihl := int(ip[0]&0xf) * 4
	if ip[9] != 17 || len(ip) < ihl+8 {
		return false
	}
	return binary.BigEndian.Uint32(ip[12:]) == ip4(a.ip) && binary.BigEndian.Uint32(ip[16:]) == ip4(b.ip) &&
		binary.BigEndian.Uint16(ip[ihl:]) == udpSrcPort && binary.BigEndian.Uint16(ip[ihl+2:]) == udpDstPort
}

// ipfixCounter reads "NAME=N" from ovs-ofctl's dump-ipfix-* output.
func ipfixCounter(t *testing.T, out, name string) int {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(name) + `=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %s= in:\n%s", name, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
