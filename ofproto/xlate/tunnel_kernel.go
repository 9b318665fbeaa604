package xlate

import (
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// Tunnels without native tunnelling (tnl_push_pop switched off by
// dpif/set-dp-features), as Open vSwitch's "kernel tunnel" mode: output
// to a tunnel port sets the packet's tunnel metadata to what the port
// says and outputs it to the tunnel vport, whose device encapsulates;
// a packet arriving on the vport carries the tunnel fields in its key
// (the receive side is the same as native tunnelling's).

// kernelOutput is output to tunnel port p without native tunnelling:
// set(tunnel(...)) when the tunnel fields differ from what the datapath
// packet already has (commit_odp_tunnel_action), then the other pending
// header changes and the output to the vport.
func (tx *tunnelXlate) kernelOutput(p *Port) {
	c := tx.c
	saved := c.flow
	defer func() {
		// The tunnel port's settings are not visible to later actions.
		c.flow = saved
	}()
	tx.portSend(p)
	k := &c.flow.Key
	dst := tunDst(k)
	if orig := tunDst(&c.in.Key); orig.IsValid() && !orig.IsUnspecified() && orig == dst {
		c.tr.notef("Not tunneling to our own address")
		return
	}
	c.tr.notef("output to kernel tunnel")
	tx.commitTunnel(p.Tunnel.Type)
	c.flow = saved
	c.outputODP(p.ODP)
}

// commitTunnel emits set(tunnel(...)) for the flow's tunnel fields if
// they have a destination and differ from the datapath packet's, which
// then has them. Only a geneve tunnel gets the Geneve options
// (tun_metadata through the TLV table).
func (tx *tunnelXlate) commitTunnel(typ string) {
	c := tx.c
	k, b := &c.flow.Key, &c.base
	if k.TunDst == 0 && k.TunIPv6Dst == ([16]byte{}) {
		return
	}
	if sameTunnel(k, b) {
		return
	}
	copyTunnel(b, k)
	t := keyTunnel(k)
	if opts := c.snap.geneveOptions(k); len(opts) > 0 && typ == "geneve" {
		c.emit(odp.SetTunnelGeneve(t, opts))
		return
	}
	c.emit(odp.SetTunnel(t))
}

// sameTunnel reports whether a and b have the same tunnel segment.
func sameTunnel(a, b *flow.Key) bool {
	return a.TunID == b.TunID && a.TunSrc == b.TunSrc && a.TunDst == b.TunDst &&
		a.TunIPv6Src == b.TunIPv6Src && a.TunIPv6Dst == b.TunIPv6Dst &&
		a.TunFlags == b.TunFlags && a.TunTos == b.TunTos && a.TunTTL == b.TunTTL &&
		a.TunTpSrc == b.TunTpSrc && a.TunTpDst == b.TunTpDst &&
		a.TunGbpID == b.TunGbpID && a.TunGbpFlags == b.TunGbpFlags &&
		a.TunMetaPresent == b.TunMetaPresent && a.TunMeta == b.TunMeta
}

// copyTunnel copies the tunnel segment of src into dst.
func copyTunnel(dst, src *flow.Key) {
	dst.TunID, dst.TunSrc, dst.TunDst = src.TunID, src.TunSrc, src.TunDst
	dst.TunIPv6Src, dst.TunIPv6Dst = src.TunIPv6Src, src.TunIPv6Dst
	dst.TunFlags, dst.TunTos, dst.TunTTL = src.TunFlags, src.TunTos, src.TunTTL
	dst.TunTpSrc, dst.TunTpDst = src.TunTpSrc, src.TunTpDst
	dst.TunGbpID, dst.TunGbpFlags = src.TunGbpID, src.TunGbpFlags
	dst.TunMetaPresent, dst.TunMeta = src.TunMetaPresent, src.TunMeta
}

// keyTunnel is the packet tunnel metadata of k's tunnel fields.
func keyTunnel(k *flow.Key) packet.Tunnel {
	return packet.Tunnel{ID: k.TunID, Src: k.TunSrc, Dst: k.TunDst, IPv6Src: k.TunIPv6Src, IPv6Dst: k.TunIPv6Dst,
		Flags: k.TunFlags, Tos: k.TunTos, TTL: k.TunTTL, TpSrc: k.TunTpSrc, TpDst: k.TunTpDst,
		GbpID: k.TunGbpID, GbpFlag: k.TunGbpFlags, MetaPresent: k.TunMetaPresent, Meta: k.TunMeta}
}
