package ofp

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// The field family: set_field, load (NXAST_REG_LOAD), move (reg_move and
// copy_field) and delete_field. Action fields: set_field has Field, Value
// (the field's width, network order) and Mask (nil: exact); load Dst and
// Value (8 bytes); move Src and Dst; delete_field Field.

func init() {
	registerKinds(map[ActionType]kindOps{
		ActSetField: {forms: setFieldForms, check: checkSetField},
		ActLoad:     {forms: loadForms, check: checkLoad},
		ActMove:     {forms: moveForms, check: checkMove},
	})
}

// loadForms: OpenFlow 1.5 has no reg_load: the set_field it means.
func loadForms(a *Action, v uint8) ([]Action, error) {
	if v >= mf.OF15 {
		sf, err := loadToSetField(a)
		if err != nil {
			return nil, err
		}
		return setFieldForms(&sf, v)
	}
	return oneForm(a, v, RawActNXAST_REG_LOAD)
}

// moveForms: ONF's copy_field in OpenFlow 1.3 when it came that way,
// reg_move up to 1.4, copy_field in 1.5.
func moveForms(a *Action, v uint8) ([]Action, error) {
	switch {
	case v == mf.OF13 && a.Raw == RawActONFACT13_COPY_FIELD:
		return oneForm(a, v, a.Raw)
	case v <= mf.OF14:
		return oneForm(a, v, RawActNXAST_REG_MOVE)
	}
	return oneForm(a, v, RawActOFPAT15_COPY_FIELD)
}

func checkSetField(c *checker, a *Action, _ int) error {
	f := a.Field
	if f == nil {
		return errorf(OFPBAC_BAD_SET_TYPE, "set_field without a field")
	}
	if !c.m.PrereqsOK(f) || f.ID == mf.IDVLANVID && !c.hasVLAN() {
		return errInconsistent("set_field " + f.Name)
	}
	a.FlowHasVLAN = c.hasVLAN()
	if f.ID == mf.IDVLANTCI {
		c.setVLAN(len(a.Value) == 2 && a.Value[0]&0x10 != 0)
	}
	return nil
}

func checkLoad(c *checker, a *Action, _ int) error { return c.sub(a.Dst, "load") }

func checkMove(c *checker, a *Action, _ int) error {
	if err := c.sub(a.Src, "move"); err != nil {
		return err
	}
	return c.sub(a.Dst, "move")
}

func exactSetField(id mf.ID, val uint64) *Action {
	f := mf.ByID(id)
	v := make([]byte, f.Bytes)
	for i := len(v) - 1; i >= 0; i-- {
		v[i], val = byte(val), val>>8
	}
	return &Action{Type: ActSetField, Field: f, Value: v}
}

// loadToSetField turns a reg_load into the masked set_field it means.
func loadToSetField(a *Action) (Action, error) {
	d := a.Dst
	if err := checkSubfield(d); err != nil {
		return Action{}, err
	}
	if len(a.Value) != 8 || d.Field.Variable {
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "load to %s cannot be expressed as set_field", d.Field.Name)
	}
	w := d.Field.Bytes
	val, mask := make([]byte, w), make([]byte, w)
	x := binary.BigEndian.Uint64(a.Value)
	for i := 0; i < d.NBits; i++ {
		j := d.Ofs + i
		mask[w-1-j/8] |= 1 << (j % 8)
		if i < 64 && x>>i&1 == 1 {
			val[w-1-j/8] |= 1 << (j % 8)
		}
	}
	sf := Action{Type: ActSetField, Raw: RawActNXAST_REG_LOAD, Field: d.Field, Value: val, Mask: mask}
	if allOnes(mask) { // as Open vSwitch: a load of all of nw_ecn is still masked (0x3)
		sf.Mask = nil
	}
	return sf, nil
}

// legacySetFields are the fields OpenFlow 1.0/1.1 set with their own
// actions (set_field_to_legacy_openflow).
var legacySetFields = map[mf.ID]ActionType{
	mf.IDEthSrc: ActSetDLSrc, mf.IDEthDst: ActSetDLDst, mf.IDIPv4Src: ActSetNWSrc, mf.IDIPv4Dst: ActSetNWDst,
	mf.IDTCPSrc: ActSetTPSrc, mf.IDUDPSrc: ActSetTPSrc, mf.IDTCPDst: ActSetTPDst, mf.IDUDPDst: ActSetTPDst,
	mf.IDVLANVID: ActSetVLANVID, mf.IDVLANPCP: ActSetVLANPCP, mf.IDIPDSCP: ActSetNWTos,
	mf.IDIPDSCPShifted: ActSetNWTos, mf.IDIPECN: ActSetNWECN,
}

// loadOf is a reg_load of the whole of field id.
func loadOf(id mf.ID, val uint64) Action {
	f := mf.ByID(id)
	return Action{Type: ActLoad, Raw: RawActNXAST_REG_LOAD, Dst: Subfield{f, 0, f.Bits},
		Value: binary.BigEndian.AppendUint64(nil, val)}
}

// setFieldForms follows Open vSwitch's encode_SET_FIELD: OF1.5 always
// set_field; a set_field that came in as reg_load(2) goes out that way
// before OF1.5; OF1.0/1.1 use the legacy set actions or reg_load; OF1.2
// to 1.4 set_field when the whole field is set, else reg_load.
func setFieldForms(a *Action, v uint8) ([]Action, error) {
	if a.Field == nil || len(a.Value) != a.Field.Bytes && !a.Field.Variable || a.Mask != nil && len(a.Mask) != len(a.Value) {
		return nil, errorf(OFPBAC_BAD_SET_ARGUMENT, "set_field with a malformed value")
	}
	w := *a
	// tun_metadata is as wide as its value: a mask there is kept.
	exact := a.Mask == nil || allOnes(a.Mask) && !a.Field.Variable
	if exact {
		w.Mask = nil
	}
	switch {
	case v >= mf.OF15:
		w.Raw = RawActOFPAT15_SET_FIELD
		return []Action{w}, nil
	case a.Raw == RawActNXAST_REG_LOAD || a.Raw == RawActNXAST_REG_LOAD2:
		return setFieldToNXAST(&w, v)
	case v < mf.OF12:
		// Open vSwitch sends a field OpenFlow 1.0/1.1 sets with its own
		// action that way even when masked: the mask is dropped.
		if t, ok := legacySetFields[a.Field.ID]; ok {
			return legacyForms(&w, t, v)
		}
		if a.Field.ID == mf.IDVLANTCI { // a mask is dropped here too
			return vlanTCIForms(&w, v)
		}
		return setFieldToNXAST(&w, v)
	case exact:
		w.Raw = RawActOFPAT12_SET_FIELD
		return []Action{w}, nil
	}
	return setFieldToNXAST(&w, v)
}

func legacyForms(a *Action, t ActionType, v uint8) ([]Action, error) {
	x := getUintN(a.Value)
	switch a.Field.ID {
	case mf.IDVLANVID:
		x &= 0xfff
	case mf.IDIPDSCPShifted:
		x <<= 2
	}
	l := Action{Type: t, Arg: x, FlowHasVLAN: a.FlowHasVLAN, FlowIPProto: a.FlowIPProto}
	return wireForms(&l, v)
}

// vlanTCIForms: with CFI set, mod_vlan_vid + mod_vlan_pcp (after a
// push_vlan in OF1.1 when the flow has no VLAN); without, strip_vlan.
func vlanTCIForms(a *Action, v uint8) ([]Action, error) {
	tci := getUintN(a.Value)
	if tci&0x1000 == 0 {
		return wireForms(&Action{Type: ActStripVLAN}, v)
	}
	var out []Action
	if v > mf.OF10 && !a.FlowHasVLAN {
		out = append(out, Action{Type: ActPushVLAN, Raw: RawActOFPAT11_PUSH_VLAN, Arg: 0x8100})
	}
	vid, err := wireForms(&Action{Type: ActSetVLANVID, Arg: tci & 0xfff, FlowHasVLAN: true}, v)
	if err != nil {
		return nil, err
	}
	pcp, err := wireForms(&Action{Type: ActSetVLANPCP, Arg: tci >> 13, FlowHasVLAN: true}, v)
	return append(append(out, vid...), pcp...), err
}

// setFieldToNXAST: NXAST_REG_LOAD2 for fields without a 32-bit header,
// of variable length, or that came in as reg_load2; otherwise one
// NXAST_REG_LOAD per contiguous run of at most 64 mask bits, lowest
// first (next_load_segment).
func setFieldToNXAST(a *Action, v uint8) ([]Action, error) {
	f := a.Field
	if a.Raw == RawActNXAST_REG_LOAD2 || f.Variable || len(f.Headers) == 0 || f.Headers[0].IsExperimenter() {
		w := *a
		w.Raw = RawActNXAST_REG_LOAD2
		return []Action{w}, nil
	}
	mask := a.Mask
	if mask == nil {
		mask = make([]byte, len(a.Value))
		for i := 0; i < f.Bits; i++ {
			mask[len(mask)-1-i/8] |= 1 << (i % 8)
		}
	}
	bit := func(b []byte, i int) bool { return b[len(b)-1-i/8]>>(i%8)&1 == 1 }
	total := 8 * len(mask)
	if f.ID != mf.IDVLANVID { // vlan_vid carries OFPVID_PRESENT above its 12 bits
		total = min(total, f.Bits)
	}
	var out []Action
	for i := 0; i < total; {
		if !bit(mask, i) {
			i++
			continue
		}
		n := 0
		var x uint64
		for i+n < total && n < 64 && bit(mask, i+n) {
			if bit(a.Value, i+n) {
				x |= 1 << n
			}
			n++
		}
		out = append(out, Action{Type: ActLoad, Raw: RawActNXAST_REG_LOAD, Dst: Subfield{f, i, n},
			Value: binary.BigEndian.AppendUint64(nil, x)})
		i += n
	}
	return out, nil
}
