package router

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/internal/ovscmd/ovscmdtest"
)

func staticAddrs(m map[string][]netip.Prefix) AddrsFunc {
	return func(dev string) []netip.Prefix { return m[dev] }
}

func TestLookupPrefersLongestPrefixThenUserThenLocal(t *testing.T) {
	tbl := New(staticAddrs(map[string][]netip.Prefix{
		"br0":  {netip.MustParsePrefix("10.0.0.1/8")},
		"eth0": {netip.MustParsePrefix("10.0.0.2/8")},
	}))
	tbl.ReplaceCached([]KernelRoute{
		{Dst: netip.MustParsePrefix("10.0.0.0/8"), Dev: "eth0"},
		{Dst: netip.MustParsePrefix("10.1.0.0/16"), Dev: "eth0", Gateway: netip.MustParseAddr("10.0.0.254")},
		{Dst: netip.MustParsePrefix("10.0.0.2/32"), Dev: "eth0", Local: true},
	})
	if err := tbl.Add(netip.MustParsePrefix("10.1.0.0/16"), "br0", netip.Addr{}, 0); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Add(netip.MustParsePrefix("10.0.0.2/32"), "br0", netip.Addr{}, 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dst, dev, gw, src string }{
		{"10.9.9.9", "eth0", "invalid IP", "10.0.0.2"},
		{"10.1.2.3", "br0", "invalid IP", "10.0.0.1"},  // user beats cached of equal length
		{"10.0.0.2", "eth0", "invalid IP", "10.0.0.2"}, // local beats user of equal length
	} {
		r, ok := tbl.Lookup(netip.MustParseAddr(tc.dst), 0)
		if !ok || r.Dev != tc.dev || r.Gateway.String() != tc.gw || r.Src.String() != tc.src {
			t.Errorf("Lookup(%s) = %+v, %v; want dev %s gw %s src %s", tc.dst, r, ok, tc.dev, tc.gw, tc.src)
		}
	}
	if _, ok := tbl.Lookup(netip.MustParseAddr("10.9.9.9"), 5); ok {
		t.Error("a mark without routes matched routes of mark 0")
	}
}

func TestSourceIsLongestCoveringDeviceAddressElseGateway(t *testing.T) {
	tbl := New(staticAddrs(map[string][]netip.Prefix{"br0": {
		netip.MustParsePrefix("fd00::1/64"),
		netip.MustParsePrefix("192.168.0.1/16"),
		netip.MustParsePrefix("192.168.1.1/24"),
		netip.MustParsePrefix("192.168.1.9/24"),
	}}))
	for _, tc := range []struct{ dst, gw, src string }{
		{"192.168.1.0/24", "", "192.168.1.1"},
		{"192.168.7.0/24", "", "192.168.0.1"},
		{"8.8.8.0/24", "192.168.1.254", "192.168.1.1"},
		{"2001::/16", "fd00::fe", "fd00::1"},
	} {
		var gw netip.Addr
		if tc.gw != "" {
			gw = netip.MustParseAddr(tc.gw)
		}
		if err := tbl.Add(netip.MustParsePrefix(tc.dst), "br0", gw, 0); err != nil {
			t.Fatalf("Add %s: %v", tc.dst, err)
		}
		r, _ := tbl.Lookup(netip.MustParsePrefix(tc.dst).Addr(), 0)
		if r.Src.String() != tc.src {
			t.Errorf("%s: src %s, want %s", tc.dst, r.Src, tc.src)
		}
	}
	if err := tbl.Add(netip.MustParsePrefix("8.8.4.0/24"), "br0", netip.Addr{}, 0); err != ErrNoSource {
		t.Errorf("route without a usable source: err %v, want ErrNoSource", err)
	}
}

// naive is a linear reference for Lookup: highest priority among matching
// routes, first in listing order on ties.
func naive(routes []Route, dst netip.Addr, mark uint32) (Route, bool) {
	var best Route
	found := false
	d := to16(dst)
	for _, r := range routes {
		pl := plen128(r.Prefix)
		if r.Mark != mark || and16(d, masks[pl]) != to16(r.Prefix.Addr()) {
			continue
		}
		if !found || r.priority > best.priority {
			best, found = r, true
		}
	}
	return best, found
}

func TestLookupAgreesWithLinearReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	addrs := staticAddrs(map[string][]netip.Prefix{"d": {netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}})
	for round := 0; round < 20; round++ {
		tbl := New(addrs)
		randAddr := func() netip.Addr {
			if rng.IntN(2) == 0 {
				return netip.AddrFrom4([4]byte{10, byte(rng.IntN(4)), byte(rng.IntN(256)), byte(rng.IntN(256))})
			}
			return netip.AddrFrom16([16]byte{0: 0xfd, 1: byte(rng.IntN(4)), 15: byte(rng.IntN(256))})
		}
		var kr []KernelRoute
		for i := 0; i < 50; i++ {
			a := randAddr()
			max := 32
			if a.Is6() {
				max = 128
			}
			p := netip.PrefixFrom(a, rng.IntN(max+1))
			mark := uint32(rng.IntN(3))
			if rng.IntN(2) == 0 {
				_ = tbl.Add(p, "d", netip.Addr{}, mark)
			} else {
				kr = append(kr, KernelRoute{Dst: p, Dev: "d", Mark: mark, Local: rng.IntN(4) == 0})
			}
		}
		tbl.ReplaceCached(kr)
		tbl.mu.Lock()
		var all []Route
		for _, st := range tbl.subtables {
			for _, r := range st.rules {
				all = append(all, *r)
			}
		}
		tbl.mu.Unlock()
		for i := 0; i < 2000; i++ {
			dst, mark := randAddr(), uint32(rng.IntN(3))
			got, ok := tbl.Lookup(dst, mark)
			want, wok := naive(all, dst, mark)
			if ok != wok || got.priority != want.priority || got.Prefix != want.Prefix {
				t.Fatalf("Lookup(%s, %d) = %v %v, reference %v %v", dst, mark, got, ok, want, wok)
			}
		}
	}
}

func TestLookupDoesNotAllocate(t *testing.T) {
	tbl := benchTable()
	dst := netip.MustParseAddr("10.1.2.3")
	if n := testing.AllocsPerRun(1000, func() { tbl.Lookup(dst, 0) }); n != 0 {
		t.Fatalf("Lookup allocates %v times", n)
	}
}

func benchTable() *Table {
	tbl := New(staticAddrs(map[string][]netip.Prefix{"br0": {netip.MustParsePrefix("10.0.0.1/8")}}))
	var kr []KernelRoute
	for i := 0; i < 256; i++ {
		kr = append(kr, KernelRoute{Dst: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i), 0, 0}), 16), Dev: "br0"})
		kr = append(kr, KernelRoute{Dst: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i), 1, 0}), 24), Dev: "br0"})
		kr = append(kr, KernelRoute{Dst: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i), 1, 1}), 32), Dev: "br0", Local: true})
	}
	kr = append(kr, KernelRoute{Dst: netip.MustParsePrefix("0.0.0.0/0"), Dev: "br0", Gateway: netip.MustParseAddr("10.0.0.254")})
	tbl.ReplaceCached(kr)
	return tbl
}

func BenchmarkLookup(b *testing.B) {
	tbl := benchTable()
	dst := netip.MustParseAddr("10.1.2.3")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := tbl.Lookup(dst, 0); !ok {
			b.Fatal("miss")
		}
	}
}

func BenchmarkLookupParallel(b *testing.B) {
	tbl := benchTable()
	dst := netip.MustParseAddr("10.1.1.1")
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tbl.Lookup(dst, 0)
		}
	})
}

// TestWatchFollowsKernelRouteChanges runs Watch in a fresh namespace and
// checks that added and removed kernel routes show up without a manual
// Sync.
func TestWatchFollowsKernelRouteChanges(t *testing.T) {
	env.Need(t, ovscmdtest.CanNetns(), "root and ip netns")
	ns := env.NewNetns(t)
	sh := func(cmd string) {
		if out, err := exec.Command("ip", "netns", "exec", ns, "sh", "-c", cmd).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", cmd, err, out)
		}
	}
	sh("sysctl -qw net.ipv6.conf.default.addr_gen_mode=1 net.ipv6.conf.all.addr_gen_mode=1; ip link set lo up; ip link add v0 type veth peer name v1; ip link set v0 up; ip link set v1 up; ip addr add 10.1.0.1/24 dev v0")
	k := openKernelIn(t, ns)
	if got := k.Addrs("v0"); len(got) != 1 || got[0] != netip.MustParsePrefix("10.1.0.1/24") {
		t.Fatalf("Addrs(v0) = %v", got)
	}
	tbl := New(k.Addrs)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tbl.Watch(ctx, k) }()
	defer func() {
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Watch returned %v", err)
		}
	}()
	waitFor := func(line string, present bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if strings.Contains(tbl.Show(), line) == present {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("waiting for %q present=%v; table:\n%s", line, present, tbl.Show())
	}
	waitFor("Cached: 10.1.0.0/24 dev v0 SRC 10.1.0.1\n", true)
	sh("ip route add 10.7.0.0/16 via 10.1.0.9")
	waitFor("Cached: 10.7.0.0/16 dev v0 GW 10.1.0.9 SRC 10.1.0.1\n", true)
	sh("ip route del 10.7.0.0/16")
	waitFor("10.7.0.0/16", false)
	sh("ip link set v0 down")
	waitFor("10.1.0.0/24", false)
}

// TestSyncReadsAddressesOnceForEveryDevice: a re-sync (one per burst of
// link or route notifications) reads the links, the routes and every
// device's addresses in one dump each, however many devices hold routes.
func TestSyncReadsAddressesOnceForEveryDevice(t *testing.T) {
	env.Need(t, ovscmdtest.CanNetns(), "root and ip netns")
	ns := env.NewNetns(t)
	const n = 20
	var cmd strings.Builder
	cmd.WriteString("sysctl -qw net.ipv6.conf.default.addr_gen_mode=1 net.ipv6.conf.all.addr_gen_mode=1; ip link set lo up")
	for i := 0; i < n; i += 2 {
		fmt.Fprintf(&cmd, "; ip link add d%d type veth peer name d%d", i, i+1)
	}
	for i := range n {
		fmt.Fprintf(&cmd, "; ip link set d%d up; ip addr add 10.%d.0.1/24 dev d%d; ip addr add 10.%d.0.2/24 dev d%d", i, i, i, i, i)
	}
	if out, err := exec.Command("ip", "netns", "exec", ns, "sh", "-c", cmd.String()).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	k := openKernelIn(t, ns)
	tbl := New(k.Addrs)
	for round := range 2 {
		before := k.dumps.Load()
		if err := tbl.Sync(k); err != nil {
			t.Fatal(err)
		}
		if got := k.dumps.Load() - before; got != 4 {
			t.Errorf("round %d: %d rtnetlink dumps for %d devices, want 4 (links and routes, links and addresses)", round, got, n)
		}
	}
	show := tbl.Show()
	for i := range n {
		want := fmt.Sprintf("Cached: 10.%d.0.0/24 dev d%d SRC 10.%d.0.1\n", i, i, i)
		if !strings.Contains(show, want) {
			t.Errorf("missing %q in\n%s", want, show)
		}
	}
	if got, want := fmt.Sprint(k.Addrs("d7")), "[10.7.0.1/24 10.7.0.2/24]"; got != want {
		t.Errorf("Addrs(d7) = %s, want %s", got, want)
	}
	if got := k.Addrs("nosuchdev"); got != nil {
		t.Errorf("Addrs(nosuchdev) = %v, want nil", got)
	}
}

func TestLookupFromRequiresLocalSourceAndKeepsIt(t *testing.T) {
	tbl := New(staticAddrs(map[string][]netip.Prefix{"eth0": {netip.MustParsePrefix("10.0.0.2/8"), netip.MustParsePrefix("10.0.0.3/8")}}))
	tbl.ReplaceCached([]KernelRoute{
		{Dst: netip.MustParsePrefix("10.0.0.0/8"), Dev: "eth0"},
		{Dst: netip.MustParsePrefix("10.0.0.2/32"), Dev: "eth0", Local: true},
		{Dst: netip.MustParsePrefix("10.0.0.3/32"), Dev: "eth0", Local: true},
	})
	dst := netip.MustParseAddr("10.5.5.5")
	if r, ok := tbl.LookupFrom(dst, netip.MustParseAddr("10.0.0.3"), 0); !ok || r.Src.String() != "10.0.0.3" || r.Dev != "eth0" {
		t.Errorf("LookupFrom(local src) = %+v, %v", r, ok)
	}
	if _, ok := tbl.LookupFrom(dst, netip.MustParseAddr("10.0.0.9"), 0); ok {
		t.Error("LookupFrom accepted a source that is not a local address")
	}
	if r, ok := tbl.LookupFrom(dst, netip.Addr{}, 0); !ok || r.Src.String() != "10.0.0.2" {
		t.Errorf("LookupFrom(no src) = %+v, %v", r, ok)
	}
}

func TestConcurrentLookupsDuringUpdatesAreSafe(t *testing.T) {
	tbl := New(staticAddrs(map[string][]netip.Prefix{"br0": {netip.MustParsePrefix("10.0.0.1/8")}}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 300; i++ {
			p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i), 0, 0}), 16)
			_ = tbl.Add(p, "br0", netip.Addr{}, 0)
			tbl.ReplaceCached([]KernelRoute{{Dst: netip.MustParsePrefix("10.0.0.0/8"), Dev: "br0"}})
			tbl.Del(p, 0)
		}
	}()
	for i := 0; i < 20000; i++ {
		tbl.Lookup(netip.AddrFrom4([4]byte{10, byte(i), 1, 1}), 0)
	}
	<-done
}

func TestOnChangeRunsAfterEachRouteChangeOnly(t *testing.T) {
	tbl := New(staticAddrs(map[string][]netip.Prefix{"br0": {netip.MustParsePrefix("10.0.0.1/8")}}))
	calls := 0
	tbl.OnChange(func() {
		// The callback runs without the table's lock: it may read it.
		_ = tbl.Routes()
		calls++
	})
	kernel := []KernelRoute{{Dst: netip.MustParsePrefix("10.0.0.0/8"), Dev: "br0"}}
	step := func(what string, f func(), want int) {
		t.Helper()
		f()
		if calls != want {
			t.Fatalf("after %s: %d change calls, want %d", what, calls, want)
		}
	}
	step("first kernel dump", func() { tbl.ReplaceCached(kernel) }, 1)
	step("identical re-dump", func() { tbl.ReplaceCached(kernel) }, 1)
	step("user route", func() {
		_ = tbl.Add(netip.MustParsePrefix("192.168.0.0/16"), "br0", netip.MustParseAddr("10.0.0.254"), 0)
	}, 2)
	step("deleting a missing route", func() { tbl.Del(netip.MustParsePrefix("172.16.0.0/12"), 0) }, 2)
	step("deleting the user route", func() { tbl.Del(netip.MustParsePrefix("192.168.0.0/16"), 0) }, 3)
	step("kernel route gone", func() { tbl.ReplaceCached(nil) }, 4)
}
