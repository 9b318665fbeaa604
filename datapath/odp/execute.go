package odp

import (
	"encoding/binary"
	"math"

	"github.com/gvs-project/gvs/datapath/packet"
)

// Datapath is what the executor calls for actions whose effect lies
// outside the packet bytes, as Open vSwitch's odp_execute_cb. The batch
// passed to a callback is only valid during the call; the callback must
// not keep the *Batch (it may keep packets it owns).
//
// Ownership: Output, Recirc, TunnelPop and MACLearn take ownership of the
// packets in b (the executor hands them copies unless the action is the
// last one, when it hands over its own packets). Userspace only borrows
// them: it must copy what it keeps. Conntrack, Meter and TunnelPush work
// in place and may remove packets from b, returning each removed packet to
// ctx.Pool and compacting b.
type Datapath interface {
	// Output sends the packets to a port.
	Output(ctx *Context, port uint32, b *packet.Batch)
	// Recirc re-injects the packets; Md.RecircID is already set to id.
	Recirc(ctx *Context, id uint32, b *packet.Batch)
	// Userspace sends an upcall for each packet (slow path, sFlow,
	// controller actions).
	Userspace(ctx *Context, a *Action, b *packet.Batch)
	// Conntrack runs ct(...) and writes the ct_* metadata back.
	Conntrack(ctx *Context, a *Action, b *packet.Batch)
	// MACLearn runs the MAC learn-and-forward action: it learns the
	// source and forwards (or floods) by destination.
	MACLearn(ctx *Context, a *Action, b *packet.Batch)
	// Meter applies meter id; packets over the rate are removed.
	Meter(ctx *Context, id uint32, b *packet.Batch)
	// TunnelPush encapsulates the packets with a's header.
	TunnelPush(ctx *Context, a *Action, b *packet.Batch)
	// TunnelPop decapsulates the packets and recirculates them with
	// in_port set to port.
	TunnelPop(ctx *Context, port uint32, b *packet.Batch)
}

// Context is one worker's executor state. It is not safe for concurrent
// use: each poll-mode worker owns one, together with the packet Pool that
// copies come from and freed packets return to.
type Context struct {
	Pool *packet.Pool
	DP   Datapath

	// Dropped counts packets the executor returned to the pool: those
	// left at the end of an action list, explicit drops, sample misses
	// and failed VLAN pushes.
	Dropped uint64
	// DropCounters, if not nil, count the packets explicit drop actions
	// drop, by reason (Open vSwitch's drop_action_* coverage counters).
	DropCounters *[NumDropReasons]Counter

	rng uint64
	// level is the number of nested runs in progress, counting runs
	// re-entered from callbacks (a datapath that recirculates
	// synchronously calls Execute again from Recirc); each run uses
	// scratch[level] so no two active runs share a batch.
	level   int
	scratch [maxLevels]levelScratch
}

// maxLevels bounds nested plus re-entered runs. Past it, packets are
// dropped (counted in Dropped) rather than executed.
const maxLevels = 2 * MaxDepth

// levelScratch holds the batches one nesting level builds: copies for
// non-final outputs and the sub-batches of clone, sample and
// check_pkt_len. Keeping them in the Context is what makes Execute
// allocation-free.
type levelScratch struct {
	copies, sub, sub2 packet.Batch
}

// NewContext returns an executor context. seed feeds the PRNG that sample
// uses (any value; 0 is replaced by a fixed non-zero constant).
func NewContext(pool *packet.Pool, dp Datapath, seed uint64) *Context {
	if seed == 0 {
		seed = 0x9e3779b97f4a7c15
	}
	return &Context{Pool: pool, DP: dp, rng: seed}
}

// rand32 is xorshift64*: cheap, and good enough to pick samples.
func (c *Context) rand32() uint32 {
	x := c.rng
	if x == 0 {
		// A Context built as a literal has no seed; xorshift would
		// stay at 0 and sample every packet.
		x = 0x9e3779b97f4a7c15
	}
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	c.rng = x
	return uint32((x * 0x2545f4914f6cdd1d) >> 32)
}

// noTrunc marks "no trunc pending".
const noTrunc = -1

// Execute runs acts on the packets in b, which it owns: when it returns,
// every packet has been handed to the datapath or returned to ctx.Pool,
// and b is empty. It allocates nothing as long as ctx.Pool has packets
// for the copies that non-final outputs need. A Datapath callback may call
// Execute again with the same ctx (synchronous recirculation).
func Execute(ctx *Context, b *packet.Batch, acts Actions) {
	ctx.run(b, acts, noTrunc)
}

// run executes acts on b, which this level owns, and leaves b empty.
// trunc is the max_len of a pending trunc action, or noTrunc.
func (c *Context) run(b *packet.Batch, acts Actions, trunc int) {
	if c.level >= len(c.scratch) {
		c.free(b)
		return
	}
	sc := &c.scratch[c.level]
	c.level++
	defer func() { c.level-- }()
	for i := range acts {
		if b.N == 0 {
			return
		}
		a := &acts[i]
		last := i == len(acts)-1
		switch a.Kind {
		case KindOutput, KindRecirc, KindTunnelPop, KindMACLearn:
			out := b
			if last {
				truncate(b, trunc)
			} else {
				out = c.copyAll(&sc.copies, b, trunc)
			}
			trunc = noTrunc
			switch a.Kind {
			case KindOutput:
				c.DP.Output(c, a.Arg, out)
			case KindRecirc:
				for _, p := range out.Slice() {
					p.Md.RecircID = a.Arg
				}
				c.DP.Recirc(c, a.Arg, out)
			case KindTunnelPop:
				c.DP.TunnelPop(c, a.Arg, out)
			case KindMACLearn:
				c.DP.MACLearn(c, a, out)
			}
			out.Clear()
			if last {
				return
			}
		case KindDrop:
			if c.DropCounters != nil && a.Arg < NumDropReasons && c.DropCounters[a.Arg] != nil {
				c.DropCounters[a.Arg].Add(uint64(b.N))
			}
			c.free(b)
			return
		case KindSet, KindSetMasked:
			if a.Set == nil {
				break
			}
			for _, p := range b.Slice() {
				applySet(p, a.Set)
			}
		case KindPushVLAN:
			c.pushVLAN(b, uint16(a.Arg>>16), uint16(a.Arg))
		case KindPopVLAN:
			for _, p := range b.Slice() {
				popVLAN(p)
			}
		case KindPushMPLS:
			c.pushMPLS(b, a.Arg, a.EthType)
		case KindPopMPLS:
			for _, p := range b.Slice() {
				popMPLS(p, a.EthType)
			}
		case KindHash:
			for _, p := range b.Slice() {
				p.Md.DPHash = hash5(p, a.Alg, a.Arg)
				p.DPHashValid = true
			}
		case KindCtClear:
			for _, p := range b.Slice() {
				ctClear(&p.Md)
			}
		case KindUserspace:
			c.DP.Userspace(c, a, b)
		case KindCt:
			c.DP.Conntrack(c, a, b)
		case KindMeter:
			c.DP.Meter(c, a.Arg, b)
		case KindTunnelPush:
			if last {
				// Nothing would see the result (as OVS): just free.
				c.free(b)
				return
			}
			truncate(b, trunc)
			trunc = noTrunc
			c.DP.TunnelPush(c, a, b)
		case KindTrunc:
			if trunc == noTrunc || int(a.Arg) < trunc {
				trunc = int(min(a.Arg, math.MaxInt32))
			}
		case KindClone:
			if last {
				c.run(b, a.Sub, trunc)
				return
			}
			c.run(c.copyAll(&sc.sub, b, noTrunc), a.Sub, trunc)
		case KindSample:
			sub := &sc.sub
			for j, p := range b.Slice() {
				if a.Arg != math.MaxUint32 && c.rand32() >= a.Arg {
					if last {
						c.put(p)
						b.Pkts[j] = nil
					}
					continue
				}
				if last {
					sub.Add(p)
					b.Pkts[j] = nil
				} else {
					c.copyOne(sub, p, noTrunc)
				}
			}
			if last {
				b.N = 0
			}
			c.run(sub, a.Sub, trunc)
			if last {
				return
			}
		case KindCheckPktLen:
			gt, le := &sc.sub, &sc.sub2
			for j, p := range b.Slice() {
				n := p.Len()
				if trunc != noTrunc && trunc < n {
					n = trunc
				}
				dst := le
				if uint32(n) > a.Arg {
					dst = gt
				}
				if last {
					dst.Add(p)
					b.Pkts[j] = nil
				} else {
					c.copyOne(dst, p, noTrunc)
				}
			}
			if last {
				b.N = 0
			}
			c.run(gt, a.Sub, trunc)
			c.run(le, a.Sub2, trunc)
			if last {
				return
			}
		default:
			// KindInvalid or a kind this executor predates: ignore it, as
			// the datapath cannot know what it meant.
		}
	}
	c.free(b)
}

// copyAll fills dst with copies of b's packets, truncated to trunc.
func (c *Context) copyAll(dst, b *packet.Batch, trunc int) *packet.Batch {
	for _, p := range b.Slice() {
		c.copyOne(dst, p, trunc)
	}
	return dst
}

func (c *Context) copyOne(dst *packet.Batch, p *packet.Packet, trunc int) {
	q := c.Pool.Get()
	q.CopyFrom(p)
	if trunc != noTrunc {
		q.Truncate(trunc)
	}
	dst.Add(q)
}

func truncate(b *packet.Batch, trunc int) {
	if trunc == noTrunc {
		return
	}
	for _, p := range b.Slice() {
		p.Truncate(trunc)
	}
}

func (c *Context) put(p *packet.Packet) {
	c.Pool.Put(p)
	c.Dropped++
}

// free returns every packet in b to the pool and empties b.
func (c *Context) free(b *packet.Batch) {
	for _, p := range b.Slice() {
		c.put(p)
	}
	b.Clear()
}

// Ethertypes of VLAN tags pop_vlan removes.
const (
	ethTypeVLAN = 0x8100
	ethTypeQinQ = 0x88a8
)

// pushVLAN inserts an 802.1Q tag after the MAC addresses. A packet without
// headroom for the tag is dropped.
func (c *Context) pushVLAN(b *packet.Batch, tpid, tci uint16) {
	n := 0
	for _, p := range b.Slice() {
		if p.Len() >= 12 {
			tag, err := p.InsertAt(12, 4)
			if err != nil {
				c.put(p)
				continue
			}
			binary.BigEndian.PutUint16(tag, tpid)
			binary.BigEndian.PutUint16(tag[2:], tci&^VLANCFI)
		}
		b.Pkts[n] = p
		n++
	}
	b.Truncate(n)
}

// popVLAN removes the outermost VLAN tag, if there is one.
func popVLAN(p *packet.Packet) {
	d := p.Data()
	if len(d) < 18 {
		return
	}
	if t := binary.BigEndian.Uint16(d[12:]); t == ethTypeVLAN || t == ethTypeQinQ {
		p.RemoveAt(12, 4)
	}
}

// ctClear forgets the packet's conntrack state, as ct_clear.
func ctClear(md *packet.Metadata) {
	md.CtState = 0
	md.CtZone = 0
	md.CtMark = 0
	md.CtLabel = [16]byte{}
	md.CtNwProto = 0
	md.CtNwSrc, md.CtNwDst = 0, 0
	md.CtTpSrc, md.CtTpDst = 0, 0
	md.CtIPv6Src, md.CtIPv6Dst = [16]byte{}, [16]byte{}
	md.CtConn = 0
}
