package conntrack

import (
	"errors"
	"testing"
)

// parseMatch builds a Match from dpctl/flush-conntrack's tuple text.
func parseMatch(t *testing.T, orig, reply string) *Match {
	t.Helper()
	var m Match
	if err := m.ParseTupleMatch(&m.Orig, orig); err != nil {
		t.Fatalf("orig %q: %v", orig, err)
	}
	if err := m.ParseTupleMatch(&m.Reply, reply); err != nil {
		t.Fatalf("reply %q: %v", reply, err)
	}
	return &m
}

// A flush by partial tuples removes exactly the connections whose
// non-zero fields agree, in the zone given or in every zone: OVN removes
// a load balancer backend with the VIP as the original destination and
// the backend as the reply source.
func TestFlushByPartialTuplesRemovesOnlyMatchingConnections(t *testing.T) {
	tr, _ := newTracker(t)
	for _, z := range []string{"1", "2"} {
		// Two clients to the VIP 172.16.0.1:80, DNATed to two backends.
		run(t, tr, "ct(commit,zone="+z+",nat(dst=10.1.1.1:8080))", udp4(t, cA, "172.16.0.1", 4000, 80))
		run(t, tr, "ct(commit,zone="+z+",nat(dst=10.1.1.2:8080))", udp4(t, cB, "172.16.0.1", 4001, 80))
		run(t, tr, "ct(commit,zone="+z+")", udp4(t, cA, cB, 5000, 53))
	}
	if tr.Count() != 6 {
		t.Fatalf("count %d, want 6", tr.Count())
	}
	backend1 := parseMatch(t, "ct_nw_dst=172.16.0.1,ct_nw_proto=17,ct_tp_dst=80", "ct_nw_src=10.1.1.1,ct_tp_src=8080")
	zone2 := uint16(2)
	if n, err := tr.Flush(&zone2, backend1); n != 1 || err != nil || tr.ZoneCount(2) != 2 || tr.ZoneCount(1) != 3 {
		t.Fatalf("zone 2 backend flush: %d %v, zones %d/%d", n, err, tr.ZoneCount(1), tr.ZoneCount(2))
	}
	// No zone: every zone.
	vip := parseMatch(t, "ct_nw_dst=172.16.0.1,ct_nw_proto=17,ct_tp_dst=80", "")
	if n, err := tr.Flush(nil, vip); n != 3 || err != nil || tr.Count() != 2 {
		t.Fatalf("all-zone VIP flush: %d %v, count %d", n, err, tr.Count())
	}
	// The wrong protocol matches nothing.
	tcp := parseMatch(t, "ct_nw_proto=6", "")
	if n, _ := tr.Flush(nil, tcp); n != 0 || tr.Count() != 2 {
		t.Fatalf("tcp flush removed %d", n)
	}
	// A full original tuple and no reply: that connection of that zone
	// (zone 0 without one), or ErrNoSuchTuple.
	full := parseMatch(t, "ct_nw_src=10.0.0.1,ct_nw_dst=10.0.0.2,ct_nw_proto=17,ct_tp_src=5000,ct_tp_dst=53", "")
	if _, err := tr.Flush(nil, full); !errors.Is(err, ErrNoSuchTuple) || tr.Count() != 2 {
		t.Fatalf("five-tuple in zone 0: %v, count %d", err, tr.Count())
	}
	zone1 := uint16(1)
	if n, err := tr.Flush(&zone1, full); n != 1 || err != nil || tr.ZoneCount(1) != 0 || tr.ZoneCount(2) != 1 {
		t.Fatalf("five-tuple in zone 1: %d %v", n, err)
	}
	// An empty match flushes the zone, or everything.
	if n, _ := tr.Flush(nil, &Match{}); n != 1 || tr.Count() != 0 {
		t.Fatalf("empty match: %d, count %d", n, tr.Count())
	}
}

// ICMP's identifier, type and code are compared even when zero, as
// Open vSwitch does: a match naming only addresses does not select an
// echo with a non-zero identifier.
func TestFlushICMPComparesIdentifierTypeAndCode(t *testing.T) {
	tr, _ := newTracker(t)
	run(t, tr, "ct(commit)", icmp4Echo(t, cA, cB, 8, 7))
	addrOnly := parseMatch(t, "ct_nw_src=10.0.0.1,ct_nw_proto=1", "")
	if n, _ := tr.Flush(nil, addrOnly); n != 0 {
		t.Fatalf("address-only ICMP match removed %d", n)
	}
	exact := parseMatch(t, "ct_nw_src=10.0.0.1,ct_nw_proto=1,icmp_id=7,icmp_type=8,icmp_code=0", "ct_nw_src=10.0.0.2,ct_nw_proto=1,icmp_id=7,icmp_type=0,icmp_code=0")
	if n, err := tr.Flush(nil, exact); n != 1 || err != nil {
		t.Fatalf("exact ICMP match: %d %v", n, err)
	}
}

// Tuple text errors read as Open vSwitch's dpctl reports them.
func TestParseTupleMatchErrorsAsOpenVSwitch(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ct_nw_src=", "field ct_nw_src missing value"},
		{"ct_nw_src=10.0.0.1,ct_ipv6_dst=::1", "the L3 protocol does not match ::1"},
		{"ct_nw_src=10.0.0.1,ct_nw_src=10.0.0.2", "ct_nw_src is set multiple times"},
		{"ct_nw_src=10.0.0.300", "failed to parse field ct_nw_src"},
		{"icmp_id=1", "invalid L4 fields"},
		{"ct_tp_src=1", "port is set without protocol"},
		{"foo=1", "invalid conntrack tuple field: foo"},
	} {
		var m Match
		err := m.ParseTupleMatch(&m.Orig, c.in)
		if err == nil || err.Error() != c.want || !errors.Is(err, ErrBadTuple) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

// FuzzParseTupleMatch: any text parses or fails cleanly, and a parsed
// tuple's family agrees with its addresses.
func FuzzParseTupleMatch(f *testing.F) {
	for _, s := range []string{
		"ct_nw_src=10.0.0.1,ct_nw_dst=10.0.0.2,ct_nw_proto=17,ct_tp_src=1,ct_tp_dst=2",
		"ct_ipv6_src=fd00::1,ct_nw_proto=58,icmp_id=1,icmp_type=128,icmp_code=0",
		"ct_nw_src=", "ct_tp_dst=1", "icmp_type=300", ",,", "foo",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var m Match
		if err := m.ParseTupleMatch(&m.Orig, s); err != nil {
			if !errors.Is(err, ErrBadTuple) {
				t.Fatalf("%q: error %v is not ErrBadTuple", s, err)
			}
			return
		}
		if m.Orig.Src != ([16]byte{}) && m.Family == 0 {
			t.Fatalf("%q: address without family", s)
		}
	})
}

// The texts are Open vSwitch's ct_dpif DBG lines, as ovs-ofctl.at's
// "ct-flush-zone" and "ct-flush" groups expect them.
func TestFormatFlushAsOpenVSwitchLogsIt(t *testing.T) {
	zone := func(z uint16) *uint16 { return &z }
	v4 := func(a, b, c, d byte) [16]byte { return [16]byte{a, b, c, d} }
	for _, c := range []struct {
		zone *uint16
		m    *Match
		want string
	}{
		{zone(123), nil, "zone 123"},
		{nil, nil, "<all>"},
		{zone(7), &Match{}, "zone 7"},
		{zone(5), &Match{Family: 4, Proto: 17, Orig: TupleMatch{Src: v4(10, 1, 1, 1), Dst: v4(10, 1, 1, 2), SrcPort: 1}},
			"zone=5 'ct_nw_src=10.1.1.1,ct_nw_dst=10.1.1.2,ct_tp_src=1,ct_tp_dst=0,ct_nw_proto=17' 'ct_nw_src=::,ct_nw_dst=::,ct_tp_src=0,ct_tp_dst=0'"},
		{nil, &Match{Family: 4, Proto: 17, Reply: TupleMatch{Src: v4(10, 1, 1, 3), Dst: v4(10, 1, 1, 4), SrcPort: 1}},
			"zone=0 'ct_nw_src=::,ct_nw_dst=::,ct_tp_src=0,ct_tp_dst=0,ct_nw_proto=17' 'ct_nw_src=10.1.1.3,ct_nw_dst=10.1.1.4,ct_tp_src=1,ct_tp_dst=0'"},
		{nil, &Match{Family: 6, Proto: 58, Orig: TupleMatch{Src: [16]byte{0: 0xfd, 15: 1}, ICMPID: 7, ICMPType: 128}},
			"zone=0 'ct_ipv6_src=fd00::1,ct_ipv6_dst=::,icmp_id=7,icmp_type=128,icmp_code=0,ct_nw_proto=58' 'ct_ipv6_src=::,ct_ipv6_dst=::,icmp_id=0,icmp_type=0,icmp_code=0'"},
	} {
		if got := FormatFlush(c.zone, c.m); got != c.want {
			t.Errorf("FormatFlush(%v, %+v)\n got %s\nwant %s", c.zone, c.m, got, c.want)
		}
	}
}
