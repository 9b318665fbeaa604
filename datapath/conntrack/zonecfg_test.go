package conntrack

import (
	"testing"

	"github.com/gvs-project/gvs/datapath/odp"
)

// TestZoneConfigPushesLimitsAndPoliciesIntoExistingZones: a zone that
// exists takes a change at once; a zone created later takes it from
// apply; a zone's own policy survives a new default.
func TestZoneConfigPushesLimitsAndPoliciesIntoExistingZones(t *testing.T) {
	var c zoneConfig
	c.init()
	zones := new(zoneSlots)
	z3 := newZone(3, newBuckets(minBuckets))
	c.apply(z3)
	zones[3].Store(z3)

	def := uint32(10)
	c.setLimits(zones, &def, map[uint16]uint32{3: 5})
	if got := z3.limit.Load(); got != 5 {
		t.Fatalf("zone 3 limit = %d, want 5", got)
	}
	z4 := newZone(4, newBuckets(minBuckets))
	c.apply(z4)
	if got := z4.limit.Load(); got != 10 {
		t.Fatalf("new zone 4 limit = %d, want the default 10", got)
	}
	c.deleteLimits(zones, []uint16{3})
	if got := z3.limit.Load(); got != 10 {
		t.Fatalf("zone 3 limit after delete = %d, want the default 10", got)
	}

	own := DefaultTimeoutPolicy()
	own[UDPFirst] = 7
	c.setZonePolicy(zones, 3, &own)
	own[UDPFirst] = 8 // the config keeps its own copy
	if got := c.policy(z3)[UDPFirst]; got != 7 {
		t.Fatalf("zone 3 udp_first = %d, want 7", got)
	}
	nd := DefaultTimeoutPolicy()
	nd[UDPFirst] = 99
	c.setDefaultPolicy(zones, nd)
	if got := c.policy(z3)[UDPFirst]; got != 7 {
		t.Fatalf("zone 3 udp_first after a new default = %d, want its own 7", got)
	}
	if got := c.policy(nil)[UDPFirst]; got != 99 {
		t.Fatalf("policy of a zone not created yet: udp_first = %d, want 99", got)
	}
	c.setZonePolicy(zones, 3, nil)
	if got := c.zonePolicy(3)[UDPFirst]; got != 99 || c.policy(z3)[UDPFirst] != 99 {
		t.Fatalf("zone 3 udp_first after revert = %d, want the default 99", got)
	}
}

// TestNATChooserSkipsReplyKeysInUse: with the only port of a range
// taken, SNAT without a port range falls back to the ephemeral range;
// with a one-port range it is exhausted.
func TestNATChooserSkipsReplyKeysInUse(t *testing.T) {
	tr := New(Config{})
	a := &odp.CtParams{Zone: 1, Commit: true, NAT: &odp.CtNAT{Src: true, HasAddr: true}}
	a.NAT.MinAddr[0], a.NAT.MinAddr[1], a.NAT.MinAddr[2], a.NAT.MinAddr[3] = 192, 168, 0, 100
	a.NAT.MaxAddr = a.NAT.MinAddr
	first := Key{Zone: 1, Family: 4, Proto: protoUDP, Src: [16]byte{10, 0, 0, 1}, Dst: [16]byte{10, 0, 0, 2}, SrcPort: 5000, DstPort: 53}
	pi := pktInfo{key: first}
	if c, ok := tr.commit(nil, &pi, a, false, 0); !ok || c == nil {
		t.Fatal("first commit refused")
	}
	z := tr.zones[1].Load()
	second := first
	second.Src[3] = 2 // another client, same source port
	z.mu.Lock()
	rev, kind, ok := tr.nat.choose(z, &second, a.NAT)
	z.mu.Unlock()
	if !ok || kind != natSrc || rev.DstPort < ephemeralMin || rev.DstPort == 5000 || rev.Dst != a.NAT.MinAddr {
		t.Fatalf("choose = %+v, %d, %v; want 192.168.0.100 on an ephemeral port", rev, kind, ok)
	}
	one := *a.NAT
	one.MinPort, one.MaxPort = 5000, 5000
	z.mu.Lock()
	_, _, ok = tr.nat.choose(z, &second, &one)
	z.mu.Unlock()
	if ok {
		t.Fatal("choose found a free key in a one-port range already in use")
	}
}
