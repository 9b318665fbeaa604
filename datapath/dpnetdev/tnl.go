package dpnetdev

import (
	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/datapath/tnl"
)

// tunnelPort is what a port's device implements to be a tunnel port
// (netdev/vport): the type tnl_pop decapsulates and tnl_push's tnl_port
// must name.
type tunnelPort interface {
	TunnelType() tnl.Type
}

// isTunnelPort reports whether dev is a tunnel port.
func isTunnelPort(dev netdev.Device) bool {
	_, ok := dev.(tunnelPort)
	return ok
}

// seqPort is a tunnel port that numbers the GRE packets pushed through it
// (tnl_push headers with a sequence number).
type seqPort interface {
	ReserveSeq(n uint32) uint32
}

// TunnelStats are the tunnel drop counters, summed over workers (Open
// vSwitch's coverage counters datapath_drop_tunnel_push_error,
// datapath_drop_tunnel_pop_error and datapath_drop_invalid_tnl_port).
type TunnelStats struct {
	// PushDropped counts packets tnl_push could not encapsulate (no room
	// in the buffer).
	PushDropped uint64
	// PopErrors counts packets tnl_pop refused as malformed.
	PopErrors uint64
	// InvalidPort counts packets of tnl_push or tnl_pop actions naming a
	// port that is not a tunnel port.
	InvalidPort uint64
}

// TunnelStats returns the tunnel drop counters.
func (dp *Datapath) TunnelStats() TunnelStats {
	var s TunnelStats
	for _, w := range append(dp.execWorkers(), dp.workerList()...) {
		s.PushDropped += w.stats.tnlPushDropped.Load()
		s.PopErrors += w.stats.tnlPopError.Load()
		s.InvalidPort += w.stats.tnlInvalidPort.Load()
	}
	return s
}

// tunnelType returns the tunnel type of datapath port no, if it is one.
func (w *worker) tunnelType(no uint32) (tnl.Type, bool) {
	t, ok := w.tunnelDev(no)
	if !ok {
		return 0, false
	}
	return t.TunnelType(), true
}

// tunnelDev returns the device of datapath port no if it is a tunnel
// port.
func (w *worker) tunnelDev(no uint32) (tunnelPort, bool) {
	p := w.dp.ports.load().get(no)
	if p == nil {
		return nil, false
	}
	t, ok := p.dev.(tunnelPort)
	return t, ok
}

// TunnelPush encapsulates every packet of b in place with tnl_push's
// header, as dpif-netdev's push_tnl_action: the tnl_port must be a tunnel
// port; a GRE header with a sequence number takes the next numbers of
// that port; each packet's metadata is then re-initialised with in_port
// set to the action's out_port (Open vSwitch's pkt_metadata_init). The
// following actions output the packets.
func (w *worker) TunnelPush(_ *odp.Context, a *odp.Action, b *packet.Batch) {
	t := a.TunnelPush
	if t == nil {
		w.stats.tnlInvalidPort.Add(uint64(b.N))
		netdev.FreeBatch(b, w.pool)
		return
	}
	dev, ok := w.tunnelDev(t.TnlPort)
	if !ok {
		w.stats.tnlInvalidPort.Add(uint64(b.N))
		netdev.FreeBatch(b, w.pool)
		return
	}
	var seq uint32
	sp, numbered := dev.(seqPort)
	if numbered = numbered && t.Header.HasSeq(); numbered {
		seq = sp.ReserveSeq(uint32(b.N))
	}
	n := 0
	for i := 0; i < b.N; i++ {
		p := b.Pkts[i]
		b.Pkts[i] = nil
		var err error
		if numbered {
			err = tnl.PushSeq(p, &t.Header, seq+uint32(i))
		} else {
			err = tnl.Push(p, &t.Header)
		}
		if err != nil {
			w.stats.tnlPushDropped.Add(1)
			w.pool.Put(p)
			continue
		}
		p.Md.Reset()
		p.Md.InPort = t.OutPort
		p.DPHashValid = false
		b.Pkts[n] = p
		n++
	}
	b.N = n
}

// TunnelPop decapsulates the packets of b for tunnel port no and
// recirculates the good ones with fresh metadata (recirc_id 0, no
// conntrack state) holding the tunnel key and in_port no, as
// dpif-netdev's tnl_pop; a miss then upcalls with the tunnel key. Malformed packets are freed and counted in
// TunnelStats.PopErrors.
func (w *worker) TunnelPop(_ *odp.Context, no uint32, b *packet.Batch) {
	typ, ok := w.tunnelType(no)
	if !ok {
		w.stats.tnlInvalidPort.Add(uint64(b.N))
		netdev.FreeBatch(b, w.pool)
		return
	}
	n := 0
	for i := 0; i < b.N; i++ {
		p := b.Pkts[i]
		b.Pkts[i] = nil
		if !tnl.Pop(p, typ) {
			w.stats.tnlPopError.Add(1)
			w.pool.Put(p)
			continue
		}
		p.Md.InPort = no
		b.Pkts[n] = p
		n++
	}
	b.N = n
	if n == 0 {
		return
	}
	w.stats.recirc.Add(uint64(n))
	w.depth++
	w.process(b)
	w.depth--
}
