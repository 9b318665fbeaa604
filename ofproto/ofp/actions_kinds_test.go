package ofp

import "testing"

// keptRaw are the raw actions that decode to ActRaw with their bytes.
var keptRaw = map[RawAction]bool{RawActNXAST_ENCAP: true, RawActNXAST_DECAP: true, RawActNXAST_SAMPLE4: true}

// TestEveryRawActionHasACodecOfItsKind: each raw action of the raw table
// is registered by a family file with a decoder, an encoder and its kind,
// except the ones kept as bytes.
func TestEveryRawActionHasACodecOfItsKind(t *testing.T) {
	for i := range actionInstances {
		r := actionInstances[i].raw
		o := rawOpsOf(r)
		if keptRaw[r] {
			if o.dec != nil || o.kind != ActRaw {
				t.Errorf("%s is registered but should stay ActRaw", r)
			}
			continue
		}
		if o.dec == nil || o.enc == nil || o.kind == ActRaw {
			t.Errorf("%s: no codec or kind registered (decoder %v, encoder %v, kind %s)", r, o.dec != nil, o.enc != nil, o.kind)
		}
	}
}

// TestEveryActionKindHasAWireForm: each kind but ActRaw has a forms
// function or canonical raw actions, so that AppendOfpacts can encode it.
func TestEveryActionKindHasAWireForm(t *testing.T) {
	for k := ActRaw + 1; k < numActionTypes; k++ {
		if o := opsOf(k); o.forms == nil && len(o.canonical) == 0 {
			t.Errorf("%s: no wire form registered", k)
		}
	}
}
