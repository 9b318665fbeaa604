package router

import (
	"context"
	"flag"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/internal/ovscmd"
	"github.com/gvs-project/gvs/ofproto/internal/ovscmd/ovscmdtest"
	"golang.org/x/sys/unix"
)

// The transcripts in testdata/*.golden are produced by Open vSwitch 3.1
// itself: go test -run TestTranscripts -update runs the shared oracle script
// (ofproto/internal/ovscmd/ovscmdtest/oracle.sh) in a fresh network
// namespace for every testdata/*.txt script.
var update = flag.Bool("update", false, "regenerate testdata/*.golden with the Open vSwitch oracle")

var env = ovscmdtest.Env{Pkg: "ofproto/router", NetnsPrefix: "gvsrt-"}

// inNetns runs fn on a thread switched into namespace ns. Sockets opened by
// fn stay in ns. The thread is discarded afterwards.
func inNetns(t *testing.T, ns string, fn func()) {
	t.Helper()
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		f, err := os.Open("/run/netns/" + ns)
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		fn()
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatalf("enter netns %s: %v", ns, err)
	}
}

// openKernelIn opens a Kernel whose sockets live in namespace ns; it is
// closed at cleanup.
func openKernelIn(t *testing.T, ns string) *Kernel {
	t.Helper()
	var k *Kernel
	var err error
	inNetns(t, ns, func() { k, err = OpenKernel() })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	return k
}

// dummyAddrs models netdev-dummy/ip4addr and ip6addr: one IPv4 and one
// IPv6 address per dummy device, IPv4 listed first.
type dummyAddrs struct {
	v4, v6 map[string]netip.Prefix
}

func newDummyAddrs() *dummyAddrs {
	return &dummyAddrs{v4: map[string]netip.Prefix{}, v6: map[string]netip.Prefix{}}
}

func (d *dummyAddrs) get(dev string) []netip.Prefix {
	var out []netip.Prefix
	if p, ok := d.v4[dev]; ok {
		out = append(out, p)
	}
	if p, ok := d.v6[dev]; ok {
		out = append(out, p)
	}
	return out
}

// orKernel returns the addresses of dummy devices, else k's.
func (d *dummyAddrs) orKernel(k *Kernel) AddrsFunc {
	return func(dev string) []netip.Prefix {
		if a := d.get(dev); a != nil {
			return a
		}
		return k.Addrs(dev)
	}
}

// commands returns tbl's commands plus netdev-dummy/ip4addr and ip6addr,
// which scripts use to give dummy devices addresses.
func (d *dummyAddrs) commands(tbl *Table) []ovscmd.Command {
	set := func(m map[string]netip.Prefix) func(context.Context, []string) (string, error) {
		return func(_ context.Context, args []string) (string, error) {
			m[args[0]] = netip.MustParsePrefix(args[1])
			return "OK\n", nil
		}
	}
	return append(tbl.Commands(),
		ovscmd.Command{Name: "netdev-dummy/ip4addr", MinArgs: 2, MaxArgs: 2, Run: set(d.v4)},
		ovscmd.Command{Name: "netdev-dummy/ip6addr", MinArgs: 2, MaxArgs: 2, Run: set(d.v6)},
	)
}

// TestTranscriptsMatchOVS replays every testdata/*.txt script against a
// Table and compares the transcript byte for byte with Open vSwitch's.
// Scripts with "!" setup lines configure a fresh network namespace, and the
// table then learns that namespace's kernel routes.
func TestTranscriptsMatchOVS(t *testing.T) {
	env.Golden(t, *update, replayScript, nil)
}

// replayScript runs script against a new Table, backed by the kernel of a
// fresh network namespace when the script has setup lines.
func replayScript(t *testing.T, script string) string {
	d := newDummyAddrs()
	if !strings.Contains(script, "\n!") {
		tbl := New(d.get)
		return ovscmdtest.Replay(t, d.commands(tbl), script, nil)
	}
	env.Need(t, ovscmdtest.CanNetns(), "root and ip netns")
	ns := env.NewNetns(t)
	k := openKernelIn(t, ns)
	tbl := New(d.orKernel(k))
	if err := tbl.Sync(k); err != nil {
		t.Fatal(err)
	}
	return ovscmdtest.Replay(t, d.commands(tbl), script, func(cmd string) {
		if out, err := exec.Command("ip", "netns", "exec", ns, "sh", "-c", cmd).CombinedOutput(); err != nil {
			t.Fatalf("setup %q: %v: %s", cmd, err, out)
		}
		if err := tbl.Sync(k); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCachedRoutesMatchLiveOVS runs Open vSwitch and a Table side by side
// in one freshly configured network namespace and compares their route
// listings and lookups: the Cached lines come from the same kernel.
func TestCachedRoutesMatchLiveOVS(t *testing.T) {
	env.Need(t, ovscmdtest.CanNetns() && ovscmdtest.HaveOVS(), "root, ip netns and Open vSwitch")
	b, err := os.ReadFile("testdata/route-kernel.txt")
	if err != nil {
		t.Fatal(err)
	}
	var setup string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "!") {
			setup = l[1:]
			break
		}
	}
	ns := env.NewNetns(t)
	if out, err := exec.Command("ip", "netns", "exec", ns, "sh", "-c", setup+
		"; ip -6 route add 2001:db8:9::/64 dev v1 metric 5; ip route add 10.8.0.0/16 via 10.1.0.250 table local").CombinedOutput(); err != nil {
		t.Fatalf("setup: %v: %s", err, out)
	}
	script := "ovs/route/show\n" +
		"netdev-dummy/ip4addr br0 10.1.0.99/16\n" +
		"ovs/route/add 10.1.0.0/16 br0 pkt_mark=3\n" +
		"ovs/route/show\n" +
		"ovs/route/lookup 10.1.0.5\n" +
		"ovs/route/lookup 10.1.0.5 pkt_mark=3\n" +
		"ovs/route/lookup 2001:db8:1::77\n" +
		"ovs/route/lookup ::1\n" +
		"ovs/route/lookup 10.8.1.1\n"
	want := ovscmdtest.RunOracle(t, ns, script)
	k := openKernelIn(t, ns)
	d := newDummyAddrs()
	tbl := New(d.orKernel(k))
	if err := tbl.Sync(k); err != nil {
		t.Fatal(err)
	}
	got := ovscmdtest.Replay(t, d.commands(tbl), script, nil)
	if got != want {
		t.Errorf("gvs and Open vSwitch disagree in namespace %s\n--- gvs ---\n%s\n--- ovs ---\n%s", ns, got, want)
	}
}
