package ofptext

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The VLAN family's text (see package ofp's actions_vlan.go): push_vlan,
// strip_vlan, pop_vlan, mod_vlan_vid (set_vlan_vid) and mod_vlan_pcp
// (set_vlan_pcp).

func init() {
	registerParsers(map[string]actionParser{
		"push_vlan":  parsePushVLAN,
		"strip_vlan": noArg(ofp.ActStripVLAN),
		"pop_vlan": func(*actionText) ([]ofp.Action, error) {
			return []ofp.Action{{Type: ofp.ActStripVLAN, Raw: ofp.RawActOFPAT11_POP_VLAN}}, nil
		},
		"mod_vlan_vid": parseModVLANVID,
		"set_vlan_vid": parseModVLANVID,
		"mod_vlan_pcp": parseModVLANPCP,
		"set_vlan_pcp": parseModVLANPCP,
	})
	registerFormatters(map[ofp.ActionType]actionFormatter{
		ofp.ActPushVLAN: func(sb *strings.Builder, a *ofp.Action, _ uint8) { fmt.Fprintf(sb, "push_vlan:%#x", a.Arg) },
		ofp.ActStripVLAN: func(sb *strings.Builder, a *ofp.Action, _ uint8) {
			if a.Raw == ofp.RawActOFPAT11_POP_VLAN {
				sb.WriteString("pop_vlan")
			} else {
				sb.WriteString("strip_vlan")
			}
		},
		ofp.ActSetVLANVID: decimal("mod_vlan_vid:"),
		ofp.ActSetVLANPCP: decimal("mod_vlan_pcp:"),
	})
}

func parsePushVLAN(t *actionText) ([]ofp.Action, error) {
	n, err := parseUintArg(t.arg, 16)
	if err != nil {
		return nil, err
	}
	if n != 0x8100 && n != 0x88a8 {
		return nil, errf("%s: not a valid VLAN ethertype", t.arg)
	}
	return []ofp.Action{{Type: ofp.ActPushVLAN, Arg: n}}, nil
}

// parseModVLANVID: mod_vlan_vid pushes a tag when the packet has none
// (in OpenFlow 1.0's meaning); set_vlan_vid does not.
func parseModVLANVID(t *actionText) ([]ofp.Action, error) {
	n, err := strconv.ParseUint(t.arg, 0, 16)
	if err != nil {
		return nil, errf("invalid VLAN VID \"%s\"", t.arg)
	}
	if n > 0xfff {
		return nil, errf("%s: not a valid VLAN VID", t.arg)
	}
	return []ofp.Action{{Type: ofp.ActSetVLANVID, Arg: n, PushVLANIfNeeded: t.name == "mod_vlan_vid"}}, nil
}

func parseModVLANPCP(t *actionText) ([]ofp.Action, error) {
	n, err := strconv.ParseUint(t.arg, 0, 8)
	if err != nil {
		return nil, errf("invalid VLAN PCP \"%s\"", t.arg)
	}
	if n > 7 {
		return nil, errf("%s: not a valid VLAN PCP", t.arg)
	}
	return []ofp.Action{{Type: ofp.ActSetVLANPCP, Arg: n, PushVLANIfNeeded: t.name == "mod_vlan_pcp"}}, nil
}
