package tests

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/ovsoracle"
)

// coppSteps are OVN's control-plane protection pipeline: packet-ins from
// controller(userdata=...,meter_id=N) go through meter N (as OVN's CoPP
// and metered ACL logging), packet-ins without a meter through the
// "controller" meter once it exists, and sampling through the
// "slowpath" meter. The traces show the datapath actions; a burst of
// real packets shows the meter's drops in meter-stats.
func coppSteps() []ofStep {
	s := []ofStep{
		ofctl("-O", "OpenFlow13", "add-meter", "br0", "meter=1,pktps,band=type=drop,rate=10"),
		ofctl("-O", "OpenFlow13", "add-meter", "br0", "meter=2,kbps,burst,band=type=drop,rate=100,burst_size=10"),
		ofctl("add-flow", "br0", "in_port=1,actions=controller(userdata=00.00.00.12.00.00.00.00,meter_id=1)"),
		ofctl("add-flow", "br0", "in_port=2,actions=controller(reason=no_match,max_len=128,meter_id=2),output:3"),
		ofctl("add-flow", "br0", "in_port=3,actions=controller(userdata=01.02),output:1"),
		ofctl("add-flow", "br0", "in_port=LOCAL,actions=controller(meter_id=9)"),
		ofctl("dump-flows", "br0", "--no-stats"),
		appctl("ofproto/trace", "br0", "in_port=1,tcp"),
		appctl("ofproto/trace", "br0", "in_port=2,udp"),
		appctl("ofproto/trace", "br0", "in_port=3,icmp"),
		appctl("ofproto/trace", "br0", "in_port=LOCAL,icmp"),
		ofctl("-O", "OpenFlow13", "add-meter", "br0", "meter=controller,pktps,band=type=drop,rate=5"),
		appctl("ofproto/trace", "br0", "in_port=3,icmp"),
		appctl("ofproto/trace", "br0", "in_port=LOCAL,icmp"),
		appctl("ofproto/trace", "br0", "in_port=1,tcp"),
		ofctl("-O", "OpenFlow13", "dump-meters", "br0"),
	}
	for i := 0; i < 40; i++ {
		s = append(s, appctl("netdev-dummy/receive", "p1", "in_port(1),eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=1000,dst=80)"))
	}
	s = append(s, appctl("revalidator/wait"), appctl("revalidator/wait"),
		ofctl("-O", "OpenFlow13", "meter-stats", "br0", "meter=1"),
		ofctl("-O", "OpenFlow13", "del-meter", "br0", "controller"),
		appctl("ofproto/trace", "br0", "in_port=3,icmp"),
	)
	return s
}

// TestControllerMetersLikeOpenVSwitch: controller actions with a meter,
// the controller and slowpath meters translate and rate-limit packet-ins
// as in Open vSwitch 3.1.
func TestControllerMetersLikeOpenVSwitch(t *testing.T) {
	// How many of the burst the band drops depends on how fast the 40
	// ovs-appctl calls run (the bucket refills at 10/s): each switch must
	// drop at least 20, and the rest of the reply must be the same.
	band := regexp.MustCompile(`packet_in_count:40 .*\n\s*0: packet_count:(\d+) byte_count:\d+`)
	var stats []string
	diffOneBridgeAgainstOpenVSwitch(t, coppSteps, func(s string) string {
		if strings.Contains(s, "meter-stats") {
			stats = append(stats, s)
			if m := band.FindStringSubmatch(s); m == nil || len(m[1]) < 2 || m[1] < "20" {
				t.Errorf("meter 1 did not drop the burst:\n%s", s)
			}
			s = regexp.MustCompile(`0: packet_count:\d+ byte_count:\d+`).ReplaceAllString(s, "0: packet_count:N byte_count:N")
		}
		return maskRecircID(ovsoracle.MaskDurations(s))
	})
	if len(stats) != 2 {
		t.Errorf("saw %d meter-stats outputs, want 2", len(stats))
	}
}
