package ofptext

import (
	"bufio"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The action corpus is captured by package ofp (its
// TestActionGoldenMatchesOVSOfctl -update-actions): per flow and per
// version (-O OpenFlow10/13/15), the flow mod ovs-ofctl add-flow sent and
// the line ovs-ofctl ofp-print prints for it, or ovs-ofctl's error.
const actionCorpus = "../ofp/testdata/actions_golden.txt"

type actionGolden struct {
	in    string
	msg   map[string][]byte
	print map[string]string // after "ADD ", or the decode error line
	err   map[string]string
}

var corpusVersions = []struct {
	tag string
	v   uint8
}{{"10", mf.OF10}, {"13", mf.OF13}, {"15", mf.OF15}}

func loadActionCorpus(t *testing.T) []actionGolden {
	t.Helper()
	f, err := os.Open(actionCorpus)
	if err != nil {
		t.Fatalf("action corpus: %v", err)
	}
	defer f.Close()
	var out []actionGolden
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		tag, rest, _ := strings.Cut(sc.Text(), " ")
		if tag == "in" {
			out = append(out, actionGolden{in: rest, msg: map[string][]byte{}, print: map[string]string{}, err: map[string]string{}})
			continue
		}
		c := &out[len(out)-1]
		switch {
		case strings.HasSuffix(tag, "p"):
			if _, body, ok := strings.Cut(rest, ": ADD "); ok {
				rest = body
			}
			c.print[strings.TrimSuffix(tag, "p")] = rest
		case strings.HasPrefix(rest, "error: "):
			c.err[tag] = strings.TrimPrefix(rest, "error: ")
		default:
			b, err := hex.DecodeString(rest)
			if err != nil {
				t.Fatal(err)
			}
			c.msg[tag] = b
		}
	}
	return out
}

// parseExceptions are corpus flows whose ovs-ofctl output gvs's text
// syntax does not reproduce, with the reason; key is "TAG:" + flow.
var parseExceptions = map[string]string{}

// ParseFlow + FormatFlowMod print every corpus flow as ovs-ofctl add-flow
// sends it (as ofp-print shows the message), in OF1.0, 1.3 and 1.5, and
// fail with ovs-ofctl's message where it fails.
func TestParseFlowActionsPrintLikeOVSOfctl(t *testing.T) {
	n := 0
	for _, c := range loadActionCorpus(t) {
		for _, cv := range corpusVersions {
			if _, ok := parseExceptions[cv.tag+":"+c.in]; ok {
				continue
			}
			fl, err := ParseFlow(c.in, cv.v)
			if want, ok := c.err[cv.tag]; ok {
				if err == nil || !strings.HasSuffix(want, err.Error()) {
					t.Errorf("%s: ParseFlow(%q) error = %v, want %q", cv.tag, c.in, err, want)
				}
				continue
			}
			if strings.Contains(c.print[cv.tag], "decode error") {
				continue // ovs-ofctl cannot decode what it sent; nothing to compare
			}
			if err != nil {
				t.Errorf("%s: ParseFlow(%q): %v", cv.tag, c.in, err)
				continue
			}
			n++
			if got := FormatFlowMod(fl); got != c.print[cv.tag] {
				t.Errorf("%s: %q\n got %s\nwant %s", cv.tag, c.in, got, c.print[cv.tag])
			}
		}
	}
	if n < 250 {
		t.Errorf("only %d corpus flows compared", n)
	}
}

// FormatActions prints the actions decoded from every captured flow mod
// as ovs-ofctl ofp-print does.
func TestFormatActionsOfDecodedFlowModsPrintsLikeOVSOfctl(t *testing.T) {
	for _, c := range loadActionCorpus(t) {
		for _, cv := range corpusVersions {
			msg := c.msg[cv.tag]
			if msg == nil || strings.Contains(c.print[cv.tag], "decode error") {
				continue
			}
			m, err := ofp.Decode(msg)
			if err != nil {
				t.Fatal(err)
			}
			fm := m.Body.(*ofp.FlowMod)
			acts, err := ofp.DecodeOfpacts(fm.Instructions, m.Version, fm.Format == ofp.FormatOXM)
			if err != nil {
				t.Errorf("%s %q: %v", cv.tag, c.in, err)
				continue
			}
			_, want, _ := strings.Cut(c.print[cv.tag], "actions=")
			if got := FormatActions(acts, m.Version); got != want {
				t.Errorf("%s %q\n got %s\nwant %s", cv.tag, c.in, got, want)
			}
		}
	}
}

// badActionFlows are flows whose actions ovs-ofctl refuses; gvs's
// ParseFlow must fail with the same message.
var badActionFlows = []string{
	"actions=conjunction(1,3/2)", "actions=conjunction(1,1/1)", "actions=conjunction(1)",
	"actions=controller(reason=bogus)", "actions=controller(foo=1)", "actions=enqueue:1",
	"actions=mod_vlan_vid:5000", "actions=mod_vlan_pcp:9", "ip,actions=mod_nw_tos:3", "ip,actions=mod_nw_ecn:4",
	"actions=push_vlan:0x0800", "actions=multipath(eth_src,50,bogus,1,0,NXM_NX_REG0[0..1])",
	"actions=multipath(bogus,50,modulo_n,1,0,NXM_NX_REG0[0..1])", "actions=multipath(eth_src,50,modulo_n,8,0,NXM_NX_REG0[0..1])",
	"actions=bundle(eth_src,0,bogus,ofport,members:1)", "actions=sample(collector_set_id=1)",
	"actions=check_pkt_larger(100)->NXM_NX_REG0[0..1]", "actions=learn(table=255)", "actions=learn(bogus=1)",
	"actions=note:zz", "actions=output:NXM_NX_REG0[40]", "actions=fin_timeout(bogus=1)", "actions=goto_table:x",
	"actions=apply_actions(output:1)", "actions=clear_actions,output:1", "actions=output:1,goto_table:1,goto_table:2",
	"ip,actions=ct(nat(src=1.1.1.1,dst=2.2.2.2))", "ip,actions=ct(nat(foo))", "actions=set_tunnel:x",
	"actions=write_metadata:0x1/0x2/0x3", "actions=group:x", "actions=set_field:1->ct_mark",
	"actions=conjunction(1,1/2),output:1", "actions=learn(load:ip_dst->reg3[])", "table=3,actions=goto_table:2",
	"table=3,actions=goto_table:3",
}

func TestParseActionErrorsAreOVSOfctls(t *testing.T) {
	ofctl := nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	for _, f := range badActionFlows {
		out, _ := exec.Command(ofctl, "parse-flow", f).CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		want := strings.TrimPrefix(lines[len(lines)-1], "ovs-ofctl: ")
		_, err := ParseFlow(f, mf.OF10)
		if err == nil {
			t.Errorf("ParseFlow(%q) succeeded; ovs-ofctl says %q", f, want)
			continue
		}
		if err.Error() != want {
			t.Errorf("ParseFlow(%q)\n got %q\nwant %q", f, err, want)
		}
	}
}

// learn checks the learned flow's match as it builds it, as ovs-ofctl.
func TestParseLearnChecksLikeOVSOfctl(t *testing.T) {
	ofctl := nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	for _, f := range []string{
		"tcp,actions=learn(NXM_OF_IP_SRC[])", "actions=learn(eth_type=0x800,NXM_OF_IP_SRC[])",
		"ip,actions=learn(NXM_OF_ETH_TYPE[],NXM_OF_IP_SRC[])", "actions=learn(eth_type=0x800,load:0x1->NXM_OF_IP_SRC[])",
		"actions=learn(load:0x1->NXM_OF_IP_SRC[])", "tcp,actions=learn(eth_type=0x800,nw_proto=6,NXM_OF_TCP_SRC[])",
		"actions=learn(table=2,eth_type=0x86dd,ipv6_src=::1,nw_proto=17,udp_dst=53,output:NXM_OF_IN_PORT[])",
		"actions=learn(table=2,eth_type=0x86dd,udp_dst=53)",
	} {
		out, _ := exec.Command(ofctl, "parse-flow", f).CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		want := strings.TrimPrefix(lines[len(lines)-1], "ovs-ofctl: ")
		fl, err := ParseFlow(f, mf.OF10)
		got := ""
		if err != nil {
			got = err.Error()
		} else if _, body, ok := strings.Cut(want, ": ADD "); ok {
			got, want = FormatFlowMod(fl), body
		}
		if got != want {
			t.Errorf("ParseFlow(%q)\n got %q\nwant %q", f, got, want)
		}
	}
}
