package ofptext

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// FormatActions prints an action list (ofpacts, instructions included) as
// ovs-ofctl does for version v ("drop" for an empty list). v matters only
// where the same action prints differently by version.
func FormatActions(acts []ofp.Action, v uint8) string {
	if len(acts) == 0 {
		return "drop"
	}
	var sb strings.Builder
	formatActionList(&sb, acts, v)
	return sb.String()
}

func formatActionList(sb *strings.Builder, acts []ofp.Action, v uint8) {
	for i := range acts {
		if i > 0 {
			sb.WriteByte(',')
		}
		formatAction(sb, &acts[i], v)
	}
}

func nameOf(names []string, i uint16) string {
	if int(i) < len(names) {
		return names[i]
	}
	return strconv.Itoa(int(i))
}

// formatDotHex prints bytes as "01.02.0a", as note and userdata.
func formatDotHex(b []byte) string {
	var sb strings.Builder
	for i, c := range b {
		if i > 0 {
			sb.WriteByte('.')
		}
		fmt.Fprintf(&sb, "%02x", c)
	}
	return sb.String()
}

// formatSubfield prints NXM_NX_REG0[0..15] style, using the field's NXM
// name (OXM name if it has none).
func formatSubfield(sf ofp.Subfield) string {
	if sf.Field == nil {
		return "?"
	}
	name := sf.Field.Name
	if h, ok := sf.Field.HeaderFor(0); ok {
		name = h.Name
	}
	switch {
	case sf.Ofs == 0 && sf.NBits == sf.Field.Bits:
		return name + "[]"
	case sf.NBits == 1:
		return fmt.Sprintf("%s[%d]", name, sf.Ofs)
	}
	return fmt.Sprintf("%s[%d..%d]", name, sf.Ofs, sf.Ofs+sf.NBits-1)
}

// FormatSubfieldIsNow is the trace line of a subfield an action loaded,
// given its field's whole value: "SUB is now V", V the field's value
// when the subfield is the whole field and the subfield's bits in hex
// otherwise (Open vSwitch's xlate_report_subfield).
func FormatSubfieldIsNow(sf ofp.Subfield, value []byte) string {
	s := formatSubfield(sf) + " is now "
	if sf.Field == nil {
		return s + "?"
	}
	if sf.Ofs == 0 && sf.NBits >= sf.Field.Bits {
		return s + formatValue(sf.Field, value, ones(len(value)))
	}
	// The subfield's bits, right-aligned, printed as ds_put_hex does.
	bitsOut := make([]byte, (sf.NBits+7)/8)
	for i := 0; i < sf.NBits; i++ {
		b := sf.Ofs + i
		if b/8 >= len(value) {
			break
		}
		if value[len(value)-1-b/8]>>(b%8)&1 != 0 {
			bitsOut[len(bitsOut)-1-i/8] |= 1 << (i % 8)
		}
	}
	var hex strings.Builder
	for _, v := range bitsOut {
		switch {
		case hex.Len() == 0 && v == 0:
		case hex.Len() == 0:
			fmt.Fprintf(&hex, "0x%x", v)
		default:
			fmt.Fprintf(&hex, "%02x", v)
		}
	}
	if hex.Len() == 0 {
		return s + "0"
	}
	return s + hex.String()
}

// instIndex is the instruction an ofpact belongs to for ovs-ofctl's
// ordering check, which treats meter as an instruction in every version.
func instIndex(t ofp.ActionType) int {
	switch t {
	case ofp.ActMeter:
		return 0
	case ofp.ActClearActions:
		return 2
	case ofp.ActWriteActions:
		return 3
	case ofp.ActWriteMetadata:
		return 4
	case ofp.ActGotoTable:
		return 5
	}
	return 1
}

var instTextNames = [...]string{"meter", "apply_actions", "clear_actions", "write_actions", "write_metadata", "goto_table"}

// verifyActions applies ovs-ofctl's ofpacts_verify to parsed actions, with
// its messages.
func verifyActions(acts []ofp.Action, v uint8, inCT bool) error {
	last := -1
	for i := range acts {
		a := &acts[i]
		if a.Type == ofp.ActConjunction {
			for j := range acts {
				if t := acts[j].Type; t != ofp.ActConjunction && t != ofp.ActNote {
					return errf("\"conjunction\" actions may be used along with \"note\" but not any other kind of action (such as the \"%s\" action used here)", t)
				}
			}
		}
		if !inCT && (a.Type == ofp.ActSetField && isCTField(a.Field) || (a.Type == ofp.ActLoad || a.Type == ofp.ActMove) && isCTField(a.Dst.Field)) {
			return errf("cannot set CT fields outside of ct action")
		}
		o := instIndex(a.Type)
		if o == last && o != 1 {
			return errf("duplicate %s instruction not allowed, for OpenFlow 1.1+ compatibility", instTextNames[o])
		}
		if o < last {
			return errf("invalid instruction ordering: %s must appear before %s, for OpenFlow 1.1+ compatibility", instTextNames[o], instTextNames[last])
		}
		last = o
		var err error
		switch {
		case a.Type == ofp.ActCT && a.CT() != nil:
			err = verifyActions(a.CT().Actions, v, true)
		case a.Type == ofp.ActClone, a.Type == ofp.ActWriteActions:
			err = verifyActions(a.Nested, v, inCT)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func isCTField(f *mf.Field) bool {
	return f != nil && (f.ID == mf.IDCtMark || f.ID == mf.IDCtLabel)
}

// finishActions turns parsed ofpacts into what version v carries, as
// ovs-ofctl prints them: verified, checked against the match, encoded
// for v and decoded again (so load/set_field, mod_vlan_vid, enqueue... take
// their form for v).
func finishActions(acts []ofp.Action, v uint8, m *mf.Match, table uint8) ([]ofp.Action, error) {
	// An empty write_actions() is not sent at all by ovs-ofctl.
	acts = slices.DeleteFunc(acts, func(a ofp.Action) bool { return a.Type == ofp.ActWriteActions && len(a.Nested) == 0 })
	if err := verifyActions(acts, v, false); err != nil {
		return nil, err
	}
	if err := usableIn(acts, v); err != nil {
		return nil, err
	}
	if err := ofp.ValidateOfpactsVersion(v, acts, m, portMax, table, 0xff); err != nil {
		if errors.Is(err, ofp.ErrOnlyOF10) {
			return nil, errf("none of the usable flow formats (OpenFlow10,NXM) is among the allowed flow formats (%s)", protocolNames[v])
		}
		if code := ofp.CodeOf(err); code != 0 {
			return nil, errf("actions are invalid with specified match (%s)", code)
		}
		return nil, &syntaxError{err.Error()}
	}
	inst := v >= mf.OF11
	b, err := ofp.AppendOfpacts(nil, acts, v, inst)
	if err != nil {
		return nil, &syntaxError{err.Error()}
	}
	out, err := ofp.DecodeOfpacts(b, v, inst)
	if err != nil {
		if ofp.CodeOf(err) != 0 {
			// Encodable but refused on decoding (debug_slow is for
			// testing only, ct without commit may hold only a bare nat):
			// ovs-ofctl still sends these, and the switch refuses them.
			return acts, nil
		}
		return nil, &syntaxError{err.Error()}
	}
	return out, nil
}

// protocolNames are ovs-ofctl's names of the flow formats -O allows.
var protocolNames = map[uint8]string{mf.OF10: "OpenFlow10,NXM", mf.OF11: "OpenFlow11", mf.OF12: "OXM-OpenFlow12",
	mf.OF13: "OXM-OpenFlow13", mf.OF14: "OXM-OpenFlow14", mf.OF15: "OXM-OpenFlow15"}

// usableIn refuses, as ovs-ofctl's protocol negotiation does, actions that
// version v cannot carry at all.
func usableIn(acts []ofp.Action, v uint8) error {
	for i := range acts {
		var need string
		switch a := &acts[i]; {
		case a.Type == ofp.ActPushVLAN && v < mf.OF11:
			need = "OXM,OpenFlow11"
		case a.Type == ofp.ActMeter && v < mf.OF13:
			need = "OXM-OpenFlow13,OXM-OpenFlow14,OXM-OpenFlow15"
		}
		if need != "" {
			return errf("none of the usable flow formats (%s) is among the allowed flow formats (%s)", need, protocolNames[v])
		}
		if err := usableIn(acts[i].Nested, v); err != nil {
			return err
		}
	}
	return nil
}
