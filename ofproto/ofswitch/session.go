package ofswitch

import (
	"errors"

	"github.com/gvs-project/gvs/ofproto/connmgr"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// serveExt handles the messages not in serve's core set.
func (b *Bridge) serveExt(s ofconn.Sender, st *connState, m *ofp.Msg) error {
	switch body := m.Body.(type) {
	case *ofp.FlowStatsRequest:
		return b.flowStats(s, m, body)
	case *ofp.TableStatsRequest:
		return b.tableStats(s, m)
	case *ofp.PortDescRequest:
		return b.ports.portDesc(s, m, body)
	case *ofp.PortStatsRequest:
		return b.ports.portStats(s, m, body)
	case *ofp.DescStatsRequest:
		return b.descStats(s, m)
	case *ofp.PortMod:
		if err := checkWrite(s); err != nil {
			return err
		}
		return b.ports.portMod(s, m, body)
	case *ofp.TableMod:
		if err := checkWrite(s); err != nil {
			return err
		}
		return b.tabs.tableMod(s, m, body)
	case *ofp.TableDescRequest:
		return b.tabs.tableDesc(s, m)
	case *ofp.QueueStatsRequest:
		return b.ports.queueStats(s, m, body)
	case *ofp.QueueGetConfigRequest:
		return b.ports.queueConfig(s, m, body)
	case *ofp.SetFlowFormat:
		if body.Format != ofp.NXFFOpenFlow10 && body.Format != ofp.NXFFNXM {
			return &ofp.Error{Code: ofp.OFPBRC_EPERM, Err: errors.New("unsupported flow format")}
		}
		st.FlowFormat.Store(body.Format)
		return nil
	case *ofp.FlowModTableID:
		st.X.tableIDExt = body.Enable
		return nil
	case *ofp.SetPacketInFormat:
		if body.Format > ofp.PacketIn2 {
			return &ofp.Error{Code: ofp.OFPBRC_EPERM, Err: errors.New("unsupported packet-in format")}
		}
		s.State().SetPacketInFormat(body.Format)
		return nil
	case *ofp.SetControllerID:
		st.ControllerID.Store(uint32(body.ID))
		b.notify.updateMissPacketIn()
		return nil
	case *ofp.FlowAgeExt:
		return nil
	case *ofp.RoleRequest:
		return b.role(s, m, body)
	case *ofp.AsyncConfig:
		if body.Reply {
			return nil
		}
		b.setAsync(st, body, m.Version)
		// A service connection that configures asynchronous messages
		// wants them: it gets the default miss_send_len (Open vSwitch's
		// handle_nxt_set_async_config).
		if !st.Primary && st.MissSendLen.Load() == 0 {
			st.MissSendLen.Store(connmgr.DefaultMissSendLen)
		}
		return nil
	case *ofp.GetAsyncRequest:
		ac := asyncConfig(st, m.Version)
		// A reply carries every property (OpenFlow 1.4+), as Open vSwitch's.
		ac.Reply, ac.Nicira, ac.Present = true, false, 1<<(2*ofp.NumAsyncKinds)-1
		return s.Reply(m, &ac)
	case *ofp.CTFlushZone:
		if b.cfg.CTFlush == nil {
			return errBadType
		}
		b.cfg.CTFlush(&body.Zone, nil)
		return nil
	case *ofp.CTFlush:
		if b.cfg.CTFlush == nil {
			return errBadType
		}
		var zone *uint16
		if body.HasZone {
			zone = &body.Zone
		}
		b.cfg.CTFlush(zone, body)
		return nil
	case *ofp.TLVTableMod:
		if err := checkWrite(s); err != nil {
			return err
		}
		return b.ports.tlvMod(body)
	case *ofp.TLVTableRequest:
		return s.Reply(m, b.ports.tlvTable())
	case *ofp.BundleCtrl:
		return b.bundles.ctrl(s, st, m, body)
	case *ofp.BundleAdd:
		return b.bundles.add(s, st, m, body)
	case *ofp.PacketOut:
		if err := checkWrite(s); err != nil {
			return err
		}
		return b.exec.packetOut(m, body)
	case *ofp.Resume:
		if err := checkWrite(s); err != nil {
			return err
		}
		return b.exec.resume(&resumeMsg{Resume: body, Version: m.Version})
	case *ofp.TableFeaturesRequest:
		return b.tabs.tableFeaturesReply(s, m, body)
	case *ofp.GroupMod:
		if err := checkWrite(s); err != nil {
			return err
		}
		b.gmu.Lock()
		existed := b.groups.m[body.GroupID] != nil
		b.gmu.Unlock()
		if err := b.groups.groupMod(body); err != nil {
			return err
		}
		b.notify.forwardGroupMod(s, m.XID, body, existed, b.groups.buckets(body.GroupID))
		return nil
	case *ofp.GroupDescRequest:
		return b.groups.groupDesc(s, m, body)
	case *ofp.GroupStatsRequest:
		return b.groups.groupStats(s, m, body)
	case *ofp.GroupFeaturesRequest:
		return s.Reply(m, ofp.OVSGroupFeatures(m.Version))
	case *ofp.MeterMod:
		if err := checkWrite(s); err != nil {
			return err
		}
		if err := b.meters.meterMod(body); err != nil {
			return err
		}
		b.notify.forwardMeterMod(s, m.XID, body)
		return nil
	case *ofp.MeterConfigRequest:
		return b.meters.meterConfig(s, m, body)
	case *ofp.MeterStatsRequest:
		return b.meters.meterStats(s, m, body)
	case *ofp.MeterFeaturesRequest:
		return s.Reply(m, ofp.OVSMeterFeatures())
	case *ofp.FlowMonitorRequest:
		return b.mons.flowMonitorRequest(s, st, m, body)
	case *ofp.FlowMonitorCancel:
		return b.mons.flowMonitorCancel(st, body)
	case *ofp.IPFIXBridgeRequest:
		return b.fe.ipfixBridgeStats(s, m)
	case *ofp.IPFIXFlowRequest:
		return b.fe.ipfixFlowStats(s, m)
	}
	return errBadType
}

// role implements role requests: a new master demotes the others to
// slave; generation ids older than the last seen are refused.
func (b *Bridge) role(s ofconn.Sender, m *ofp.Msg, rr *ofp.RoleRequest) error {
	role := rr.OFRole()
	if role != ofp.RoleNoChange {
		if role == ofp.RoleMaster || role == ofp.RoleSlave {
			b.mu.Lock()
			if b.genIDSet && int64(rr.GenerationID-b.genID) < 0 {
				b.mu.Unlock()
				return &ofp.Error{Code: ofp.OFPRRFC_STALE, Err: errors.New("stale generation id")}
			}
			b.genID, b.genIDSet = rr.GenerationID, true
			b.mu.Unlock()
		}
		if role == ofp.RoleMaster {
			b.mu.Lock()
			gen := b.genID
			b.mu.Unlock()
			b.conns.Each(func(oc *connState) {
				o := oc.Sender
				if o != s && o.State().Role() == ofconn.RoleMaster {
					o.State().SetRole(ofconn.RoleSlave)
					// The demoted controller hears of it (OpenFlow 1.3's
					// extension and 1.4+; Open vSwitch sends it whatever
					// the async configuration).
					if o.Version() >= mf.OF13 {
						o.Send(0, &ofp.RoleStatus{Role: ofp.RoleSlave, Reason: ofp.RoleReasonPrimaryRequest, GenerationID: gen})
					}
				}
			})
		}
		s.State().SetRole(ofconn.Role(role))
	}
	rep := &ofp.RoleRequest{Nicira: rr.Nicira, Reply: true}
	b.mu.Lock()
	rep.GenerationID = b.genID
	if !b.genIDSet {
		rep.GenerationID = ^uint64(0)
	}
	b.mu.Unlock()
	if err := rep.SetOFRole(uint32(s.State().Role())); err != nil {
		return err
	}
	return s.Reply(m, rep)
}

// setAsync applies a set-async message: the legacy form replaces the
// packet-in, port-status and flow-removed masks; the property form
// changes only the properties it carries.
func (b *Bridge) setAsync(st *connState, ac *ofp.AsyncConfig, v uint8) {
	cur := asyncConfig(st, v)
	for _, masks := range []*[ofp.NumAsyncKinds]uint32{&ac.Master, &ac.Slave} {
		masks[ofp.AsyncPacketIn] = addMissBits(masks[ofp.AsyncPacketIn], v)
	}
	if ac.Present == 0 {
		for _, k := range []int{ofp.AsyncPacketIn, ofp.AsyncPortStatus, ofp.AsyncFlowRemoved} {
			cur.Master[k], cur.Slave[k] = ac.Master[k], ac.Slave[k]
		}
	} else {
		for k := 0; k < ofp.NumAsyncKinds; k++ {
			if ac.Present&(1<<(2*k)) != 0 {
				cur.Slave[k] = ac.Slave[k]
			}
			if ac.Present&(1<<(2*k+1)) != 0 {
				cur.Master[k] = ac.Master[k]
			}
		}
	}
	st.Async.Store(&cur)
}
