package ofptext

import (
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Bare keywords that are output actions to a reserved port.
var portActions = map[string]uint16{
	"in_port": portInPort, "table": portTable, "normal": portNormal, "flood": portFlood,
	"all": portAll, "local": portLocal,
}

// splitTop splits s at commas not inside parentheses.
func splitTop(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return nil, errf("%s: unbalanced parentheses", s)
			}
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, errf("%s: unbalanced parentheses", s)
	}
	if t := strings.TrimSpace(s[start:]); t != "" || len(out) > 0 {
		out = append(out, t)
	}
	return out, nil
}

// splitAction splits "name:arg", "name=arg" or "name(arg)".
func splitAction(s string) (name, arg string) {
	i := strings.IndexAny(s, ":=(")
	if i < 0 {
		return s, ""
	}
	if s[i] == '(' {
		return s[:i], strings.TrimSuffix(s[i+1:], ")")
	}
	return s[:i], s[i+1:]
}

// ParseActionsFor parses an action list (ovs-ofctl syntax, OpenFlow 1.0
// with Nicira extensions) checked against match m rather than a flow's
// own match, as ofproto/trace-packet-out checks a packet-out's actions
// against the traced packet.
func ParseActionsFor(s string, m *mf.Match) ([]ofp.Action, error) {
	acts, err := parseActionList(s, mf.OF10, m, 0)
	if err != nil {
		return nil, err
	}
	if acts == nil {
		return []ofp.Action{}, nil
	}
	// Checked but kept as parsed: no flow_mod carries them, so they
	// need no version's encoding (set_field stays set_field).
	if err := verifyActions(acts, mf.OF10, false); err != nil {
		return nil, err
	}
	if err := ofp.ValidateOfpactsVersion(mf.OF15, acts, m, portMax, TableUnset, 0xff); err != nil {
		if code := ofp.CodeOf(err); code != 0 {
			return nil, errf("actions are invalid with specified match (%s)", code)
		}
		return nil, &syntaxError{err.Error()}
	}
	return acts, nil
}

// parseActions parses the action list of a flow in table (TableUnset if
// none), checks it against the flow's match and returns it in the form
// version v carries, as ovs-ofctl prints the flow mod it sends.
func parseActions(s string, v uint8, m *mf.Match, table uint8) ([]ofp.Action, error) {
	acts, err := parseActionList(s, v, m, 0)
	if err != nil || len(acts) == 0 {
		return nil, err
	}
	return finishActions(acts, v, m, table)
}

func parseActionList(s string, v uint8, m *mf.Match, depth int) ([]ofp.Action, error) {
	if depth > 16 {
		return nil, errf("%s: actions nested too deeply", s)
	}
	items, err := splitTop(s)
	if err != nil {
		return nil, err
	}
	// Empty items ("output:1,,output:2", a trailing comma) are skipped,
	// as ovs-ofctl's key-value scanner does.
	items = slices.DeleteFunc(items, func(it string) bool { return it == "" })
	var out []ofp.Action
	for i, it := range items {
		name, arg := splitAction(it)
		if strings.EqualFold(name, "drop") {
			if len(items) != 1 || i != 0 {
				return nil, errf("\"drop\" must not be accompanied by any other action or instruction")
			}
			return nil, nil
		}
		as, err := parseAction(&actionText{name: strings.ToLower(name), origName: name, arg: arg, whole: it, v: v, m: m, depth: depth})
		if err != nil {
			return nil, err
		}
		out = append(out, as...)
	}
	return out, nil
}

func parseUintArg(s string, bits int) (uint64, error) {
	n, err := strconv.ParseUint(s, 0, 64)
	if err != nil || bits < 64 && n>>bits != 0 {
		return 0, errf("invalid numeric format %s", s)
	}
	return n, nil
}

// parseHexBytes parses "01.02.0a" (dots optional) as ovs-ofctl's note
// and userdata.
func parseHexBytes(s string) ([]byte, error) {
	h := strings.ReplaceAll(s, ".", "")
	b, err := hex.DecodeString(h)
	if err != nil {
		return nil, errf("%s: invalid hex bytes", s)
	}
	return b, nil
}

// one adapts a single-action parser to parseAction's result.
func one(a ofp.Action, err error) ([]ofp.Action, error) {
	if err != nil {
		return nil, err
	}
	return []ofp.Action{a}, nil
}

// parseSubfield parses "field", "field[]", "field[n]" or "field[a..b]"
// (a bare name is the whole field, as in ovs-ofctl).
func parseSubfield(s string) (ofp.Subfield, error) {
	name, rng, ok := strings.Cut(s, "[")
	f := mf.Lookup(name)
	if f == nil {
		return ofp.Subfield{}, errf("%s: unknown field `%s'", s, name)
	}
	if !ok {
		return ofp.Subfield{Field: f, Ofs: 0, NBits: f.Bits}, nil
	}
	if !strings.HasSuffix(rng, "]") {
		return ofp.Subfield{}, errf("%s: missing ] looking for field name", s)
	}
	width := f.Bits
	rng = strings.TrimSuffix(rng, "]")
	if rng == "" {
		return ofp.Subfield{Field: f, Ofs: 0, NBits: width}, nil
	}
	lo, hi, isRange := strings.Cut(rng, "..")
	start, err := strconv.Atoi(lo)
	if err != nil || start < 0 {
		return ofp.Subfield{}, errf("%s: syntax error expecting bit number", s)
	}
	end := start
	if isRange {
		if end, err = strconv.Atoi(hi); err != nil || end < 0 {
			return ofp.Subfield{}, errf("%s: syntax error expecting bit number", s)
		}
	}
	switch {
	case start >= width:
		return ofp.Subfield{}, errf("%s: starting bit %d is not valid because field is only %d bits wide", s, start, width)
	case end >= width:
		return ofp.Subfield{}, errf("%s: ending bit %d is not valid because field is only %d bits wide", s, end, width)
	case start > end:
		return ofp.Subfield{}, errf("%s: starting bit %d is greater than ending bit %d", s, start, end)
	}
	return ofp.Subfield{Field: f, Ofs: start, NBits: end - start + 1}, nil
}

// shiftInto ORs src (network order) shifted left by ofs bits into dst.
func shiftInto(dst, src []byte, ofs int) {
	for i := 0; i < 8*len(src); i++ {
		if src[len(src)-1-i/8]&(1<<(i%8)) != 0 {
			j := i + ofs
			if j < 8*len(dst) {
				dst[len(dst)-1-j/8] |= 1 << (j % 8)
			}
		}
	}
}

func bitLen(b []byte) int {
	for i, c := range b {
		if c != 0 {
			n := 0
			for ; c != 0; c >>= 1 {
				n++
			}
			return 8*(len(b)-1-i) + n
		}
	}
	return 0
}

func lookupName(names []string, s string) (int, bool) {
	for i, n := range names {
		if n == s {
			return i, true
		}
	}
	return 0, false
}

// atoi is C's atoi: optional sign and leading decimal digits, else 0.
func atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	v, _, _ := scanUint(s)
	if neg {
		return -int64(v)
	}
	return int64(v)
}

// parseUint32Wrap reads a number as strtoul does for ovs-ofctl's 32-bit
// action arguments (group, set_queue, meter): decimal or 0x-hex, a
// leading minus negating, and the result kept modulo 2^32.
func parseUint32Wrap(s string) (uint64, error) {
	t, neg := strings.CutPrefix(s, "-")
	n, err := strconv.ParseUint(t, 0, 64)
	if err != nil {
		return 0, errf("invalid numeric format %s", s)
	}
	if neg {
		n = -n
	}
	return n & 0xffffffff, nil
}
