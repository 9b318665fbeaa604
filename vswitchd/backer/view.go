package backer

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/l2fib"
	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/ofproto/ofswitch"
	"github.com/gvs-project/gvs/ofproto/upcall"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// View is what the appctl commands (vswitchd/ofcmds, vswitchd/dpctl), the
// metrics exporter and the backer's own parts read of the bridges: their
// names, ports and port numbers, MAC tables, datapaths, OpenFlow switches
// and flow limits, and the text of dpif/show and dpif/dump-dps. It only
// reads, under the backer's lock.
type View struct {
	mu      *sync.Mutex
	bridges map[string]*dpBridge
	dps     *datapathSet
	bnd     *bonds // the bond and LACP registries (bonds.go)
	// clock is the switch's virtual time (time/stop, time/warp), which
	// the multicast snooping ages read (mcast.go).
	clock *cfmClock
}

// View returns the backer's read-only view of its bridges.
func (s *Backer) View() *View { return s.view }

// PortSample is one port's identity and counters at scrape time.
type PortSample struct {
	Bridge, Port string
	OFPort       int64
	Stats        netdev.Stats
}

// PortSamples returns every bridge port that has a device (patch ports
// have none), in bridge and port name order.
func (v *View) PortSamples() []PortSample {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []PortSample
	for _, bn := range sortedKeys(v.bridges) {
		b := v.bridges[bn]
		for _, pn := range sortedKeys(b.ports) {
			p := b.ports[pn]
			if p.dev == nil {
				continue
			}
			out = append(out, PortSample{Bridge: bn, Port: pn, OFPort: p.ofport, Stats: p.dev.Stats()})
		}
	}
	return out
}

// MACSample is one bridge's MAC learning table.
type MACSample struct {
	Bridge string
	Table  *l2fib.Table
}

// MACTables returns every bridge's MAC learning table.
func (v *View) MACTables() []MACSample {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []MACSample
	for _, bn := range sortedKeys(v.bridges) {
		if t := v.bridges[bn].fdb; t != nil {
			out = append(out, MACSample{Bridge: bn, Table: t})
		}
	}
	return out
}

// sharedFlowLimitLocked returns the dynamic flow limit of the bridges of
// datapath type typ, nil if it has none. Called with v.mu held.
func (v *View) sharedFlowLimitLocked(typ string) *upcall.FlowLimit {
	for _, br := range v.bridges {
		if br.dpTyp == typ && br.of != nil {
			return br.of.Upcalls().FlowLimit()
		}
	}
	return nil
}

// sharedChangesLocked returns the change sequence of the bridges of
// datapath type typ (a new one for the first): megaflows that cross from
// one bridge into another are kept by the bridge they entered.
func (v *View) sharedChangesLocked(typ string) *upcall.Changes {
	for _, br := range v.bridges {
		if br.dpTyp == typ && br.of != nil {
			return br.of.Upcalls().Changes()
		}
	}
	return upcall.NewChanges()
}

// SharedFlowLimit returns the dynamic flow limit of the bridges of
// datapath type typ, nil if it has none.
func (v *View) SharedFlowLimit(typ string) *upcall.FlowLimit {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.sharedFlowLimitLocked(typ)
}

// DumpDps lists the bridges as TYPE@NAME lines (dpif/dump-dps).
func (v *View) DumpDps() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var sb strings.Builder
	for _, n := range sortedKeys(v.bridges) {
		fmt.Fprintf(&sb, "%s@%s\n", v.bridges[n].dpTyp, n)
	}
	return sb.String()
}

// OFBridge returns a bridge's OpenFlow switch, or nil.
func (v *View) OFBridge(name string) *ofswitch.Bridge {
	v.mu.Lock()
	defer v.mu.Unlock()
	if b := v.bridges[name]; b != nil {
		return b.of
	}
	return nil
}

// PortNumber returns the OpenFlow number of a bridge's port by name.
func (v *View) PortNumber(bname, port string) (int64, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if b := v.bridges[bname]; b != nil {
		if p := b.ports[port]; p != nil {
			return p.ofport, true
		}
	}
	return 0, false
}

// OFBridges returns every bridge's OpenFlow switch in name order.
func (v *View) OFBridges() []*ofswitch.Bridge {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []*ofswitch.Bridge
	for _, n := range sortedKeys(v.bridges) {
		if of := v.bridges[n].of; of != nil {
			out = append(out, of)
		}
	}
	return out
}

// BridgeDatapath returns a bridge's datapath and its datapath ports.
func (v *View) BridgeDatapath(name string) (dpif.Datapath, map[uint32]bool, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	b := v.bridges[name]
	if b == nil {
		return nil, nil, false
	}
	ports := map[uint32]bool{}
	for _, p := range b.ports {
		if p.dev != nil {
			ports[p.odp] = true
		}
	}
	return v.dps.get(b.dpTyp), ports, true
}

// BridgeFDB returns a bridge's MAC table and a function naming its
// datapath ports by OpenFlow number (LOCAL for the local port), for fdb/*.
func (v *View) BridgeFDB(name string) (*l2fib.Table, func(uint32) string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	b := v.bridges[name]
	if b == nil || b.fdb == nil {
		return nil, nil, false
	}
	names := map[uint32]string{}
	for _, p := range b.ports {
		fp, ok := p.fdbPort()
		switch {
		case !ok:
		case p.ofport == bridge.OFPPLocal:
			names[fp] = "LOCAL"
		default:
			names[fp] = strconv.FormatInt(p.ofport, 10)
		}
	}
	return b.fdb, func(odp uint32) string {
		if n, ok := names[odp]; ok {
			return n
		}
		return "?"
	}, true
}

// FDBPort returns the MAC table number (fdbPort) of a bridge's port given
// by OpenFlow number or name.
func (v *View) FDBPort(bname, port string) (uint32, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	b := v.bridges[bname]
	if b == nil {
		return 0, false
	}
	for name, p := range b.ports {
		if name != port && strconv.FormatInt(p.ofport, 10) != port {
			continue
		}
		// Patch and tunnel ports have numbers of their own in the MAC
		// table.
		if fp, ok := p.fdbPort(); ok {
			return fp, true
		}
	}
	return 0, false
}

// BridgeNames lists the bridges in name order.
func (v *View) BridgeNames() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return sortedKeys(v.bridges)
}

// DpifShowBridges lists the bridges of datapath type dpTyp and their
// ports as dpif/show does: "    NAME OFPORT/ODP: (TYPE)" in name order.
func (v *View) DpifShowBridges(dpTyp string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var sb strings.Builder
	for _, bn := range sortedKeys(v.bridges) {
		b := v.bridges[bn]
		if b.dpTyp != dpTyp {
			continue
		}
		fmt.Fprintf(&sb, "  %s:\n", bn)
		for _, pn := range sortedKeys(b.ports) {
			p := b.ports[pn]
			odp, typ := "none", "patch: peer="+p.peer
			switch {
			case p.dev != nil:
				odp, typ = strconv.FormatUint(uint64(p.odp), 10), p.dev.Type()+DeviceConfigText(p.dev)
			case p.tunnel != nil:
				odp, typ = strconv.FormatUint(uint64(p.odp), 10), tunnelConfigText(p.tunnel, p.tunnelOpts)
			}
			if typ == "system" {
				fmt.Fprintf(&sb, "    %s %d/%s:\n", pn, p.ofport, odp)
				continue
			}
			fmt.Fprintf(&sb, "    %s %d/%s: (%s)\n", pn, p.ofport, odp, typ)
		}
	}
	return sb.String()
}

// hasDummyDevice reports whether a dummy device of that name is a port.
func (v *View) hasDummyDevice(name string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, b := range v.bridges {
		if p := b.ports[name]; p != nil && p.dev != nil {
			_, ok := p.dev.(*dummy.Device)
			return ok
		}
	}
	return false
}

// ODPBridge returns the bridge that translates packets with datapath key
// k: the owner of its input port, or of the tunnel port that receives it.
func (v *View) ODPBridge(k *flow.Key) *ofswitch.Bridge {
	v.mu.Lock()
	defer v.mu.Unlock()
	var tunnels []*ofswitch.Bridge
	for _, bn := range sortedKeys(v.bridges) {
		b := v.bridges[bn]
		for _, p := range b.ports {
			if p.odp != k.InPort || b.of == nil {
				continue
			}
			if p.dev != nil {
				return b.of
			}
			if p.tunnel != nil {
				tunnels = append(tunnels, b.of)
			}
		}
	}
	for _, b := range tunnels {
		if b.TunnelReceives(k) {
			return b
		}
	}
	return nil
}
