package ofptext

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The remaining family's text (see package ofp's actions_misc.go): note,
// sample, clone, check_pkt_larger, conjunction, debug_slow and
// debug_recirc.

func init() {
	registerParsers(map[string]actionParser{
		"note":             parseNote,
		"sample":           single(parseSample),
		"clone":            parseClone,
		"check_pkt_larger": parseCheckPktLarger,
		"conjunction":      single(parseConjunction),
		"debug_slow":       noArg(ofp.ActDebugSlow),
		"debug_recirc":     noArg(ofp.ActDebugRecirc),
	})
	registerFormatters(map[ofp.ActionType]actionFormatter{
		ofp.ActNote:   func(sb *strings.Builder, a *ofp.Action, _ uint8) { sb.WriteString("note:" + formatDotHex(a.Data())) },
		ofp.ActSample: formatSample,
		ofp.ActClone: func(sb *strings.Builder, a *ofp.Action, v uint8) {
			sb.WriteString("clone(")
			if len(a.Nested) == 0 {
				sb.WriteString("drop") // an empty list prints as it does at top level
			}
			formatActionList(sb, a.Nested, v)
			sb.WriteByte(')')
		},
		ofp.ActCheckPktLen: func(sb *strings.Builder, a *ofp.Action, _ uint8) {
			fmt.Fprintf(sb, "check_pkt_larger(%d)->%s", a.Arg, formatSubfield(a.Dst))
		},
		ofp.ActConjunction: func(sb *strings.Builder, a *ofp.Action, _ uint8) {
			if c := a.Conj(); c != nil {
				fmt.Fprintf(sb, "conjunction(%d,%d/%d)", c.ID, int(c.Clause)+1, c.NClauses)
			}
		},
		ofp.ActDebugSlow:   word("debug_slow"),
		ofp.ActDebugRecirc: word("debug_recirc"),
	})
}

func parseNote(t *actionText) ([]ofp.Action, error) {
	b, err := parseHexBytes(t.arg)
	if err != nil {
		return nil, errf("bad hex digit in `note' argument")
	}
	return []ofp.Action{{Type: ofp.ActNote, Body: b}}, nil
}

// parseClone parses clone(actions), which may hold no instruction and no
// meter.
func parseClone(t *actionText) ([]ofp.Action, error) {
	nested, err := parseActionList(t.arg, t.v, t.m, t.depth+1)
	if err != nil {
		return nil, err
	}
	for i := range nested {
		if name, ok := nestedInstructionNames[nested[i].Type]; ok {
			return nil, errf("%s instruction not allowed here", name)
		}
		if nested[i].Type == ofp.ActMeter {
			return nil, errf("clone action doesn't support nested action meter")
		}
	}
	return []ofp.Action{{Type: ofp.ActClone, Nested: nested}}, nil
}

func parseCheckPktLarger(t *actionText) ([]ofp.Action, error) {
	n, dst, ok := strings.Cut(t.arg, ")->")
	if !ok {
		return nil, errf("%s: missing `->'", strings.TrimSuffix(t.arg, ")"))
	}
	pl, err := strconv.ParseUint(n, 10, 16)
	if err != nil {
		return nil, errf("invalid (null) \"%s\"", n) // sic: ovs-ofctl's message
	}
	d, err := parseSubfield(dst)
	if err != nil {
		return nil, err
	}
	if d.NBits != 1 {
		return nil, errf("Only 1-bit destination field is allowed")
	}
	return []ofp.Action{{Type: ofp.ActCheckPktLen, Arg: pl, Dst: d}}, nil
}

func formatSample(sb *strings.Builder, a *ofp.Action, _ uint8) {
	s := a.Sample()
	if s == nil {
		return
	}
	fmt.Fprintf(sb, "sample(probability=%d,collector_set_id=%d,obs_domain_id=%d,obs_point_id=%d",
		s.Probability, s.CollectorSetID, s.ObsDomainID, s.ObsPointID)
	if s.SamplingPort != portNone {
		sb.WriteString(",sampling_port=" + formatPort(s.SamplingPort))
	}
	switch s.Direction {
	case 1:
		sb.WriteString(",ingress")
	case 2:
		sb.WriteString(",egress")
	}
	sb.WriteByte(')')
}

func parseSample(arg string) (ofp.Action, error) {
	s := &ofp.Sample{SamplingPort: portNone}
	for _, kv := range strings.Split(arg, ",") {
		k, val, _ := strings.Cut(kv, "=")
		var err error
		var n uint64
		switch k {
		case "probability":
			if n, err = strconv.ParseUint(val, 0, 16); err != nil {
				return ofp.Action{}, errf("invalid probability \"%s\"", val)
			}
			if n == 0 {
				return ofp.Action{}, errf("invalid probability value \"%s\"", val)
			}
			s.Probability = uint16(n)
		case "collector_set_id":
			n, err = parseUintArg(val, 32)
			s.CollectorSetID = uint32(n)
		case "obs_domain_id":
			n, err = parseUintArg(val, 32)
			s.ObsDomainID = uint32(n)
		case "obs_point_id":
			n, err = parseUintArg(val, 32)
			s.ObsPointID = uint32(n)
		case "sampling_port":
			p, ok := parsePort(val)
			if !ok {
				return ofp.Action{}, errf("%s: unknown port", val)
			}
			s.SamplingPort = p
		case "ingress":
			s.Direction = 1
		case "egress":
			s.Direction = 2
		default:
			return ofp.Action{}, errf("invalid key \"%s\" in \"sample\" argument", k)
		}
		if err != nil {
			return ofp.Action{}, err
		}
	}
	if s.Probability == 0 {
		return ofp.Action{}, errf("non-zero \"probability\" must be specified on sample")
	}
	return ofp.Action{Type: ofp.ActSample, Body: s}, nil
}

func parseConjunction(arg string) (ofp.Action, error) {
	id, frac, ok := strings.Cut(arg, ",")
	k, n, ok2 := strings.Cut(frac, "/")
	idv, err1 := strconv.ParseUint(id, 0, 32) // "%i": 0x hex and 0 octal too
	kv, err2 := strconv.ParseUint(k, 10, 8)
	nv, err3 := strconv.ParseUint(n, 10, 8)
	switch {
	case !ok || !ok2 || err1 != nil || err2 != nil || err3 != nil:
		return ofp.Action{}, errf("\"conjunction\" syntax is \"conjunction(id,i/n)\"")
	case nv < 2:
		return ofp.Action{}, errf("conjunction must have at least 2 clauses")
	case nv > 64:
		return ofp.Action{}, errf("conjunction must have at most 64 clauses")
	case kv < 1:
		return ofp.Action{}, errf("clause index must be positive")
	case kv > nv:
		return ofp.Action{}, errf("clause index must be less than or equal to number of clauses")
	}
	return ofp.Action{Type: ofp.ActConjunction, Body: &ofp.Conjunction{ID: uint32(idv), Clause: uint8(kv - 1), NClauses: uint8(nv)}}, nil
}

// nestedInstructionNames are the instructions an action list inside an
// action (clone) cannot hold.
var nestedInstructionNames = map[ofp.ActionType]string{
	ofp.ActGotoTable: "goto_table", ofp.ActWriteMetadata: "write_metadata",
	ofp.ActClearActions: "clear_actions", ofp.ActWriteActions: "write_actions",
}
