package ofp_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// match11CapturesFile holds what Debian's ovs-ofctl -O OpenFlow11 sent
// to a real ovs-vswitchd (dummy datapath) and what the switch replied:
// flow mods, flow and aggregate stats requests and flow stats replies,
// all with OpenFlow 1.1's standard match. Replies carry durations, so the
// file is rewritten only with -update
// (go test -run TestRecordOF11MatchCaptures ./ofproto/ofp -args -update).
const match11CapturesFile = "testdata/match11_captures.txt"

// of11Flows are added with -O OpenFlow11; between them they set every
// field of the standard match.
var of11Flows = []string{
	"in_port=1,dl_src=00:00:00:00:00:01/ff:ff:ff:00:00:00,dl_dst=00:00:00:00:00:02,dl_vlan=7,dl_vlan_pcp=3,tcp,nw_src=10.0.0.0/8,nw_dst=10.1.2.3,nw_tos=8,tp_src=1,tp_dst=80,actions=output:2",
	"priority=5,icmp,icmp_type=8,icmp_code=0,metadata=0x5/0xff,actions=drop",
	"table=1,priority=6,mpls,mpls_label=17,mpls_tc=3,actions=drop",
	"priority=7,dl_vlan=0xffff,arp,arp_spa=1.1.1.0/24,arp_op=2,actions=drop",
	"priority=8,dl_vlan=5,udp,tp_src=53,actions=drop",
	"priority=9,in_port=LOCAL,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00,actions=drop",
	"priority=10,sctp,tp_dst=5,actions=drop",
	"priority=11,ip,nw_dst=10.0.0.0/255.0.255.0,actions=drop",
	"priority=12,dl_vlan_pcp=5,actions=drop",
	"priority=13,rarp,nw_src=2.2.2.2,actions=drop",
}

// match11Sessions returns the recorded ovs-ofctl runs, in order.
func match11Sessions() []asyncSession {
	var out []asyncSession
	add := func(name string, args ...string) {
		out = append(out, asyncSession{name: "of11_" + name, args: append([]string{"-O", "OpenFlow11"}, args...)})
	}
	for i, f := range of11Flows {
		add(fmt.Sprintf("add_flow_%d", i), "add-flow", "SOCK", f)
	}
	add("dump_flows", "dump-flows", "SOCK")
	add("dump_flows_tcp", "dump-flows", "SOCK", "tcp,tp_dst=80")
	add("dump_flows_out_port", "dump-flows", "SOCK", "out_port=2")
	add("dump_aggregate", "dump-aggregate", "SOCK", "table=1")
	add("dump_aggregate_metadata", "dump-aggregate", "SOCK", "metadata=0x5/0xff")
	add("mod_flows", "mod-flows", "SOCK", "icmp,actions=output:1")
	add("del_flows_strict", "--strict", "del-flows", "SOCK", "priority=5,icmp,icmp_type=8,icmp_code=0,metadata=0x5/0xff")
	add("del_flows_out_port", "del-flows", "SOCK", "out_port=2")
	// A flow OpenFlow 1.1 cannot express, added in OpenFlow 1.3: the
	// switch's 1.1 reply leaves the register out.
	add("dump_flows_lossy", "dump-flows", "SOCK")
	return out
}

func recordMatch11(t *testing.T, ofctl string) string {
	e := startOVSForeground(t)
	psock := e.path("proxy.sock")
	l, err := net.Listen("unix", psock)
	if err != nil {
		t.Fatal(err)
	}
	p := &asyncProxy{l: l, target: e.mgmt}
	p.wg.Add(1)
	go p.run()
	defer func() { l.Close(); p.wg.Wait() }()

	var sb strings.Builder
	for _, s := range match11Sessions() {
		if s.name == "of11_dump_flows_lossy" {
			e.ofctl("-O", "OpenFlow13", "add-flow", "SOCK", "priority=20,reg0=5,ip,nw_ttl=9,actions=drop")
		}
		args := make([]string, len(s.args))
		for i, a := range s.args {
			if a == "SOCK" {
				a = "unix:" + psock
			}
			args[i] = a
		}
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		cmd := exec.CommandContext(ctx, ofctl, append([]string{"--timeout=6", "--no-names"}, args...)...)
		cmd.Env, cmd.Dir = e.env, e.dir
		out, err := cmd.CombinedOutput()
		cancel()
		time.Sleep(100 * time.Millisecond) // let the proxy drain the closed connection
		status := ""
		if err != nil {
			status = fmt.Sprintf(" (fails: %s)", strings.TrimSpace(lastLine(string(out))))
		}
		fmt.Fprintf(&sb, "# %s: ovs-ofctl %s%s\n", s.name, strings.Join(s.args, " "), status)
		for _, r := range p.take() {
			if isTableQuery(r.data) {
				continue
			}
			dir := "<"
			if r.sent {
				dir = ">"
			}
			fmt.Fprintf(&sb, "%s %s\n", dir, hex.EncodeToString(r.data))
		}
	}
	return sb.String()
}

// TestRecordOF11MatchCaptures rewrites testdata/match11_captures.txt with
// -update; otherwise it does nothing, because the switch's replies carry
// durations.
func TestRecordOF11MatchCaptures(t *testing.T) {
	if !*update {
		t.Skip("ofp: OpenFlow 1.1 match captures are recorded only with -update")
	}
	got := recordMatch11(t, needOVSOfctl(t))
	if err := os.WriteFile(match11CapturesFile, []byte(got), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every OpenFlow 1.1 message ovs-ofctl and Open vSwitch exchanged decodes
// and re-encodes byte for byte, flow mods, stats requests and flow stats
// replies among them.
func TestOF11MatchCapturesRoundTripByteIdentical(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range readCaptureFile(t, match11CapturesFile) {
		m, err := ofp.Decode(c.data)
		if err != nil {
			t.Errorf("%s: decode %x: %v", c.name, c.data, err)
			continue
		}
		seen[m.Raw.String()] = true
		out, err := ofp.EncodeMsg(nil, m)
		if err != nil {
			t.Errorf("%s: encode %s: %v", c.name, m.Raw, err)
			continue
		}
		if !bytes.Equal(out, c.data) {
			t.Errorf("%s: %s re-encoded differently\n got %x\nwant %x", c.name, m.Raw, out, c.data)
		}
	}
	for _, want := range []string{"OFPT11_FLOW_MOD", "OFPST11_FLOW_REQUEST", "OFPST11_FLOW_REPLY",
		"OFPST11_AGGREGATE_REQUEST", "OFPST_AGGREGATE_REPLY"} {
		if !seen[want] {
			t.Errorf("no captured %s", want)
		}
	}
}

// The match of each flow ovs-ofctl added is the one ofptext parses from
// the same text, and encoding the parsed match gives ovs-ofctl's bytes.
func TestOF11FlowModMatchesAreOVSOfctls(t *testing.T) {
	caps := readCaptureFile(t, match11CapturesFile)
	for i, text := range of11Flows {
		name := fmt.Sprintf("of11_add_flow_%d", i)
		var got *ofp.Msg
		var raw []byte
		for _, c := range caps {
			if c.name != name || !c.sent || len(c.data) < 2 || c.data[1] != 14 {
				continue
			}
			m, err := ofp.Decode(c.data)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, raw = m, c.data
		}
		if got == nil {
			t.Errorf("%s: no flow mod captured", name)
			continue
		}
		fl, err := ofptext.ParseFlow(text, mf.OF11)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		fm := *got.Body.(*ofp.FlowMod)
		if fm.Match.Flow != fl.Match.Flow || fm.Match.Mask != fl.Match.Mask {
			t.Errorf("%s: decoded %s, parsed %s", text, ofptext.FormatMatch(&fm.Match, 0), ofptext.FormatMatch(&fl.Match, 0))
		}
		fm.Match = fl.Match
		out, err := ofp.Encode(nil, mf.OF11, got.XID, &fm)
		if err != nil || !bytes.Equal(out, raw) {
			t.Errorf("%s: encoded %x, %v\nwant %x", text, out, err, raw)
		}
	}
}

// withMatch11 returns an OpenFlow 1.1 flow mod (delete, no instructions)
// carrying the 88-byte standard match m.
func withMatch11(m []byte) []byte {
	b := []byte{2, 14, 0, 0, 0, 0, 0, 7}
	b = append(b, make([]byte, 16)...)                // cookie, cookie mask
	b = append(b, 0, 3, 0, 0, 0, 0, 0x80, 0)          // table, command, timeouts, priority
	b = append(b, 0xff, 0xff, 0xff, 0xff)             // buffer id
	b = append(b, 0xff, 0xff, 0xff, 0xff)             // out port
	b = append(b, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0) // out group, flags, pad
	b = append(b, m...)
	b[2], b[3] = byte(len(b)>>8), byte(len(b))
	return b
}

// match11 builds a standard match: wildcards, then edits at offsets.
func match11(wc uint32, edits map[int][]byte) []byte {
	m := make([]byte, 88)
	m[3] = 88
	m[8], m[9], m[10], m[11] = byte(wc>>24), byte(wc>>16), byte(wc>>8), byte(wc)
	for _, o := range []int{18, 30} { // Ethernet masks: all wildcarded
		copy(m[o:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	}
	for _, o := range []int{48, 56, 80, 84} { // IPv4 and metadata masks
		copy(m[o:], []byte{0xff, 0xff, 0xff, 0xff})
	}
	for o, v := range edits {
		copy(m[o:], v)
	}
	return m
}

// Malformed standard matches fail with the error Open vSwitch's decoder
// gives (checked with ovs-ofctl ofp-print, which prints the error name).
func TestDecodeOF11MatchRejectsAsOpenVSwitch(t *testing.T) {
	const all = 0x3ff
	ipv4 := map[int][]byte{40: {0x08, 0x00}}
	with := func(base map[int][]byte, o int, v ...byte) map[int][]byte {
		m := map[int][]byte{o: v}
		for k, b := range base {
			m[k] = b
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		match []byte
		code  ofp.ErrCode
	}{
		{"length 80", match11(all, map[int][]byte{2: {0, 80}}), ofp.OFPBMC_BAD_LEN},
		{"type 3", match11(all, map[int][]byte{0: {0, 3}}), ofp.OFPBMC_BAD_TYPE},
		{"in_port in the gap", match11(all&^1, map[int][]byte{4: {0, 1, 0, 0}}), ofp.OFPBMC_BAD_VALUE},
		{"vid 4096", match11(all&^2, map[int][]byte{36: {0x10, 0x00}}), ofp.OFPBMC_BAD_VALUE},
		{"pcp 8", match11(all&^6, map[int][]byte{36: {0, 5}, 38: {8}}), ofp.OFPBMC_BAD_VALUE},
		{"tos with ECN bits", match11(all&^(8|16), with(ipv4, 42, 0x09)), ofp.OFPBMC_BAD_VALUE},
		{"icmp type 256", match11(all&^(8|32|64), with(with(ipv4, 43, 1), 60, 1, 0)), ofp.OFPBMC_BAD_FIELD},
		{"icmp code 256", match11(all&^(8|32|128), with(with(ipv4, 43, 1), 62, 1, 0)), ofp.OFPBMC_BAD_FIELD},
	} {
		var m mf.Match
		err := ofp.DecodeOF11Match(tc.match, &m)
		if ofp.CodeOf(err) != tc.code {
			t.Errorf("%s: DecodeOF11Match = %v, want %s", tc.name, err, tc.code)
		}
		if bin, lookErr := exec.LookPath("ovs-ofctl"); lookErr == nil {
			out, _ := exec.Command(bin, "ofp-print", hex.EncodeToString(withMatch11(tc.match))).CombinedOutput()
			if !strings.Contains(string(out), "decode error: "+tc.code.String()) {
				t.Errorf("%s: ovs-ofctl ofp-print says\n%s", tc.name, out)
			}
		}
	}
}

// What the standard match ignores, as Open vSwitch: fields whose
// prerequisites are missing, bits of the wildcards above OFPFW11_ALL's
// 16-bit read, and it maps VLAN "none" and "any".
func TestDecodeOF11MatchIgnoresWhatOpenVSwitchIgnores(t *testing.T) {
	for _, tc := range []struct {
		name  string
		match []byte
		want  string
	}{
		{"catch-all", match11(0x3ff, nil), ""},
		{"high wildcard bits ignored", match11(0xffff0000|0x3ff&^1, map[int][]byte{4: {0, 0, 0, 5}}), "in_port=5"},
		{"nw fields need an IP or ARP type", match11(0x3ff&^(32|64), map[int][]byte{43: {6}, 44: {1, 2, 3, 4}, 48: {0, 0, 0, 0}, 60: {0, 80}}), ""},
		{"ports need a protocol with ports", match11(0x3ff&^(8|32|128), map[int][]byte{40: {8, 0}, 43: {47}, 62: {0, 80}}), "ip,nw_proto=47"},
		{"vlan none ignores pcp", match11(0x3ff&^6, map[int][]byte{36: {0xff, 0xff}, 38: {9}}), "vlan_tci=0x0000"},
		{"vlan any", match11(0x3ff&^2, map[int][]byte{36: {0xff, 0xfe}}), "vlan_tci=0x1000/0x1000"},
		{"mpls fields need an MPLS type", match11(0x3ff&^(8|256|512), map[int][]byte{40: {0x08, 0x00}, 64: {0, 0, 0, 17}, 68: {3}}), "ip"},
		{"mpls", match11(0x3ff&^(8|256|512), map[int][]byte{40: {0x88, 0x48}, 64: {0, 0, 0, 17}, 68: {3}}), "mplsm,mpls_label=17,mpls_tc=3"},
		{"metadata mask", match11(0x3ff, map[int][]byte{72: {0, 0, 0, 0, 0, 0, 0x12, 0x34}, 80: {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0, 0x0f}}), "metadata=0x230/0xff0"},
	} {
		var m mf.Match
		if err := ofp.DecodeOF11Match(tc.match, &m); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := ofptext.FormatMatch(&m, ofptext.DefaultPriority); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Requests must say exactly what their flow text says: OpenFlow 1.1 flow
// mods and flow stats requests with fields or masks the standard match
// lacks fail to encode.
func TestOF11RequestsRefuseMatchesOF11CannotExpress(t *testing.T) {
	for _, tc := range []struct {
		flow string
		code ofp.ErrCode
	}{
		{"reg0=5", ofp.OFPBMC_BAD_FIELD},
		{"ipv6,ipv6_src=::1", ofp.OFPBMC_BAD_FIELD},
		{"ip,nw_ttl=3", ofp.OFPBMC_BAD_FIELD},
		{"ip,nw_ecn=1", ofp.OFPBMC_BAD_FIELD},
		{"tcp,tcp_flags=+syn", ofp.OFPBMC_BAD_FIELD},
		{"mpls,mpls_bos=1", ofp.OFPBMC_BAD_FIELD},
		{"tcp,tp_dst=0x50/0xfff0", ofp.OFPBMC_BAD_WILDCARDS},
		{"vlan_tci=0x0005/0x0fff", ofp.OFPBMC_BAD_WILDCARDS},
		{"vlan_tci=0x1005/0x1ff0", ofp.OFPBMC_BAD_WILDCARDS},
		{"metadata=1,tcp,tp_src=1", 0},
		{"dl_vlan=0xffff", 0},
		{"in_port=65534,dl_type=0x05ff", 0},
	} {
		fl, err := ofptext.ParseFlow(tc.flow+",actions=drop", mf.OF13)
		if err != nil {
			t.Fatalf("%s: %v", tc.flow, err)
		}
		fm := &ofp.FlowMod{Format: ofp.FormatOXM, Command: ofp.FlowAdd, BufferID: ofp.BufferNone, OutPort: ofp.PortAny,
			OutGroup: ofp.GroupAny, Match: fl.Match}
		_, err = ofp.Encode(nil, mf.OF11, 1, fm)
		if ofp.CodeOf(err) != tc.code {
			t.Errorf("flow mod %s: %v, want %v", tc.flow, err, tc.code)
		}
		req := &ofp.FlowStatsRequest{Format: ofp.FormatOXM, TableID: ofp.TableAll, OutPort: ofp.PortAny, OutGroup: ofp.GroupAny, Match: fl.Match}
		_, err = ofp.Encode(nil, mf.OF11, 1, req)
		if ofp.CodeOf(err) != tc.code {
			t.Errorf("flow stats request %s: %v, want %v", tc.flow, err, tc.code)
		}
	}
}

// FuzzDecodeOF11Match checks that no input panics and that whatever
// decodes is expressible: it encodes to a match that decodes the same.
func FuzzDecodeOF11Match(f *testing.F) {
	f.Add(match11(0x3ff, nil))
	f.Add(match11(0, nil))
	if caps, err := os.ReadFile(match11CapturesFile); err == nil {
		for _, l := range strings.Split(string(caps), "\n") {
			b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimPrefix(l, "> "), "< "))
			if err != nil || len(b) < 2 || b[0] != 2 || b[1] != 14 || len(b) < 48+88 {
				continue
			}
			f.Add(b[48 : 48+88])
		}
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		var m mf.Match
		if ofp.DecodeOF11Match(p, &m) != nil {
			return
		}
		out, err := ofp.AppendOF11Match(nil, &m)
		if err != nil {
			t.Fatalf("decoded match %s does not encode: %v", ofptext.FormatMatch(&m, 0), err)
		}
		var again mf.Match
		if err := ofp.DecodeOF11Match(out, &again); err != nil || again.Flow != m.Flow || again.Mask != m.Mask {
			t.Fatalf("%x: decoded %s, re-decoded %s (%v)", p, ofptext.FormatMatch(&m, 0), ofptext.FormatMatch(&again, 0), err)
		}
	})
}
