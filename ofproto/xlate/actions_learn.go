package xlate

import (
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
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
	if c.rule != nil && a.FinTimeout() != nil {
		c.out.FinTimeouts = append(c.out.FinTimeouts, FinTimeout{Rule: c.rule, Idle: a.FinTimeout().Idle, Hard: a.FinTimeout().Hard})
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
	// Limit bounds how many flows the learning rule keeps installed (0:
	// no limit); over it nothing is learned.
	Limit uint32
	// Learner is the rule whose learn action this is.
	Learner *oftable.Rule
}

// learn builds the flow a learn action describes from the packet's
// fields; it is installed by the switch after translation.
func learn(c *ctx, a *ofp.Action) {
	l := a.Learn()
	if l == nil {
		return
	}
	lf := LearnedFlow{Table: l.Table, Priority: l.Priority, Cookie: l.Cookie, IdleTimeout: l.IdleTimeout,
		HardTimeout: l.HardTimeout, DeleteLearned: l.Flags&ofp.LearnDeleteLearned != 0, Limit: l.Limit, Learner: c.rule}
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
	// Reported with or without side effects: the switch also applies
	// the learned flows of a megaflow when packets hit it (as Open
	// vSwitch's xlate cache does), not only on the upcall.
	c.out.Learned = append(c.out.Learned, lf)
}
