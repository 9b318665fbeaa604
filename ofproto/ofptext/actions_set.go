package ofptext

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The header-setting family's text (see package ofp's actions_set.go):
// mod_dl_src/dst, mod_nw_src/dst, mod_nw_tos, mod_nw_ecn,
// mod_nw_ttl (set_nw_ttl), mod_tp_src/dst, set_tunnel(64) and dec_ttl.

func init() {
	registerParsers(map[string]actionParser{
		"mod_dl_src":   parseModDL,
		"mod_dl_dst":   parseModDL,
		"mod_nw_src":   parseModNW,
		"mod_nw_dst":   parseModNW,
		"mod_nw_tos":   parseModNWTos,
		"mod_nw_ecn":   parseModNWECN,
		"mod_nw_ttl":   parseModNWTTL,
		"set_nw_ttl":   parseModNWTTL,
		"mod_tp_src":   parseModTP,
		"mod_tp_dst":   parseModTP,
		"set_tunnel":   parseSetTunnel,
		"set_tunnel64": parseSetTunnel,
		"dec_ttl":      parseDecTTL,
	})
	registerFormatters(map[ofp.ActionType]actionFormatter{
		ofp.ActSetDLSrc:  formatModDL,
		ofp.ActSetDLDst:  formatModDL,
		ofp.ActSetNWSrc:  formatModNW,
		ofp.ActSetNWDst:  formatModNW,
		ofp.ActSetNWTos:  decimal("mod_nw_tos:"),
		ofp.ActSetNWECN:  decimal("mod_nw_ecn:"),
		ofp.ActSetNWTTL:  decimal("mod_nw_ttl:"),
		ofp.ActSetTPSrc:  decimal("mod_tp_src:"),
		ofp.ActSetTPDst:  decimal("mod_tp_dst:"),
		ofp.ActSetTunnel: formatSetTunnel,
		ofp.ActDecTTL:    formatDecTTL,
	})
}

func parseModDL(t *actionText) ([]ofp.Action, error) {
	mac, err := parseMAC(t.arg)
	if err != nil {
		return nil, errf("invalid mac address %s", t.arg)
	}
	a := ofp.Action{Type: ofp.ActSetDLSrc, Arg: getUint(mac)}
	if t.name == "mod_dl_dst" {
		a.Type = ofp.ActSetDLDst
	}
	return []ofp.Action{a}, nil
}

func parseModNW(t *actionText) ([]ofp.Action, error) {
	ip, ok := parseIPv4Octets(t.arg)
	if !ok {
		return nil, errf("%s: could not convert to IP address", t.arg)
	}
	a := ofp.Action{Type: ofp.ActSetNWSrc, Arg: getUint(ip[:])}
	if t.name == "mod_nw_dst" {
		a.Type = ofp.ActSetNWDst
	}
	return []ofp.Action{a}, nil
}

func parseModNWTos(t *actionText) ([]ofp.Action, error) {
	n, err := strconv.ParseUint(t.arg, 0, 8)
	if err != nil {
		return nil, errf("invalid TOS \"%s\"", t.arg)
	}
	if n&3 != 0 {
		return nil, errf("%s: not a valid TOS", t.arg)
	}
	return []ofp.Action{{Type: ofp.ActSetNWTos, Arg: n}}, nil
}

func parseModNWECN(t *actionText) ([]ofp.Action, error) {
	n, err := strconv.ParseUint(t.arg, 0, 8)
	if err != nil {
		return nil, errf("invalid ECN \"%s\"", t.arg)
	}
	if n > 3 {
		return nil, errf("%s: not a valid ECN", t.arg)
	}
	return []ofp.Action{{Type: ofp.ActSetNWECN, Arg: n}}, nil
}

func parseModNWTTL(t *actionText) ([]ofp.Action, error) {
	n, err := parseUintArg(t.arg, 8)
	if err != nil {
		return nil, err
	}
	return []ofp.Action{{Type: ofp.ActSetNWTTL, Arg: n}}, nil
}

func parseModTP(t *actionText) ([]ofp.Action, error) {
	a := ofp.Action{Type: ofp.ActSetTPSrc}
	if t.name == "mod_tp_dst" {
		a.Type = ofp.ActSetTPDst
	}
	var err error
	if a.Arg, err = parseUintArg(t.arg, 16); err != nil {
		return nil, err
	}
	return []ofp.Action{a}, nil
}

func parseSetTunnel(t *actionText) ([]ofp.Action, error) {
	a := ofp.Action{Type: ofp.ActSetTunnel}
	if t.name == "set_tunnel64" {
		a.Raw = ofp.RawActNXAST_SET_TUNNEL64
	}
	var err error
	if a.Arg, err = parseUintArg(t.arg, 64); err != nil {
		return nil, err
	}
	return []ofp.Action{a}, nil
}

// parseDecTTL parses dec_ttl and dec_ttl(id,...): ids are read as atoi
// reads them (leading digits, else 0; kept modulo 2^16), split at commas
// and spaces.
func parseDecTTL(t *actionText) ([]ofp.Action, error) {
	a := ofp.Action{Type: ofp.ActDecTTL, Body: []uint16{0}}
	if strings.HasPrefix(t.whole, "dec_ttl(") && t.arg != "" {
		a.Raw, a.Body = ofp.RawActNXAST_DEC_TTL_CNT_IDS, nil
		for _, s := range strings.FieldsFunc(t.arg, func(r rune) bool { return r == ',' || r == ' ' }) {
			a.Body = append(a.IDs(), uint16(atoi(s)))
		}
		if len(a.IDs()) == 0 {
			return nil, errf("dec_ttl_cnt_ids: expected at least one controller id.")
		}
	}
	return []ofp.Action{a}, nil
}

func formatModDL(sb *strings.Builder, a *ofp.Action, _ uint8) {
	var mac [8]byte
	putUint(mac[:], a.Arg)
	name := "mod_dl_src:"
	if a.Type == ofp.ActSetDLDst {
		name = "mod_dl_dst:"
	}
	sb.WriteString(name + formatMAC(mac[2:]))
}

func formatModNW(sb *strings.Builder, a *ofp.Action, _ uint8) {
	name := "mod_nw_src:"
	if a.Type == ofp.ActSetNWDst {
		name = "mod_nw_dst:"
	}
	ip := netip.AddrFrom4([4]byte{byte(a.Arg >> 24), byte(a.Arg >> 16), byte(a.Arg >> 8), byte(a.Arg)})
	sb.WriteString(name + ip.String())
}

func formatSetTunnel(sb *strings.Builder, a *ofp.Action, _ uint8) {
	if a.Arg > 0xffffffff || a.Raw == ofp.RawActNXAST_SET_TUNNEL64 {
		fmt.Fprintf(sb, "set_tunnel64:%#x", a.Arg)
	} else {
		fmt.Fprintf(sb, "set_tunnel:%#x", a.Arg)
	}
}

func formatDecTTL(sb *strings.Builder, a *ofp.Action, _ uint8) {
	if a.Raw != ofp.RawActNXAST_DEC_TTL_CNT_IDS && len(a.IDs()) == 1 && a.IDs()[0] == 0 {
		sb.WriteString("dec_ttl")
		return
	}
	sb.WriteString("dec_ttl(")
	for i, id := range a.IDs() {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(int(id)))
	}
	sb.WriteByte(')')
}
