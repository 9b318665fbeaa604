package xlate

import (
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The output family's translation (see package ofp's actions_output.go):
// output, output_reg, output_trunc, enqueue, set_queue, pop_queue,
// controller and group.

func init() {
	registerHooks(map[ofp.ActionType]actionHook{
		ofp.ActOutput:      func(c *ctx, a *ofp.Action) { c.output(Port16(a.Port), a.MaxLen) },
		ofp.ActOutputReg:   outputReg,
		ofp.ActOutputTrunc: outputTrunc,
		ofp.ActEnqueue:     enqueue,
		ofp.ActSetQueue: func(c *ctx, a *ofp.Action) {
			c.wc.Key.SkbPriority = ^uint32(0)
			c.flow.Key.SkbPriority = uint32(a.Arg)
		},
		ofp.ActPopQueue: func(c *ctx, _ *ofp.Action) {
			c.wc.Key.SkbPriority = ^uint32(0)
			c.flow.Key.SkbPriority = c.in.Key.SkbPriority
		},
		ofp.ActController: func(c *ctx, a *ofp.Action) {
			if ct := a.Controller(); ct != nil {
				c.controllerPause(ct.Reason, ct.MaxLen, ct.ID, ct.Userdata, ct.Pause, ct.MeterID)
			}
		},
		ofp.ActGroup: func(c *ctx, a *ofp.Action) { c.grp.run(uint32(a.Arg)) },
	})
	registerProps(map[ofp.ActionType]kindProps{
		ofp.ActOutput:      {final: 4, needsL3: belowL3},
		ofp.ActOutputTrunc: {irreversible: true, needsL3: belowL3},
		ofp.ActOutputReg:   {needsL3: belowL3},
		ofp.ActEnqueue:     {needsL3: belowL3},
		ofp.ActSetQueue:    {setOrMove: true, needsL3: belowL3},
		ofp.ActGroup:       {final: 5, needsL3: belowL3},
	})
}

// outputReg outputs to the port a subfield holds. As Open vSwitch's
// xlate_output_reg_action, the source bits join the megaflow only when
// they name a port.
func outputReg(c *ctx, a *ofp.Action) {
	f := a.Src.Field
	if f == nil {
		return
	}
	v := c.snap.fieldBytes(f, &c.flow)
	p := make([]byte, 8)
	copyBits(p, 0, v, a.Src.Ofs, a.Src.NBits)
	var port uint64
	for _, x := range p {
		port = port<<8 | uint64(x)
	}
	if port > 0xffff {
		c.tr.skipf("output port %d is out of range", port)
		return
	}
	c.tr.notef("output port is %d", port)
	c.snap.orField(f, &c.wc, subfieldMask(f.Bytes, a.Src.Ofs, a.Src.NBits))
	c.output(uint16(port), a.MaxLen)
}

func outputTrunc(c *ctx, a *ofp.Action) {
	port := Port16(a.Port)
	if name, ok := truncRefused[port]; ok {
		c.tr.skipf("output_trunc does not support port: %s", name)
		return
	}
	if uint32(port) == c.flow.InPort {
		c.tr.skipf("skipping output to input port")
		return
	}
	// The truncation applies to the next output, which a patch port's
	// peer pipeline may not make: refused, as Open vSwitch does (IN_PORT
	// too, which it looks up as a port of its own).
	if p := c.snap.Ports[port]; p == nil || p.ODP == NoODP {
		c.tr.errorf("output_trunc does not support patch port %d", port)
		return
	}
	c.commit()
	c.emit(odp.Trunc(uint32(a.Arg)))
	c.output(port, 0)
}

// truncRefused are the reserved ports output(max_len) cannot send to.
var truncRefused = map[uint16]string{
	PortTable: "TABLE", PortNormal: "NORMAL", PortFlood: "FLOOD", PortAll: "ALL",
	PortController: "CONTROLLER", PortNone: "NONE",
}

// enqueue outputs with the queue's priority, which lasts only for the
// output.
func enqueue(c *ctx, a *ofp.Action) {
	k := &c.flow.Key
	c.wc.Key.SkbPriority = ^uint32(0)
	old := k.SkbPriority
	k.SkbPriority = uint32(a.Arg)
	c.output(Port16(a.Port), 0)
	k.SkbPriority = old
}
