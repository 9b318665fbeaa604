package ofswitch

import (
	"errors"
	"fmt"
	"sort"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// portMod applies OFPT_PORT_MOD as Open vSwitch's update_port_config:
// the port must exist and the request must name its address; the bits
// the mask selects change. OFPPC_PORT_DOWN brings the device down or up
// through Config.SetPortAdmin (if that fails, or there is none, the bit
// stays as it was); the other bits change forwarding in translation.
// Controllers other than the sender get a port-status (the sender too
// from OpenFlow 1.5 on).
func (pt *portTable) portMod(s ofconn.Sender, m *ofp.Msg, pm *ofp.PortMod) error {
	no, err := ofp.PortFromOF11(pm.PortNo)
	if err != nil {
		return &ofp.Error{Code: ofp.OFPPMFC_BAD_PORT, Err: err}
	}
	pt.mu.Lock()
	p := pt.ports[no]
	if p == nil {
		pt.mu.Unlock()
		return &ofp.Error{Code: ofp.OFPPMFC_BAD_PORT, Err: fmt.Errorf("no port %d", no)}
	}
	if p.HWAddr != pm.HWAddr {
		pt.mu.Unlock()
		return &ofp.Error{Code: ofp.OFPPMFC_BAD_HW_ADDR, Err: fmt.Errorf("port %d has address %x", no, p.HWAddr)}
	}
	cur := p.OFConfig
	if p.AdminDown {
		cur |= ofp.PCPortDown
	}
	name := p.Name
	pt.mu.Unlock()

	toggle := (pm.Config ^ cur) & pm.Mask
	linkDown, admin := false, false
	if toggle&ofp.PCPortDown != 0 {
		up := pm.Config&ofp.PCPortDown == 0
		if pt.setAdmin == nil {
			toggle &^= ofp.PCPortDown
		} else if ld, err := pt.setAdmin(no, up); err != nil {
			pt.logf("%s: port %s: cannot bring it %s: %v", pt.name, name, map[bool]string{true: "up", false: "down"}[up], err)
			toggle &^= ofp.PCPortDown
		} else {
			linkDown, admin = ld, true
		}
	}
	if toggle == 0 {
		return nil
	}
	pt.mu.Lock()
	p = pt.ports[no]
	if p == nil || p.Name != name {
		pt.mu.Unlock()
		return nil // the port went away meanwhile
	}
	next := *p
	next.OFConfig ^= toggle &^ ofp.PCPortDown
	linkChanged := false
	if admin {
		next.AdminDown = pm.Config&ofp.PCPortDown != 0
		linkChanged = next.LinkDown != linkDown
	}
	// As in Open vSwitch, the port_mod's own status has the new
	// configuration with the link as it was; the link's change, which
	// bringing the device down or up caused, follows as a status of its
	// own (to every connection, as any link change).
	linked := next
	if admin {
		linked.LinkDown = linkDown
	}
	pt.ports[no] = &linked
	pt.publishLocked()
	pt.mu.Unlock()
	ev := portEvent{reason: reasonModify, port: next}
	pt.notify.conns.Each(func(st *connState) {
		c := st.Sender
		if c == s && c.Version() < mf.OF15 {
			// Before OpenFlow 1.5 the sender of a port_mod hears
			// nothing back (Open vSwitch's connmgr_send_port_status).
			return
		}
		pt.notify.sendPortStatusTo(c, st, ev)
	})
	if linkChanged {
		pt.notify.sendPortStatus([]portEvent{{reason: reasonModify, port: linked}})
	}
	pt.up.Changed()
	return nil
}

// Queues: gvs has no QoS, so every port with a device has its default
// queue 0 only, whose statistics are unknown (reported as all-ones, "?"),
// as Open vSwitch reports a netdev without QoS configuration. Patch and
// tunnel ports have no queues.

// queuePorts returns the ports that have queues, sorted by number, or
// only port no (nil if it does not exist; ok false then).
func (pt *portTable) queuePorts(no uint32) (ports []Port, ok bool) {
	for _, p := range pt.list() {
		if no != ofp.PortAny && ofp.PortToOF11(p.OFPort) != no {
			continue
		}
		ok = true
		if p.PeerBridge == "" && p.Tunnel == nil {
			ports = append(ports, p)
		}
	}
	return ports, ok
}

// queueStats answers OFPST_QUEUE as Open vSwitch's handle_queue_stats_request.
func (pt *portTable) queueStats(s ofconn.Sender, m *ofp.Msg, req *ofp.QueueStatsRequest) error {
	ports, ok := pt.queuePorts(req.PortNo)
	if !ok {
		return &ofp.Error{Code: ofp.OFPQOFC_BAD_PORT, Err: fmt.Errorf("no port %d", req.PortNo)}
	}
	rep := &ofp.QueueStatsReply{}
	for _, p := range ports {
		if req.QueueID != ofp.QueueAll && req.QueueID != 0 {
			continue
		}
		rep.Stats = append(rep.Stats, ofp.QueueStats{PortNo: ofp.PortToOF11(p.OFPort), QueueID: 0,
			TxBytes: ^uint64(0), TxPackets: ^uint64(0), TxErrors: ^uint64(0), DurationSec: ^uint32(0), DurationNsec: ^uint32(0)})
	}
	if req.QueueID != ofp.QueueAll && len(rep.Stats) == 0 {
		return &ofp.Error{Code: ofp.OFPQOFC_BAD_QUEUE, Err: fmt.Errorf("no queue %d", req.QueueID)}
	}
	return s.Reply(m, rep)
}

// queueConfig answers OFPT_QUEUE_GET_CONFIG_REQUEST and OFPMP_QUEUE_DESC.
func (pt *portTable) queueConfig(s ofconn.Sender, m *ofp.Msg, req *ofp.QueueGetConfigRequest) error {
	// Before the OpenFlow 1.4 queue description, only physical port
	// numbers are valid (and OFPP_ANY from 1.1), as Open vSwitch decodes.
	if m.Version < mf.OF14 && req.PortNo >= uint32(ofp.OFPPMax) && (m.Version == mf.OF10 || req.PortNo != ofp.PortAny) {
		return &ofp.Error{Code: ofp.OFPQOFC_BAD_PORT, Err: fmt.Errorf("port %#x", req.PortNo)}
	}
	ports, ok := pt.queuePorts(req.PortNo)
	if !ok {
		return &ofp.Error{Code: ofp.OFPQOFC_BAD_PORT, Err: fmt.Errorf("no port %d", req.PortNo)}
	}
	rep := &ofp.QueueGetConfigReply{PortNo: req.PortNo}
	sort.Slice(ports, func(i, j int) bool { return ports[i].OFPort < ports[j].OFPort })
	for _, p := range ports {
		if req.QueueID != ofp.QueueAll && req.QueueID != 0 {
			continue
		}
		rep.Queues = append(rep.Queues, ofp.Queue{PortNo: ofp.PortToOF11(p.OFPort), QueueID: 0, MinRate: 0xffff, MaxRate: 0xffff})
	}
	if req.QueueID != ofp.QueueAll && len(rep.Queues) == 0 {
		return &ofp.Error{Code: ofp.OFPQOFC_BAD_QUEUE, Err: errors.New("no such queue")}
	}
	return s.Reply(m, rep)
}
