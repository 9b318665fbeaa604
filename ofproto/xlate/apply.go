package xlate

import (
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// capture is a datapath that keeps the bytes of the packet output to it;
// every other datapath effect is ignored. It lets translation show a
// controller the packet as the actions so far have rewritten it.
type capture struct{ data []byte }

func (c *capture) Output(ctx *odp.Context, _ uint32, b *packet.Batch) {
	for _, p := range b.Slice() {
		c.data = append(c.data[:0], p.Data()...)
		ctx.Pool.Put(p)
	}
	b.Clear()
}

func (c *capture) Recirc(ctx *odp.Context, _ uint32, b *packet.Batch)        { drain(ctx, b) }
func (c *capture) Userspace(*odp.Context, *odp.Action, *packet.Batch)        {}
func (c *capture) Conntrack(*odp.Context, *odp.Action, *packet.Batch)        {}
func (c *capture) MACLearn(ctx *odp.Context, _ *odp.Action, b *packet.Batch) { drain(ctx, b) }
func (c *capture) Meter(*odp.Context, uint32, *packet.Batch)                 {}
func (c *capture) TunnelPush(*odp.Context, *odp.Action, *packet.Batch)       {}
func (c *capture) TunnelPop(ctx *odp.Context, _ uint32, b *packet.Batch)     { drain(ctx, b) }

func drain(ctx *odp.Context, b *packet.Batch) {
	for _, p := range b.Slice() {
		ctx.Pool.Put(p)
	}
	b.Clear()
}

// applyHeaderActions returns p's bytes after acts (set and VLAN actions).
// It is not on the fast path: it runs once per packet-in.
func applyHeaderActions(p *packet.Packet, acts odp.Actions) []byte {
	if len(acts) == 0 {
		return append([]byte(nil), p.Data()...)
	}
	cp := packet.FromBytes(p.Data())
	cp.L2_5, cp.L3, cp.L4, cp.L7 = p.L2_5, p.L3, p.L4, p.L7
	cp.Md = p.Md
	c := &capture{}
	ctx := odp.NewContext(packet.NewPool(0), c, 1)
	var b packet.Batch
	b.Add(cp)
	all := append(append(odp.Actions(nil), acts...), odp.Output(0))
	odp.Execute(ctx, &b, all)
	return c.data
}
