package ofptext

import (
	"strings"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The stack family's text (see package ofp's actions_stack.go): push:SRC
// and pop:DST.

func init() {
	registerParsers(map[string]actionParser{
		"push": parseStack,
		"pop":  parseStack,
	})
	registerFormatters(map[ofp.ActionType]actionFormatter{
		ofp.ActStackPush: func(sb *strings.Builder, a *ofp.Action, _ uint8) { sb.WriteString("push:" + formatSubfield(a.Src)) },
		ofp.ActStackPop:  func(sb *strings.Builder, a *ofp.Action, _ uint8) { sb.WriteString("pop:" + formatSubfield(a.Dst)) },
	})
}

func parseStack(t *actionText) ([]ofp.Action, error) {
	sf, err := parseSubfield(t.arg)
	if err != nil {
		return nil, err
	}
	if t.name == "push" {
		return []ofp.Action{{Type: ofp.ActStackPush, Src: sf}}, nil
	}
	return []ofp.Action{{Type: ofp.ActStackPop, Dst: sf}}, nil
}
