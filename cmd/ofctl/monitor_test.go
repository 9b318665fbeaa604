package ofctl

import (
	"bufio"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofprint"
)

// Frames whose dissection monitor prints: TCP, UDP, ICMP, ARP and a
// truncated TCP header. Left out, as ofptext's gaps: IPv6 (an exact
// ipv6_label prints as 0/0xfffff, ovs-ofctl prints 0x00000) and VLAN
// tags (ovs-ofctl also prints the empty second slot, vlan_tci1=0x0000).
var monitorFrames = []string{
	"50540000000a5054000000090800450000280000000040067ac00a0000010a00000204d2005000000000000000005002200000000000",
	"505400000001505400000002080045000020000100004011f9b7c0a80001c0a80002d431003500082d6a",
	"5054000000015054000000020800450000540000400040012d4a0a0000010a0000020800f7ff00000000",
	"ffffffffffff5054000000010806000108000604000150540000000 10a000001000000000000 0a000002",
	"50540000000a5054000000090800450000280000000040067ac00a0000010a00000204d20050",
}

func monitorMessages(t testing.TB) [][]byte {
	t.Helper()
	var msgs [][]byte
	add := func(v uint8, m ofp.Message) {
		b, err := ofp.Encode(nil, v, 0, m)
		if err != nil {
			t.Fatalf("encoding %T: %v", m, err)
		}
		msgs = append(msgs, b)
	}
	match := func(kv ...string) mf.Match {
		var m mf.Match
		for i := 0; i+1 < len(kv); i += 2 {
			v, _ := hex.DecodeString(kv[i+1])
			if err := m.SetMasked(mf.ByName(kv[i]), v, nil); err != nil {
				t.Fatal(err)
			}
		}
		return m
	}
	inPort := match("in_port", "0003")
	meta := match("in_port", "0001", "reg0", "00000005", "metadata", "00000000000000ab")
	for _, fh := range monitorFrames {
		pkt, err := hex.DecodeString(strings.ReplaceAll(fh, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		add(1, &ofp.PacketIn{BufferID: ofp.BufferNone, TotalLen: uint16(len(pkt)), Reason: ofp.OFPRNoMatch, Match: inPort, Data: pkt, Cookie: ^uint64(0)})
		add(4, &ofp.PacketIn{Format: ofp.PacketIn2, BufferID: ofp.BufferNone, TotalLen: uint16(len(pkt)) + 10, Reason: ofp.OFPRAction,
			TableID: 3, Cookie: 0x77, Match: meta, Data: pkt, Userdata: []byte{1, 2}})
	}
	pkt, _ := hex.DecodeString(monitorFrames[0])
	out10, _ := ofp.AppendActions(nil, []ofp.Action{{Type: ofp.ActOutput, Port: 2}}, 1)
	out13, _ := ofp.AppendActions(nil, []ofp.Action{{Type: ofp.ActOutput, Port: 0xfffd, MaxLen: 128}}, 4)
	add(1, &ofp.PacketOut{BufferID: ofp.BufferNone, InPort: 1, Match: match("in_port", "0001"), Actions: out10, Data: pkt})
	add(4, &ofp.PacketOut{BufferID: ofp.BufferNone, InPort: 0xfffffffd, Actions: out13, Data: pkt})
	add(1, &ofp.PacketOut{BufferID: ofp.BufferNone, InPort: 0xfffffffe, Match: match("in_port", "fffe")})
	port := ofp.Port{PortNo: 5, HWAddr: [6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 5}, Config: 1, State: 1}
	copy(port.Name[:], "p5")
	for _, v := range []uint8{1, 4, 5} {
		for r := uint8(0); r < 3; r++ {
			add(v, &ofp.PortStatus{Reason: r, Desc: port})
		}
	}
	fm := match("eth_type", "0800", "ip_proto", "06", "tcp_dst", "0050")
	add(1, &ofp.FlowRemoved{Format: ofp.FormatNXM, Cookie: 0x10, Priority: 7, Reason: ofp.OFPRRDelete, TableID: 4,
		DurationSec: 3, DurationNsec: 5000, IdleTimeout: 9, PacketCount: 11, ByteCount: 1234, Match: fm})
	add(1, &ofp.FlowRemoved{Format: ofp.FormatOF10, Priority: 6, Reason: ofp.OFPRRIdleTimeout, TableID: 255,
		DurationSec: 1, DurationNsec: 23000000, IdleTimeout: 5, Match: fm})
	add(4, &ofp.FlowRemoved{Format: ofp.FormatOXM, Priority: 0x8000, Reason: ofp.OFPRRHardTimeout, HardTimeout: 30, Match: fm})
	add(6, &ofp.FlowRemoved{Format: ofp.FormatOXM, Priority: 1, Reason: ofp.OFPRRMeterDelete, TableID: 9, Match: fm})
	return msgs
}

// TestOfpPrintAtMonitorVerbosityMatchesOVSOfctl prints the messages
// monitor and snoop show (packet-ins, packet-outs with their packets
// dissected, port-status, flow-removed) at verbosity 2, the level
// ovs-ofctl's monitor uses, and compares with ovs-ofctl ofp-print.
func TestOfpPrintAtMonitorVerbosityMatchesOVSOfctl(t *testing.T) {
	bin := ovsOfctl(t)
	for _, b := range monitorMessages(t) {
		h := hex.EncodeToString(b)
		for _, verbosity := range []string{"0", "2"} {
			got := runGvs("", "ofp-print", h, verbosity)
			want := runOVS(t, bin, "", "ofp-print", h, verbosity)
			if got != want {
				t.Errorf("ofp-print %s %s:\n got %+v\nwant %+v", h, verbosity, got, want)
			}
		}
	}
}

func TestMonitorRejectsArgumentsLikeOVSOfctl(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"monitor", "br0", "bogus"}, progName + ": bogus: unsupported \"monitor\" argument\n"},
		{[]string{"-O", "OpenFlow13", "monitor", "br0", "invalid_ttl"}, progName + ": invalid_ttl requires one of the OpenFlow versions OpenFlow10, OpenFlow11, OpenFlow12 but none is enabled (use -O)\n"},
		// watch: SPECs are parsed once connected (errors included):
		// TestWatchSendsAndPrintsLikeOVSOfctl covers them.
	} {
		if got := runGvs("", c.args...); got.code != 1 || got.stderr != c.want {
			t.Errorf("%v: got %+v, want exit 1 and %q", c.args, got, c.want)
		}
	}
}

// FuzzPrintAny feeds the monitor's printer arbitrary messages (switches
// are peers on the network): it must never panic.
func FuzzPrintAny(f *testing.F) {
	for _, b := range monitorMessages(f) {
		f.Add(b)
	}
	f.Add([]byte{1, 10, 0, 8, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var sb strings.Builder
		w := bufio.NewWriter(&sb)
		ofprint.Any(w, b, 3)
		w.Flush()
	})
}
