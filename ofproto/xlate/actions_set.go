package xlate

import (
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The header-setting family's translation (see package ofp's
// actions_set.go): mod_dl_src/dst, mod_nw_src/dst, mod_nw_tos,
// mod_nw_ecn, mod_nw_ttl, mod_tp_src/dst, set_tunnel and dec_ttl. Each
// applies only where the packet has the header, and makes what it writes
// exact in the megaflow.

func init() {
	registerHooks(map[ofp.ActionType]actionHook{
		ofp.ActSetDLSrc: func(c *ctx, a *ofp.Action) {
			c.wc.Key.EthSrc = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
			c.flow.Key.EthSrc = mac48(a.Arg)
		},
		ofp.ActSetDLDst: func(c *ctx, a *ofp.Action) {
			c.wc.Key.EthDst = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
			c.flow.Key.EthDst = mac48(a.Arg)
		},
		ofp.ActSetNWSrc:  setNWAddr,
		ofp.ActSetNWDst:  setNWAddr,
		ofp.ActSetNWTos:  func(c *ctx, a *ofp.Action) { c.setNWTosBits(0xfc, uint8(a.Arg)) },
		ofp.ActSetNWECN:  func(c *ctx, a *ofp.Action) { c.setNWTosBits(0x03, uint8(a.Arg)) },
		ofp.ActSetNWTTL:  setNWTTL,
		ofp.ActSetTPSrc:  setTP,
		ofp.ActSetTPDst:  setTP,
		ofp.ActSetTunnel: func(c *ctx, a *ofp.Action) { c.flow.Key.TunID = a.Arg },
		ofp.ActDecTTL:    decTTL,
	})
	registerProps(map[ofp.ActionType]kindProps{
		ofp.ActSetDLSrc:  {setOrMove: true, needsL3: belowL3},
		ofp.ActSetDLDst:  {setOrMove: true, needsL3: belowL3},
		ofp.ActSetNWSrc:  {setOrMove: true},
		ofp.ActSetNWDst:  {setOrMove: true},
		ofp.ActSetNWTos:  {setOrMove: true},
		ofp.ActSetNWECN:  {setOrMove: true},
		ofp.ActSetNWTTL:  {setOrMove: true},
		ofp.ActSetTPSrc:  {setOrMove: true},
		ofp.ActSetTPDst:  {setOrMove: true},
		ofp.ActSetTunnel: {setOrMove: true, needsL3: belowL3},
		ofp.ActDecTTL:    {slot: 5},
	})
}

// setNWAddr implements mod_nw_src and mod_nw_dst, on IPv4 only.
func setNWAddr(c *ctx, a *ofp.Action) {
	k, w := &c.flow.Key, &c.wc.Key
	if k.EthType != flow.EthTypeIPv4 {
		return
	}
	w.NwProto = 0xff
	if a.Type == ofp.ActSetNWSrc {
		w.NwSrc, k.NwSrc = ^uint32(0), uint32(a.Arg)
	} else {
		w.NwDst, k.NwDst = ^uint32(0), uint32(a.Arg)
	}
}

// setNWTosBits implements mod_nw_tos (bits 0xfc) and mod_nw_ecn (0x03).
func (c *ctx) setNWTosBits(bits, val uint8) {
	k, w := &c.flow.Key, &c.wc.Key
	if !isIP(k) {
		return
	}
	w.NwTos |= bits
	w.NwProto = 0xff
	k.NwTos = k.NwTos&^bits | val&bits
}

func setNWTTL(c *ctx, a *ofp.Action) {
	k, w := &c.flow.Key, &c.wc.Key
	if isIP(k) {
		w.NwTTL, w.NwProto = 0xff, 0xff
		k.NwTTL = uint8(a.Arg)
	}
}

// setTP implements mod_tp_src and mod_tp_dst, on TCP, UDP and SCTP first
// fragments.
func setTP(c *ctx, a *ofp.Action) {
	k, w := &c.flow.Key, &c.wc.Key
	if !isIP(k) || k.NwFrag&flow.FragLater != 0 || k.NwProto != flow.IPProtoTCP && k.NwProto != flow.IPProtoUDP && k.NwProto != flow.IPProtoSCTP {
		return
	}
	w.NwProto = 0xff
	if a.Type == ofp.ActSetTPSrc {
		w.TpSrc, k.TpSrc = 0xffff, uint16(a.Arg)
	} else {
		w.TpDst, k.TpDst = 0xffff, uint16(a.Arg)
	}
}

func mac48(v uint64) [6]byte {
	var m [6]byte
	for i := 5; i >= 0; i-- {
		m[i] = byte(v)
		v >>= 8
	}
	return m
}

// decTTL decrements the IP TTL; at 1 or 0 the packet goes to the
// controllers named by ids with reason invalid_ttl and translation stops.
func decTTL(c *ctx, a *ofp.Action) {
	ids := a.IDs()
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
