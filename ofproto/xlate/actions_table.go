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

// kindProps are the properties of a kind that translation consults
// outside its hook.
type kindProps struct {
	// slot orders the kinds an action set keeps one of (1 to 7); 0: the
	// kind is not one (actset.go).
	slot int
	// final ranks the action set's final actions: the highest present
	// runs; 0: the kind is not one.
	final int
	// setOrMove: an action set runs every one of the kind, in order
	// (Open vSwitch's ofpact_is_set_or_move_action).
	setOrMove bool
	// irreversible: later set actions cannot undo the kind's datapath
	// effect (Open vSwitch's reversible_actions); a clone holding one
	// becomes a datapath clone.
	irreversible bool
	// needsL3 reports whether an action must see the L3 header a
	// pop_mpls exposed, so that translation recirculates before it
	// (mpls.go); nil means it must.
	needsL3 func(a *ofp.Action) bool
}

// actionProps is indexed by ofp.ActionType; filled by the family files'
// init functions and read-only afterwards.
var actionProps [ofp.NumActionTypes]kindProps

// registerProps records a family's kind properties. It is called only
// from init functions.
func registerProps(ps map[ofp.ActionType]kindProps) {
	for t, p := range ps {
		if q := actionProps[t]; q.slot != 0 || q.final != 0 || q.setOrMove || q.irreversible || q.needsL3 != nil {
			panic("xlate: properties of action kind " + t.String() + " registered twice")
		}
		actionProps[t] = p
	}
}

// propsOf returns the properties of kind t (zero for an unknown kind).
func propsOf(t ofp.ActionType) kindProps {
	if t < ofp.NumActionTypes {
		return actionProps[t]
	}
	return kindProps{}
}

// belowL3 is the needsL3 of the kinds that work without the L3 header
// (outputs, groups, writes below L3).
func belowL3(*ofp.Action) bool { return false }
