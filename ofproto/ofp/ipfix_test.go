package ofp_test

import (
	"encoding/hex"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// TestIPFIXStatsRepliesAsOvsOfctlPrintsThem encodes the replies to
// dump-ipfix-bridge and dump-ipfix-flow, decodes them back, and has
// Debian's ovs-ofctl ofp-print read the bytes: every counter lands in its
// field.
func TestIPFIXStatsRepliesAsOvsOfctlPrintsThem(t *testing.T) {
	st := ofp.IPFIXStats{TotalFlows: 1, CurrentFlows: 2, Pkts: 3, IPv4Pkts: 4, IPv6Pkts: 5,
		ErrorPkts: 6, IPv4ErrorPkts: 7, IPv6ErrorPkts: 8, TxPkts: 9, TxErrors: 10}
	flowSt := st
	flowSt.CollectorSetID = 42
	for _, tc := range []struct {
		msg  ofp.Message
		want []string
	}{
		{&ofp.IPFIXBridgeReply{Stats: st}, []string{"NXST_IPFIX_BRIDGE reply",
			"bridge ipfix: flows=1, current flows=2, sampled pkts=3, ipv4 ok=4, ipv6 ok=5, tx pkts=9",
			"pkts errs=6, ipv4 errs=7, ipv6 errs=8, tx errs=10"}},
		{&ofp.IPFIXFlowReply{Stats: []ofp.IPFIXStats{flowSt}}, []string{"NXST_IPFIX_FLOW reply", "1 ids",
			"id  42: flows=1, current flows=2, sampled pkts=3, ipv4 ok=4, ipv6 ok=5, tx pkts=9"}},
		{&ofp.IPFIXBridgeRequest{}, []string{"NXST_IPFIX_BRIDGE request"}},
		{&ofp.IPFIXFlowRequest{}, []string{"NXST_IPFIX_FLOW request"}},
	} {
		b, err := ofp.Encode(nil, 0x04, 7, tc.msg)
		if err != nil {
			t.Fatalf("%T: %v", tc.msg, err)
		}
		m, err := ofp.Decode(b)
		if err != nil {
			t.Fatalf("%T: decoding: %v", tc.msg, err)
		}
		if !reflect.DeepEqual(m.Body, tc.msg) {
			t.Fatalf("%T round trip: %+v", tc.msg, m.Body)
		}
		nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
		out, err := exec.Command("ovs-ofctl", "ofp-print", hex.EncodeToString(b)).CombinedOutput()
		if err != nil {
			t.Fatalf("ovs-ofctl ofp-print: %v\n%s", err, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%T: ovs-ofctl printed\n%s\nwithout %q", tc.msg, out, w)
			}
		}
	}
}
