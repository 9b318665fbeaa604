package ofp

// The per-kind table that the stages working on decoded actions consult.
// Each action family file (actions_output.go, actions_field.go, ...)
// fills in its kinds from an init function; the table is read-only
// afterwards. A kind without an entry has its version's canonical wire
// form (canonicalRaws) and no consistency check.

// kindOps is what one action kind contributes to encoding and checking.
type kindOps struct {
	// forms returns the wire actions that encode a in version v (see
	// wireForms); nil means defaultForms.
	forms func(a *Action, v uint8) ([]Action, error)
	// check applies the kind's consistency checks against the flow's
	// match as ValidateOfpactsVersion does; nil means none.
	check func(c *checker, a *Action, depth int) error
}

// kinds is indexed by ActionType; filled by the family files' init
// functions (ct, clone and write_actions recurse through the table, so it
// cannot be a composite literal) and read-only afterwards.
var kinds [numActionTypes]kindOps

// registerKinds records the operations of a family's kinds. It is called
// only from init functions.
func registerKinds(ops map[ActionType]kindOps) {
	for t, o := range ops {
		if kinds[t].forms != nil || kinds[t].check != nil {
			panic("ofp: action kind " + t.String() + " registered twice")
		}
		kinds[t] = o
	}
}

// opsOf returns the table entry of a's kind (zero for an unknown kind).
func opsOf(t ActionType) kindOps {
	if t < numActionTypes {
		return kinds[t]
	}
	return kindOps{}
}

// wireForms returns the wire actions (each with a Raw that v has) that
// encode a in version v, following Open vSwitch's encode_* choices. The
// result may be empty where Open vSwitch silently drops an action that v
// cannot express (enqueue after OF1.0, mod_nw_ttl/mod_nw_ecn/push_vlan in
// OF1.0, meter before OF1.3, clear/write_actions in OF1.0).
func wireForms(a *Action, v uint8) ([]Action, error) {
	if f := opsOf(a.Type).forms; f != nil {
		return f(a, v)
	}
	return defaultForms(a, v)
}

// defaultForms encodes a in its Raw form when v has it and it decodes to
// a's kind, else in the first of the kind's canonicalRaws that v has.
func defaultForms(a *Action, v uint8) ([]Action, error) {
	if hasRaw(a.Raw, v) && actionKindOf(a.Raw) == a.Type {
		return oneForm(a, v, a.Raw)
	}
	for _, r := range canonicalRaws[a.Type] {
		if hasRaw(r, v) {
			return oneForm(a, v, r)
		}
	}
	return nil, errorf(OFPBAC_BAD_TYPE, "%s cannot be encoded in version %#x", a.Type, v)
}

// oneForm is a encoded as the raw action r, which v must have.
func oneForm(a *Action, v uint8, r RawAction) ([]Action, error) {
	if actionByRaw[rawVersion{r, v}] == nil {
		return nil, errorf(OFPBAC_BAD_TYPE, "%s (%s) cannot be encoded in version %#x", a.Type, r, v)
	}
	w := *a
	w.Raw = r
	return []Action{w}, nil
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
