package xlate

import (
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The connection-tracking family's translation (see package ofp's
// actions_ct.go and ct.go for the implementation): ct (with nat inside)
// and ct_clear. nat outside ct has no hook.

func init() {
	registerHooks(map[ofp.ActionType]actionHook{
		ofp.ActCT:      conntrack,
		ofp.ActCTClear: ctClear,
	})
	registerProps(map[ofp.ActionType]kindProps{
		ofp.ActCT:      {final: 1, irreversible: true},
		ofp.ActCTClear: {final: 2},
		ofp.ActNAT:     {irreversible: true},
	})
}

// natText formats a nat action inside ct() in the datapath's syntax.
func natText(a *ofp.Action, _ *ctx) (string, bool) {
	if a.Type != ofp.ActNAT || a.NAT() == nil {
		return "", false
	}
	n := a.NAT()
	var sb strings.Builder
	sb.WriteString("nat")
	var args []string
	if n.Flags&(ofp.NATSrc|ofp.NATDst) != 0 {
		kind := "src"
		if n.Flags&ofp.NATDst != 0 {
			kind = "dst"
		}
		s := kind
		if n.AddrMin.IsValid() {
			s += "=" + natAddr(n.AddrMin.String(), n.AddrMin.Is6())
			if n.AddrMax.IsValid() && n.AddrMax != n.AddrMin {
				s += "-" + natAddr(n.AddrMax.String(), n.AddrMax.Is6())
			}
			if n.ProtoMin != 0 {
				s += fmt.Sprintf(":%d", n.ProtoMin)
				if n.ProtoMax != 0 && n.ProtoMax != n.ProtoMin {
					s += fmt.Sprintf("-%d", n.ProtoMax)
				}
			}
		}
		args = append(args, s)
	}
	if n.Flags&ofp.NATPersistent != 0 {
		args = append(args, "persistent")
	}
	if n.Flags&ofp.NATHash != 0 {
		args = append(args, "hash")
	}
	if n.Flags&ofp.NATRandom != 0 {
		args = append(args, "random")
	}
	if len(args) > 0 {
		sb.WriteString("(" + strings.Join(args, ",") + ")")
	}
	return sb.String(), true
}

func natAddr(s string, v6 bool) string {
	if v6 {
		return "[" + s + "]"
	}
	return s
}
