package odp

import (
	"encoding/hex"
	"math"
	"net/netip"
	"strconv"

	"github.com/gvs-project/gvs/datapath/tnl"
)

// String returns the actions as `ovs-appctl dpctl/dump-flows` prints them
// after "actions:", for example "set(ipv4(dst=10.0.0.2)),push_vlan(vid=10,pcp=0),2".
func (a Actions) String() string { return string(a.AppendText(nil)) }

// Format is String; it exists for symmetry with flow.Key's formatter.
func (a Actions) Format() string { return a.String() }

// AppendText appends the text form of the actions to dst.
func (a Actions) AppendText(dst []byte) []byte {
	if len(a) == 0 {
		return append(dst, "drop"...)
	}
	for i := range a {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = a[i].AppendText(dst)
	}
	return dst
}

// String returns one action's text.
func (a *Action) String() string { return string(a.AppendText(nil)) }

// AppendText appends one action's text to dst.
func (a *Action) AppendText(dst []byte) []byte {
	switch a.Kind {
	case KindOutput:
		return strconv.AppendUint(dst, uint64(a.Arg), 10)
	case KindDrop, KindPopVLAN, KindCtClear:
		return append(dst, a.Kind.String()...)
	case KindSet, KindSetMasked:
		if a.Set == nil || a.Set.Field == FieldInvalid || a.Set.Field >= numFields {
			return append(dst, "set(invalid)"...)
		}
		dst = append(dst, "set("...)
		dst = a.Set.appendText(dst, a.Kind == KindSet)
		return append(dst, ')')
	case KindPushVLAN:
		return appendPushVLAN(dst, uint16(a.Arg>>16), uint16(a.Arg))
	case KindRecirc:
		dst = append(dst, "recirc("...)
		dst = appendHex(dst, uint64(a.Arg))
		return append(dst, ')')
	case KindHash:
		dst = append(dst, "hash("...)
		switch a.Alg {
		case HashL4:
			dst = append(dst, "l4("...)
		case HashSymL4:
			dst = append(dst, "sym_l4("...)
		default:
			dst = append(dst, "Unknown hash algorithm("...)
			dst = strconv.AppendUint(dst, uint64(a.Alg), 10)
			dst = append(dst, ")("...)
		}
		dst = strconv.AppendUint(dst, uint64(a.Arg), 10)
		return append(dst, "))"...)
	case KindUserspace:
		dst = append(dst, "userspace(pid="...)
		dst = strconv.AppendUint(dst, uint64(a.Arg), 10)
		if u := a.Userspace; u != nil {
			if c, ok := ParseCookie(u.Userdata); ok {
				dst = append(dst, ',')
				dst = c.appendText(dst)
			} else if len(u.Userdata) > 0 {
				dst = append(dst, ",userdata("...)
				dst = hex.AppendEncode(dst, u.Userdata)
				dst = append(dst, ')')
			}
			if u.WithActions {
				dst = append(dst, ",actions"...)
			}
			if u.TunnelOutPort != 0 {
				dst = append(dst, ",tunnel_out_port="...)
				dst = strconv.AppendUint(dst, uint64(u.TunnelOutPort), 10)
			}
		}
		return append(dst, ')')
	case KindClone:
		dst = append(dst, "clone("...)
		dst = a.Sub.AppendText(dst)
		return append(dst, ')')
	case KindTrunc, KindMeter, KindTunnelPop:
		dst = append(dst, a.Kind.String()...)
		dst = append(dst, '(')
		dst = strconv.AppendUint(dst, uint64(a.Arg), 10)
		return append(dst, ')')
	case KindSample:
		dst = append(dst, "sample(sample="...)
		dst = strconv.AppendFloat(dst, 100*float64(a.Arg)/math.MaxUint32, 'f', 1, 64)
		dst = append(dst, "%,actions("...)
		dst = a.Sub.AppendText(dst)
		return append(dst, "))"...)
	case KindCheckPktLen:
		dst = append(dst, "check_pkt_len(size="...)
		dst = strconv.AppendUint(dst, uint64(a.Arg), 10)
		dst = append(dst, ",gt("...)
		dst = a.Sub.AppendText(dst)
		dst = append(dst, "),le("...)
		dst = a.Sub2.AppendText(dst)
		return append(dst, "))"...)
	case KindCt:
		dst = append(dst, "ct"...)
		if a.Ct != nil && a.Ct.Raw != "" {
			dst = append(dst, '(')
			dst = append(dst, a.Ct.Raw...)
			dst = append(dst, ')')
		}
		return dst
	case KindMACLearn:
		return a.MACLearn.appendText(dst)
	case KindTunnelPush:
		return appendTunnelPush(dst, a.TunnelPush)
	case KindPushMPLS:
		dst = append(dst, "push_mpls("...)
		dst = appendLSE(dst, a.Arg)
		dst = append(dst, ",eth_type=0x"...)
		dst = strconv.AppendUint(dst, uint64(a.EthType), 16)
		return append(dst, ')')
	case KindPopMPLS:
		dst = append(dst, "pop_mpls(eth_type=0x"...)
		dst = strconv.AppendUint(dst, uint64(a.EthType), 16)
		return append(dst, ')')
	}
	return append(dst, "invalid"...)
}

// appendText prints mac_learn canonically: table always, the rest only
// when set.
func (m *MACLearnParams) appendText(dst []byte) []byte {
	dst = append(dst, "mac_learn(table="...)
	if m == nil {
		return append(dst, "0)"...)
	}
	dst = strconv.AppendUint(dst, uint64(m.Table), 10)
	if m.VLAN != 0 {
		dst = append(dst, ",vlan="...)
		dst = strconv.AppendUint(dst, uint64(m.VLAN), 10)
	}
	if m.InTagged {
		dst = append(dst, ",in_tagged"...)
	}
	if m.LearnPort != 0 {
		dst = append(dst, ",learn_port="...)
		dst = strconv.AppendUint(dst, uint64(m.LearnPort), 10)
	}
	if m.DropIfMoved {
		dst = append(dst, ",drop_if_moved"...)
	}
	if len(m.Ports) > 0 {
		dst = append(dst, ",ports("...)
		for i, pt := range m.Ports {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendUint(dst, uint64(pt.Port), 10)
			if pt.Tagged {
				dst = append(dst, ":tagged"...)
			}
			if pt.Recirc != 0 {
				dst = append(dst, ":recirc=0x"...)
				dst = strconv.AppendUint(dst, uint64(pt.Recirc), 16)
			}
			if pt.Out != 0 {
				dst = append(dst, ":out="...)
				dst = strconv.AppendUint(dst, uint64(pt.Out), 10)
			}
		}
		dst = append(dst, ')')
	}
	return append(dst, ')')
}

func appendPushVLAN(dst []byte, tpid, tci uint16) []byte {
	dst = append(dst, "push_vlan("...)
	if tpid != 0x8100 {
		dst = append(dst, "tpid=0x"...)
		const digits = "0123456789abcdef"
		dst = append(dst, digits[tpid>>12], digits[tpid>>8&0xf], digits[tpid>>4&0xf], digits[tpid&0xf], ',')
	}
	dst = append(dst, "vid="...)
	dst = strconv.AppendUint(dst, uint64(tci&0xfff), 10)
	dst = append(dst, ",pcp="...)
	dst = strconv.AppendUint(dst, uint64(tci>>13), 10)
	if tci&VLANCFI == 0 {
		dst = append(dst, ",cfi=0"...)
	}
	return append(dst, ')')
}

// appendHex formats v as C's "%#x": "0" for zero, else "0x..." .
func appendHex(dst []byte, v uint64) []byte {
	if v == 0 {
		return append(dst, '0')
	}
	dst = append(dst, "0x"...)
	return strconv.AppendUint(dst, v, 16)
}

// appendText prints the set field: every subfield for a whole set,
// otherwise the subfields with a non-zero mask, with "/mask" when the mask
// is partial.
func (s *SetField) appendText(dst []byte, whole bool) []byte {
	d := &fields[s.Field]
	dst = append(dst, d.name...)
	dst = append(dst, '(')
	if s.Field == FieldTunnel {
		whole = false
	}
	n := 0
	for i := range d.subs {
		sf := &d.subs[i]
		if !whole && !d.bare && !d.everyMember && subMaskZero(sf, &s.Mask) {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		if sf.fmt == fmtTunFlag {
			if s.geneveLen > 0 {
				dst = append(dst, "geneve("...)
				dst = tnl.AppendGeneveOpts(dst, s.geneve[:s.geneveLen])
				dst = append(dst, "),"...)
			}
			dst = appendTunFlags(dst, uint16(sf.get(&s.Val)), uint16(sf.get(&s.Mask)))
			continue
		}
		if !d.bare {
			dst = append(dst, sf.name...)
			dst = append(dst, '=')
		}
		dst = appendSubValue(dst, sf, &s.Val, false)
		switch {
		case !whole && d.everyMember:
			dst = append(dst, '/')
			if sf.bits >= 8 {
				dst = append(dst, "0x"...)
			}
			dst = strconv.AppendUint(dst, sf.get(&s.Mask), 16)
		case !whole && d.maskable && !subMaskFull(sf, &s.Mask):
			dst = append(dst, '/')
			dst = appendSubValue(dst, sf, &s.Mask, true)
		}
	}
	return append(dst, ')')
}

func appendSubValue(dst []byte, sf *subfield, img *[ImageSize]byte, isMask bool) []byte {
	b := img[sf.off : sf.off+sf.size]
	switch sf.fmt {
	case fmtIPv4:
		return netip.AddrFrom4([4]byte(b)).AppendTo(dst)
	case fmtIPv6:
		return netip.AddrFrom16([16]byte(b)).AppendTo(dst)
	case fmtMAC:
		return appendMAC(dst, b)
	}
	v := sf.get(img)
	switch {
	case sf.fmt == fmtDec && !isMask:
		return strconv.AppendUint(dst, v, 10)
	case sf.fmt == fmtFrag && !isMask && v < uint64(len(fragNames)):
		return append(dst, fragNames[v]...)
	case sf.fmt == fmtHex0x:
		return strconv.AppendUint(append(dst, "0x"...), v, 16)
	}
	return appendHex(dst, v)
}

func appendMAC(dst, b []byte) []byte {
	const digits = "0123456789abcdef"
	for i, x := range b {
		if i > 0 {
			dst = append(dst, ':')
		}
		dst = append(dst, digits[x>>4], digits[x&0xf])
	}
	return dst
}

// appendTunFlags prints tunnel flags as OVS: "flags(df|key)" when all
// flags are given, "flags(+key)" (set/clear per masked bit) when only
// some are, as after a tun_id without explicit flags.
func appendTunFlags(dst []byte, flags, mask uint16) []byte {
	dst = append(dst, "flags("...)
	if mask != 0xffff {
		for _, f := range tunFlagNames {
			if mask&f.bit == 0 {
				continue
			}
			if flags&f.bit != 0 {
				dst = append(dst, '+')
			} else {
				dst = append(dst, '-')
			}
			dst = append(dst, f.name...)
		}
		return append(dst, ')')
	}
	if flags == 0 {
		dst = append(dst, '0')
	}
	first := true
	for _, f := range tunFlagNames {
		if flags&f.bit == 0 {
			continue
		}
		if !first {
			dst = append(dst, '|')
		}
		first = false
		dst = append(dst, f.name...)
		flags &^= f.bit
	}
	if flags != 0 {
		if !first {
			dst = append(dst, '|')
		}
		dst = appendHex(dst, uint64(flags))
	}
	return append(dst, ')')
}
