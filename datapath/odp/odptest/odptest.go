// Package odptest provides a recording fake of odp.Datapath for tests of
// the executor and of code that builds action lists.
package odptest

import (
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// Call is one recorded callback: the callback name ("output", "recirc",
// "userspace", "ct", "mac_learn", "meter", "tnl_push", "tnl_pop"), its
// numeric argument (port, recirc id, meter id; the pid for userspace) and
// copies of the frames it saw.
type Call struct {
	Op     string
	Arg    uint32
	Frames [][]byte
	Md     []packet.Metadata
	// Ptrs are the packets themselves, for identity checks only: owned
	// packets have been returned to the pool and may be reused.
	Ptrs []*packet.Packet
}

// Recorder is a fake datapath that records every callback. Packets handed
// over with ownership are returned to the context's Pool after being
// recorded (or kept, if Keep is set, in Owned).
type Recorder struct {
	Calls []Call
	// Discard makes the recorder return owned packets to the pool
	// without recording anything: for allocation tests and benchmarks.
	Discard bool
	// MeterDrop, if set, is asked per packet by Meter; true removes it.
	MeterDrop func(id uint32, p *packet.Packet) bool
	// CtFunc, if set, is run per packet by the ct hook.
	CtFunc func(a *odp.Action, p *packet.Packet)
}

var _ odp.Datapath = (*Recorder)(nil)

func (r *Recorder) record(op string, arg uint32, b *packet.Batch) {
	if r.Discard {
		return
	}
	c := Call{Op: op, Arg: arg}
	for _, p := range b.Slice() {
		c.Frames = append(c.Frames, append([]byte(nil), p.Data()...))
		c.Md = append(c.Md, p.Md)
		c.Ptrs = append(c.Ptrs, p)
	}
	r.Calls = append(r.Calls, c)
}

func (r *Recorder) consume(ctx *odp.Context, b *packet.Batch) {
	for _, p := range b.Slice() {
		ctx.Pool.Put(p)
	}
	b.Clear()
}

// Output implements odp.Datapath.
func (r *Recorder) Output(ctx *odp.Context, port uint32, b *packet.Batch) {
	r.record("output", port, b)
	r.consume(ctx, b)
}

// Recirc implements odp.Datapath.
func (r *Recorder) Recirc(ctx *odp.Context, id uint32, b *packet.Batch) {
	r.record("recirc", id, b)
	r.consume(ctx, b)
}

// Userspace implements odp.Datapath; packets are only borrowed.
func (r *Recorder) Userspace(ctx *odp.Context, a *odp.Action, b *packet.Batch) {
	r.record("userspace", a.Arg, b)
}

// Conntrack implements odp.Datapath.
func (r *Recorder) Conntrack(ctx *odp.Context, a *odp.Action, b *packet.Batch) {
	if r.CtFunc != nil {
		for _, p := range b.Slice() {
			r.CtFunc(a, p)
		}
	}
	var zone uint32
	if a.Ct != nil {
		zone = uint32(a.Ct.Zone)
	}
	r.record("ct", zone, b)
}

// MACLearn implements odp.Datapath.
func (r *Recorder) MACLearn(ctx *odp.Context, a *odp.Action, b *packet.Batch) {
	var table uint32
	if a.MACLearn != nil {
		table = a.MACLearn.Table
	}
	r.record("mac_learn", table, b)
	r.consume(ctx, b)
}

// Meter implements odp.Datapath.
func (r *Recorder) Meter(ctx *odp.Context, id uint32, b *packet.Batch) {
	if r.MeterDrop != nil {
		n := 0
		for _, p := range b.Slice() {
			if r.MeterDrop(id, p) {
				ctx.Pool.Put(p)
				continue
			}
			b.Pkts[n] = p
			n++
		}
		b.Truncate(n)
	}
	r.record("meter", id, b)
}

// TunnelPush implements odp.Datapath.
func (r *Recorder) TunnelPush(ctx *odp.Context, a *odp.Action, b *packet.Batch) {
	r.record("tnl_push", 0, b)
}

// TunnelPop implements odp.Datapath.
func (r *Recorder) TunnelPop(ctx *odp.Context, port uint32, b *packet.Batch) {
	r.record("tnl_pop", port, b)
	r.consume(ctx, b)
}

// Ops returns the recorded calls as "op:arg" strings with the packet
// count, e.g. "output:2x3", for compact assertions.
func (r *Recorder) Ops() []string {
	var s []string
	for _, c := range r.Calls {
		s = append(s, c.Op+":"+itoa(c.Arg)+"x"+itoa(uint32(len(c.Frames))))
	}
	return s
}

func itoa(v uint32) string {
	if v == 0 {
		return "0"
	}
	var b [10]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}
