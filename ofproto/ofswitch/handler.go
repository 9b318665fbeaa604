package ofswitch

import (
	"errors"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// connState is what the switch keeps per OpenFlow connection beyond
// ofconn.State.
type connState struct {
	// tableIDExt is NXT_FLOW_MOD_TABLE_ID: OpenFlow 1.0 flow_mods carry a
	// table id in the command's high byte.
	tableIDExt bool
	// flowFormat is NXT_SET_FLOW_FORMAT's format (0 openflow10, 2 nxm).
	// The fields below are read by packet-in senders on other
	// goroutines.
	flowFormat   atomic.Uint32
	controllerID atomic.Uint32
	// async is the connection's asynchronous message configuration; nil
	// means Open vSwitch's defaults.
	async atomic.Pointer[ofp.AsyncConfig]
	// missSendLen is the connection's miss_send_len: 128 for controllers
	// (primary connections), 0 for service connections such as
	// <bridge>.mgmt, until set_config changes it, as Open vSwitch.
	missSendLen atomic.Uint32
	// invalidTTL is OFPC_INVALID_TTL_TO_CONTROLLER as the connection set
	// it (reported back by get_config; such packet-ins are sent anyway).
	invalidTTL atomic.Bool
	bundles    map[uint32]*bundle
	// primary marks controller connections (service connections such as
	// <bridge>.mgmt get asynchronous messages only once they set a
	// miss_send_len, and are never snooped).
	primary bool
	// hub holds the snoopers of an accepted passive controller
	// connection (snoop.go; guarded by connSet.mu); nil: none yet.
	hub *snoopHub
	// fm is the connection's flow monitors (flowmonitor.go); nil: none.
	fm atomic.Pointer[monitorState]
	// pins are the packet-in schedulers of a connection accepted on a
	// rate-limited passive controller target (pinsched.go).
	pinMu sync.Mutex
	pins  *[2]*pinsched
}

// connSet tracks the bridge's connections, for asynchronous messages.
type connSet struct {
	mu sync.Mutex
	m  map[ofconn.Sender]*connState
}

func (cs *connSet) init() { cs.m = map[ofconn.Sender]*connState{} }

func (cs *connSet) get(s ofconn.Sender, primary bool) *connState {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	st := cs.m[s]
	if st == nil {
		st = &connState{bundles: map[uint32]*bundle{}, primary: primary}
		if primary {
			st.missSendLen.Store(defaultMissSendLen)
		}
		cs.m[s] = st
	}
	return st
}

// ofpcInvalidTTLToController is the switch config flag asking for
// packet-ins of packets whose TTL expires.
const ofpcInvalidTTLToController = 4

// defaultMissSendLen is OFP_DEFAULT_MISS_SEND_LEN.
const defaultMissSendLen = 128

// primaryHandler serves controller connections (Controller rows), which
// Open vSwitch treats as primary: they get packet-ins by default.
type primaryHandler struct{ b *Bridge }

func (h primaryHandler) ServeOpenFlow(s ofconn.Sender, m *ofp.Msg) { h.b.serveConn(s, m, true) }

func (cs *connSet) remove(s ofconn.Sender) {
	cs.mu.Lock()
	var hub *snoopHub
	if st := cs.m[s]; st != nil {
		hub = st.hub
	}
	delete(cs.m, s)
	cs.mu.Unlock()
	if hub != nil {
		hub.closeAll()
	}
}

// each calls f for every connection (outside the lock).
func (cs *connSet) each(f func(s ofconn.Sender, st *connState)) {
	cs.mu.Lock()
	type pair struct {
		s  ofconn.Sender
		st *connState
	}
	all := make([]pair, 0, len(cs.m))
	for s, st := range cs.m {
		all = append(all, pair{s, st})
	}
	cs.mu.Unlock()
	for _, p := range all {
		f(p.s, p.st)
	}
}

// ServeOpenFlow handles one message of a service connection such as
// <bridge>.mgmt (ofconn.Handler).
func (b *Bridge) ServeOpenFlow(s ofconn.Sender, m *ofp.Msg) { b.serveConn(s, m, false) }

func (b *Bridge) serveConn(s ofconn.Sender, m *ofp.Msg, primary bool) {
	st := b.conns.get(s, primary)
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
		if err := b.checkWrite(s); err != nil {
			return err
		}
		fm, err := b.decodeFlowMod(body, m.Version, st)
		if err != nil {
			return err
		}
		return b.applyFlowModsFrom(s, m.XID, []*oftable.FlowMod{fm})
	case *ofp.BarrierRequest:
		b.waitRevalidated()
		drainMonitors(st)
		return s.Reply(m, &ofp.BarrierReply{})
	case *ofp.FeaturesRequest:
		return s.Reply(m, b.featuresReply(m.Version))
	case *ofp.GetConfigRequest:
		b.mu.Lock()
		c := ofp.SwitchConfig{Flags: b.fragHandling, MissSendLen: uint16(st.missSendLen.Load())}
		if st.invalidTTL.Load() {
			c.Flags |= ofpcInvalidTTLToController
		}
		b.mu.Unlock()
		return s.Reply(m, &ofp.GetConfigReply{SwitchConfig: c})
	case *ofp.SetConfig:
		b.mu.Lock()
		b.fragHandling = body.Flags & 3
		st.missSendLen.Store(uint32(body.MissSendLen))
		st.invalidTTL.Store(body.Flags&ofpcInvalidTTLToController != 0)
		b.mu.Unlock()
		return nil
	case *ofp.EchoRequest, *ofp.EchoReply, *ofp.Hello, *ofp.ErrorMsg, *ofp.BarrierReply:
		return nil
	}
	return b.serveExt(s, st, m)
}

// checkWrite refuses table changes from a slave controller.
func (b *Bridge) checkWrite(s ofconn.Sender) error {
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
	b.sendFlowRemoved(x.Commit())
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
	if p.AdminDown {
		op.Config |= 1 // OFPPC_PORT_DOWN
	}
	if p.LinkDown {
		op.State |= 1 // OFPPS_LINK_DOWN
	} else if v >= 2 {
		op.State |= 4 // OFPPS_LIVE
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
