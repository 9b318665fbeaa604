package main

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/datapath/packet"
)

// A pipeline is what one measurement configures on br0 and sends
// through it.
type pipeline struct {
	name  string
	desc  string
	sizes []int // default numbers of flows (source MACs, connections)
	quick []int // -quick's
	// flows returns the OpenFlow flows (ovs-ofctl add-flows syntax).
	flows func(n int) string
	// frame returns the generator's frame i of n (UDP pipelines).
	frame func(i int) []byte
	// bridge is extra `ovs-vsctl set bridge br0` columns; vsctl extra
	// ovs-vsctl commands (each starting with "--").
	bridge []string
	vsctl  []string
	// flowFile: the flows are -ovn-flows, not flows().
	flowFile bool
	// learnSink: before the traffic, the sink sends a frame from the
	// generator's destination address, so that NORMAL forwards to it
	// instead of flooding (to the bridge's own port too).
	learnSink bool
	tcp       bool
	// ofVersion is ovs-ofctl's -O for the flows ("" for its default).
	ofVersion string
}

const (
	portGen, portSink = 1, 2
	dstMAC            = "\x02\x00\x00\x00\x00\x02" // never an interface's: the sink drops early
)

var pipelines = []*pipeline{
	{
		name: "output", desc: "in_port=1,actions=output:2",
		sizes: []int{1}, quick: []int{1},
		flows: func(int) string { return "in_port=1,actions=output:2\n" },
		frame: func(i int) []byte { return udpFrame(srcMAC(0), i) },
	},
	{
		name: "normal", desc: "NORMAL, N source MACs",
		sizes: []int{1, 100000, 1000000}, quick: []int{1},
		flows:     func(int) string { return "actions=NORMAL\n" },
		frame:     func(i int) []byte { return udpFrame(srcMAC(i), 0) },
		bridge:    []string{"other_config:mac-table-size=2000000"},
		learnSink: true,
	},
	{
		name: "ct", desc: "ct(table=1,zone=1) -> ct(commit) -> output, N connections",
		sizes: []int{1, 10000, 100000}, quick: []int{1},
		flows: func(int) string { return ctFlows },
		frame: func(i int) []byte { return udpFrame(srcMAC(0), i) },
	},
	{
		name: "ovn", desc: "br-int from ovn-controller, VIF to VIF across a logical router with ACLs, N connections",
		sizes: []int{1, 10000}, quick: []int{1},
		flowFile: true, ofVersion: "OpenFlow15",
		frame: ovnFrame,
	},
	{
		name: "tcp", desc: "TCP (iperf3), in_port=1<->2",
		sizes: []int{1}, quick: []int{1},
		flows: func(int) string { return "in_port=1,actions=output:2\nin_port=2,actions=output:1\n" },
		tcp:   true,
	},
}

// The OVN topology of gen-ovn-flows.sh: vif1 (port 1) sends to vif2's
// address through the router's port on ls1.
var (
	ovnVIF1MAC = [6]byte{0, 0, 0, 0, 1, 0x10}
	ovnLRP1MAC = "\x00\x00\x00\x00\x01\x01"
	ovnVIF1IP  = [4]byte{10, 0, 1, 10}
	ovnVIF2IP  = [4]byte{10, 0, 2, 10}
)

// ovnFrame is UDP from vif1 to vif2 across the router, connection i
// (the ports carry i).
func ovnFrame(i int) []byte {
	f := udpFrame(ovnVIF1MAC, 0)
	copy(f[0:6], ovnLRP1MAC)
	ip := f[14:]
	copy(ip[12:16], ovnVIF1IP[:])
	copy(ip[16:20], ovnVIF2IP[:])
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:], packet.Checksum(ip[:20]))
	binary.BigEndian.PutUint16(ip[20:], uint16(1024+i%50000))
	binary.BigEndian.PutUint16(ip[22:], uint16(2000+i/50000))
	return f
}

// learnFrame is what the sink sends so that NORMAL learns the
// generator's destination on port 2: from dstMAC to a unicast address
// nobody has.
func learnFrame() []byte {
	f := udpFrame(srcMAC(0), 0)
	copy(f[0:6], "\x02\x00\x00\x00\x00\x09")
	copy(f[6:12], dstMAC)
	return f
}

// ctFlows is the conntrack pipeline of issue 20: every packet goes
// through the tracker twice (a lookup, then a commit).
const ctFlows = `table=0,in_port=1,ip,actions=ct(table=1,zone=1)
table=1,in_port=1,ip,actions=ct(commit,zone=1),output:2
`

func pipelineByName(name string) (*pipeline, error) {
	for _, p := range pipelines {
		if p.name == name {
			return p, nil
		}
	}
	var names []string
	for _, p := range pipelines {
		names = append(names, p.name)
	}
	return nil, fmt.Errorf("unknown pipeline %q (want one of %s)", name, strings.Join(names, ", "))
}

// srcMAC is the generator's source address i: locally administered
// unicast, distinct for i < 2^32.
func srcMAC(i int) [6]byte {
	var m [6]byte
	m[0], m[1] = 0x02, 0x01
	binary.BigEndian.PutUint32(m[2:], uint32(i))
	return m
}

// udpFrame builds a 64-byte IPv4/UDP frame (60 bytes on the wire without
// FCS) from src whose 5-tuple is number i: addresses in 198.18.0.0/15
// (the benchmarking range), ports from i.
func udpFrame(src [6]byte, i int) []byte {
	f := make([]byte, 60)
	copy(f[0:6], dstMAC)
	copy(f[6:12], src[:])
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(ip[2:], 46)
	binary.BigEndian.PutUint32(ip[12:], 0xc6120000|uint32(i>>16&0xff))
	binary.BigEndian.PutUint32(ip[16:], 0xc6130000|uint32(i&0xffff))
	binary.BigEndian.PutUint16(ip[10:], packet.Checksum(ip[:20]))
	binary.BigEndian.PutUint16(ip[20:], uint16(1024+i%50000))
	binary.BigEndian.PutUint16(ip[22:], uint16(2000+i/50000))
	binary.BigEndian.PutUint16(ip[24:], 26)
	return f
}

// A job is one pipeline at one size.
type job struct {
	p *pipeline
	n int
}

// parseJobs reads -pipelines: comma-separated NAME or NAME:N1/N2/...
// (sizes override the pipeline's defaults).
func parseJobs(spec string, quick bool) ([]job, error) {
	var jobs []job
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		name, sizes, hasSizes := strings.Cut(f, ":")
		p, err := pipelineByName(name)
		if err != nil {
			return nil, err
		}
		ns := p.sizes
		if quick {
			ns = p.quick
		}
		if hasSizes {
			ns = nil
			for _, s := range strings.Split(sizes, "/") {
				n, err := strconv.Atoi(s)
				if err != nil || n < 1 || n > 1<<24 {
					return nil, fmt.Errorf("pipeline %s: bad size %q (want 1..16777216)", name, s)
				}
				ns = append(ns, n)
			}
		}
		for _, n := range ns {
			jobs = append(jobs, job{p, n})
		}
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("no pipelines in %q", spec)
	}
	return jobs, nil
}

// cpuTicks reads utime+stime (clock ticks) from the contents of
// /proc/PID/stat. The command name (field 2) may hold spaces and
// parentheses, so fields are counted from the last ')'.
func cpuTicks(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no ')' in /proc stat line %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc stat line %q", stat)
	}
	u, err := strconv.ParseUint(f[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("utime: %w", err)
	}
	s, err := strconv.ParseUint(f[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stime: %w", err)
	}
	return u + s, nil
}
