// Command gvs-demo runs the gvs userspace datapath between two network
// namespaces it creates: each namespace gets a veth whose peer in the
// root namespace becomes a gvs "system" (AF_PACKET) port. It installs
// datapath flows through the Go API (port 1 <-> port 2), pings both ways,
// prints the megaflows in `ovs-appctl dpctl/dump-flows` format and the
// port counters, and removes everything it created. With -keep it keeps
// forwarding until interrupted.
//
// It stands in for the daemon until gvs-vswitchd exists; it needs root
// and iproute2.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/netdev/afpacket"
	"github.com/gvs-project/gvs/datapath/odp"
)

func main() {
	keep := flag.Bool("keep", false, "keep forwarding until interrupted")
	count := flag.Int("count", 3, "pings in each direction")
	flag.Parse()
	if err := run(*keep, *count); err != nil {
		fmt.Fprintln(os.Stderr, "gvs-demo:", err)
		os.Exit(1)
	}
}

type topo struct{ cleanup []func() }

func (t *topo) sh(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (t *topo) close() {
	for i := len(t.cleanup) - 1; i >= 0; i-- {
		t.cleanup[i]()
	}
}

// host creates namespace ns with address addr on a veth whose root-side
// peer is named port.
func (t *topo) host(ns, port, addr string) error {
	inner := port + "i"
	exec.Command("ip", "netns", "del", ns).Run() // leftovers of an interrupted run
	exec.Command("ip", "link", "del", port).Run()
	steps := [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "link", "add", port, "type", "veth", "peer", "name", inner},
		{"ip", "link", "set", inner, "netns", ns},
		{"ip", "-n", ns, "addr", "add", addr, "dev", inner},
		{"ip", "-n", ns, "link", "set", inner, "up"},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
		{"ip", "link", "set", port, "up"},
	}
	t.cleanup = append(t.cleanup, func() {
		exec.Command("ip", "link", "del", port).Run()
		exec.Command("ip", "netns", "del", ns).Run()
	})
	for _, s := range steps {
		if err := t.sh(s...); err != nil {
			return err
		}
	}
	os.WriteFile("/proc/sys/net/ipv6/conf/"+port+"/disable_ipv6", []byte("1"), 0o644)
	return nil
}

func run(keep bool, count int) error {
	t := &topo{}
	defer t.close()
	if err := t.host("gvs-demo-a", "gvsdemo-a", "10.250.0.1/24"); err != nil {
		return err
	}
	if err := t.host("gvs-demo-b", "gvsdemo-b", "10.250.0.2/24"); err != nil {
		return err
	}
	dp := dpnetdev.New("gvs-demo", dpif.DefaultConfig())
	defer dp.Close()
	for i, name := range []string{"gvsdemo-a", "gvsdemo-b"} {
		dev, err := afpacket.Open(afpacket.Config{Name: name})
		if err != nil {
			return err
		}
		defer dev.Close()
		if _, err := dp.AddPort(dev, uint32(i+1)); err != nil {
			return err
		}
	}
	// Two megaflows: whatever enters port 1 leaves port 2 and back.
	for in, out := range map[uint32]uint32{1: 2, 2: 1} {
		var m flow.Match
		m.Key.InPort, m.Mask.InPort = in, ^uint32(0)
		m.Mask.RecircID = ^uint32(0)
		if err := dp.FlowPut(&dpif.FlowPut{Match: m, Actions: odp.Actions{odp.Output(out)}, Flags: dpif.PutCreate}); err != nil {
			return err
		}
	}
	if err := dp.Start(); err != nil {
		return err
	}
	fmt.Println("gvs datapath forwarding between netns gvs-demo-a (10.250.0.1) and gvs-demo-b (10.250.0.2)")
	for _, p := range [][2]string{{"gvs-demo-a", "10.250.0.2"}, {"gvs-demo-b", "10.250.0.1"}} {
		out, err := exec.Command("ip", "netns", "exec", p[0], "ping", "-c", fmt.Sprint(count), "-i", "0.2", "-W", "2", p[1]).CombinedOutput()
		fmt.Printf("$ ip netns exec %s ping %s\n%s", p[0], p[1], out)
		if err != nil {
			return fmt.Errorf("ping from %s failed: %v", p[0], err)
		}
	}
	printState(dp)
	if keep {
		fmt.Println("forwarding; interrupt to stop")
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		tick := time.NewTicker(10 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-sig:
				printState(dp)
				return nil
			case <-tick.C:
				printState(dp)
			}
		}
	}
	return nil
}

func printState(dp *dpnetdev.Datapath) {
	now := time.Now()
	fmt.Println("$ dpctl/dump-flows")
	dp.FlowDump(func(f *dpif.Flow) bool {
		fmt.Println(dpif.FormatFlow(f, now, false))
		return true
	})
	s := dp.Stats()
	fmt.Printf("netdev@%s: hit:%d missed:%d lost:%d flows:%d\n", dp.Name(), s.Hit, s.Missed, s.Lost, s.Flows)
	for _, p := range dp.Ports() {
		st := p.Device.Stats()
		fmt.Printf("  port %d: %s (%s) rx pkts=%d bytes=%d drop=%d tx pkts=%d bytes=%d drop=%d\n",
			p.No, p.Name, p.Type, st.RxPackets, st.RxBytes, st.RxDropped, st.TxPackets, st.TxBytes, st.TxDropped)
	}
}
