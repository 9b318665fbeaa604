package ofp

import "slices"

// The per-kind table that the stages working on decoded actions consult.
// Each action family file (actions_output.go, actions_field.go, ...)
// fills in, from an init function, its kinds (kindOps) and its raw
// actions, the wire encodings (rawOps); the tables are read-only
// afterwards. The raw actions' numbers, versions and lengths are the raw
// table (action_table.go), as Open vSwitch's ofp-actions.c.

// kindOps is what one action kind contributes to encoding and checking.
type kindOps struct {
	// forms appends to e.forms the wire actions that encode a in version
	// v (see wireForms); nil means defaultForms. It must not keep a.
	forms func(e *ActionEncoder, a *Action, v uint8) error
	// check applies the kind's consistency checks against the flow's
	// match as ValidateOfpactsVersion does; nil means none.
	check func(c *checker, a *Action, depth int) error
	// canonical are the wire forms of a kind whose form depends only on
	// the version, in order of preference (defaultForms).
	canonical []RawAction
	// actionSet: write_actions may hold the kind (OpenFlow's action set
	// as Open vSwitch 3.1 accepts it: ct, ct_clear and resubmit included).
	actionSet bool
}

// Per-raw action codecs. A decoder gets the whole wire action (length
// already checked against the raw table); an encoder appends the body
// after the header (4 bytes standard, 10 vendor) and appendWire pads.
type actionDecoder func(p []byte, v uint8, in *actionInstance, depth int) (Action, error)
type actionEncoder func(b []byte, a *Action, v uint8, in *actionInstance, depth int) ([]byte, error)

// rawOps is what one raw action (a wire encoding) contributes: the kind
// it decodes to and its codec. A raw action without one (encap, decap,
// NXAST_SAMPLE4) decodes to ActRaw with its bytes.
type rawOps struct {
	kind ActionType
	dec  actionDecoder
	enc  actionEncoder
	max  uint64 // scalar: the largest valid argument (0: any)
	// post, for a scalar, checks or completes the decoded action.
	post func(a *Action, raw RawAction) error
}

// codec is the rawOps of a raw action of kind k with its own decoder and
// encoder.
func codec(k ActionType, dec actionDecoder, enc actionEncoder) rawOps {
	return rawOps{kind: k, dec: dec, enc: enc}
}

// scalar is the rawOps of a raw action of kind k whose body is one scalar
// argument at its instance's argOfs/argLen (or none), valid up to max (0:
// any).
func scalar(k ActionType, max uint64) rawOps {
	return rawOps{kind: k, dec: decodeScalar, enc: encodeScalar, max: max}
}

// scalarPost is scalar with a check or completion of the decoded action.
func scalarPost(k ActionType, max uint64, post func(a *Action, raw RawAction) error) rawOps {
	o := scalar(k, max)
	o.post = post
	return o
}

// kinds is indexed by ActionType; filled by the family files' init
// functions (ct, clone and write_actions recurse through the table, so it
// cannot be a composite literal) and read-only afterwards.
var kinds [numActionTypes]kindOps

// raws is indexed by RawAction; filled and read like kinds.
var raws [numRawActions]rawOps

// registerKinds records the operations of a family's kinds. It is called
// only from init functions.
func registerKinds(ops map[ActionType]kindOps) {
	for t, o := range ops {
		if k := kinds[t]; k.forms != nil || k.check != nil || k.canonical != nil || k.actionSet {
			panic("ofp: action kind " + t.String() + " registered twice")
		}
		kinds[t] = o
	}
}

// registerRaws records the codecs of a family's raw actions. It is
// called only from init functions.
func registerRaws(ops map[RawAction]rawOps) {
	for r, o := range ops {
		if raws[r].dec != nil {
			panic("ofp: raw action " + r.String() + " registered twice")
		}
		raws[r] = o
	}
}

// rawOpsOf returns the table entry of r (zero for an unknown raw action).
func rawOpsOf(r RawAction) rawOps {
	if r < numRawActions {
		return raws[r]
	}
	return rawOps{}
}

// actionKindOf is the kind raw action r decodes to (ActRaw if none).
func actionKindOf(r RawAction) ActionType { return rawOpsOf(r).kind }

// inActionSet reports whether write_actions may hold kind t.
func inActionSet(t ActionType) bool { return opsOf(t).actionSet }

// opsOf returns the table entry of a's kind (zero for an unknown kind).
func opsOf(t ActionType) kindOps {
	if t < numActionTypes {
		return kinds[t]
	}
	return kindOps{}
}

// wireForms appends to e.forms the wire actions (each with a Raw that v
// has) that encode a in version v, following Open vSwitch's encode_*
// choices. It may append none where Open vSwitch silently drops an action that v
// cannot express (enqueue after OF1.0, mod_nw_ttl/mod_nw_ecn/push_vlan in
// OF1.0, meter before OF1.3, clear/write_actions in OF1.0).
func wireForms(e *ActionEncoder, a *Action, v uint8) error {
	if f := opsOf(a.Type).forms; f != nil {
		return f(e, a, v)
	}
	return defaultForms(e, a, v)
}

// defaultForms encodes a in its Raw form when v has it and it decodes to
// a's kind, else in the first of the kind's canonical forms that v has.
func defaultForms(e *ActionEncoder, a *Action, v uint8) error {
	if hasRaw(a.Raw, v) && actionKindOf(a.Raw) == a.Type {
		return e.one(a, v, a.Raw)
	}
	for _, r := range opsOf(a.Type).canonical {
		if hasRaw(r, v) {
			return e.one(a, v, r)
		}
	}
	return errorf(OFPBAC_BAD_TYPE, "%s cannot be encoded in version %#x", a.Type, v)
}

// one appends a as the raw action r, which v must have.
func (e *ActionEncoder) one(a *Action, v uint8, r RawAction) error {
	if actionByRaw[rawVersion{r, v}] == nil {
		return errorf(OFPBAC_BAD_TYPE, "%s (%s) cannot be encoded in version %#x", a.Type, r, v)
	}
	e.forms = append(e.forms, *a)
	e.forms[len(e.forms)-1].Raw = r
	return nil
}

// via appends the wire forms of a, an action that another's forms stand
// for. a is held in e.forms while its own forms are made (an Action on
// the stack would escape through the kinds' function values).
func (e *ActionEncoder) via(a Action, v uint8) error {
	k := len(e.forms)
	e.forms = append(e.forms, a)
	if err := wireForms(e, &e.forms[k], v); err != nil {
		e.forms = e.forms[:k]
		return err
	}
	e.forms = slices.Delete(e.forms, k, k+1)
	return nil
}

// hasRaw reports whether version v has the raw action r.
func hasRaw(r RawAction, v uint8) bool { return r != 0 && actionByRaw[rawVersion{r, v}] != nil }

// check1 applies a's kind's consistency checks.
func (c *checker) check1(a *Action, depth int) error {
	if f := opsOf(a.Type).check; f != nil {
		return f(c, a, depth)
	}
	return nil
}
