package ofptext

import (
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The MPLS and NSH family's text (see package ofp's actions_mpls.go):
// push_mpls, pop_mpls, set_mpls_label, set_mpls_tc, set_mpls_ttl,
// dec_mpls_ttl and dec_nsh_ttl. encap and decap are in actions_encap.go.

func init() {
	registerParsers(map[string]actionParser{
		"push_mpls":      parseMPLSEthertype,
		"pop_mpls":       parseMPLSEthertype,
		"set_mpls_label": parseSetMPLS,
		"set_mpls_tc":    parseSetMPLS,
		"set_mpls_ttl":   parseSetMPLS,
		"dec_mpls_ttl":   noArg(ofp.ActDecMPLSTTL),
		"dec_nsh_ttl":    noArg(ofp.ActDecNSHTTL),
	})
	registerFormatters(map[ofp.ActionType]actionFormatter{
		ofp.ActPushMPLS:     func(sb *strings.Builder, a *ofp.Action, _ uint8) { fmt.Fprintf(sb, "push_mpls:0x%04x", a.Arg) },
		ofp.ActPopMPLS:      func(sb *strings.Builder, a *ofp.Action, _ uint8) { fmt.Fprintf(sb, "pop_mpls:0x%04x", a.Arg) },
		ofp.ActSetMPLSLabel: func(sb *strings.Builder, a *ofp.Action, _ uint8) { fmt.Fprintf(sb, "set_mpls_label(%d)", a.Arg) },
		ofp.ActSetMPLSTC:    func(sb *strings.Builder, a *ofp.Action, _ uint8) { fmt.Fprintf(sb, "set_mpls_tc(%d)", a.Arg) },
		ofp.ActSetMPLSTTL:   func(sb *strings.Builder, a *ofp.Action, _ uint8) { fmt.Fprintf(sb, "set_mpls_ttl(%d)", a.Arg) },
		ofp.ActDecMPLSTTL:   word("dec_mpls_ttl"),
		ofp.ActDecNSHTTL:    word("dec_nsh_ttl"),
	})
}

// parseMPLSEthertype parses push_mpls and pop_mpls; push_mpls takes only
// the MPLS ethertypes.
func parseMPLSEthertype(t *actionText) ([]ofp.Action, error) {
	a := ofp.Action{Type: ofp.ActPushMPLS}
	if t.name == "pop_mpls" {
		a.Type = ofp.ActPopMPLS
	}
	var err error
	if a.Arg, err = parseUintArg(t.arg, 16); err != nil {
		return nil, err
	}
	if a.Type == ofp.ActPushMPLS && a.Arg != 0x8847 && a.Arg != 0x8848 {
		return nil, errf("%s: not a valid MPLS ethertype", t.arg)
	}
	return []ofp.Action{a}, nil
}

// setMPLS are the set_mpls_* actions: kind, width and the message for a
// value that does not fit.
var setMPLS = map[string]struct {
	kind ofp.ActionType
	bits int
	bad  string
}{
	"set_mpls_label": {ofp.ActSetMPLSLabel, 20, "%s: not a valid MPLS label"},
	"set_mpls_tc":    {ofp.ActSetMPLSTC, 3, "%s: not a valid MPLS TC"},
	"set_mpls_ttl":   {ofp.ActSetMPLSTTL, 8, "invalid MPLS TTL \"%s\""},
}

func parseSetMPLS(t *actionText) ([]ofp.Action, error) {
	s := setMPLS[t.name]
	n, err := parseUintArg(t.arg, 64)
	if err != nil {
		if t.name == "set_mpls_ttl" {
			return nil, errf("invalid MPLS TTL \"%s\"", t.arg)
		}
		return nil, err
	}
	if n>>s.bits != 0 {
		return nil, errf(s.bad, t.arg)
	}
	return []ofp.Action{{Type: s.kind, Arg: n}}, nil
}
