package xlate

import (
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
)

// extAction translates the actions that are not in doActions' core set.
// It reports false for an action it does not know.
func (c *ctx) extAction(a *ofp.Action) bool {
	k, w := &c.flow.Key, &c.wc.Key
	switch a.Type {
	case ofp.ActGotoTable:
		c.lookupTable(a.Table, c.last)
	case ofp.ActWriteMetadata:
		c.flow.Metadata = c.flow.Metadata&^a.Arg2 | a.Arg&a.Arg2
	case ofp.ActController:
		ct := a.Controller
		if ct == nil {
			return true
		}
		c.controllerPause(ct.Reason, ct.MaxLen, ct.ID, ct.Userdata, ct.Pause, ct.MeterID)
	case ofp.ActDecTTL:
		c.decTTL(a.IDs)
	case ofp.ActSetNWTTL:
		if isIP(k) {
			w.NwTTL, w.NwProto = 0xff, 0xff
			k.NwTTL = uint8(a.Arg)
		}
	case ofp.ActMeter:
		c.meter(uint32(a.Arg))
	case ofp.ActSample:
		c.flowSample(a.Sample)
	case ofp.ActWriteActions:
		c.writeActions(a.Nested)
	case ofp.ActClearActions:
		c.clearActions()
	case ofp.ActDebugSlow:
		c.out.SlowPath, c.out.Transient = true, true
	case ofp.ActDebugRecirc:
		c.debugRecirc()
	case ofp.ActFinTimeout:
		// The datapath reports TCP flags per flow; Open vSwitch makes
		// nw_proto exact for it.
		c.wc.NwProto = 0xff
		if c.rule != nil && a.FinTimeout != nil {
			c.out.FinTimeouts = append(c.out.FinTimeouts, FinTimeout{Rule: c.rule, Idle: a.FinTimeout.Idle, Hard: a.FinTimeout.Hard})
		}
	case ofp.ActNote, ofp.ActConjunction, ofp.ActDeleteField:
		// No datapath effect here (conjunction is a match).
	case ofp.ActExit:
		c.exit = true
	case ofp.ActClone:
		c.clone(a.Nested)
	case ofp.ActPushVLAN:
		w.VLANs[0].TCI |= 0xffff
		k.VLANs[1] = k.VLANs[0]
		k.VLANs[0] = flow.VLAN{TPID: uint16(a.Arg), TCI: k.VLANs[1].TCI | flow.VLANCFI}
	case ofp.ActStripVLAN:
		w.VLANs[0].TCI |= flow.VLANCFI
		k.VLANs[0], k.VLANs[1] = k.VLANs[1], flow.VLAN{}
	case ofp.ActSetVLANVID, ofp.ActSetVLANPCP:
		c.setVLAN(a)
	case ofp.ActSetDLSrc:
		w.EthSrc = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		k.EthSrc = mac48(a.Arg)
	case ofp.ActSetDLDst:
		w.EthDst = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		k.EthDst = mac48(a.Arg)
	case ofp.ActSetNWSrc, ofp.ActSetNWDst:
		if k.EthType == flow.EthTypeIPv4 {
			w.NwProto = 0xff
			if a.Type == ofp.ActSetNWSrc {
				w.NwSrc, k.NwSrc = ^uint32(0), uint32(a.Arg)
			} else {
				w.NwDst, k.NwDst = ^uint32(0), uint32(a.Arg)
			}
		}
	case ofp.ActSetNWTos:
		if isIP(k) {
			w.NwTos |= 0xfc
			w.NwProto = 0xff
			k.NwTos = k.NwTos&^0xfc | uint8(a.Arg)&0xfc
		}
	case ofp.ActSetNWECN:
		if isIP(k) {
			w.NwTos |= 0x03
			w.NwProto = 0xff
			k.NwTos = k.NwTos&^0x03 | uint8(a.Arg)&0x03
		}
	case ofp.ActSetTPSrc, ofp.ActSetTPDst:
		if isIP(k) && k.NwFrag&flow.FragLater == 0 && (k.NwProto == flow.IPProtoTCP || k.NwProto == flow.IPProtoUDP || k.NwProto == flow.IPProtoSCTP) {
			w.NwProto = 0xff
			if a.Type == ofp.ActSetTPSrc {
				w.TpSrc, k.TpSrc = 0xffff, uint16(a.Arg)
			} else {
				w.TpDst, k.TpDst = 0xffff, uint16(a.Arg)
			}
		}
	case ofp.ActSetTunnel:
		k.TunID = a.Arg
	case ofp.ActSetQueue:
		w.SkbPriority = ^uint32(0)
		k.SkbPriority = uint32(a.Arg)
	case ofp.ActPopQueue:
		w.SkbPriority = ^uint32(0)
		k.SkbPriority = c.in.Key.SkbPriority
	case ofp.ActEnqueue:
		w.SkbPriority = ^uint32(0)
		old := k.SkbPriority
		k.SkbPriority = uint32(a.Arg)
		c.output(Port16(a.Port), 0)
		k.SkbPriority = old
	case ofp.ActOutputReg:
		f := a.Src.Field
		if f == nil {
			return true
		}
		v := c.fieldBytes(f, &c.flow)
		p := make([]byte, 8)
		copyBits(p, 0, v, a.Src.Ofs, a.Src.NBits)
		var port uint64
		for _, x := range p {
			port = port<<8 | uint64(x)
		}
		// Open vSwitch's xlate_output_reg_action: the source bits join
		// the megaflow only when they name a port.
		if port > 0xffff {
			c.traceSkip("output port %d is out of range", port)
			return true
		}
		c.trace("output port is %d", port)
		c.orField(f, &c.wc, subfieldMask(f.Bytes, a.Src.Ofs, a.Src.NBits))
		c.output(uint16(port), a.MaxLen)
	case ofp.ActOutputTrunc:
		c.commit()
		c.emit(odp.Trunc(uint32(a.Arg)))
		c.output(Port16(a.Port), 0)
	case ofp.ActStackPush:
		f := a.Src.Field
		if f == nil {
			return true
		}
		c.orField(f, &c.wc, subfieldMask(f.Bytes, a.Src.Ofs, a.Src.NBits))
		v := c.fieldBytes(f, &c.flow)
		// The byte past the value, within capacity, keeps the size
		// Open vSwitch's stack gives the entry (stackBytes).
		e := make([]byte, 16, 17)
		copyBits(e, 0, v, a.Src.Ofs, a.Src.NBits)
		e[:17][16] = byte((a.Src.NBits + 7) / 8)
		c.stack = append(c.stack, e)
	case ofp.ActStackPop:
		f := a.Dst.Field
		if f == nil {
			return true
		}
		if len(c.stack) == 0 {
			c.trace("stack underflow")
			return true
		}
		e := c.stack[len(c.stack)-1]
		c.stack = c.stack[:len(c.stack)-1]
		v := make([]byte, f.Bytes)
		copyBits(v, a.Dst.Ofs, e, 0, a.Dst.NBits)
		m := subfieldMask(f.Bytes, a.Dst.Ofs, a.Dst.NBits)
		c.orField(f, &c.wc, m)
		c.setMasked(f, &c.flow, v, m)
	case ofp.ActLearn:
		c.learn(a.Learn)
	case ofp.ActGroup:
		c.group(uint32(a.Arg))
	case ofp.ActCheckPktLen:
		c.checkPktLen(a)
	case ofp.ActBundle:
		if a.Bundle != nil {
			c.bundle(a.Bundle)
		}
	case ofp.ActMultipath:
		if a.Multipath != nil {
			c.multipath(a.Multipath)
		}
	case ofp.ActPushMPLS:
		c.pushMPLS(uint16(a.Arg))
	case ofp.ActPopMPLS:
		c.popMPLS(uint16(a.Arg))
	case ofp.ActSetMPLSLabel:
		c.setMPLSBits(uint32(a.Arg)<<odp.MPLSLabelShift, odp.MPLSLabelMask)
	case ofp.ActSetMPLSTC:
		c.setMPLSBits(uint32(a.Arg)<<odp.MPLSTCShift, odp.MPLSTCMask)
	case ofp.ActSetMPLSTTL:
		c.setMPLSBits(uint32(a.Arg), odp.MPLSTTLMask)
	case ofp.ActDecMPLSTTL:
		c.stopList = c.decMPLSTTL()
	default:
		return false
	}
	return true
}

func mac48(v uint64) [6]byte {
	var m [6]byte
	for i := 5; i >= 0; i-- {
		m[i] = byte(v)
		v >>= 8
	}
	return m
}

// setVLAN implements mod_vlan_vid and mod_vlan_pcp (OpenFlow 1.0 pushes a
// tag when the packet has none).
func (c *ctx) setVLAN(a *ofp.Action) {
	k, w := &c.flow.Key, &c.wc.Key
	w.VLANs[0].TCI |= flow.VLANCFI
	if k.VLANs[0].TCI&flow.VLANCFI == 0 {
		if !a.PushVLANIfNeeded {
			return
		}
		k.VLANs[1] = k.VLANs[0]
		k.VLANs[0] = flow.VLAN{TPID: flow.EthTypeVLAN, TCI: flow.VLANCFI}
	}
	if a.Type == ofp.ActSetVLANVID {
		w.VLANs[0].TCI |= 0x0fff
		k.VLANs[0].TCI = k.VLANs[0].TCI&^0x0fff | uint16(a.Arg)&0x0fff
	} else {
		w.VLANs[0].TCI |= 0xe000
		k.VLANs[0].TCI = k.VLANs[0].TCI&^0xe000 | uint16(a.Arg)<<13
	}
}

// decTTL decrements the IP TTL; at 1 or 0 the packet goes to the
// controllers named by ids with reason invalid_ttl and translation stops.
func (c *ctx) decTTL(ids []uint16) {
	k := &c.flow.Key
	if !isIP(k) {
		return
	}
	c.wc.NwTTL, c.wc.NwProto = 0xff, 0xff
	if k.NwTTL > 1 {
		k.NwTTL--
		return
	}
	if len(ids) == 0 {
		ids = []uint16{0}
	}
	for _, id := range ids {
		c.controller(ReasonInvalidTTL, 0xffff, id, nil)
	}
	c.exit = true
}

// clone translates nested actions on a copy of the pipeline state: what
// they change is not seen after the clone. As in Open vSwitch, a clone
// that is the last action, or whose own actions can all be undone by
// later set actions, is translated in place; only the others become a
// datapath clone, after committing pending changes so that they are not
// emitted both inside and after it.
func (c *ctx) clone(acts []ofp.Action) {
	saveFlow, saveStack, saveDeep := c.flow, len(c.stack), c.mplsDeep
	// The clone runs a copy of the action set at its end; the original
	// stays for the rest of the pipeline (Open vSwitch's clone).
	saveSet, saveSetGroup := c.actset, c.actsetGroup
	c.actset = append([]ofp.Action(nil), saveSet...)
	restore := func() {
		c.actset, c.actsetGroup = saveSet, saveSetGroup
		c.flow, c.mplsDeep = saveFlow, saveDeep
		c.stack = c.stack[:min(saveStack, len(c.stack))]
		if c.err == nil {
			c.exit = false
		}
	}
	if c.last || reversible(acts) {
		c.noTail = !c.last
		c.doActions(acts)
		c.runActionSet()
		restore()
		return
	}
	c.dpClone(acts)
	restore()
}

// dpClone translates acts, and the action set they leave, into a
// datapath clone(), after committing pending changes so that they are
// not emitted both inside and after it. Conntrack state and a pop_mpls
// inside do not affect what follows (an in-place clone's do, as in Open
// vSwitch); the caller restores the flow.
func (c *ctx) dpClone(acts []ofp.Action) {
	c.commit()
	saveBase, saveBaseDeep, saveOut, saveCT, saveWasMPLS := c.base, c.baseDeep, c.out.Actions, c.conntracked, c.wasMPLS
	c.out.Actions = nil
	c.doActions(acts)
	c.runActionSet()
	sub := c.out.Actions
	c.out.Actions = saveOut
	c.base, c.baseDeep, c.conntracked, c.wasMPLS = saveBase, saveBaseDeep, saveCT, saveWasMPLS
	if len(sub) > 0 {
		c.emit(odp.Clone(sub))
	}
}

// irreversible are the actions whose datapath effect later set actions
// cannot undo (Open vSwitch's reversible_actions): a clone containing one
// needs a datapath clone.
var irreversible = map[ofp.ActionType]bool{
	ofp.ActCT: true, ofp.ActMeter: true, ofp.ActNAT: true, ofp.ActOutputTrunc: true, ofp.ActDecNSHTTL: true,
}

func reversible(acts []ofp.Action) bool {
	for i := range acts {
		if irreversible[acts[i].Type] {
			return false
		}
	}
	return true
}

// LearnedFlow is a flow a learn action asks to install.
type LearnedFlow struct {
	Table       uint8
	Priority    uint16
	Cookie      uint64
	IdleTimeout uint16
	HardTimeout uint16
	Flags       uint16
	Match       mf.Match
	Actions     []ofp.Action
	// DeleteLearned removes the flow when the learning rule goes.
	DeleteLearned bool
	// Limit bounds how many flows the learning rule keeps installed (0:
	// no limit); over it nothing is learned.
	Limit uint32
	// Learner is the rule whose learn action this is.
	Learner *oftable.Rule
}

// learn builds the flow a learn action describes from the packet's
// fields; it is installed by the switch after translation.
func (c *ctx) learn(l *ofp.Learn) {
	if l == nil {
		return
	}
	lf := LearnedFlow{Table: l.Table, Priority: l.Priority, Cookie: l.Cookie, IdleTimeout: l.IdleTimeout,
		HardTimeout: l.HardTimeout, DeleteLearned: l.Flags&ofp.LearnDeleteLearned != 0, Limit: l.Limit, Learner: c.rule}
	if l.Flags&ofp.LearnSendFlowRem != 0 {
		lf.Flags |= 1
	}
	for _, sp := range l.Specs {
		val := make([]byte, 16)
		if sp.SrcImm {
			copyBits(val, 0, sp.Imm, 0, sp.NBits)
		} else if f := sp.Src.Field; f != nil {
			c.orField(f, &c.wc, subfieldMask(f.Bytes, sp.Src.Ofs, sp.Src.NBits))
			copyBits(val, 0, c.fieldBytes(f, &c.flow), sp.Src.Ofs, sp.NBits)
		}
		switch sp.Dst {
		case ofp.LearnMatch:
			f := sp.DstSub.Field
			if f == nil {
				continue
			}
			v, m := make([]byte, f.Bytes), subfieldMask(f.Bytes, sp.DstSub.Ofs, sp.NBits)
			copyBits(v, sp.DstSub.Ofs, val, 0, sp.NBits)
			cur, cm := make([]byte, f.Bytes), make([]byte, f.Bytes)
			lf.Match.Get(f, cur, cm)
			for i := range v {
				v[i] = cur[i]&^m[i] | v[i]&m[i]
				m[i] |= cm[i]
			}
			_ = lf.Match.SetMasked(f, v, m)
		case ofp.LearnLoad:
			f := sp.DstSub.Field
			if f == nil {
				continue
			}
			v8 := make([]byte, 8)
			copyBits(v8, 0, val, 0, min(sp.NBits, 64))
			lf.Actions = append(lf.Actions, ofp.Action{Type: ofp.ActLoad, Raw: ofp.RawActNXAST_REG_LOAD,
				Dst: ofp.Subfield{Field: f, Ofs: sp.DstSub.Ofs, NBits: sp.NBits}, Value: v8})
		case ofp.LearnOutput:
			var port uint16
			for _, x := range val[12:] {
				port = port<<8 | uint16(x)
			}
			lf.Actions = append(lf.Actions, ofp.Action{Type: ofp.ActOutput, Raw: ofp.RawActOFPAT10_OUTPUT, Port: uint32(port)})
		}
	}
	// Reported with or without side effects: the switch also applies
	// the learned flows of a megaflow when packets hit it (as Open
	// vSwitch's xlate cache does), not only on the upcall.
	c.out.Learned = append(c.out.Learned, lf)
}

// natText formats a nat action inside ct() in the datapath's syntax.
func natText(a *ofp.Action, _ *ctx) (string, bool) {
	if a.Type != ofp.ActNAT || a.NAT == nil {
		return "", false
	}
	n := a.NAT
	var sb strings.Builder
	sb.WriteString("nat")
	var args []string
	if n.Flags&(ofp.NATSrc|ofp.NATDst) != 0 {
		kind := "src"
		if n.Flags&ofp.NATDst != 0 {
			kind = "dst"
		}
		s := kind
		if n.AddrMin.IsValid() {
			s += "=" + natAddr(n.AddrMin.String(), n.AddrMin.Is6())
			if n.AddrMax.IsValid() && n.AddrMax != n.AddrMin {
				s += "-" + natAddr(n.AddrMax.String(), n.AddrMax.Is6())
			}
			if n.ProtoMin != 0 {
				s += fmt.Sprintf(":%d", n.ProtoMin)
				if n.ProtoMax != 0 && n.ProtoMax != n.ProtoMin {
					s += fmt.Sprintf("-%d", n.ProtoMax)
				}
			}
		}
		args = append(args, s)
	}
	if n.Flags&ofp.NATPersistent != 0 {
		args = append(args, "persistent")
	}
	if n.Flags&ofp.NATHash != 0 {
		args = append(args, "hash")
	}
	if n.Flags&ofp.NATRandom != 0 {
		args = append(args, "random")
	}
	if len(args) > 0 {
		sb.WriteString("(" + strings.Join(args, ",") + ")")
	}
	return sb.String(), true
}

func natAddr(s string, v6 bool) string {
	if v6 {
		return "[" + s + "]"
	}
	return s
}

// checkPktLen translates check_pkt_larger(N)->dst: the datapath compares
// the packet's length, so everything after this action is translated
// twice, once with the result bit 1 (longer than N) and once with 0, into
// the two branches of check_pkt_len, as Open vSwitch does.
func (c *ctx) checkPktLen(a *ofp.Action) {
	f := a.Dst.Field
	if f == nil {
		return
	}
	rest := c.continuation()
	c.commit()
	saveFlow, saveBase, saveOut, saveStack, saveFrames := c.flow, c.base, c.out.Actions, c.stack, c.frames
	saveDeep, saveBaseDeep, saveWasMPLS := c.mplsDeep, c.baseDeep, c.wasMPLS
	var branch [2]odp.Actions
	for bit := 1; bit >= 0; bit-- {
		c.flow, c.base, c.stack, c.exit = saveFlow, saveBase, append([][]byte(nil), saveStack...), false
		c.mplsDeep, c.baseDeep, c.wasMPLS = saveDeep, saveBaseDeep, saveWasMPLS
		v := make([]byte, f.Bytes)
		if bit == 1 {
			v = subfieldMask(f.Bytes, a.Dst.Ofs, 1)
		}
		c.setMasked(f, &c.flow, v, subfieldMask(f.Bytes, a.Dst.Ofs, 1))
		c.out.Actions = nil
		c.frames = c.frames[:0:0]
		c.noTail = bit == 1
		c.resume(rest)
		branch[bit] = c.out.Actions
	}
	c.flow, c.base, c.out.Actions, c.frames = saveFlow, saveBase, saveOut, saveFrames
	c.mplsDeep, c.baseDeep, c.wasMPLS = saveDeep, saveBaseDeep, saveWasMPLS
	c.emit(odp.CheckPktLen(uint32(a.Arg), branch[1], branch[0]))
	c.exit = true
}

// debugRecirc recirculates for no reason (debug_recirc): the datapath
// passes the packet back with the pipeline state frozen, and the rest of
// the current action list runs in the next pass.
func (c *ctx) debugRecirc() {
	c.commit()
	fz, ok := c.freezeRest()
	if !ok {
		return
	}
	c.emit(odp.Recirc(c.x.Recirc.ID(fz)))
	c.exit = true
}
