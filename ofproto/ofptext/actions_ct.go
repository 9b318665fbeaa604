package ofptext

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The connection-tracking family's text (see package ofp's
// actions_ct.go): ct(...) with its exec(...) and nat(...), and ct_clear.

func init() {
	registerParsers(map[string]actionParser{
		"ct": func(t *actionText) ([]ofp.Action, error) {
			return one(parseCT(t.arg, t.v, t.m, t.depth))
		},
		"ct_clear": noArg(ofp.ActCTClear),
	})
	registerFormatters(map[ofp.ActionType]actionFormatter{
		ofp.ActCT:      func(sb *strings.Builder, a *ofp.Action, v uint8) { formatCT(sb, a.CT(), v) },
		ofp.ActCTClear: word("ct_clear"),
		ofp.ActNAT:     func(sb *strings.Builder, a *ofp.Action, _ uint8) { formatNAT(sb, a.NAT()) },
	})
}

func parseCT(arg string, v uint8, m *mf.Match, depth int) (ofp.Action, error) {
	ct := &ofp.CT{Table: 0xff}
	items, err := splitTop(arg)
	if err != nil {
		return ofp.Action{}, err
	}
	for _, it := range items {
		if it == "" {
			continue
		}
		name, val := splitAction(it)
		switch name {
		case "commit":
			ct.Flags |= 1
		case "force":
			ct.Flags |= 2
		case "table":
			t, err := strconv.ParseUint(val, 0, 8)
			if err != nil {
				return ofp.Action{}, errf("unknown table %s", val)
			}
			if t == 0xff {
				return ofp.Action{}, errf("invalid table 0xff")
			}
			ct.Table = uint8(t)
		case "zone":
			if z, err := strconv.ParseUint(val, 0, 16); err == nil {
				ct.ZoneImm = uint16(z)
				ct.ZoneSrc = ofp.Subfield{}
				break
			}
			sf, err := parseSubfield(val)
			if err != nil {
				return ofp.Action{}, err
			}
			ct.ZoneSrc = sf
		case "alg":
			switch val {
			case "ftp":
				ct.Alg = 21
			case "tftp":
				ct.Alg = 69
			default: // ovs-ofctl knows the helpers by name only
				return ofp.Action{}, errf("invalid conntrack helper \"%s\"", val)
			}
		case "exec":
			acts, err := parseActionList(val, v, m, depth+1)
			if err != nil {
				return ofp.Action{}, err
			}
			if err := checkCTExec(val, acts); err != nil {
				return ofp.Action{}, err
			}
			ct.Actions = append(ct.Actions, acts...)
		case "nat":
			n, err := parseNAT(val, it)
			if err != nil {
				return ofp.Action{}, err
			}
			ct.Actions = append(ct.Actions, n)
		default:
			k, _, _ := strings.Cut(it, "=")
			return ofp.Action{}, errf("invalid argument to \"ct\" action: `%s'", k)
		}
	}
	return ofp.Action{Type: ofp.ActCT, Raw: ofp.RawActNXAST_CT, Body: ct}, nil
}

// parseNAT parses the argument of nat(...) inside ct.
func parseNAT(arg, whole string) (ofp.Action, error) {
	n := &ofp.NAT{}
	if whole != "nat" {
		for _, it := range strings.Split(arg, ",") {
			k, val, hasVal := strings.Cut(it, "=")
			switch k {
			case "src", "dst":
				if n.Flags&(ofp.NATSrc|ofp.NATDst) != 0 {
					return ofp.Action{}, errf("May only specify one of \"src\" or \"dst\".")
				}
				n.Flags |= ofp.NATSrc
				if k == "dst" {
					n.Flags = n.Flags&^ofp.NATSrc | ofp.NATDst
				}
				if hasVal {
					if err := parseNATRange(n, val); err != nil {
						return ofp.Action{}, err
					}
				}
			case "persistent":
				n.Flags |= ofp.NATPersistent
			case "hash":
				n.Flags |= ofp.NATHash
			case "random":
				n.Flags |= ofp.NATRandom
			default:
				return ofp.Action{}, errf("invalid key \"%s\" in \"nat\" argument", k)
			}
		}
	}
	return ofp.Action{Type: ofp.ActNAT, Raw: ofp.RawActNXAST_NAT, Body: n}, nil
}

// parseNATRange parses ADDR[-ADDR][:PORT[-PORT]] (IPv6 addresses bare or
// in brackets) the way ovs-ofctl scans it: text that looks like an IPv6
// address but is not one leaves the range empty, a bad or decreasing
// range is "invalid", and anything left over is "garbage".
func parseNATRange(n *ofp.NAT, s string) error {
	invalid := errf("invalid nat range \"%s\"", s)
	pos := 0
	scanV6 := func() (netip.Addr, bool, bool) { // address, scanned, valid
		rest, bracket := s[pos:], false
		if strings.HasPrefix(rest, "[") {
			rest, bracket = rest[1:], true
		}
		l := 0
		for l < len(rest) && l < 46 && strings.IndexByte("0123456789abcdefABCDEF:.", rest[l]) >= 0 {
			l++
		}
		if l == 0 || bracket && (l >= len(rest) || rest[l] != ']') {
			return netip.Addr{}, false, false
		}
		a, err := netip.ParseAddr(rest[:l])
		if bracket {
			l += 2
		}
		pos += l
		return a, true, err == nil && a.Is6()
	}
	family := 0
	if v4, l, ok := scanIPv4(s); ok {
		pos, family = l, 4
		n.AddrMin = netip.AddrFrom4(v4)
		if pos < len(s) && s[pos] == '-' {
			hi, l, ok := scanIPv4(s[pos+1:])
			if !ok {
				return invalid
			}
			pos += 1 + l
			n.AddrMax = netip.AddrFrom4(hi)
			if n.AddrMax.Less(n.AddrMin) {
				return invalid
			}
		}
	} else if a, scanned, valid := scanV6(); scanned && valid {
		family = 6
		n.AddrMin = a
		if pos < len(s) && s[pos] == '-' {
			pos++
			hi, _, valid := scanV6()
			if !valid {
				return invalid
			}
			n.AddrMax = hi
			if n.AddrMax.Less(n.AddrMin) {
				return invalid
			}
		}
	}
	if family != 0 && pos < len(s) && s[pos] == ':' {
		lo, l, ok := scanUint(s[pos+1:])
		if !ok {
			return invalid
		}
		pos += 1 + l
		n.ProtoMin = uint16(lo)
		if pos < len(s) && s[pos] == '-' {
			hi, l, ok := scanUint(s[pos+1:])
			if !ok || uint16(hi) < uint16(lo) {
				return invalid
			}
			pos += 1 + l
			n.ProtoMax = uint16(hi)
		}
	}
	if pos != len(s) {
		return errf("garbage (%s) after nat range \"%s\" (pos: %d)", s[pos:], s, pos)
	}
	return nil
}

// scanUint reads the leading decimal digits of s, as scanf's %u.
func scanUint(s string) (uint64, int, bool) {
	l := 0
	var v uint64
	for l < len(s) && s[l] >= '0' && s[l] <= '9' {
		v = v*10 + uint64(s[l]-'0')
		l++
	}
	return v, l, l > 0
}

// scanIPv4 reads a leading dotted quad of s, each octet modulo 256, as
// ovs-ofctl's scanner does.
func scanIPv4(s string) ([4]byte, int, bool) {
	var out [4]byte
	pos := 0
	for i := range 4 {
		if i > 0 {
			if pos >= len(s) || s[pos] != '.' {
				return out, 0, false
			}
			pos++
		}
		v, l, ok := scanUint(s[pos:])
		if !ok {
			return out, 0, false
		}
		out[i] = byte(v)
		pos += l
	}
	return out, pos, true
}

// checkCTExec refuses, as ovs-ofctl does when parsing, actions ct's exec
// cannot hold: anything but writes of ct_mark and ct_label.
func checkCTExec(text string, acts []ofp.Action) error {
	items, _ := splitTop(text)
	for i := range acts {
		a := &acts[i]
		var f *mf.Field
		switch a.Type {
		case ofp.ActSetField:
			f = a.Field
		case ofp.ActLoad, ofp.ActMove:
			f = a.Dst.Field
		default:
			name := a.Type.String()
			if i < len(items) {
				name, _ = splitAction(items[i])
			}
			return errf("ct action doesn't support nested action %s", strings.ToLower(name))
		}
		if f == nil || f.ID != mf.IDCtMark && f.ID != mf.IDCtLabel {
			n := "?"
			if f != nil {
				n = f.Name
			}
			return errf("ct action doesn't support nested modification of %s", n)
		}
	}
	return nil
}

func formatNAT(sb *strings.Builder, n *ofp.NAT) {
	sb.WriteString("nat")
	if n == nil || n.Flags&(ofp.NATSrc|ofp.NATDst) == 0 {
		return
	}
	if n.Flags&ofp.NATSrc != 0 {
		sb.WriteString("(src")
	} else {
		sb.WriteString("(dst")
	}
	addr := func(a netip.Addr) string {
		if a.Is6() {
			return "[" + a.String() + "]"
		}
		return a.String()
	}
	if n.AddrMin.IsValid() {
		sb.WriteString("=" + addr(n.AddrMin))
		if n.AddrMax.IsValid() && !n.AddrMax.IsUnspecified() && n.AddrMax != n.AddrMin {
			sb.WriteString("-" + addr(n.AddrMax))
		}
		if n.ProtoMin != 0 {
			fmt.Fprintf(sb, ":%d", n.ProtoMin)
			if n.ProtoMax != 0 && n.ProtoMax != n.ProtoMin {
				fmt.Fprintf(sb, "-%d", n.ProtoMax)
			}
		}
	}
	for _, f := range []struct {
		bit  uint16
		name string
	}{{ofp.NATPersistent, ",persistent"}, {ofp.NATHash, ",hash"}, {ofp.NATRandom, ",random"}} {
		if n.Flags&f.bit != 0 {
			sb.WriteString(f.name)
		}
	}
	sb.WriteByte(')')
}

func formatCT(sb *strings.Builder, ct *ofp.CT, v uint8) {
	if ct == nil {
		sb.WriteString("ct")
		return
	}
	var parts []string
	if ct.Flags&1 != 0 {
		parts = append(parts, "commit")
	}
	if ct.Flags&2 != 0 {
		parts = append(parts, "force")
	}
	if ct.Table != 0xff {
		parts = append(parts, "table="+strconv.Itoa(int(ct.Table)))
	}
	switch {
	case ct.ZoneSrc.Field != nil:
		parts = append(parts, "zone="+formatSubfield(ct.ZoneSrc))
	case ct.ZoneImm != 0:
		parts = append(parts, "zone="+strconv.Itoa(int(ct.ZoneImm)))
	}
	// A nat() that is the first nested action prints outside exec(), as
	// Open vSwitch's format_CT; any other stays in the list.
	exec := ct.Actions
	if len(exec) > 0 && exec[0].Type == ofp.ActNAT {
		var nb strings.Builder
		formatNAT(&nb, exec[0].NAT())
		parts = append(parts, nb.String())
		exec = exec[1:]
	}
	if len(exec) > 0 {
		var in strings.Builder
		formatActionList(&in, exec, v)
		parts = append(parts, "exec("+in.String()+")")
	}
	switch ct.Alg {
	case 0:
	case 21:
		parts = append(parts, "alg=ftp")
	case 69:
		parts = append(parts, "alg=tftp")
	default:
		parts = append(parts, "alg="+strconv.Itoa(int(ct.Alg)))
	}
	if len(parts) == 0 {
		sb.WriteString("ct")
		return
	}
	sb.WriteString("ct(" + strings.Join(parts, ",") + ")")
}
