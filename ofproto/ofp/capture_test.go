package ofp_test

import (
	"bufio"
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/ofproto/ofp/internal/ofrecord"
)

var update = flag.Bool("update", false, "re-capture testdata/captures.txt by running ovs-ofctl against a recorder")

const (
	capturesFile = "testdata/captures.txt"
	// printFile holds what ovs-ofctl ofp-print prints for every captured
	// message: the expected output of gvs's own ofp-print.
	printFile = "testdata/ofp-print.txt"
)

// vlogLine matches Open vSwitch log lines, which carry timestamps.
var vlogLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\S+\|\d+\|`)

// ofpPrintGolden runs ovs-ofctl ofp-print on every captured message.
func ofpPrintGolden(t *testing.T, ofctl string, caps []captured) string {
	var sb strings.Builder
	for _, c := range caps {
		dir := "<"
		if c.sent {
			dir = ">"
		}
		h := hex.EncodeToString(c.data)
		out, err := exec.Command(ofctl, "ofp-print", h).CombinedOutput()
		if err != nil {
			t.Fatalf("ovs-ofctl ofp-print %s: %v\n%s", h, err, out)
		}
		fmt.Fprintf(&sb, "# %s %s %s\n", c.name, dir, h)
		for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
			if !vlogLine.MatchString(l) {
				sb.WriteString(l + "\n")
			}
		}
	}
	return sb.String()
}

// captureCmds are the ovs-ofctl invocations whose traffic is recorded.
// SOCK is replaced by the recorder's socket.
var captureCmds = []struct {
	name string
	args []string
}{
	{"of10_add_flow_ip", []string{"-O", "OpenFlow10", "add-flow", "SOCK", "ip,nw_src=10.0.0.0/8,actions=drop"}},
	{"of10_add_flow_tcp", []string{"-O", "OpenFlow10", "add-flow", "SOCK", "priority=300,tcp,in_port=3,dl_vlan=7,dl_src=00:11:22:33:44:55,tp_dst=80,nw_tos=8,actions=drop"}},
	{"nxm_add_flow_regs", []string{"add-flow", "SOCK", "table=0,reg0=0x1/0xf,tcp,tcp_flags=+syn-ack,ct_state=+trk+est,metadata=0x5,actions=drop"}},
	{"nxm_add_flow_ipv6_nd", []string{"add-flow", "SOCK", "icmp6,icmp_type=135,icmp_code=0,nd_target=fe80::1,nd_sll=00:00:00:00:00:01,ipv6_src=fe80::/64,actions=drop"}},
	{"nxm_del_flows_cookie", []string{"del-flows", "SOCK", "cookie=0x10/0xff,arp,arp_tpa=10.0.0.1"}},
	{"of13_add_flow_ip", []string{"-O", "OpenFlow13", "add-flow", "SOCK", "ip,nw_src=10.0.0.0/8,actions=drop"}},
	{"of13_add_flow_vlan_regs", []string{"-O", "OpenFlow13", "add-flow", "SOCK", "table=3,priority=5,cookie=0xabc,dl_vlan=10,dl_vlan_pcp=3,udp,udp_src=53,reg3=0x10,tcp_flags=+fin,tun_id=0x5,actions=drop"}},
	{"of13_mod_flows", []string{"-O", "OpenFlow13", "mod-flows", "SOCK", "cookie=0x1/-1,in_port=1,actions=drop"}},
	{"of14_add_flow_importance", []string{"-O", "OpenFlow14", "add-flow", "SOCK", "importance=7,priority=9,idle_timeout=30,hard_timeout=60,send_flow_rem,ipv6,ipv6_dst=fd00::1,actions=output:4"}},
	{"of14_del_flows_strict", []string{"-O", "OpenFlow14", "--strict", "del-flows", "SOCK", "priority=9,out_port=4,ipv6,ipv6_dst=fd00::1"}},
	{"of15_add_flow_ovn", []string{"-O", "OpenFlow15", "add-flow", "SOCK", "table=10,priority=100,metadata=0x1,reg14=0x2,reg15=0x3,ct_state=+trk+est-new,ct_label=0x1/0x1,ip,nw_dst=10.0.1.0/24,nw_ttl=64,ip_frag=no,actions=drop"}},
	{"of15_add_flow_arp", []string{"-O", "OpenFlow15", "add-flow", "SOCK", "table=27,priority=90,arp,reg14=0x1,metadata=0x3,arp_tpa=10.0.1.1,arp_op=1,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00,actions=drop"}},
	{"of15_del_flows", []string{"-O", "OpenFlow15", "del-flows", "SOCK"}},
	{"of10_show", []string{"-O", "OpenFlow10", "show", "SOCK"}},
	{"of13_show", []string{"-O", "OpenFlow13", "show", "SOCK"}},
	{"of10_get_frags", []string{"-O", "OpenFlow10", "get-frags", "SOCK"}},
	{"of15_set_frags", []string{"-O", "OpenFlow15", "set-frags", "SOCK", "drop"}},
	{"of13_probe", []string{"-O", "OpenFlow13", "probe", "SOCK"}},
	// Field census: between them these encode every match field gvs knows
	// in NXM and in OXM, so the codes in the mf table are checked
	// against ovs-ofctl's.
	{"nxm_fields_tunnel", []string{"add-flow", "SOCK", "tun_id=0x10/0xff,tun_src=1.2.3.4,tun_dst=5.6.7.0/24,tun_flags=+oam,tun_gbp_id=7,tun_gbp_flags=0x3,tun_metadata0=0x1234,tun_metadata5=0xab/0xff,actions=drop"}},
	{"nxm_fields_tunnel6", []string{"add-flow", "SOCK", "tun_ipv6_src=2001:db8::1,tun_ipv6_dst=2001:db8::/32,actions=drop"}},
	{"nxm_fields_meta", []string{"add-flow", "SOCK", "dp_hash=0x5/0xf,recirc_id=3,conj_id=7,pkt_mark=0x9/0xf,in_port=LOCAL,actions=drop"}},
	{"nxm_fields_ct", []string{"add-flow", "SOCK", "ct_state=+trk-inv+rpl,ct_zone=5,ct_mark=0x3/0x3,ct_label=0x10000000000000000/0xffff0000000000000000,ip,ct_nw_src=10.1.1.1,ct_nw_dst=10.2.0.0/16,ct_nw_proto=6,ct_tp_src=1024,ct_tp_dst=80,actions=drop"}},
	{"nxm_fields_ct6", []string{"add-flow", "SOCK", "ct_state=+trk+est,ipv6,ct_ipv6_src=fd00::1,ct_ipv6_dst=fd00::/8,actions=drop"}},
	{"nxm_fields_regs", []string{"add-flow", "SOCK", "reg1=1,reg2=2,reg4=4,reg5=5,reg7=7/0xff,reg8=8,reg9=9,reg10=0x10/0xf0,reg11=11,reg12=12,reg13=13,reg15=0xf,actions=drop"}},
	{"nxm_fields_xxreg", []string{"add-flow", "SOCK", "xxreg3=0x1/0x1,xreg0=0xffffffff00000000/0xffffffff00000000,actions=drop"}},
	{"nxm_fields_l2", []string{"add-flow", "SOCK", "dl_src=00:00:00:00:00:01/ff:ff:ff:00:00:00,dl_dst=00:00:00:00:00:02,vlan_tci=0x1005/0x1fff,dl_type=0x0800,actions=drop"}},
	{"nxm_fields_mpls", []string{"add-flow", "SOCK", "mpls,mpls_label=17,mpls_tc=3,mpls_bos=1,mpls_ttl=64,actions=drop"}},
	{"nxm_fields_ip", []string{"add-flow", "SOCK", "udp,nw_src=1.1.1.1,nw_dst=2.2.2.0/24,nw_tos=16,nw_ecn=1,nw_ttl=9,ip_frag=first,udp_src=1/0xff,udp_dst=2,actions=drop"}},
	{"nxm_fields_ipv6", []string{"add-flow", "SOCK", "tcp6,ipv6_src=::1,ipv6_dst=2001::/16,ipv6_label=0x12345,tcp_src=1,tcp_dst=2/0xfff0,tcp_flags=+syn,actions=drop"}},
	{"nxm_fields_sctp", []string{"add-flow", "SOCK", "sctp,sctp_src=1,sctp_dst=2,actions=drop"}},
	{"nxm_fields_icmp", []string{"add-flow", "SOCK", "icmp,icmp_type=8,icmp_code=0,actions=drop"}},
	{"nxm_fields_nd_advert", []string{"add-flow", "SOCK", "icmp6,icmpv6_type=136,icmpv6_code=0,nd_target=fe80::/16,nd_tll=00:00:00:00:00:07,nd_reserved=0x2,nd_options_type=2,actions=drop"}},
	{"nxm_fields_arp", []string{"add-flow", "SOCK", "arp,arp_op=2,arp_spa=1.1.1.0/24,arp_tpa=1.1.1.2,arp_sha=00:00:00:00:00:03,arp_tha=00:00:00:00:00:04/ff:ff:ff:ff:ff:00,actions=drop"}},
	{"of13_fields_oxm", []string{"-O", "OpenFlow13", "add-flow", "SOCK", "in_port=7,actset_output=3,dl_vlan=5,vlan_pcp=2,ip,ip_dscp=10,nw_ecn=2,tcp,tcp_flags=+ack,metadata=0x1/0xf,xreg3=0x5,actions=drop"}},
	{"of13_fields_mpls", []string{"-O", "OpenFlow13", "add-flow", "SOCK", "mpls,mpls_label=5,mpls_tc=1,mpls_bos=0,actions=drop"}},
	{"of13_fields_ipv6_nd", []string{"-O", "OpenFlow13", "add-flow", "SOCK", "icmp6,icmp_type=135,nd_target=::5,nd_sll=00:00:00:00:00:09,ipv6_label=0x1,actions=drop"}},
	{"of15_fields_oxm", []string{"-O", "OpenFlow15", "add-flow", "SOCK", "packet_type=(1,0x800),actset_output=5,tcp_flags=+rst,dp_hash=1,actions=drop"}},
	// Actions: the kinds ofp decodes (output, resubmit, load, move,
	// set_field, ct, ct_clear) and some it keeps raw.
	{"nxm_actions", []string{"add-flow", "SOCK", "ip,actions=output:3,resubmit(,5),resubmit(2,6),load:0x5->NXM_NX_REG0[0..15],move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],ct(commit,zone=NXM_NX_REG13[0..15],table=7,exec(load:0x1->NXM_NX_CT_LABEL[0])),ct_clear,dec_ttl,controller(userdata=00.01)"}},
	{"of13_actions", []string{"-O", "OpenFlow13", "add-flow", "SOCK", "ip,actions=set_field:10.0.0.1->ip_dst,set_field:0x5->reg3,output:2,resubmit(,9),ct(table=8,zone=5,nat),goto_table:4"}},
	{"of15_actions_ovn", []string{"-O", "OpenFlow15", "add-flow", "SOCK", "table=8,priority=50,reg14=0x1,metadata=0x1,actions=set_field:0x2/0x2->ct_label,move:NXM_NX_REG14[]->NXM_NX_REG15[],ct(commit,zone=NXM_NX_REG13[0..15],nat(src),exec(set_field:0x1/0x1->ct_label)),write_metadata:0x5/0xff,resubmit(,9)"}},
	// ERSPAN and GTP-U tunnel options (Open vSwitch encodes exact 8-bit
	// ones with the value as mask) and the NSH header.
	{"nxm_fields_erspan1", []string{"add-flow", "SOCK", "tun_erspan_ver=1,tun_erspan_idx=0x12345/0xfffff,tun_gtpu_flags=0x30/0xf0,tun_gtpu_msgtype=255,actions=drop"}},
	{"nxm_fields_erspan2", []string{"add-flow", "SOCK", "tun_erspan_ver=2,tun_erspan_dir=1,tun_erspan_hwid=0x5,actions=drop"}},
	{"of13_fields_nsh", []string{"-O", "OpenFlow13", "add-flow", "SOCK", "dl_type=0x894f,nsh_flags=2/0x3,nsh_ttl=63,nsh_mdtype=1,nsh_np=3,nsh_spi=0x123456,nsh_si=255,nsh_c1=1,nsh_c2=2/0xff,nsh_c3=3,nsh_c4=4,actions=drop"}},
	{"of15_fields_vlan_masked", []string{"-O", "OpenFlow15", "add-flow", "SOCK", "vlan_vid=0x1000/0x1000,ip,nw_src=10.0.0.1,actions=drop"}},
}

// captured is one recorded message from the golden file.
type captured struct {
	name string // capture name
	sent bool   // sent by ovs-ofctl (">"), else by the recorder ("<")
	data []byte
}

func readCaptures(t testing.TB) []captured { return readCaptureFile(t, capturesFile) }

// readCaptureFile reads a capture file: "# NAME: ..." lines name the
// capture, "> HEX" lines are messages ovs-ofctl sent and "< HEX" those
// the recorder answered.
func readCaptureFile(t testing.TB, path string) []captured {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	var out []captured
	name := ""
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		line := s.Text()
		switch {
		case strings.HasPrefix(line, "# "):
			name, _, _ = strings.Cut(line[2:], ":")
		case strings.HasPrefix(line, "> "), strings.HasPrefix(line, "< "):
			b, err := hex.DecodeString(line[2:])
			if err != nil {
				t.Fatalf("bad hex in %s: %v", name, err)
			}
			out = append(out, captured{name: name, sent: line[0] == '>', data: b})
		}
	}
	return out
}

// needOVSOfctl returns the path of ovs-ofctl or skips (fails under CI).
func needOVSOfctl(t *testing.T) string {
	t.Helper()
	p := nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	return p
}

// runCaptures runs every capture command against a fresh recorder and
// returns the golden-file text.
func runCaptures(t *testing.T, ofctl string) string {
	dir := t.TempDir()
	sock := filepath.Join(dir, "rec.sock")
	rec, err := ofrecord.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	var sb strings.Builder
	for _, c := range captureCmds {
		rec.Reset()
		args := make([]string, len(c.args))
		for i, a := range c.args {
			if a == "SOCK" {
				a = "unix:" + sock
			}
			args[i] = a
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		out, _ := exec.CommandContext(ctx, ofctl, append([]string{"--timeout=2"}, args...)...).CombinedOutput()
		cancel()
		_ = out
		time.Sleep(50 * time.Millisecond) // let the recorder drain the closed connection
		fmt.Fprintf(&sb, "# %s: ovs-ofctl %s\n", c.name, strings.Join(c.args, " "))
		for _, r := range rec.Records() {
			dir := ">"
			if r.Sent {
				dir = "<"
			}
			fmt.Fprintf(&sb, "%s %s\n", dir, hex.EncodeToString(r.Data))
		}
	}
	return sb.String()
}

// TestCapturesMatchOVSOfctl re-runs the captures with the installed
// ovs-ofctl and checks that it still sends exactly the golden bytes
// (with -update, rewrites the golden file instead).
func TestCapturesMatchOVSOfctl(t *testing.T) {
	ofctl := needOVSOfctl(t)
	got := runCaptures(t, ofctl)
	if *update {
		if err := os.WriteFile(capturesFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(printFile, []byte(ofpPrintGolden(t, ofctl, readCaptures(t))), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(capturesFile)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("ovs-ofctl traffic differs from %s; run testdata/capture.sh and review the diff.\ngot:\n%s", capturesFile, got)
	}
}

// testdata/ofp-print.txt is what the installed ovs-ofctl prints for the
// captures (kept for gvs's ofp-print to be compared against).
func TestOfpPrintGoldenMatchesOVSOfctl(t *testing.T) {
	ofctl := needOVSOfctl(t)
	want, err := os.ReadFile(printFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := ofpPrintGolden(t, ofctl, readCaptures(t)); got != string(want) {
		t.Errorf("%s is stale; run testdata/capture.sh", printFile)
	}
}
