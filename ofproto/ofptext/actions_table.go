package ofptext

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The action text tables. Each action family file (actions_output.go,
// actions_field.go, ..., named as the family's file in package ofp)
// registers, from an init function, the ovs-ofctl names it parses and the
// kinds it prints; the tables are read-only afterwards.

// actionText is one action item as parseActionList splits it.
type actionText struct {
	name     string // the action's name, lower-cased
	origName string // the name as written
	arg      string // the argument: after ':' or '=', or inside "(...)"
	whole    string // the whole item, as "dec_ttl(1,2)"
	v        uint8  // the version the list is parsed for
	m        *mf.Match
	depth    int // nesting depth of the list the item is in
}

// actionParser parses one action item into the actions it means (most
// give one; load and set_field may give several).
type actionParser func(t *actionText) ([]ofp.Action, error)

// actionFormatter prints one action as ovs-ofctl does for version v.
type actionFormatter func(sb *strings.Builder, a *ofp.Action, v uint8)

// actionParsers is keyed by lower-cased action name; actionFormatters by
// kind. Both are filled by the family files' init functions (clone, ct
// and write_actions recurse through them) and read-only afterwards.
var (
	actionParsers    = map[string]actionParser{}
	actionFormatters [ofp.NumActionTypes]actionFormatter
)

// registerParsers records a family's action names. It is called only
// from init functions.
func registerParsers(ps map[string]actionParser) {
	for name, p := range ps {
		if actionParsers[name] != nil {
			panic("ofptext: action " + name + " registered twice")
		}
		actionParsers[name] = p
	}
}

// registerFormatters records how a family's kinds print. It is called
// only from init functions.
func registerFormatters(fs map[ofp.ActionType]actionFormatter) {
	for t, f := range fs {
		if actionFormatters[t] != nil {
			panic("ofptext: action kind " + t.String() + " registered twice")
		}
		actionFormatters[t] = f
	}
}

// parseAction parses one action item: a registered action, or a bare
// port name or number (an output).
func parseAction(t *actionText) ([]ofp.Action, error) {
	if p := actionParsers[t.name]; p != nil {
		return p(t)
	}
	if p, ok := portActions[t.name]; ok && t.arg == "" {
		return []ofp.Action{outputAction(p)}, nil
	}
	if p, ok := parsePort(t.origName); ok && t.arg == "" && p != portNone {
		return []ofp.Action{outputAction(p)}, nil
	}
	return nil, errf("unknown action %s", t.origName)
}

// formatAction prints a through its kind's formatter; a kind without one
// (ActRaw but encap and decap) prints as "<raw action name>".
func formatAction(sb *strings.Builder, a *ofp.Action, v uint8) {
	if a.Type < ofp.NumActionTypes {
		if f := actionFormatters[a.Type]; f != nil {
			f(sb, a, v)
			return
		}
	}
	fmt.Fprintf(sb, "<%s>", a.Raw)
}

// Parser and formatter builders for the many actions that need no more.

// noArg parses an action that takes no argument (its argument is
// ignored, as ovs-ofctl does) into an action of kind k.
func noArg(k ofp.ActionType) actionParser {
	return func(*actionText) ([]ofp.Action, error) { return []ofp.Action{{Type: k}}, nil }
}

// word prints an action as a fixed word.
func word(s string) actionFormatter {
	return func(sb *strings.Builder, _ *ofp.Action, _ uint8) { sb.WriteString(s) }
}

// decimal prints an action as prefix followed by Arg in decimal.
func decimal(prefix string) actionFormatter {
	return func(sb *strings.Builder, a *ofp.Action, _ uint8) {
		sb.WriteString(prefix + strconv.FormatUint(a.Arg, 10))
	}
}

// single adapts a one-action parser of the argument to an actionParser.
func single(p func(arg string) (ofp.Action, error)) actionParser {
	return func(t *actionText) ([]ofp.Action, error) { return one(p(t.arg)) }
}
