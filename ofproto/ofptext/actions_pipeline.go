package ofptext

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The pipeline family's text (see package ofp's actions_pipeline.go):
// resubmit, goto_table, write_metadata, clear_actions, write_actions,
// meter and exit (apply_actions is refused: it is the default
// instruction).

func init() {
	registerParsers(map[string]actionParser{
		"resubmit": func(t *actionText) ([]ofp.Action, error) {
			return one(parseResubmit(t.arg, t.whole))
		},
		"goto_table":     parseGotoTable,
		"write_metadata": parseWriteMetadata,
		"clear_actions":  noArg(ofp.ActClearActions),
		"write_actions":  parseWriteActions,
		"apply_actions": func(*actionText) ([]ofp.Action, error) {
			return nil, errf("apply_actions is the default instruction")
		},
		"meter": parseMeter,
		"exit":  noArg(ofp.ActExit),
	})
	registerFormatters(map[ofp.ActionType]actionFormatter{
		ofp.ActResubmit: formatResubmit,
		ofp.ActGotoTable: func(sb *strings.Builder, a *ofp.Action, _ uint8) {
			sb.WriteString("goto_table:" + strconv.Itoa(int(a.Table)))
		},
		ofp.ActWriteMetadata: func(sb *strings.Builder, a *ofp.Action, _ uint8) {
			fmt.Fprintf(sb, "write_metadata:%#x", a.Arg)
			if a.Arg2 != ^uint64(0) {
				fmt.Fprintf(sb, "/%#x", a.Arg2)
			}
		},
		ofp.ActClearActions: word("clear_actions"),
		ofp.ActWriteActions: func(sb *strings.Builder, a *ofp.Action, v uint8) {
			sb.WriteString("write_actions(")
			formatActionList(sb, a.Nested, v)
			sb.WriteByte(')')
		},
		ofp.ActMeter: decimal("meter:"),
		ofp.ActExit:  word("exit"),
	})
}

func parseGotoTable(t *actionText) ([]ofp.Action, error) {
	n, err := strconv.ParseUint(t.arg, 0, 8)
	if err != nil {
		return nil, errf("unknown table \"%s\"", t.arg)
	}
	return []ofp.Action{{Type: ofp.ActGotoTable, Table: uint8(n)}}, nil
}

func parseWriteMetadata(t *actionText) ([]ofp.Action, error) {
	vs, ms, masked := strings.Cut(t.arg, "/")
	val, err := strconv.ParseUint(vs, 0, 64)
	if err != nil {
		return nil, errf("invalid numeric format %s", vs)
	}
	mask := ^uint64(0)
	if masked {
		if mask, err = strconv.ParseUint(ms, 0, 64); err != nil {
			return nil, errf("invalid numeric format %s", ms)
		}
	}
	return []ofp.Action{{Type: ofp.ActWriteMetadata, Arg: val, Arg2: mask}}, nil
}

func parseWriteActions(t *actionText) ([]ofp.Action, error) {
	nested, err := parseActionList(t.arg, t.v, t.m, t.depth+1)
	if err != nil {
		return nil, err
	}
	return []ofp.Action{{Type: ofp.ActWriteActions, Nested: nested}}, nil
}

func parseMeter(t *actionText) ([]ofp.Action, error) {
	n, err := parseUint32Wrap(t.arg)
	if err != nil {
		return nil, err
	}
	if n == 0 || n > 0xffff0000 { // not a meter id (OFPM_MAX)
		return nil, errf("actions are invalid with specified match (OFPMMFC_INVALID_METER)")
	}
	return []ofp.Action{{Type: ofp.ActMeter, Arg: n}}, nil
}

func formatResubmit(sb *strings.Builder, a *ofp.Action, _ uint8) {
	if uint16(a.Port) != portInPort && a.Table == 0xff && a.Raw != ofp.RawActNXAST_RESUBMIT_TABLE_CT {
		sb.WriteString("resubmit:" + formatPort(uint16(a.Port)))
		return
	}
	sb.WriteString("resubmit(")
	if uint16(a.Port) != portInPort {
		sb.WriteString(formatPort(uint16(a.Port)))
	}
	sb.WriteByte(',')
	if a.Table != 0xff {
		sb.WriteString(strconv.Itoa(int(a.Table)))
	}
	if a.Raw == ofp.RawActNXAST_RESUBMIT_TABLE_CT {
		sb.WriteString(",ct")
	}
	sb.WriteByte(')')
}

func parseResubmit(arg, whole string) (ofp.Action, error) {
	// Like ovs-ofctl, the parser sets no wire form (ct aside): resubmit
	// goes out as NXAST_RESUBMIT_TABLE.
	a := ofp.Action{Type: ofp.ActResubmit, Port: portInPort, Table: 0xff}
	if !strings.HasPrefix(whole, "resubmit(") {
		p, ok := parsePort(arg)
		if !ok {
			return a, errf("%s: resubmit to unknown port", arg)
		}
		a.Port = uint32(p)
		return a, nil
	}
	parts := strings.Split(arg, ",")
	if len(parts) > 3 {
		return a, errf("%s: too many arguments to resubmit", arg)
	}
	if parts[0] != "" {
		p, ok := parsePort(parts[0])
		if !ok {
			return a, errf("%s: resubmit to unknown port", parts[0])
		}
		a.Port = uint32(p)
	}
	if len(parts) > 1 && parts[1] != "" {
		t, err := strconv.ParseUint(parts[1], 0, 8)
		if err != nil || t == 0xff {
			return a, errf("%s: resubmit to unknown table", parts[1])
		}
		a.Table = uint8(t)
	}
	if len(parts) > 2 {
		if parts[2] != "ct" {
			return a, errf("%s: unknown parameter", parts[2])
		}
		a.Raw = ofp.RawActNXAST_RESUBMIT_TABLE_CT
	}
	if a.Port == portInPort && a.Table == 0xff {
		return a, errf("at least one \"in_port\" or \"table\" must be specified on resubmit")
	}
	return a, nil
}
