package backer

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/internal/ethaddr"
	"github.com/gvs-project/gvs/internal/logrl"
	"github.com/gvs-project/gvs/ofproto/bond"
	"github.com/gvs-project/gvs/ofproto/lacp"
	"github.com/gvs-project/gvs/ofproto/xlate"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// bonds runs the bridges' bonded ports (Open vSwitch's ofbundle with a
// bond and LACP): it builds each bond and its LACP from the Port and
// Interface rows (ConfigurePorts), and a loop sends LACPDUs, feeds the
// members' carrier and LACP's verdict to the bond, and republishes the
// bridge's ports when the bond's choices change, so that translation
// follows (megaflows are revalidated).
type bonds struct {
	bonds bond.Registry
	lacps lacp.Registry
	// byBridge holds each bridge's bundles by Port name.
	byBridge map[string]map[string]*bundleState
	nextFDB  map[string]uint16 // per bridge: the next bond number in its MAC table
	wake     chan struct{}
	started  bool
	// defaultModeRL limits the default bond_mode warning, logged at
	// every reconfiguration otherwise.
	defaultModeRL *logrl.Limit
	// clock is the bonds' time, which time/warp moves on (clock.go).
	clock warpClock

	// What the bonds need of the backer: its lock and bridges (whose
	// ports are the members), a way to republish a bridge's ports, its
	// logs, and the context and wait group the loop runs under.
	mu        *sync.Mutex
	bridges   map[string]*dpBridge
	republish func(*dpBridge)
	logger    func(module string) *slog.Logger
	ctx       context.Context
	wg        *sync.WaitGroup
}

type bundleState struct {
	x       *xlate.Bundle
	members []string // interface names, in the Port row's order
	carrier map[string]bool
	// may is each member's may_enable (carrier, and LACP's verdict):
	// without it the port is not live (OFPPS_LIVE, bundle and
	// fast-failover liveness), as Open vSwitch's ofport may_enable.
	may map[string]bool
	cfg bridge.BondConfig
}

func newBonds() *bonds {
	return &bonds{byBridge: map[string]map[string]*bundleState{}, nextFDB: map[string]uint16{}, wake: make(chan struct{}, 1),
		defaultModeRL: logrl.New(1, 1)}
}

// bondTick bounds how long the loop sleeps (LACP's fast rate is 1 s).
const bondTick = 100 * time.Millisecond

// Bonds is the registry behind bond/show and the other bond/ commands.
func (v *View) Bonds() *bond.Registry { return &v.bnd.bonds }

// LACPs is the registry behind lacp/show and lacp/show-stats.
func (v *View) LACPs() *lacp.Registry { return &v.bnd.lacps }

// bondedPort reports whether a Port row makes a bundle: several
// interfaces (a bond), or LACP configured on one.
func bondedPort(pc *bridge.PortConfig) bool {
	return len(pc.Interfaces) > 1 || pc.Bond.LACP == "active" || pc.Bond.LACP == "passive"
}

// configureBondsLocked applies the Port rows' bonding and LACP columns
// (port_configure_bond, port_configure_lacp) and reports whether a
// bundle appeared, went or changed members: the ports must then be
// republished. Called with s.mu held.
func (s *bonds) configureLocked(b *dpBridge, ports []bridge.PortConfig) bool {
	log := s.logger("bridge")
	have := s.byBridge[b.name]
	if have == nil {
		have = map[string]*bundleState{}
		s.byBridge[b.name] = have
	}
	changed := false
	seen := map[string]bool{}
	for i := range ports {
		pc := &ports[i]
		if !bondedPort(pc) {
			continue
		}
		seen[pc.Name] = true
		st := have[pc.Name]
		if st == nil {
			s.nextFDB[b.name]++
			st = &bundleState{x: &xlate.Bundle{Name: pc.Name, FDB: xlate.BondFDBPort(s.nextFDB[b.name])}, carrier: map[string]bool{}, may: map[string]bool{}}
			have[pc.Name] = st
			changed = true
		}
		var members []string
		for _, ic := range pc.Interfaces {
			if p := b.ports[ic.Name]; p != nil && p.ofport > 0 {
				members = append(members, ic.Name)
			}
		}
		// A published Bundle is read by translations without a lock: a
		// new LACP or bond makes a new Bundle (republished), never a
		// change to the old one.
		l, bd := st.x.LACP, st.x.Bond
		// LACP: created, reconfigured or removed with the lacp column.
		if ls, ok := lacp.PortSettings(pc.Name, pc.Bond.LACP, pc.Bond.OtherConfig, b.pickEA(), len(pc.Interfaces), log); ok {
			if l == nil {
				l = lacp.New(ls, lacp.Env{Clock: &s.clock, Log: s.logger("lacp"), Changed: func() { notify(s.wake) }})
				s.lacps.Add(l)
			} else {
				l.Configure(ls)
			}
		} else if l != nil {
			s.lacps.Remove(l)
			l = nil
		}
		// The bond: only with several interfaces, as Open vSwitch.
		if len(pc.Interfaces) > 1 {
			bs := bond.PortSettings(pc.Name, pc.Bond.Mode, pc.Bond.UpDelay, pc.Bond.DownDelay, pc.Bond.ActiveSlave, pc.Bond.OtherConfig, log,
				s.defaultModeRL, s.clock.Now())
			if bd == nil {
				bd = bond.New(bs, bond.Env{Clock: &s.clock, Log: s.logger("bond")})
				s.bonds.Add(bd)
			} else if bd.Reconfigure(bs) {
				changed = true
			}
		} else if bd != nil {
			s.bonds.Remove(bd)
			bd = nil
		}
		if l != st.x.LACP || bd != st.x.Bond {
			st.x = &xlate.Bundle{Name: st.x.Name, FDB: st.x.FDB, Bond: bd, LACP: l}
			changed = true
		}
		// Members that left, then members that joined or changed.
		for _, m := range st.members {
			if !slices.Contains(members, m) {
				if st.x.LACP != nil {
					st.x.LACP.Unregister(m)
				}
				if st.x.Bond != nil {
					st.x.Bond.Unregister(m)
				}
				delete(st.carrier, m)
				delete(st.may, m)
				changed = true
			}
		}
		for _, ic := range pc.Interfaces {
			p := b.ports[ic.Name]
			if p == nil || p.ofport <= 0 {
				continue
			}
			up := portCarrier(p)
			if st.x.LACP != nil {
				st.x.LACP.Register(lacp.MemberSettingsFor(ic.Name, uint16(p.ofport), ic.OtherConfig))
			}
			if st.x.Bond != nil {
				st.x.Bond.Register(ic.Name, uint16(p.ofport), portMAC(p), up)
			}
		}
		if !slices.Equal(members, st.members) {
			changed = true
		}
		st.members = members
		st.cfg = pc.Bond
	}
	for name, st := range have {
		if !seen[name] {
			s.dropBundle(st)
			delete(have, name)
			changed = true
		}
	}
	if len(have) > 0 && !s.started {
		s.started = true
		s.wg.Add(1)
		go func() { defer s.wg.Done(); s.run(s.ctx) }()
	}
	notify(s.wake)
	return changed
}

func (s *bonds) dropBundle(st *bundleState) {
	if st.x.LACP != nil {
		s.lacps.Remove(st.x.LACP)
	}
	if st.x.Bond != nil {
		s.bonds.Remove(st.x.Bond)
	}
}

// forgetBridgeLocked drops a deleted bridge's bundles.
func (s *bonds) forgetBridgeLocked(name string) {
	for _, st := range s.byBridge[name] {
		s.dropBundle(st)
	}
	delete(s.byBridge, name)
}

// bundleOf is the bundle an interface of bridge b is a member of, and
// whether LACP keeps the member from forwarding (not may_enable).
func (s *bonds) bundleOf(b *dpBridge, iface string) (x *xlate.Bundle, noFwd bool) {
	for _, st := range s.byBridge[b.name] {
		if slices.Contains(st.members, iface) {
			return st.x, st.x.LACP != nil && !st.may[iface]
		}
	}
	return nil, false
}

func portCarrier(p *dpPort) bool {
	if p.dev == nil {
		return p.typ == "patch"
	}
	return p.dev.LinkState() != netdev.LinkDown
}

func portMAC(p *dpPort) [6]byte {
	if p.dev != nil {
		return p.dev.MAC()
	}
	return p.mac
}

// run is the bonds' loop: Open vSwitch's bundle_run for every bundle, at
// least every bondTick, and at once when LACP processed a PDU or the
// configuration changed.
func (s *bonds) run(ctx context.Context) {
	t := time.NewTicker(bondTick)
	defer t.Stop()
	for {
		s.runOnce()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
	}
}

// packetSender is a bridge's OpenFlow side sending the switch's own
// packets (ofswitch.Bridge.SendPacket).
type packetSender interface {
	SendPacket(ofport uint16, frame []byte, oam bool) error
}

type lacpSend struct {
	of     packetSender
	ofport uint16
	mac    [6]byte
}

func (s *bonds) runOnce() {
	s.mu.Lock()
	sends := map[*lacp.LACP]map[string]lacpSend{}
	for _, b := range s.bridges {
		for _, st := range s.byBridge[b.name] {
			out := map[string]lacpSend{}
			for _, m := range st.members {
				p := b.ports[m]
				if p == nil {
					continue
				}
				up := portCarrier(p)
				if old, ok := st.carrier[m]; !ok || old != up {
					st.carrier[m] = up
					if st.x.LACP != nil {
						st.x.LACP.CarrierChanged(m, up)
					}
				}
				if st.x.Bond != nil {
					st.x.Bond.SetCarrier(m, up)
				}
				if b.of != nil {
					out[m] = lacpSend{of: b.of, ofport: uint16(p.ofport), mac: portMAC(p)}
				}
			}
			if st.x.LACP != nil {
				sends[st.x.LACP] = out
			}
		}
	}
	s.mu.Unlock()
	// LACP first (it sends), then the bonds read its verdicts.
	for l, out := range sends {
		l.Run(func(member string, pdu *lacp.PDU) {
			if o, ok := out[member]; ok {
				if err := o.of.SendPacket(o.ofport, lacp.Frame(o.mac, pdu), false); err != nil {
					s.logger("lacp").Debug(err.Error())
				}
			}
		})
	}
	learning := s.runBondsLocked()
	// Learning packets after a failover leave through the members as the
	// switch's own packets (SendPacket), outside the lock.
	for _, l := range learning {
		if err := l.of.SendPacket(l.ofport, l.frame, false); err != nil {
			s.logger("bond").Debug(err.Error())
		}
	}
}

type learningSend struct {
	of     packetSender
	ofport uint16
	frame  []byte
}

// runBondsLocked gives each bond its members' may_enable and runs it,
// republishes the bridges whose bonds changed, and returns the learning
// packets the bonds that failed over must send: one for each MAC the
// bridge learned elsewhere (bundle_send_learning_packets).
func (s *bonds) runBondsLocked() []learningSend {
	s.mu.Lock()
	defer s.mu.Unlock()
	var republish []*dpBridge
	var learning []learningSend
	for _, b := range s.bridges {
		changed := false
		for _, st := range s.byBridge[b.name] {
			for _, m := range st.members {
				may := st.carrier[m]
				if st.x.LACP != nil {
					may = may && st.x.LACP.MayEnable(m)
				}
				if old, ok := st.may[m]; !ok || old != may {
					st.may[m] = may
					changed = true
				}
				if st.x.Bond != nil {
					st.x.Bond.SetMayEnable(m, may)
				}
			}
			if st.x.Bond == nil {
				continue
			}
			if st.x.Bond.Run(st.x.LACP.Status()) {
				changed = true
			}
			// Buckets move from the most to the least loaded member
			// every bond-rebalance-interval (bond_rebalance).
			if st.x.Bond.Rebalance() {
				changed = true
			}
			if st.x.Bond.ShouldSendLearningPackets() && b.fdb != nil && b.of != nil {
				for _, e := range b.fdb.Dump() {
					if e.Port == st.x.FDB {
						continue
					}
					if f, ofport, ok := st.x.Bond.LearningPacket(e.MAC, e.VLAN); ok {
						learning = append(learning, learningSend{of: b.of, ofport: ofport, frame: f})
					}
				}
			}
		}
		if changed {
			republish = append(republish, b)
		}
	}
	for _, b := range republish {
		s.republish(b)
	}
	return learning
}

// BondActiveMember is bridge.BondStatuser: the active member's MAC of a
// bond port, for Port.bond_active_slave.
func (s *Backer) BondActiveMember(bridgeName, port string) (string, bool) {
	s.mu.Lock()
	st := s.bnd.byBridge[bridgeName][port]
	s.mu.Unlock()
	if st == nil || st.x.Bond == nil {
		return "", false
	}
	mac, ok := st.x.Bond.ActiveMAC()
	if !ok {
		return "", false
	}
	return ethaddr.String(mac), true
}

var _ bridge.BondStatuser = (*Backer)(nil)
