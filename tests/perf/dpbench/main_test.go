package main

import (
	"encoding/binary"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/datapath/packet"
)

func TestParseJobsExpandsDefaultQuickAndExplicitSizes(t *testing.T) {
	jobs, err := parseJobs("output,ct:1/10000", false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, j.p.name+":"+strconv.Itoa(j.n))
	}
	if want := []string{"output:1", "ct:1", "ct:10000"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	jobs, err = parseJobs("normal", false)
	if err != nil || len(jobs) != 3 || jobs[2].n != 1000000 {
		t.Fatalf("normal's default sizes: %v %v", jobs, err)
	}
	jobs, err = parseJobs("normal,ct", true)
	if err != nil || len(jobs) != 2 || jobs[0].n != 1 || jobs[1].n != 1 {
		t.Fatalf("-quick sizes: %v %v", jobs, err)
	}
	for _, bad := range []string{"", "nosuch", "ct:0", "ct:x", "ct:99999999"} {
		if _, err := parseJobs(bad, false); err == nil {
			t.Errorf("parseJobs(%q) accepted", bad)
		}
	}
}

func TestCPUTicksAddsUtimeAndStimeEvenWithParenthesesInTheName(t *testing.T) {
	// Fields 14 and 15 (utime, stime) are 120 and 34.
	line := "4242 (gvs (x) vswitchd) S 1 4242 4242 0 -1 4194560 1234 0 0 0 120 34 0 0 20 0 7 0 1000 100000 500\n"
	got, err := cpuTicks(line)
	if err != nil || got != 154 {
		t.Fatalf("got %d, %v; want 154", got, err)
	}
	if _, err := cpuTicks("4242 (x) S 1 2"); err == nil {
		t.Fatal("short line accepted")
	}
	if _, err := cpuTicks("no parenthesis"); err == nil {
		t.Fatal("line without a command name accepted")
	}
}

func TestUDPFramesAreValidAndDistinctPerFlow(t *testing.T) {
	seen := map[string]int{}
	for i := range 120000 {
		f := udpFrame(srcMAC(0), i)
		if len(f) != 60 {
			t.Fatalf("frame %d: %d bytes", i, len(f))
		}
		if string(f[:6]) != dstMAC || binary.BigEndian.Uint16(f[12:]) != 0x0800 {
			t.Fatalf("frame %d: bad Ethernet header % x", i, f[:14])
		}
		if packet.Checksum(f[14:34]) != 0 {
			t.Fatalf("frame %d: bad IPv4 header checksum", i)
		}
		k := string(f[26:38]) // addresses and ports
		if j, dup := seen[k]; dup {
			t.Fatalf("frames %d and %d share a 5-tuple", j, i)
		}
		seen[k] = i
	}
}

func TestSourceMACsAreDistinctLocallyAdministeredUnicast(t *testing.T) {
	seen := map[[6]byte]bool{}
	for _, i := range []int{0, 1, 255, 256, 65535, 65536, 999999} {
		m := srcMAC(i)
		if m[0]&1 != 0 || m[0]&2 == 0 {
			t.Fatalf("srcMAC(%d) = % x: not locally administered unicast", i, m)
		}
		if seen[m] {
			t.Fatalf("srcMAC(%d) repeats", i)
		}
		seen[m] = true
		if f := udpFrame(m, 0); string(f[6:12]) != string(m[:]) {
			t.Fatalf("frame's source is % x, want % x", f[6:12], m)
		}
	}
}

func TestVsctlArgsPinTheCoreAndNumberThePorts(t *testing.T) {
	p, _ := pipelineByName("normal")
	got := strings.Join(vsctlArgs(1, p, "system"), " ")
	for _, want := range []string{
		"set Open_vSwitch . other_config:pmd-cpu-mask=0x2",
		"add-br br0 -- set bridge br0 datapath_type=netdev fail_mode=secure other_config:mac-table-size=2000000",
		"add-port br0 pg -- set interface pg type=system ofport_request=1",
		"add-port br0 ps -- set interface ps type=system ofport_request=2",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("ovs-vsctl arguments %q lack %q", got, want)
		}
	}
}

func TestAFXDPForwardersGetAFXDPPorts(t *testing.T) {
	p, _ := pipelineByName("output")
	got := strings.Join(vsctlArgs(0, p, "afxdp"), " ")
	for _, want := range []string{
		"add-port br0 pg -- set interface pg type=afxdp ofport_request=1",
		"add-port br0 ps -- set interface ps type=afxdp ofport_request=2",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("ovs-vsctl arguments %q lack %q", got, want)
		}
	}
}

func TestAFXDPTableComparesBothSwitchesAndGVSsAFPacketCPU(t *testing.T) {
	p, _ := pipelineByName("output")
	s := summary{job: job{p, 1}, rounds: map[string][]result{
		"ovs-afxdp": {{Mpps: 0.5, NsPerPkt: 2000}, {Mpps: 0.4, NsPerPkt: 2500}},
		"gvs-afxdp": {{Mpps: 1, NsPerPkt: 1000}, {Mpps: 1.2, NsPerPkt: 800}},
		"gvs":       {{Mpps: 0.9, NsPerPkt: 1100}, {Mpps: 0.8, NsPerPkt: 1200}},
	}}
	got := table([]summary{s})
	want := "| output | 1 | 0.400-0.500 | 1.000-1.200 | 0.800-0.900 | 2.00-3.00 (2.50) | 2000-2500 | 800-1000 | 1100-1200 | 1.10-1.50 (1.30) |\n"
	if !strings.HasSuffix(got, want) {
		t.Fatalf("got\n%s\nwant a last row\n%s", got, want)
	}
}

func TestCTPipelineTracksThenCommitsThenOutputs(t *testing.T) {
	p, _ := pipelineByName("ct")
	want := "table=0,in_port=1,ip,actions=ct(table=1,zone=1)\ntable=1,in_port=1,ip,actions=ct(commit,zone=1),output:2\n"
	if got := p.flows(100); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestRatiosArePerRoundAndSkipEmptyRounds(t *testing.T) {
	gvs := []result{{Mpps: 2}, {Mpps: 3}, {Mpps: 1}}
	ovs := []result{{Mpps: 1}, {Mpps: 0}, {Mpps: 0.5}}
	got := ratios(gvs, ovs)
	if !slices.Equal(got, []float64{2, 2}) {
		t.Fatalf("got %v", got)
	}
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Fatalf("median %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Fatalf("median %v", m)
	}
	if s := spread([]float64{1.234, 1.5, 1.3}, 2); s != "1.23-1.50" {
		t.Fatalf("spread %q", s)
	}
	if s := spread([]float64{2.001, 1.999}, 2); s != "2.00" {
		t.Fatalf("spread %q", s)
	}
}

func TestTableHasARowPerJobWithRatiosAndCPU(t *testing.T) {
	p, _ := pipelineByName("ct")
	s := summary{job: job{p, 10000}, rounds: map[string][]result{
		"ovs": {{Mpps: 0.2, NsPerPkt: 5000}, {Mpps: 0.25, NsPerPkt: 4000}},
		"gvs": {{Mpps: 0.4, NsPerPkt: 2500}, {Mpps: 0.55, NsPerPkt: 1800}},
		"raw": {{Mpps: 0.5, NsPerPkt: 2000}, {Mpps: 0.5, NsPerPkt: 2000}},
	}}
	got := table([]summary{s})
	want := "| ct | 10000 | 0.200-0.250 | 0.400-0.550 | 0.500 | 2.00-2.20 (2.10) | 0.80-1.10 (0.95) | 4000-5000 | 1800-2500 | 0.80-1.11 (0.96) |\n"
	if !strings.HasSuffix(got, want) {
		t.Fatalf("got\n%s\nwant a last row\n%s", got, want)
	}
}

func TestOVNFramesGoFromVIF1ToVIF2AcrossTheRouter(t *testing.T) {
	a, b := ovnFrame(0), ovnFrame(70000)
	for _, f := range [][]byte{a, b} {
		if string(f[0:6]) != ovnLRP1MAC || string(f[6:12]) != string(ovnVIF1MAC[:]) {
			t.Fatalf("Ethernet % x, want dst lrp1 and src vif1", f[:12])
		}
		if string(f[26:30]) != string(ovnVIF1IP[:]) || string(f[30:34]) != string(ovnVIF2IP[:]) || f[23] != 17 {
			t.Fatalf("IPv4 % x, want UDP 10.0.1.10 -> 10.0.2.10", f[14:34])
		}
		if packet.Checksum(f[14:34]) != 0 {
			t.Fatal("bad IPv4 header checksum")
		}
	}
	if string(a[34:38]) == string(b[34:38]) {
		t.Fatal("connections 0 and 70000 share their ports")
	}
	// The flow file is the one gen-ovn-flows.sh writes, for ports 1 and 2.
	flows, err := os.ReadFile("ovnflows.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"in_port=1", "in_port=2", "ct(", "00:00:00:00:01:01"} {
		if !strings.Contains(string(flows), want) {
			t.Errorf("ovnflows.txt lacks %q", want)
		}
	}
}

func TestNormalLearnsTheSinkFromAFrameFromTheGeneratorsDestination(t *testing.T) {
	p, _ := pipelineByName("normal")
	if !p.learnSink {
		t.Fatal("NORMAL would flood every frame (to the bridge's own port too)")
	}
	f := learnFrame()
	if string(f[6:12]) != dstMAC || f[0]&1 != 0 || string(f[0:6]) == dstMAC {
		t.Fatalf("learning frame % x: want unicast from the generator's destination", f[:12])
	}
}
