package mcsnoop

import (
	"encoding/hex"
	"net/netip"
	"testing"
)

func num(p PortID) string { return map[PortID]string{"p1": "1", "p2": "2", "p3": "3"}[p] }

func TestShowListsGroupsThenQueriersWithAges(t *testing.T) {
	tb := New(DefaultConfig())
	tb.AddGroup(netip.MustParseAddr("224.1.1.1"), 1, "p1", 1000)
	tb.AddGroup(netip.MustParseAddr("224.1.1.1"), 2, "p1", 1000)
	tb.AddMrouter(1, "p3", 2000)
	tb.AddGroup(netip.MustParseAddr("ff02::1:ff0e:4c67"), 0, "p2", 3000)
	want := " port  VLAN  GROUP                Age\n" +
		"    1     1  224.1.1.1           4\n" +
		"    1     2  224.1.1.1           4\n" +
		"    2     0  ff02::1:ff0e:4c67           2\n" +
		"    3     1  querier               3\n"
	if got := tb.Show(5000, num); got != want {
		t.Fatalf("show:\n%s\nwant:\n%s", got, want)
	}
}

func TestRouterAndFloodPortsDoNotJoinGroups(t *testing.T) {
	tb := New(DefaultConfig())
	g := netip.MustParseAddr("239.1.1.1")
	tb.AddMrouter(5, "p1", 0)
	tb.SetPortFlood("p2", true)
	if tb.AddGroup(g, 5, "p1", 0) || tb.AddGroup(g, 5, "p2", 0) {
		t.Fatal("router or flood port joined a group")
	}
	if _, ok := tb.Lookup(g, 5); ok {
		t.Fatal("group exists")
	}
	if !tb.AddGroup(g, 6, "p1", 0) {
		t.Fatal("a router of VLAN 5 could not join in VLAN 6")
	}
}

func TestMembersAgeOutAndRoutersAfter180Seconds(t *testing.T) {
	tb := New(Config{IdleTime: 20, MaxEntries: 100, FloodUnreg: true})
	g := netip.MustParseAddr("239.1.1.1")
	tb.AddGroup(g, 0, "p1", 0)
	tb.AddGroup(g, 0, "p2", 10_000)
	tb.AddMrouter(0, "p3", 0)
	tb.Run(19_000)
	if ports, _ := tb.Lookup(g, 0); len(ports) != 2 {
		t.Fatalf("before aging: %v", ports)
	}
	if !tb.Run(20_000) {
		t.Fatal("aging did not ask for revalidation")
	}
	if ports, _ := tb.Lookup(g, 0); len(ports) != 1 || ports[0] != "p2" {
		t.Fatalf("after p1 aged: %v", ports)
	}
	tb.Run(30_000)
	if _, ok := tb.Lookup(g, 0); ok {
		t.Fatal("group outlived its members")
	}
	if len(tb.Mrouters(0)) != 1 {
		t.Fatal("router aged early")
	}
	tb.Run(180_000)
	if len(tb.Mrouters(0)) != 0 {
		t.Fatal("router did not age at 180 s")
	}
}

func TestTableSizeDropsTheLeastRecentlyUsedGroup(t *testing.T) {
	tb := New(Config{IdleTime: 300, MaxEntries: 10, FloodUnreg: true})
	for i := 0; i < 11; i++ {
		tb.AddGroup(netip.AddrFrom4([4]byte{239, 0, 0, byte(i)}), 0, "p1", 0)
	}
	if _, ok := tb.Lookup(netip.AddrFrom4([4]byte{239, 0, 0, 0}), 0); ok {
		t.Fatal("oldest group kept")
	}
	if _, ok := tb.Lookup(netip.AddrFrom4([4]byte{239, 0, 0, 10}), 0); !ok {
		t.Fatal("newest group dropped")
	}
}

func TestFlushPortForgetsItsGroupsAndRouters(t *testing.T) {
	tb := New(DefaultConfig())
	g := netip.MustParseAddr("224.1.1.1")
	tb.AddGroup(g, 1, "p1", 0)
	tb.AddMrouter(1, "p3", 0)
	tb.FlushPort("p3")
	if got := tb.Show(0, num); got != " port  VLAN  GROUP                Age\n    1     1  224.1.1.1           0\n" {
		t.Fatalf("after flushing p3:\n%s", got)
	}
	tb.FlushPort("p1")
	if _, ok := tb.Lookup(g, 1); ok {
		t.Fatal("group left without members")
	}
}

func TestFloodReportsPortsDoNotLeaveOnTheFirstLeave(t *testing.T) {
	tb := New(DefaultConfig())
	g := netip.MustParseAddr("224.1.1.1")
	tb.SetPortFloodReports("p1", true)
	tb.AddGroup(g, 0, "p1", 0)
	if tb.LeaveGroup(g, 0, "p1") {
		t.Fatal("flood-reports port left")
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The messages of Open vSwitch's mcast-snooping.at, from their IP payloads.
func TestDecodeMessagesOfOpenVSwitchsTests(t *testing.T) {
	src := netip.MustParseAddr("172.17.25.1")
	m, err := DecodeIGMP(src, mustHex(t, "1164ec1e00000000027d0000"))
	if err != nil || m.Kind != KindQuery {
		t.Fatalf("v3 query: %+v %v", m, err)
	}
	if _, err := DecodeIGMP(src, mustHex(t, "1164ec1000000000027d0000")); err != ErrChecksum {
		t.Fatalf("bad checksum: %v", err)
	}
	m, err = DecodeIGMP(netip.MustParseAddr("172.16.34.30"), mustHex(t, "12140ce9e0010101"))
	if err != nil || m.Kind != KindJoin || m.Group != netip.MustParseAddr("224.1.1.1") {
		t.Fatalf("v1 report: %+v %v", m, err)
	}
	v6src := netip.MustParseAddr("::")
	v6dst := netip.MustParseAddr("ff02::1:ff0e:4c67")
	m, err = DecodeMLD(v6src, v6dst, mustHex(t, "8300e7b800000000ff0200000000000000000001ff0e4c67"))
	if err != nil || m.Kind != KindJoin || m.Group != v6dst {
		t.Fatalf("MLD report: %+v %v", m, err)
	}
	if _, err := DecodeMLD(v6src, v6dst, mustHex(t, "8300e7b000000000ff0200000000000000000001ff0e4c67")); err != ErrChecksum {
		t.Fatalf("MLD bad checksum: %v", err)
	}
}

func TestIGMPv3RecordsJoinAndLeave(t *testing.T) {
	// Two records: EXCLUDE{} 239.1.1.1 (join), TO_IN{} 239.1.1.2 (leave).
	msg := []byte{0x22, 0, 0, 0, 0, 0, 0, 2,
		4, 0, 0, 0, 239, 1, 1, 1,
		3, 0, 0, 0, 239, 1, 1, 2}
	c := checksum(msg, 0)
	msg[2], msg[3] = byte(c>>8), byte(c)
	m, err := DecodeIGMP(netip.MustParseAddr("10.0.0.1"), msg)
	if err != nil || len(m.Records) != 2 || m.Records[0].Leave || !m.Records[1].Leave {
		t.Fatalf("%+v %v", m, err)
	}
	tb := New(DefaultConfig())
	tb.AddGroup(netip.MustParseAddr("239.1.1.2"), 0, "p1", 0)
	if n := tb.Apply(m, 0, "p1", 0); n != 2 {
		t.Fatalf("count %d", n)
	}
}
