package ofptext

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The field family's text (see package ofp's actions_field.go):
// set_field, load, move and delete_field.

func init() {
	registerParsers(map[string]actionParser{
		"set_field":    func(t *actionText) ([]ofp.Action, error) { return parseSetField(t.arg) },
		"load":         func(t *actionText) ([]ofp.Action, error) { return parseLoad(t.arg) },
		"move":         parseMove,
		"delete_field": parseDeleteField,
	})
	registerFormatters(map[ofp.ActionType]actionFormatter{
		ofp.ActSetField: formatSetField,
		ofp.ActLoad: func(sb *strings.Builder, a *ofp.Action, _ uint8) {
			fmt.Fprintf(sb, "load:%s->%s", formatHex(a.Value), formatSubfield(a.Dst))
		},
		ofp.ActMove: func(sb *strings.Builder, a *ofp.Action, _ uint8) {
			fmt.Fprintf(sb, "move:%s->%s", formatSubfield(a.Src), formatSubfield(a.Dst))
		},
		ofp.ActDeleteField: func(sb *strings.Builder, a *ofp.Action, _ uint8) {
			if a.Field != nil {
				sb.WriteString("delete_field:" + a.Field.Name)
			}
		},
	})
}

func parseMove(t *actionText) ([]ofp.Action, error) {
	arg := t.arg
	src, dst, ok := strings.Cut(arg, "->")
	if !ok {
		return nil, errf("%s: missing `->' following source", arg)
	}
	s, err := parseSubfield(src)
	if err != nil {
		// ovs-ofctl names the rest of the text from the source on.
		if msg, ok := strings.CutPrefix(err.Error(), src+": "); ok {
			return nil, errf("%s: %s", arg, msg)
		}
		return nil, err
	}
	d, err := parseSubfield(dst)
	if err != nil {
		return nil, err
	}
	if s.NBits != d.NBits {
		return nil, errf("%s: source field is %d bits wide but destination is %d bits wide", arg, s.NBits, d.NBits)
	}
	if !d.Field.Writable {
		return nil, errf("%s: destination field %s is not writable", arg, d.Field.Name)
	}
	return []ofp.Action{{Type: ofp.ActMove, Raw: ofp.RawActNXAST_REG_MOVE, Src: s, Dst: d}}, nil
}

func parseDeleteField(t *actionText) ([]ofp.Action, error) {
	f := mf.Lookup(t.arg)
	if f == nil {
		return nil, errf("%s: unknown field", t.arg)
	}
	if !f.Variable { // only tun_metadata can be deleted
		return nil, errf("actions are invalid with specified match (OFPBAC_BAD_ARGUMENT)")
	}
	return []ofp.Action{{Type: ofp.ActDeleteField, Field: f}}, nil
}

func formatSetField(sb *strings.Builder, a *ofp.Action, _ uint8) {
	if a.Field == nil {
		sb.WriteString("set_field:?")
		return
	}
	mask := a.Mask
	if mask == nil {
		mask = ones(len(a.Value))
	}
	val := formatValue(a.Field, a.Value, mask)
	if a.Field.Format == mf.FormatTunFlags {
		// A set value prints as the flags' names joined by "|",
		// not in the +flag/-flag match syntax.
		val = "0"
		if getUint(a.Value)&1 != 0 {
			val = "oam"
		}
	}
	if a.Field.Variable && a.Mask != nil {
		// tun_metadata: a mask as wide as the value is still shown.
		val = formatHex(a.Value) + "/" + formatHex(a.Mask)
	}
	if a.Field.Format == mf.FormatDecimal && a.Mask != nil && len(a.Value) <= 8 {
		val = strconv.FormatUint(getUint(a.Value), 10) + "/" + formatHex(a.Mask) // as ovs-ofctl: decimal value, hex mask
	}
	if (a.Field.Format == mf.FormatOFPPortOXM || a.Field.Format == mf.FormatOFPPort) && val == "NONE" {
		val = "ANY" // OpenFlow 1.1+ names the 32-bit OFPP_ANY so
	}
	fmt.Fprintf(sb, "set_field:%s->%s", val, a.Field.Name)
}

func parseSetField(arg string) ([]ofp.Action, error) {
	vs, name, ok := strings.Cut(arg, "->")
	if !ok {
		return nil, errf("%s: missing `->'", arg)
	}
	f := mf.ByName(name)
	if f == nil {
		return nil, errf("%s is not a valid OXM field name", name)
	}
	if !f.Writable {
		return nil, errf("%s is read-only", name)
	}
	val, mask, err := parseFieldValue(f, vs)
	if err != nil {
		return nil, &syntaxError{err.Error()}
	}
	if !f.ValueValid(val) {
		return nil, errf("%s is not a valid value for field %s", vs, name)
	}
	if isAllOnes(mask) {
		mask = nil
	}
	return []ofp.Action{{Type: ofp.ActSetField, Field: f, Value: val, Mask: mask}}, nil
}

// parseLoad parses "value->dst[...]": a reg_load of at most 64 bits, or
// (wider) a masked set_field that is sent as reg_load, as ovs-ofctl.
func parseLoad(arg string) ([]ofp.Action, error) {
	vs, dst, ok := strings.Cut(arg, "->")
	if !ok {
		return nil, errf("%s: missing `->' following value", arg)
	}
	d, err := parseSubfield(dst)
	if err != nil {
		return nil, err
	}
	val, err := parseInt(vs, 16)
	if err != nil {
		return nil, errf("%s: %v %s", vs, err, dst)
	}
	if bitLen(val) > d.NBits {
		return nil, errf("%s: value %s does not fit into %d bits", arg, vs, d.NBits)
	}
	if !d.Field.Writable {
		return nil, errf("%s: destination field %s is not writable", arg, d.Field.Name)
	}
	if d.Field.Variable {
		// tun_metadata has no fixed width for reg_load: it becomes a
		// masked set_field (reg_load2) as wide as the bits loaded.
		w := (d.Ofs + d.NBits + 7) / 8
		fv, fm := make([]byte, w), make([]byte, w)
		shiftInto(fv, val, d.Ofs)
		for i := d.Ofs; i < d.Ofs+d.NBits; i++ {
			fm[w-1-i/8] |= 1 << (i % 8)
		}
		return []ofp.Action{{Type: ofp.ActSetField, Raw: ofp.RawActNXAST_REG_LOAD2, Field: d.Field, Value: fv, Mask: fm}}, nil
	}
	if d.NBits <= 64 {
		return []ofp.Action{{Type: ofp.ActLoad, Raw: ofp.RawActNXAST_REG_LOAD, Dst: d, Value: val[8:]}}, nil
	}
	w := d.Field.Bytes
	fv, fm := make([]byte, w), make([]byte, w)
	shiftInto(fv, val, d.Ofs)
	for i := d.Ofs; i < d.Ofs+d.NBits; i++ {
		fm[w-1-i/8] |= 1 << (i % 8)
	}
	if isAllOnes(fm) {
		fm = nil
	}
	return []ofp.Action{{Type: ofp.ActSetField, Raw: ofp.RawActNXAST_REG_LOAD, Field: d.Field, Value: fv, Mask: fm}}, nil
}
