package backer

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// ListTunnels is ofproto/list-tunnels: each tunnel port, the packets it
// matches (source -> destination, key, packet type mode, datapath port)
// and how it sends, in Open vSwitch's words.
func (s *Backer) ListTunnels() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ports []*dpPort
	for _, b := range s.bridges {
		for _, p := range b.ports {
			if p.tunnel != nil {
				ports = append(ports, p)
			}
		}
	}
	slices.SortFunc(ports, func(a, b *dpPort) int {
		return cmp.Or(cmp.Compare(a.odp, b.odp), strings.Compare(a.name, b.name))
	})
	var sb strings.Builder
	for _, p := range ports {
		t := p.tunnel
		fmt.Fprintf(&sb, "port %d: %s (%s: ", p.odp, p.name, t.Type)
		switch {
		case !t.RemoteFlow:
			sb.WriteString(mappedAddr(t.LocalIP) + "->" + mappedAddr(t.RemoteIP))
		case !t.LocalFlow:
			sb.WriteString(mappedAddr(t.LocalIP) + "->flow")
		default:
			sb.WriteString("flow->flow")
		}
		if t.InKeyFlow {
			sb.WriteString(", key=flow")
		} else {
			sb.WriteString(", key=" + cHex(t.InKey))
		}
		fmt.Fprintf(&sb, ", legacy_l2, dp port=%d", p.odp)
		_, inPresent, _ := parseKey(p.tunnelOpts, "in_key") // tunnels.go
		if t.OutKey != t.InKey || t.OutKeyPresent != inPresent || t.OutKeyFlow != t.InKeyFlow {
			switch {
			case !t.OutKeyPresent:
				sb.WriteString(", out_key=none")
			case t.OutKeyFlow:
				sb.WriteString(", out_key=flow")
			default:
				sb.WriteString(", out_key=" + cHex(t.OutKey))
			}
		}
		if t.TTLInherit {
			sb.WriteString(", ttl=inherit")
		} else {
			fmt.Fprintf(&sb, ", ttl=%d", t.TTL)
		}
		if t.TosInherit {
			sb.WriteString(", tos=inherit")
		} else if t.Tos != 0 {
			sb.WriteString(", tos=" + cHex(uint64(t.Tos)))
		}
		if !t.DontFragment {
			sb.WriteString(", df=false")
		}
		if t.Csum {
			sb.WriteString(", csum=true")
		}
		sb.WriteString(")\n")
	}
	return sb.String()
}

// cHex is C's %#x: 0 without the prefix.
func cHex(v uint64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%#x", v)
}

// mappedAddr prints an address as Open vSwitch's ipv6_format_mapped: an
// IPv4 address in dotted form, no address as "::".
func mappedAddr(a netip.Addr) string {
	if !a.IsValid() {
		return "::"
	}
	return a.Unmap().String()
}
