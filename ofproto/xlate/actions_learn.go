package xlate

import (
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The learn family's translation (see package ofp's actions_learn.go):
// learn, whose flow the switch installs after translation, and
// fin_timeout, which the switch applies to the rule.

func init() {
	registerHooks(map[ofp.ActionType]actionHook{
		ofp.ActLearn:      learn,
		ofp.ActFinTimeout: finTimeout,
	})
}

// finTimeout records fin_timeout for the rule. The datapath reports TCP
// flags per flow; Open vSwitch makes nw_proto exact for it.
func finTimeout(c *ctx, a *ofp.Action) {
	c.wc.NwProto = 0xff
	if ft := a.FinTimeout(); c.rule != nil && ft != nil {
		c.out.FinTimeouts = append(c.out.FinTimeouts, FinTimeout{Rule: c.rule, Idle: ft.Idle, Hard: ft.Hard})
	}
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
	// Limit bounds how many flows with its cookie its table may hold (0:
	// no limit); over it nothing is learned.
	Limit uint32
}

// ImmediateLearner is an Owner that installs a learned flow while its
// packet is translated, as Open vSwitch's ofproto_flow_mod_learn does for
// every learn of an upcall: the pipeline of a learn with a limit or a
// result_dst goes on knowing whether the flow is in its table.
type ImmediateLearner interface {
	// LearnNow installs lf, or refreshes it when its table already has
	// it, and reports whether it is there: not when its table holds
	// lf.Limit flows with its cookie already.
	LearnNow(lf *LearnedFlow) bool
}

// learn builds the flow a learn action describes from the packet's
// fields; it is installed by the switch after translation.
func learn(c *ctx, a *ofp.Action) {
	l := a.Learn()
	if l == nil {
		return
	}
	lf := LearnedFlow{Table: l.Table, Priority: l.Priority, Cookie: l.Cookie, IdleTimeout: l.IdleTimeout,
		HardTimeout: l.HardTimeout, DeleteLearned: l.Flags&ofp.LearnDeleteLearned != 0, Limit: l.Limit}
	if l.Flags&ofp.LearnSendFlowRem != 0 {
		lf.Flags |= 1
	}
	if l.FinIdleTimeout != 0 || l.FinHardTimeout != 0 {
		// The learned flow starts with the fin_timeout the learn asks
		// for, as Open vSwitch's learn_execute.
		lf.Actions = append(lf.Actions, ofp.Action{Type: ofp.ActFinTimeout, Raw: ofp.RawActNXAST_FIN_TIMEOUT,
			Body: &ofp.FinTimeout{Idle: l.FinIdleTimeout, Hard: l.FinHardTimeout}})
	}
	for _, sp := range l.Specs {
		val := make([]byte, 16)
		if sp.SrcImm {
			copyBits(val, 0, sp.Imm, 0, sp.NBits)
		} else if f := sp.Src.Field; f != nil {
			c.snap.orField(f, &c.wc, subfieldMask(f.Bytes, sp.Src.Ofs, sp.Src.NBits))
			copyBits(val, 0, c.snap.fieldBytes(f, &c.flow), sp.Src.Ofs, sp.NBits)
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
			// A load wider than 64 bits is loads of 64 bits from the
			// lowest up, as Open vSwitch's masked set_field encodes
			// (NXAST_REG_LOAD carries 64 bits).
			for ofs := 0; ofs < int(sp.NBits); ofs += 64 {
				n := min(int(sp.NBits)-ofs, 64)
				v8 := make([]byte, 8)
				copyBits(v8, 0, val, ofs, n)
				lf.Actions = append(lf.Actions, ofp.Action{Type: ofp.ActLoad, Raw: ofp.RawActNXAST_REG_LOAD,
					Dst: ofp.Subfield{Field: f, Ofs: sp.DstSub.Ofs + ofs, NBits: n}, Value: v8})
			}
		case ofp.LearnOutput:
			var port uint16
			for _, x := range val[12:] {
				port = port<<8 | uint16(x)
			}
			lf.Actions = append(lf.Actions, ofp.Action{Type: ofp.ActOutput, Raw: ofp.RawActOFPAT10_OUTPUT, Port: uint32(port)})
		}
	}
	// A limit or a result the pipeline reads: with side effects (an
	// upcall, a packet-out) the flow is learned now and the result says
	// whether it is in its table; a revalidation writes success, as Open
	// vSwitch's translation with an xlate cache (a limited learn whose
	// flow is not in its table keeps no megaflow: the revalidator drops
	// it); a trace without side effects writes nothing.
	if l.Limit != 0 || l.Flags&ofp.LearnWriteResult != 0 {
		il, immediate := c.x.Owner.(ImmediateLearner)
		switch {
		case c.in.SideEffects && immediate:
			c.learnResult(l, il.LearnNow(&lf))
		case c.in.Trace == nil:
			c.learnResult(l, true)
		}
	}
	// Reported with or without side effects: the switch also applies
	// the learned flows of a megaflow when packets hit it (as Open
	// vSwitch's xlate cache does), not only on the upcall.
	c.out.Learned = append(c.out.Learned, lf)
}

// learnResult writes a learn's result to its result_dst, if it has one:
// 1 when its flow is in its table.
func (c *ctx) learnResult(l *ofp.Learn, in bool) {
	if l.Flags&ofp.LearnWriteResult == 0 || l.ResultDst.Field == nil {
		return
	}
	var v uint64
	if in {
		v = 1
	}
	c.loadSubfield(&l.ResultDst, v)
}
