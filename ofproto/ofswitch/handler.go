package ofswitch

import (
	"errors"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/gvs-project/gvs/ofproto/connmgr"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// connExt is what the switch keeps per OpenFlow connection beyond
// connmgr.Conn and ofconn.State.
type connExt struct {
	// tableIDExt is NXT_FLOW_MOD_TABLE_ID: OpenFlow 1.0 flow_mods carry a
	// table id in the command's high byte.
	tableIDExt bool
	// bundles are the connection's open and closed bundles; the
	// expirer discards idle ones from another goroutine.
	bundleMu sync.Mutex
	// guarded by bundleMu
	bundles map[uint32]*bundle
	// fm is the connection's flow monitors (flowmonitor.go); nil: none.
	fm atomic.Pointer[monitorState]
	// fmScratch and fmList hold the flow_mod being applied, so that
	// the common single flow_mod does not allocate them (a FlowMod is
	// over a kilobyte: it holds a whole match).
	fmScratch [1]oftable.FlowMod
	fmList    [1]*oftable.FlowMod
}

// connState is one OpenFlow connection of the bridge: the connection
// manager's state and the switch's (X).
type connState = connmgr.Conn[connExt]

// ofpcInvalidTTLToController is the switch config flag asking for
// packet-ins of packets whose TTL expires.
const ofpcInvalidTTLToController = 4

// serveConn handles one message of a connection (connmgr.Config.Serve).
func (b *Bridge) serveConn(st *connState, m *ofp.Msg) {
	s := st.Sender
	if int(m.Raw) < len(b.stats.msgs) {
		b.stats.msgs[m.Raw].Add(1)
	}
	if err := b.serve(s, st, m); err != nil {
		b.stats.errors.Add(1)
		code := ofp.CodeOf(err)
		if code == 0 {
			code = ofp.OFPBRC_EPERM
		}
		b.cfg.Debugf("%s: %s: %v", b.cfg.Name, m.Raw, err)
		s.ReplyError(m, code)
	}
}

// errBadType is returned for messages the switch does not implement.
var errBadType = &ofp.Error{Code: ofp.OFPBRC_BAD_TYPE, Err: errors.New("message not supported")}

func (b *Bridge) serve(s ofconn.Sender, st *connState, m *ofp.Msg) error {
	switch body := m.Body.(type) {
	case *ofp.FlowMod:
		if err := checkWrite(s); err != nil {
			return err
		}
		// The connection's scratch: its messages are served one at a
		// time and a FlowMod is not kept after its commit (the rule
		// copies the match; the actions are decoded afresh).
		fm := &st.X.fmScratch[0]
		if err := b.fmd.decode(fm, body, m.Version, st); err != nil {
			return err
		}
		fms := st.X.fmList[:]
		fms[0] = fm
		err := b.applyFlowModsFrom(s, m.XID, fms)
		fms[0] = nil
		return err
	case *ofp.BarrierRequest:
		b.up.WaitRevalidated()
		drainMonitors(st)
		return s.Reply(m, &ofp.BarrierReply{})
	case *ofp.FeaturesRequest:
		return s.Reply(m, b.featuresReply(m.Version))
	case *ofp.GetConfigRequest:
		b.mu.Lock()
		c := ofp.SwitchConfig{Flags: b.fragHandling, MissSendLen: uint16(st.MissSendLen.Load())}
		if ac := asyncConfig(st, m.Version); m.Version < mf.OF13 && ac.Master[ofp.AsyncPacketIn]&(1<<ofp.ReasonInvalidTTL) != 0 {
			c.Flags |= ofpcInvalidTTLToController
		}
		b.mu.Unlock()
		return s.Reply(m, &ofp.GetConfigReply{SwitchConfig: c})
	case *ofp.SetConfig:
		b.mu.Lock()
		// Reassembly is not offered: the mode stays (Open vSwitch's
		// set_frag_handling refuses it the same way).
		if mode := body.Flags & 3; mode != ofp.FragReasm && b.xl.SetFragHandling(mode) {
			b.fragHandling = mode
			defer b.up.Changed()
		}
		st.MissSendLen.Store(uint32(body.MissSendLen))
		if m.Version < mf.OF13 {
			// OFPC_INVALID_TTL_TO_CONTROLLER is the invalid_ttl bit of
			// the connection's packet-in mask (before OpenFlow 1.3).
			ac := asyncConfig(st, m.Version)
			if body.Flags&ofpcInvalidTTLToController != 0 {
				ac.Master[ofp.AsyncPacketIn] |= 1 << ofp.ReasonInvalidTTL
			} else {
				ac.Master[ofp.AsyncPacketIn] &^= 1 << ofp.ReasonInvalidTTL
			}
			st.Async.Store(&ac)
		}
		b.mu.Unlock()
		return nil
	case *ofp.EchoRequest, *ofp.EchoReply, *ofp.Hello, *ofp.ErrorMsg, *ofp.BarrierReply:
		return nil
	}
	return b.serveExt(s, st, m)
}

// checkWrite refuses table changes from a slave controller.
func checkWrite(s ofconn.Sender) error {
	if s.State().Role() == ofconn.RoleSlave {
		return &ofp.Error{Code: ofp.OFPBRC_IS_SECONDARY, Err: errors.New("slave controllers cannot modify the switch")}
	}
	return nil
}

// applyFlowMods applies flow_mods atomically (one version) and sends
// flow_removed for rules they deleted.
func (b *Bridge) applyFlowMods(fms []*oftable.FlowMod) error {
	x := b.tables.Begin()
	for _, fm := range fms {
		if err := x.Apply(fm); err != nil {
			x.Abort()
			return err
		}
	}
	b.notify.sendFlowRemoved(x.Commit())
	return nil
}

// featuresReply describes the bridge as Open vSwitch does: 254 tables
// (OFPTT_ALL aside), no buffers, flow/table/port/queue stats, ARP match.
func (b *Bridge) featuresReply(v uint8) *ofp.FeaturesReply {
	r := &ofp.FeaturesReply{DatapathID: b.cfg.DatapathID(), NTables: 254, Capabilities: 0xcf}
	if v == 1 {
		r.Capabilities = 0xc7
		r.Actions = 0xfff
	}
	if v >= 4 {
		r.Capabilities = 0x4f
	}
	if v >= 5 {
		r.Capabilities |= 0x200 // OFPC14_BUNDLES
	}
	if v <= 3 {
		for _, p := range b.Ports() {
			r.Ports = append(r.Ports, ofpPort(&p, v))
		}
	}
	return r
}

// ofpPort is the OpenFlow description of a port.
func ofpPort(p *Port, v uint8) ofp.Port {
	op := ofp.Port{PortNo: uint32(p.OFPort), HWAddr: p.HWAddr}
	if v != 1 && p.OFPort >= xlate.PortMax {
		op.PortNo = 0xffff0000 | uint32(p.OFPort)
	}
	copy(op.Name[:15], p.Name)
	op.Config = p.OFConfig & ofp.PortConfigBits(v)
	if p.AdminDown {
		op.Config |= ofp.PCPortDown
	}
	// OFPPS_LIVE (OpenFlow 1.1+) needs the link up, the port not
	// administratively down and no liveness monitor against it (Open
	// vSwitch's normalize_state with may_enable).
	if p.LinkDown {
		op.State |= 1 // OFPPS_LINK_DOWN
	} else if v >= 2 && !p.AdminDown && !p.NoForward {
		op.State |= 4 // OFPPS_LIVE
	}
	if v == 1 {
		op.State |= p.STPBits // OpenFlow 1.0 only
	}
	if v >= 2 && p.CurrSpeed != 0 {
		op.CurrSpeed, op.MaxSpeed = p.CurrSpeed, p.MaxSpeed
	}
	return op
}

func sortPorts(ps []Port) {
	sort.Slice(ps, func(i, j int) bool {
		// LOCAL sorts last in OpenFlow port order only when numbers are
		// compared as 16-bit values, which is what Open vSwitch shows.
		return ps[i].OFPort < ps[j].OFPort
	})
}
