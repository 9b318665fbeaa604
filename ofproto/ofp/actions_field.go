package ofp

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// The field family: set_field, load (NXAST_REG_LOAD), move (reg_move and
// copy_field) and delete_field. Action fields: set_field has Field, Value
// (the field's width, network order) and Mask (nil: exact); load Dst and
// Value (8 bytes); move Src and Dst; delete_field Field.

func init() {
	registerKinds(map[ActionType]kindOps{
		ActSetField:    {forms: setFieldForms, check: checkSetField, actionSet: true},
		ActLoad:        {forms: loadForms, check: checkLoad, actionSet: true},
		ActMove:        {forms: moveForms, check: checkMove, actionSet: true},
		ActDeleteField: {canonical: []RawAction{RawActNXAST_DELETE_FIELD}},
	})
	registerRaws(map[RawAction]rawOps{
		RawActOFPAT12_SET_FIELD:   codec(ActSetField, decodeSetField, encodeSetField),
		RawActOFPAT15_SET_FIELD:   codec(ActSetField, decodeSetField, encodeSetField),
		RawActNXAST_REG_LOAD2:     codec(ActSetField, decodeSetField, encodeSetField),
		RawActNXAST_REG_LOAD:      codec(ActLoad, decodeRegLoad, encodeRegLoad),
		RawActNXAST_REG_MOVE:      codec(ActMove, decodeRegMove, encodeRegMove),
		RawActOFPAT15_COPY_FIELD:  codec(ActMove, decodeRegMove, encodeRegMove),
		RawActONFACT13_COPY_FIELD: codec(ActMove, decodeRegMove, encodeRegMove),
		RawActNXAST_DELETE_FIELD:  codec(ActDeleteField, decodeDeleteField, encodeDeleteField),
	})
}

// loadForms: OpenFlow 1.5 has no reg_load: the set_field it means.
func loadForms(e *ActionEncoder, a *Action, v uint8) error {
	if v >= mf.OF15 {
		sf, err := e.loadToSetField(a)
		if err != nil {
			return err
		}
		return setFieldForms(e, &sf, v)
	}
	return e.one(a, v, RawActNXAST_REG_LOAD)
}

// moveForms: ONF's copy_field in OpenFlow 1.3 when it came that way,
// reg_move up to 1.4, copy_field in 1.5.
func moveForms(e *ActionEncoder, a *Action, v uint8) error {
	switch {
	case v == mf.OF13 && a.Raw == RawActONFACT13_COPY_FIELD:
		return e.one(a, v, a.Raw)
	case v <= mf.OF14:
		return e.one(a, v, RawActNXAST_REG_MOVE)
	}
	return e.one(a, v, RawActOFPAT15_COPY_FIELD)
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

// exactSetField is a set_field of the whole of field id (its value in
// e's arena).
func (e *ActionEncoder) exactSetField(id mf.ID, val uint64) Action {
	f := mf.ByID(id)
	v := e.alloc(f.Bytes)
	for i := len(v) - 1; i >= 0; i-- {
		v[i], val = byte(val), val>>8
	}
	return Action{Type: ActSetField, Field: f, Value: v}
}

// loadToSetField turns a reg_load into the masked set_field it means
// (its value and mask in e's arena).
func (e *ActionEncoder) loadToSetField(a *Action) (Action, error) {
	d := a.Dst
	if err := checkSubfield(d); err != nil {
		return Action{}, err
	}
	if len(a.Value) != 8 || d.Field.Variable {
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "load to %s cannot be expressed as set_field", d.Field.Name)
	}
	w := d.Field.Bytes
	val, mask := e.alloc(w), e.alloc(w)
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

// loadOf is a reg_load of the whole of field id (its value in e's arena).
func (e *ActionEncoder) loadOf(id mf.ID, val uint64) Action {
	f := mf.ByID(id)
	x := e.alloc(8)
	binary.BigEndian.PutUint64(x, val)
	return Action{Type: ActLoad, Raw: RawActNXAST_REG_LOAD, Dst: Subfield{f, 0, f.Bits}, Value: x}
}

// setFieldForms follows Open vSwitch's encode_SET_FIELD: OF1.5 always
// set_field; a set_field that came in as reg_load(2) goes out that way
// before OF1.5; OF1.0/1.1 use the legacy set actions or reg_load; OF1.2
// to 1.4 set_field when the whole field is set, else reg_load.
func setFieldForms(e *ActionEncoder, a *Action, v uint8) error {
	if a.Field == nil || len(a.Value) != a.Field.Bytes && !a.Field.Variable || a.Mask != nil && len(a.Mask) != len(a.Value) {
		return errorf(OFPBAC_BAD_SET_ARGUMENT, "set_field with a malformed value")
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
		e.forms = append(e.forms, w)
		return nil
	case a.Raw == RawActNXAST_REG_LOAD || a.Raw == RawActNXAST_REG_LOAD2:
		return setFieldToNXAST(e, &w)
	case v < mf.OF12:
		// Open vSwitch sends a field OpenFlow 1.0/1.1 sets with its own
		// action that way even when masked: the mask is dropped.
		if t, ok := legacySetFields[a.Field.ID]; ok {
			return legacyForms(e, &w, t, v)
		}
		if a.Field.ID == mf.IDVLANTCI { // a mask is dropped here too
			return vlanTCIForms(e, &w, v)
		}
		return setFieldToNXAST(e, &w)
	case exact:
		w.Raw = RawActOFPAT12_SET_FIELD
		e.forms = append(e.forms, w)
		return nil
	}
	return setFieldToNXAST(e, &w)
}

func legacyForms(e *ActionEncoder, a *Action, t ActionType, v uint8) error {
	x := getUintN(a.Value)
	switch a.Field.ID {
	case mf.IDVLANVID:
		x &= 0xfff
	case mf.IDIPDSCPShifted:
		x <<= 2
	}
	return e.via(Action{Type: t, Arg: x, FlowHasVLAN: a.FlowHasVLAN, FlowIPProto: a.FlowIPProto}, v)
}

// vlanTCIForms: with CFI set, mod_vlan_vid + mod_vlan_pcp (after a
// push_vlan in OF1.1 when the flow has no VLAN); without, strip_vlan.
func vlanTCIForms(e *ActionEncoder, a *Action, v uint8) error {
	tci := getUintN(a.Value)
	if tci&0x1000 == 0 {
		return e.via(Action{Type: ActStripVLAN}, v)
	}
	start := len(e.forms)
	if v > mf.OF10 && !a.FlowHasVLAN {
		e.forms = append(e.forms, Action{Type: ActPushVLAN, Raw: RawActOFPAT11_PUSH_VLAN, Arg: 0x8100})
	}
	err := e.via(Action{Type: ActSetVLANVID, Arg: tci & 0xfff, FlowHasVLAN: true}, v)
	if err == nil {
		err = e.via(Action{Type: ActSetVLANPCP, Arg: tci >> 13, FlowHasVLAN: true}, v)
	}
	if err != nil {
		e.forms = e.forms[:start]
	}
	return err
}

// setFieldToNXAST: NXAST_REG_LOAD2 for fields without a 32-bit header,
// of variable length, or that came in as reg_load2; otherwise one
// NXAST_REG_LOAD per contiguous run of at most 64 mask bits, lowest
// first (next_load_segment).
func setFieldToNXAST(e *ActionEncoder, a *Action) error {
	f := a.Field
	if a.Raw == RawActNXAST_REG_LOAD2 || f.Variable || len(f.Headers) == 0 || f.Headers[0].IsExperimenter() {
		e.forms = append(e.forms, *a)
		e.forms[len(e.forms)-1].Raw = RawActNXAST_REG_LOAD2
		return nil
	}
	mask := a.Mask
	if mask == nil {
		mask = e.alloc(len(a.Value))
		for i := 0; i < f.Bits; i++ {
			mask[len(mask)-1-i/8] |= 1 << (i % 8)
		}
	}
	bit := func(b []byte, i int) bool { return b[len(b)-1-i/8]>>(i%8)&1 == 1 }
	total := 8 * len(mask)
	if f.ID != mf.IDVLANVID { // vlan_vid carries OFPVID_PRESENT above its 12 bits
		total = min(total, f.Bits)
	}
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
		val := e.alloc(8)
		binary.BigEndian.PutUint64(val, x)
		e.forms = append(e.forms, Action{Type: ActLoad, Raw: RawActNXAST_REG_LOAD, Dst: Subfield{f, i, n}, Value: val})
		i += n
	}
	return nil
}

func decodeSetField(p []byte, v uint8, in *actionInstance, _ int) (Action, error) {
	oxm := p[4:]
	if in.raw == RawActNXAST_REG_LOAD2 {
		oxm = p[10:]
	}
	if len(oxm) < 4 {
		return Action{}, errorf(OFPBAC_BAD_SET_LEN, "set_field without an OXM header")
	}
	n := 4 + int(oxm[3]) // for experimenter OXMs the length counts the ID
	if n > len(oxm) || pad8(len(p)-len(oxm)+n) != len(p) {
		return Action{}, errorf(OFPBAC_BAD_SET_LEN, "set_field OXM of %d bytes in a %d-byte action", n, len(p))
	}
	h := binary.BigEndian.Uint32(oxm)
	var exp uint32
	if uint16(h>>16) == mf.ClassExperimenter && n >= 8 {
		exp = binary.BigEndian.Uint32(oxm[4:])
	}
	f := mf.Std.ByHeader(uint16(h>>16), uint8(h>>9&0x7f), exp)
	if f == nil { // Open vSwitch cannot tell an unknown field's length
		return Action{}, errorf(OFPBAC_BAD_SET_LEN, "set_field of unknown OXM %#x", h)
	}
	if !f.Writable {
		return Action{}, errorf(OFPBAC_BAD_SET_ARGUMENT, "set_field of read-only %s", f.Name)
	}
	masked := h>>8&1 == 1
	if masked && in.raw == RawActOFPAT12_SET_FIELD {
		return Action{}, errorf(OFPBAC_BAD_SET_MASK, "masked set_field of %s before OpenFlow 1.5", f.Name)
	}
	if masked && !f.Maskable && !f.Variable {
		// Open vSwitch lets set_field mask any field (a reg_load of part
		// of nw_ecn comes back so in OF1.5); mf matches refuse that.
		return decodeMaskedSetField(f, oxm[:n])
	}
	var m mf.Match
	if err := DecodeNXM(oxm[:n], false, &m, nil); err != nil || m.IsWild(f) {
		switch CodeOf(err) {
		case OFPBMC_BAD_MASK:
			return Action{}, errorf(OFPBAC_BAD_SET_MASK, "set_field %s: %v", f.Name, err)
		case 0, OFPBMC_BAD_VALUE:
			return Action{}, errorf(OFPBAC_BAD_SET_ARGUMENT, "set_field %s: %v", f.Name, err)
		}
		return Action{}, fmt.Errorf("set_field %s: %w", f.Name, err)
	}
	w := m.Width(f)
	a := Action{Type: ActSetField, Field: f, Value: make([]byte, w)}
	mask := make([]byte, w)
	m.Get(f, a.Value, mask)
	// An all-ones mask sets the whole field; tun_metadata is as wide as
	// its value, so a mask there stays (and prints) as sent.
	if masked && (!allOnes(mask) || f.Variable) {
		a.Mask = mask
	}
	if !f.ValueValid(a.Value) || a.Mask != nil && !f.ValueValid(a.Mask) {
		return Action{}, errorf(OFPBAC_BAD_SET_ARGUMENT, "set_field %s value or mask has bits outside the field", f.Name)
	}
	if f.ID == mf.IDVLANVID && a.Value[0]&0x10 == 0 && (a.Mask == nil || a.Mask[0]&0x10 != 0) {
		return Action{}, errorf(OFPBAC_BAD_SET_ARGUMENT, "set_field vlan_vid without OFPVID_PRESENT")
	}
	return a, nil
}

// decodeMaskedSetField reads a masked set_field OXM of a field mf does
// not mask: value and mask as on the wire.
func decodeMaskedSetField(f *mf.Field, oxm []byte) (Action, error) {
	payload := oxm[4:]
	if len(payload) != 2*f.Bytes {
		return Action{}, errorf(OFPBAC_BAD_SET_LEN, "set_field %s of %d bytes", f.Name, len(payload))
	}
	a := Action{Type: ActSetField, Field: f, Value: bytes.Clone(payload[:f.Bytes]), Mask: bytes.Clone(payload[f.Bytes:])}
	for i := range a.Value {
		if a.Value[i]&^a.Mask[i] != 0 {
			return Action{}, errorf(OFPBMC_BAD_WILDCARDS, "set_field %s value bits outside its mask", f.Name)
		}
	}
	if !f.ValueValid(a.Value) || !f.ValueValid(a.Mask) {
		return Action{}, errorf(OFPBAC_BAD_SET_ARGUMENT, "set_field %s value or mask has bits outside the field", f.Name)
	}
	if allOnes(a.Mask) {
		a.Mask = nil
	}
	return a, nil
}

func encodeSetField(b []byte, a *Action, v uint8, in *actionInstance, _ int) ([]byte, error) {
	var m mf.Match
	if a.Field == nil {
		return b, errorf(OFPBAC_BAD_SET_TYPE, "set_field without a field")
	}
	if a.Mask != nil && !a.Field.Maskable && !a.Field.Variable {
		if len(a.Value) != a.Field.Bytes || len(a.Mask) != a.Field.Bytes {
			return b, errorf(OFPBAC_BAD_SET_ARGUMENT, "set_field %s with a malformed value", a.Field.Name)
		}
	} else if err := m.SetMasked(a.Field, a.Value, a.Mask); err != nil {
		return b, errorf(OFPBAC_BAD_SET_ARGUMENT, "set_field %s: %v", a.Field.Name, err)
	}
	wv := v
	if in.raw == RawActNXAST_REG_LOAD2 {
		wv = 0 // NXM-preferred header, as Open vSwitch's nx_put_entry(..., 0, ...)
	}
	w := nxmWriter{b: b, version: wv}
	w.header(a.Field, len(a.Value), a.Mask != nil)
	w.b = append(w.b, a.Value...)
	if a.Mask != nil {
		w.b = append(w.b, a.Mask...)
	}
	return w.b, nil
}

func decodeRegLoad(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	ofsNbits, hdr := binary.BigEndian.Uint16(p[10:]), binary.BigEndian.Uint32(p[12:])
	f := fieldOfHeader(hdr)
	if f == nil {
		return Action{}, errorf(OFPBAC_BAD_SET_TYPE, "reg_load to unknown field %#x", hdr)
	}
	a := Action{Type: ActLoad, Dst: subfieldOf(f, ofsNbits), Value: bytes.Clone(p[16:24])}
	if err := checkSubfield(a.Dst); err != nil {
		return a, err
	}
	if !f.Writable {
		return a, errorf(OFPBAC_BAD_SET_ARGUMENT, "reg_load to read-only %s", f.Name)
	}
	if val := binary.BigEndian.Uint64(a.Value); a.Dst.NBits < 64 && val>>a.Dst.NBits != 0 {
		return a, errorf(OFPBAC_BAD_ARGUMENT, "reg_load value %#x does not fit %d bits", val, a.Dst.NBits)
	}
	return a, nil
}

func encodeRegLoad(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	if a.Dst.Field == nil || len(a.Value) != 8 || a.Dst.NBits < 1 || a.Dst.NBits > 64 {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "reg_load needs a destination and an 8-byte value")
	}
	b = binary.BigEndian.AppendUint16(b, ofsNBits(a.Dst))
	b = binary.BigEndian.AppendUint32(b, header32(a.Dst.Field))
	return append(b, a.Value...), nil
}

// moveLayout is where each copy-field form keeps n_bits, the offsets and
// the headers.
func moveLayout(raw RawAction) (nbits, hdrs int) {
	switch raw {
	case RawActOFPAT15_COPY_FIELD:
		return 4, 12
	case RawActONFACT13_COPY_FIELD:
		return 12, 20
	}
	return 10, 16
}

func decodeRegMove(p []byte, _ uint8, in *actionInstance, _ int) (Action, error) {
	at, hdrs := moveLayout(in.raw)
	if len(p) < hdrs {
		return Action{}, errorf(OFPBAC_BAD_LEN, "%s of %d bytes", in.raw, len(p))
	}
	nbits := int(binary.BigEndian.Uint16(p[at:]))
	sofs, dofs := int(binary.BigEndian.Uint16(p[at+2:])), int(binary.BigEndian.Uint16(p[at+4:]))
	sf, n1, err := pullHeader(p[hdrs:])
	if err != nil {
		return Action{}, err
	}
	df, n2, err := pullHeader(p[hdrs+n1:])
	if err != nil {
		return Action{}, err
	}
	if !isZero(p[hdrs+n1+n2:]) {
		return Action{}, errorf(NXBRC_MUST_BE_ZERO, "%s padding is not zero", in.raw)
	}
	a := Action{Type: ActMove, Src: Subfield{sf, sofs, nbits}, Dst: Subfield{df, dofs, nbits}}
	if err := checkSubfield(a.Src); err != nil {
		return a, err
	}
	if err := checkSubfield(a.Dst); err != nil {
		return a, err
	}
	if !df.Writable {
		return a, errorf(OFPBAC_BAD_SET_ARGUMENT, "move to read-only %s", df.Name)
	}
	return a, nil
}

func encodeRegMove(b []byte, a *Action, v uint8, in *actionInstance, _ int) ([]byte, error) {
	if a.Src.Field == nil || a.Dst.Field == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "move needs a source and a destination")
	}
	switch in.raw {
	case RawActOFPAT15_COPY_FIELD:
	case RawActONFACT13_COPY_FIELD:
		b = append(b, 0, 0)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(a.Src.NBits))
	b = binary.BigEndian.AppendUint16(b, uint16(a.Src.Ofs))
	b = binary.BigEndian.AppendUint16(b, uint16(a.Dst.Ofs))
	if in.raw == RawActNXAST_REG_MOVE {
		b = putHeader(b, a.Src.Field)
		return putHeader(b, a.Dst.Field), nil
	}
	// The copy_field forms carry the version's own (OXM) headers.
	b = append(b, 0, 0)
	w := nxmWriter{b: b, version: v}
	w.header(a.Src.Field, a.Src.Field.Bytes, false)
	w.header(a.Dst.Field, a.Dst.Field.Bytes, false)
	return w.b, nil
}

func decodeDeleteField(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	f, _, err := pullHeader(p[10:])
	if err != nil {
		return Action{}, err
	}
	return Action{Type: ActDeleteField, Field: f}, nil
}

func encodeDeleteField(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	if a.Field == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "delete_field without a field")
	}
	return putHeader(b, a.Field), nil
}
