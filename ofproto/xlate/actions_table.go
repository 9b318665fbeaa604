package xlate

import "github.com/gvs-project/gvs/ofproto/ofp"

// The translation table. Each action family file (actions_output.go,
// actions_field.go, ..., named as the family's file in package ofp)
// registers, from an init function, the hook that translates each of its
// kinds; doActions calls it. A kind without a hook (a raw action, nat
// outside ct, dec_nsh_ttl) fails translation with ErrUnsupported.

// actionHook translates one OpenFlow action in c.
type actionHook func(c *ctx, a *ofp.Action)

// actionHooks is indexed by ofp.ActionType; filled by the family files'
// init functions (clone and write_actions recurse through doActions, so it
// cannot be a composite literal) and read-only afterwards.
var actionHooks [ofp.NumActionTypes]actionHook

// registerHooks records a family's hooks. It is called only from init
// functions.
func registerHooks(hs map[ofp.ActionType]actionHook) {
	for t, h := range hs {
		if actionHooks[t] != nil {
			panic("xlate: action kind " + t.String() + " registered twice")
		}
		actionHooks[t] = h
	}
}

// hookOf returns the hook of kind t, or nil.
func hookOf(t ofp.ActionType) actionHook {
	if t < ofp.NumActionTypes {
		return actionHooks[t]
	}
	return nil
}

// noEffect is the hook of the actions that change nothing in translation
// (note; conjunction, which is a match; delete_field).
func noEffect(*ctx, *ofp.Action) {}
