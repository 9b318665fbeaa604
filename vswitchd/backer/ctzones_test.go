package backer

import (
	"reflect"
	"testing"

	"github.com/gvs-project/gvs/datapath/conntrack"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

func i64(v int64) *int64 { return &v }

func TestApplyZonesSetsAndResetsPoliciesAndLimits(t *testing.T) {
	tr := conntrack.New(conntrack.Config{})
	// A limit set by hand (dpctl/ct-set-limits) on a zone the database
	// does not configure.
	tr.SetLimits(nil, map[uint16]uint32{9: 4})
	first := bridge.DatapathConfig{
		DefaultZoneLimit: i64(10),
		Zones: map[uint16]bridge.ZoneConfig{
			5: {TimeoutPolicy: map[string]int64{"udp_first": 3, "udp_single": 3, "tcp_established": 600, "tcp_unack": 9}},
			6: {Limit: i64(2)},
			7: {TimeoutPolicy: map[string]int64{"icmp_reply": 1}, Limit: i64(0)},
		},
	}
	applyZones(tr, bridge.DatapathConfig{}, first)
	want5 := conntrack.DefaultTimeoutPolicy()
	want5[conntrack.UDPFirst], want5[conntrack.UDPSingle], want5[conntrack.TCPEstablished] = 3, 3, 600
	if got := tr.ZoneTimeoutPolicy(5); got != want5 {
		t.Errorf("zone 5 policy = %v, want %v", got, want5)
	}
	if got := tr.ZoneTimeoutPolicy(6); got != conntrack.DefaultTimeoutPolicy() {
		t.Errorf("zone 6 (no policy) = %v", got)
	}
	def, lims := tr.Limits(5, 6, 7, 9)
	wantLims := []conntrack.ZoneLimit{{Zone: 5, Limit: 10}, {Zone: 6, Limit: 2}, {Zone: 7, Limit: 0}, {Zone: 9, Limit: 4}}
	if def != 10 || !reflect.DeepEqual(lims, wantLims) {
		t.Errorf("limits = %d %+v, want 10 %+v", def, lims, wantLims)
	}

	// Zone 5 gone, zone 6 loses its limit, zone 7 keeps its limit and
	// changes its policy, the default limit is unset.
	second := bridge.DatapathConfig{Zones: map[uint16]bridge.ZoneConfig{
		6: {},
		7: {TimeoutPolicy: map[string]int64{"icmp_reply": 2}, Limit: i64(0)},
	}}
	applyZones(tr, first, second)
	if got := tr.ZoneTimeoutPolicy(5); got != conntrack.DefaultTimeoutPolicy() {
		t.Errorf("zone 5 after its removal = %v", got)
	}
	want7 := conntrack.DefaultTimeoutPolicy()
	want7[conntrack.ICMPReply] = 2
	if got := tr.ZoneTimeoutPolicy(7); got != want7 {
		t.Errorf("zone 7 policy = %v, want %v", got, want7)
	}
	def, lims = tr.Limits()
	wantLims = []conntrack.ZoneLimit{{Zone: 7, Limit: 0}, {Zone: 9, Limit: 4}}
	if def != 0 || !reflect.DeepEqual(lims, wantLims) {
		t.Errorf("explicit limits = %d %+v, want 0 %+v", def, lims, wantLims)
	}

	applyZones(tr, second, bridge.DatapathConfig{})
	if got := tr.ZoneTimeoutPolicy(7); got != conntrack.DefaultTimeoutPolicy() {
		t.Errorf("zone 7 after removal = %v", got)
	}
	if _, lims = tr.Limits(); !reflect.DeepEqual(lims, []conntrack.ZoneLimit{{Zone: 9, Limit: 4}}) {
		t.Errorf("explicit limits at the end = %+v", lims)
	}
}

func TestByDatapathMergesTypesSharingADatapath(t *testing.T) {
	pol := func(v int64) bridge.ZoneConfig {
		return bridge.ZoneConfig{TimeoutPolicy: map[string]int64{"udp_first": v}}
	}
	got := byDatapath(map[string]bridge.DatapathConfig{
		"system": {DefaultZoneLimit: i64(1), Zones: map[uint16]bridge.ZoneConfig{5: pol(1), 8: pol(8)}},
		"netdev": {Zones: map[uint16]bridge.ZoneConfig{5: pol(2)}},
		"dummy":  {Zones: map[uint16]bridge.ZoneConfig{5: pol(3)}},
	})
	want := map[string]bridge.DatapathConfig{
		// "netdev" names gvs's userspace datapath and wins zone 5;
		// "system" (the same datapath in gvs) adds zone 8 and the limit.
		"netdev": {DefaultZoneLimit: i64(1), Zones: map[uint16]bridge.ZoneConfig{5: pol(2), 8: pol(8)}},
		"dummy":  {Zones: map[uint16]bridge.ZoneConfig{5: pol(3)}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("byDatapath = %+v\nwant %+v", got, want)
	}
}

func TestTimeoutPolicyClampsAndIgnoresKernelOnlyKeys(t *testing.T) {
	p := timeoutPolicy(map[string]int64{"tcp_syn_sent": 1 << 40, "udp_multiple": -1, "tcp_close_wait": 5, "tcp_retransmit": 5})
	want := conntrack.DefaultTimeoutPolicy()
	want[conntrack.TCPSynSent], want[conntrack.UDPMultiple] = 1<<32-1, 0
	if p != want {
		t.Fatalf("policy = %v, want %v", p, want)
	}
}
