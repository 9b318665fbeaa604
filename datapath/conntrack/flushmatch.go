package conntrack

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Match selects connections to flush by their tuples, as Open vSwitch
// 3.1's ct flush does for NXT_CT_FLUSH and `dpctl/flush-conntrack` with
// tuples: zero addresses and ports are wildcards, a zero Family or Proto
// matches any. For ICMP the identifier, type and code always compare (a
// zero is a value, not a wildcard), as in Open vSwitch.
type Match struct {
	Family      uint8 // 0, 4 or 6
	Proto       uint8
	Orig, Reply TupleMatch
}

// TupleMatch is one direction of a Match, laid out as Key: IPv4 addresses
// in the first 4 bytes.
type TupleMatch struct {
	Src, Dst           [16]byte
	SrcPort, DstPort   uint16
	ICMPID             uint16
	ICMPType, ICMPCode uint8
}

func isICMP(proto uint8) bool { return proto == protoICMP || proto == protoICMPv6 }

func (t *TupleMatch) isZero(proto uint8) bool {
	z := t.Src == [16]byte{} && t.Dst == [16]byte{}
	if isICMP(proto) {
		return z && t.ICMPID == 0 && t.ICMPType == 0 && t.ICMPCode == 0
	}
	return z && t.SrcPort == 0 && t.DstPort == 0
}

// isFiveTuple says the tuple names one connection direction exactly: both
// addresses and, outside ICMP, both ports.
func (t *TupleMatch) isFiveTuple(proto uint8) bool {
	ok := t.Src != [16]byte{} && t.Dst != [16]byte{}
	if !isICMP(proto) {
		ok = ok && t.SrcPort != 0 && t.DstPort != 0
	}
	return ok
}

// IsZero says m selects every connection.
func (m *Match) IsZero() bool {
	return m.Family == 0 && m.Proto == 0 && m.Orig.isZero(m.Proto) && m.Reply.isZero(m.Proto)
}

// matches compares the non-wildcard fields of t with the direction k.
func (t *TupleMatch) matches(k *Key, proto uint8) bool {
	if t.Src != [16]byte{} && t.Src != k.Src || t.Dst != [16]byte{} && t.Dst != k.Dst {
		return false
	}
	if isICMP(proto) {
		return t.ICMPID == k.SrcPort && t.ICMPType == k.SrcType && t.ICMPCode == k.ICMPCode
	}
	return (t.SrcPort == 0 || t.SrcPort == k.SrcPort) && (t.DstPort == 0 || t.DstPort == k.DstPort)
}

func (m *Match) matches(c *Conn) bool {
	o, r := &c.nodes[0].key, &c.nodes[1].key
	if m.Family != 0 && m.Family != o.Family || m.Proto != 0 && m.Proto != o.Proto {
		return false
	}
	return m.Orig.matches(o, m.Proto) && m.Reply.matches(r, m.Proto)
}

// tupleError is a ct-tuple syntax error in Open vSwitch's words, without
// a prefix (dpctl prints it as is); it is an ErrBadTuple.
type tupleError string

func (e tupleError) Error() string        { return string(e) }
func (e tupleError) Is(target error) bool { return target == ErrBadTuple }

func badTuple(format string, args ...any) error { return tupleError(fmt.Sprintf(format, args...)) }

// origKey is the key of zone z that m's original tuple names.
func (m *Match) origKey(z uint16) Key {
	k := Key{Src: m.Orig.Src, Dst: m.Orig.Dst, Proto: m.Proto, Family: m.Family, Zone: z}
	if isICMP(m.Proto) {
		k.SrcPort, k.DstPort = m.Orig.ICMPID, m.Orig.ICMPID
		k.SrcType, k.ICMPCode = m.Orig.ICMPType, m.Orig.ICMPCode
	} else {
		k.SrcPort, k.DstPort = m.Orig.SrcPort, m.Orig.DstPort
	}
	return k
}

// ErrNoSuchTuple is returned when a flush names one connection by its full
// tuple and there is none.
var ErrNoSuchTuple = errors.New("no connection with that tuple")

// Flush removes the connections m selects, in zone if it is not nil,
// with Open vSwitch's rules: an empty match flushes the zone (every zone
// without one); a full original tuple and an empty reply tuple remove
// that one connection of zone (zone 0 without one) and fail with
// ErrNoSuchTuple if there is none; anything else removes every matching
// connection of zone (of every zone without one). It returns how many
// connections it removed.
func (t *Tracker) Flush(zone *uint16, m *Match) (int, error) {
	switch {
	case m == nil || m.IsZero():
		if zone != nil {
			return t.FlushZone(*zone), nil
		}
		return t.FlushAll(), nil
	case m.Orig.isFiveTuple(m.Proto) && m.Reply.isZero(m.Proto):
		var z uint16
		if zone != nil {
			z = *zone
		}
		if !t.FlushTuple(m.origKey(z)) {
			return 0, ErrNoSuchTuple
		}
		return 1, nil
	}
	n := 0
	if zone != nil {
		if z := t.zones[*zone].Load(); z != nil {
			n = t.flushMatching(z, m)
		}
		return n, nil
	}
	for i := range t.zones {
		if z := t.zones[i].Load(); z != nil && z.count.Load() > 0 {
			n += t.flushMatching(z, m)
		}
	}
	return n, nil
}

// flushMatching removes the connections of z that m selects.
func (t *Tracker) flushMatching(z *zone, m *Match) int {
	var hit []*Conn
	z.forEach(func(c *Conn) bool {
		if m.matches(c) {
			hit = append(hit, c)
		}
		return true
	})
	if len(hit) == 0 {
		return 0
	}
	n := 0
	z.mu.Lock()
	for _, c := range hit {
		if !z.dead && z.removeLocked(c) {
			t.reuse.retireLocked(z, c)
			n++
		}
	}
	z.mu.Unlock()
	t.count.Add(-int64(n))
	return n
}

// ParseTupleMatch parses one tuple of `dpctl/flush-conntrack` (Open
// vSwitch's ct-tuple syntax: ct_nw_src=, ct_nw_dst=, ct_ipv6_src=,
// ct_ipv6_dst=, ct_nw_proto=, ct_tp_src=, ct_tp_dst=, icmp_id=,
// icmp_type=, icmp_code=, every field optional) into t, checking and
// filling the family and protocol m shares between both tuples. Errors
// read as Open vSwitch's.
func (m *Match) ParseTupleMatch(t *TupleMatch, s string) error {
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		name, val, _ := strings.Cut(f, "=")
		if val == "" {
			return badTuple("field %s missing value", name)
		}
		bad := badTuple("failed to parse field %s", name)
		switch name {
		case "ct_nw_src", "ct_nw_dst", "ct_ipv6_src", "ct_ipv6_dst":
			fam := uint8(4)
			if strings.HasPrefix(name, "ct_ipv6") {
				fam = 6
			}
			if m.Family != 0 && m.Family != fam {
				return badTuple("the L3 protocol does not match %s", val)
			}
			a := &t.Src
			if strings.HasSuffix(name, "dst") {
				a = &t.Dst
			}
			if *a != ([16]byte{}) {
				return badTuple("%s is set multiple times", name)
			}
			ip, err := netip.ParseAddr(val)
			if err != nil || ip.Is4() != (fam == 4) {
				return bad
			}
			if fam == 4 {
				v4 := ip.As4()
				copy(a[:], v4[:])
			} else {
				*a = ip.As16()
			}
			m.Family = fam
		case "ct_nw_proto":
			v, err := strconv.ParseUint(val, 0, 8)
			if err != nil {
				return bad
			}
			m.Proto = uint8(v)
		case "ct_tp_src", "ct_tp_dst":
			v, err := strconv.ParseUint(val, 0, 16)
			if err != nil {
				return bad
			}
			if name == "ct_tp_src" {
				t.SrcPort = uint16(v)
			} else {
				t.DstPort = uint16(v)
			}
		case "icmp_type", "icmp_code", "icmp_id":
			if !isICMP(m.Proto) {
				return badTuple("invalid L4 fields")
			}
			size := 8
			if name == "icmp_id" {
				size = 16
			}
			v, err := strconv.ParseUint(val, 0, size)
			if err != nil {
				return bad
			}
			switch name {
			case "icmp_type":
				t.ICMPType = uint8(v)
			case "icmp_code":
				t.ICMPCode = uint8(v)
			default:
				t.ICMPID = uint16(v)
			}
		default:
			return badTuple("invalid conntrack tuple field: %s", name)
		}
	}
	if m.Proto == 0 && (t.SrcPort != 0 || t.DstPort != 0) {
		return badTuple("port is set without protocol")
	}
	return nil
}

// FormatFlush is what Open vSwitch's ct_dpif logs (at DBG) for a flush of
// zone (nil: every zone) by m (nil or zero: everything): "zone N" or
// "<all>", or "zone=N 'ORIG,ct_nw_proto=P' 'REPLY'" with each tuple in
// ofp_ct_tuple_format's words.
func FormatFlush(zone *uint16, m *Match) string {
	if m == nil || m.IsZero() {
		if zone != nil {
			return fmt.Sprintf("zone %d", *zone)
		}
		return "<all>"
	}
	z := uint16(0)
	if zone != nil {
		z = *zone
	}
	var b strings.Builder
	fmt.Fprintf(&b, "zone=%d '", z)
	m.formatFlushTuple(&b, &m.Orig)
	fmt.Fprintf(&b, ",ct_nw_proto=%d' '", m.Proto)
	m.formatFlushTuple(&b, &m.Reply)
	b.WriteString("'")
	return b.String()
}

// formatFlushTuple is ofp_ct_tuple_format: IPv4 names and addresses for an
// IPv4 match, IPv6 otherwise; an unset address is "::" either way.
func (m *Match) formatFlushTuple(b *strings.Builder, t *TupleMatch) {
	addr := func(a [16]byte) string {
		switch {
		case a == [16]byte{}:
			return "::"
		case m.Family == 4:
			return netip.AddrFrom4([4]byte(a[:4])).String()
		}
		return netip.AddrFrom16(a).String()
	}
	if m.Family == 4 {
		fmt.Fprintf(b, "ct_nw_src=%s,ct_nw_dst=%s", addr(t.Src), addr(t.Dst))
	} else {
		fmt.Fprintf(b, "ct_ipv6_src=%s,ct_ipv6_dst=%s", addr(t.Src), addr(t.Dst))
	}
	if isICMP(m.Proto) {
		fmt.Fprintf(b, ",icmp_id=%d,icmp_type=%d,icmp_code=%d", t.ICMPID, t.ICMPType, t.ICMPCode)
	} else {
		fmt.Fprintf(b, ",ct_tp_src=%d,ct_tp_dst=%d", t.SrcPort, t.DstPort)
	}
}
