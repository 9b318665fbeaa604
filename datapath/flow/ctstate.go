package flow

import (
	"fmt"
	"slices"
	"strings"
)

// ParseCtState reads a conntrack state as ofproto/trace's --ct-next
// takes it: flag names ("trk", "est", ...) separated by commas or
// spaces, checked for the combinations ovs-fields(7) rules out.
func ParseCtState(s string) (uint8, error) {
	var state uint8
	for _, name := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		i := slices.Index(ctStateNames[:], name)
		if i < 0 {
			return 0, fmt.Errorf("%s: unknown connection tracking state flag", name)
		}
		state |= 1 << i
	}
	return state, validateCtState(state)
}

// ctStateRules are the constraints ovs-fields(7) lists, in Open
// vSwitch's order and words: a state breaking one is refused.
var ctStateRules = []struct {
	broken func(s uint8) bool
	why    string
}{
	{func(s uint8) bool { return s != 0 && s&CsTracked == 0 }, `If "trk" is unset, no other flags are set`},
	{func(s uint8) bool { return s&CsInvalid != 0 && s&^(CsTracked|CsInvalid) != 0 }, `when "inv" is set, only "trk" may also be set`},
	{func(s uint8) bool { return s&CsNew != 0 && s&CsEstablished != 0 }, `"new" and "est" are mutually exclusive`},
	{func(s uint8) bool { return s&CsNew != 0 && s&CsReplyDir != 0 }, `"new" and "rpy" are mutually exclusive`},
}

func validateCtState(s uint8) error {
	var msg strings.Builder
	for _, r := range ctStateRules {
		if r.broken(s) {
			fmt.Fprintf(&msg, "%s: invalid connection state: %s\n", FormatCtState(s), r.why)
		}
	}
	if msg.Len() == 0 {
		return nil
	}
	return fmt.Errorf("%s", msg.String())
}

// FormatCtState writes a conntrack state as Open vSwitch's trace does:
// the flag names joined by '|', lowest bit first, "0" for none.
func FormatCtState(s uint8) string {
	if s == 0 {
		return "0"
	}
	var parts []string
	for i, name := range ctStateNames {
		if s&(1<<i) != 0 {
			parts = append(parts, name)
		}
	}
	return strings.Join(parts, "|")
}
