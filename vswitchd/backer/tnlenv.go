package backer

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gvs-project/gvs/datapath/netdev/vport"
	"github.com/gvs-project/gvs/ofproto/router"
	"github.com/gvs-project/gvs/ofproto/tnlneigh"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// tunnelEnv is native tunnelling's view of the host: the routing table
// (ovs/route), the neighbour cache (tnl/neigh) and device addresses —
// the kernel's for real devices, netdev-dummy/ip4addr's for dummy ones.
type tunnelEnv struct {
	s      *Backer
	routes *router.Table
	neigh  *tnlneigh.Cache
	kernel *router.Kernel // nil without kernel access (--disable-system)

	mu    sync.Mutex
	dummy map[string][]netip.Prefix // addresses set by netdev-dummy/ip4addr
	// kaddrs caches the kernel's addresses per device: translation reads
	// them on upcalls and must never wait for rtnetlink, so a stale or
	// missing entry is refreshed in the background (refreshing marks the
	// devices being read) and a change makes the bridges revalidate.
	kaddrs     map[string]kernelAddrs
	refreshing map[string]bool
}

type kernelAddrs struct {
	addrs []netip.Prefix
	at    time.Time
}

// kernelAddrTTL is how long a device's kernel addresses are trusted
// before the next upcall that needs them refreshes them.
const kernelAddrTTL = time.Second

var _ xlate.TunnelEnv = (*tunnelEnv)(nil)

func newTunnelEnv(s *Backer, useKernel bool) *tunnelEnv {
	e := &tunnelEnv{s: s, dummy: map[string][]netip.Prefix{}, neigh: tnlneigh.New(),
		kaddrs: map[string]kernelAddrs{}, refreshing: map[string]bool{}}
	// The route table reads addresses synchronously (off the packet path:
	// route changes and commands), so a route gets its source at once.
	e.routes = router.New(e.addrsNow)
	if useKernel {
		if k, err := router.OpenKernel(); err == nil {
			e.kernel = k
			if err := e.routes.Sync(k); err != nil {
				s.log.Warn(fmt.Sprintf("route table: %v", err))
			}
		}
	}
	// A megaflow translated while a route was missing (a drop) or
	// pointed elsewhere must not outlive the route change.
	e.routes.OnChange(e.changed)
	return e
}

// watch keeps the kernel routes current until ctx ends.
func (e *tunnelEnv) watch(ctx context.Context) {
	if e.kernel == nil {
		return
	}
	go func() {
		if err := e.routes.Watch(ctx, e.kernel); err != nil && ctx.Err() == nil {
			e.s.log.Warn(fmt.Sprintf("route table: %v", err))
		}
	}()
}

func (e *tunnelEnv) close() {
	if e.kernel != nil {
		e.kernel.Close()
	}
}

func (e *tunnelEnv) Route(dst netip.Addr, mark uint32) (string, netip.Addr, netip.Addr, bool) {
	r, ok := e.routes.Lookup(dst, mark)
	if !ok {
		return "", netip.Addr{}, netip.Addr{}, false
	}
	return r.Dev, r.Gateway, r.Src, true
}

func (e *tunnelEnv) Neighbor(bridge string, ip netip.Addr) ([6]byte, bool) {
	return e.neigh.Lookup(bridge, ip)
}

func (e *tunnelEnv) NeighborMiss(bridge string, ip netip.Addr) bool {
	return e.neigh.ShouldSendRequest(bridge, ip)
}

// Learn records a neighbour; a new or changed entry makes every bridge
// re-translate its megaflows (those that dropped while it was unknown).
func (e *tunnelEnv) Learn(bridge string, ip netip.Addr, mac [6]byte) {
	old, ok := e.neigh.Lookup(bridge, ip)
	e.neigh.Set(bridge, ip, mac)
	if !ok || old != mac {
		e.changed()
	}
}

// flushNeighbors forgets the neighbour entries learned on a port that
// is going away (Open vSwitch flushes them when it removes the port,
// a bridge's local port with the bridge).
func (e *tunnelEnv) flushNeighbors(port string) {
	if e == nil || port == "" {
		return
	}
	e.neigh.Flush(port)
}

func (e *tunnelEnv) changed() {
	for _, b := range e.s.view.OFBridges() {
		b.TunnelStateChanged()
	}
}

// Addrs returns a device's addresses: those set with
// netdev-dummy/ip4addr, else the kernel's. The first read of a device
// waits for rtnetlink (bounded by its receive timeout): answering "no
// addresses" would let the ARP reply that resolves a tunnel endpoint
// pass unsnooped into a megaflow that hides every later one. After
// that, stale entries are refreshed in the background.
func (e *tunnelEnv) Addrs(dev string) []netip.Prefix {
	e.mu.Lock()
	if a := e.dummy[dev]; a != nil || e.kernel == nil {
		e.mu.Unlock()
		return a
	}
	c, ok := e.kaddrs[dev]
	if !ok {
		e.mu.Unlock()
		return e.addrsNow(dev)
	}
	if time.Since(c.at) > kernelAddrTTL && !e.refreshing[dev] {
		e.refreshing[dev] = true
		go e.refresh(dev)
	}
	e.mu.Unlock()
	return c.addrs
}

// addrsNow reads dev's addresses now (the dummy ones, else the kernel's)
// and refreshes the cache translation reads.
func (e *tunnelEnv) addrsNow(dev string) []netip.Prefix {
	e.mu.Lock()
	a := e.dummy[dev]
	e.mu.Unlock()
	if a != nil || e.kernel == nil {
		return a
	}
	a = e.kernel.Addrs(dev)
	e.mu.Lock()
	e.kaddrs[dev] = kernelAddrs{addrs: a, at: time.Now()}
	e.mu.Unlock()
	return a
}

// refresh reads dev's kernel addresses and, when they changed, makes
// every bridge revalidate (tunnel termination depends on them).
func (e *tunnelEnv) refresh(dev string) {
	a := e.kernel.Addrs(dev)
	e.mu.Lock()
	old, had := e.kaddrs[dev]
	e.kaddrs[dev] = kernelAddrs{addrs: a, at: time.Now()}
	delete(e.refreshing, dev)
	e.mu.Unlock()
	if !had || !slices.Equal(old.addrs, a) {
		e.changed()
	}
}

func (e *tunnelEnv) Request(src [6]byte, srcIP, dstIP netip.Addr) []byte {
	if dstIP.Is4() {
		return tnlneigh.ARPRequest(src, srcIP, dstIP)
	}
	return tnlneigh.NeighborSolicit(src, srcIP, dstIP)
}

// setDummyAddr is netdev-dummy/ip4addr and ip6addr.
func (e *tunnelEnv) setDummyAddr(_ context.Context, args []string) (string, error) {
	dev, addr := args[0], args[1]
	if !e.s.view.hasDummyDevice(dev) {
		return "", fmt.Errorf("Unknown Dummy Interface")
	}
	p, err := netip.ParsePrefix(addr)
	if err != nil {
		return "", fmt.Errorf("Invalid parameters")
	}
	e.mu.Lock()
	e.dummy[dev] = append(e.dummy[dev], p)
	e.mu.Unlock()
	e.changed()
	return "OK", nil
}

// portsShow is tnl/ports/show: the datapath tunnel vports and how many
// tunnel ports use each; types without an entry in Open vSwitch's tunnel
// port map (lisp, bareudp: no IP protocol to pop) are left out.
func (e *tunnelEnv) portsShow(context.Context, []string) (string, error) {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	var lines []string
	for _, v := range e.s.vports.list() {
		if d, ok := v.dev.(*vport.Device); ok && d.TunnelType().Info().IPProto == 0 {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s (%d) ref_cnt=%d", v.name, v.no, v.refs))
	}
	return "Listening ports:\n" + strings.Join(lines, "\n") + "\n", nil
}

// commands are ovs/route/*, tnl/neigh/*, tnl/arp/*, tnl/ports/show and
// netdev-dummy/ip4addr|ip6addr.
func (e *tunnelEnv) commands() []router.Command {
	cmds := e.routes.Commands()
	for _, c := range e.neigh.Commands() {
		run := c.Run
		name := c.Name
		c.Run = func(ctx context.Context, args []string) (string, error) {
			out, err := run(ctx, args)
			if err == nil && (strings.HasSuffix(name, "/set") || strings.HasSuffix(name, "/flush")) {
				e.changed()
			}
			return out, err
		}
		cmds = append(cmds, c)
	}
	cmds = append(cmds, router.Command{Name: "tnl/ports/show", Usage: "-v", MinArgs: 0, MaxArgs: 1, Run: e.portsShow})
	// Usages as Open vSwitch registers them (its shell completion reads
	// them).
	for n, usage := range map[string]string{"netdev-dummy/ip4addr": "[netdev] ipaddr/mask-prefix-len", "netdev-dummy/ip6addr": "[netdev] ip6addr"} {
		cmds = append(cmds, router.Command{Name: n, Usage: usage, MinArgs: 2, MaxArgs: 2, Run: e.setDummyAddr})
	}
	return cmds
}

// TunnelCommands are native tunnelling's appctl commands: ovs/route/*,
// tnl/neigh/*, tnl/arp/*, tnl/ports/show and netdev-dummy/ip4addr|ip6addr.
func (s *Backer) TunnelCommands() []router.Command { return s.tnl.commands() }
