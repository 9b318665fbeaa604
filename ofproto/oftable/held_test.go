package oftable

import (
	"reflect"
	"testing"

	"github.com/gvs-project/gvs/ofproto/classifier"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Every field of a FlowMod survives Hold and Unpack: a field added to
// FlowMod and not to HeldFlowMod fails here.
func TestHeldFlowModKeepsEveryField(t *testing.T) {
	var fm FlowMod
	v := reflect.ValueOf(&fm).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(uint64(i + 1))
		case reflect.Int:
			f.SetInt(int64(i + 1))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice, reflect.Struct:
		default:
			t.Fatalf("field %s of kind %s: teach this test and HeldFlowMod about it", v.Type().Field(i).Name, f.Kind())
		}
	}
	fm.Match.Flow.Regs[2], fm.Match.Mask.Regs[2] = 5, 0xff
	fm.Match.Tun.Used = 4
	fm.Actions = []ofp.Action{{Type: ofp.ActOutput, Port: 3}}
	fm.Conjunctions = []classifier.Conjunction{{ID: 1, Clause: 0, NClauses: 2}}
	h := Hold(&fm)
	var got FlowMod
	got.Priority = 99
	h.Unpack(&got)
	if !reflect.DeepEqual(got, fm) {
		t.Fatalf("unpacked %+v\nwant %+v", got, fm)
	}
}
