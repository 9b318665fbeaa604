package xlate

import "github.com/gvs-project/gvs/ofproto/ofp"

// The stack family's translation (see package ofp's actions_stack.go):
// push and pop of subfields on the translation's stack, which exists only
// here.

func init() {
	registerHooks(map[ofp.ActionType]actionHook{
		ofp.ActStackPush: stackPush,
		ofp.ActStackPop:  stackPop,
	})
}

func stackPush(c *ctx, a *ofp.Action) {
	f := a.Src.Field
	if f == nil {
		return
	}
	c.snap.orField(f, &c.wc, subfieldMask(f.Bytes, a.Src.Ofs, a.Src.NBits))
	v := c.snap.fieldBytes(f, &c.flow)
	// The byte past the value, within capacity, keeps the size
	// Open vSwitch's stack gives the entry (stackBytes).
	e := make([]byte, 16, 17)
	copyBits(e, 0, v, a.Src.Ofs, a.Src.NBits)
	e[:17][16] = byte((a.Src.NBits + 7) / 8)
	c.stack = append(c.stack, e)
}

func stackPop(c *ctx, a *ofp.Action) {
	f := a.Dst.Field
	if f == nil {
		return
	}
	if len(c.stack) == 0 {
		c.tr.notef("stack underflow")
		return
	}
	e := c.stack[len(c.stack)-1]
	c.stack = c.stack[:len(c.stack)-1]
	v := make([]byte, f.Bytes)
	copyBits(v, a.Dst.Ofs, e, 0, a.Dst.NBits)
	m := subfieldMask(f.Bytes, a.Dst.Ofs, a.Dst.NBits)
	c.snap.orField(f, &c.wc, m)
	c.snap.setMasked(f, &c.flow, v, m)
	c.reportSubfield(&a.Dst)
}
