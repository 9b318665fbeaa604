package ofp

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// ActionType is the version-independent kind of an action, as Open
// vSwitch's enum ofpact_type. This is the start of the action codec: the
// kinds below are decoded into fields; every other action that the raw
// action table knows is checked (version, length) and kept as ActRaw with
// its bytes, so action lists round-trip.
type ActionType uint8

// Action kinds.
const (
	ActRaw      ActionType = iota // not decoded yet: Data holds the wire action
	ActOutput                     // output:Port (MaxLen for the controller)
	ActResubmit                   // resubmit(Port,Table[,ct])
	ActSetField                   // set_field:Value[/Mask]->Field
	ActLoad                       // load:Value->Dst[...] (NXAST_REG_LOAD)
	ActMove                       // move:Src[...]->Dst[...]
	ActCT                         // ct(...)
	ActCTClear                    // ct_clear
)

// RawAction identifies an action's wire encoding, as Open vSwitch's enum
// ofp_raw_action_type (action_table.go).
type RawAction uint16

func (r RawAction) String() string {
	if r > 0 && r < numRawActions {
		return rawActionNames[r]
	}
	return fmt.Sprintf("RawAction(%d)", uint16(r))
}

// actionInstance is one (vendor, code, version range) encoding of a raw
// action with its length rules.
type actionInstance struct {
	raw            RawAction
	vendor         uint32
	code           uint16
	minVer, maxVer uint8
	minLen, maxLen int
	argOfs, argLen int // offset and size of a scalar argument, if any
	deprecated     bool
}

type actionKey struct {
	vendor  uint32
	code    uint16
	version uint8
}

type rawVersion struct {
	raw     RawAction
	version uint8
}

// Indexes over actionInstances; read-only after initialisation.
var actionByWire, actionByRaw = func() (map[actionKey]*actionInstance, map[rawVersion]*actionInstance) {
	w, r := map[actionKey]*actionInstance{}, map[rawVersion]*actionInstance{}
	for i := range actionInstances {
		in := &actionInstances[i]
		for v := in.minVer; v <= in.maxVer; v++ {
			w[actionKey{in.vendor, in.code, v}] = in
			r[rawVersion{in.raw, v}] = in
		}
	}
	return w, r
}()

// Subfield is a bit range of a field, as NXM_NX_REG0[0..15].
type Subfield struct {
	Field *mf.Field
	Ofs   int
	NBits int
}

// CT is the body of a ct() action.
type CT struct {
	Flags   uint16   // NX_CT_F_*: commit 1, force 2
	ZoneSrc Subfield // zone from a field, if Field is not nil
	ZoneImm uint16   // immediate zone otherwise
	Table   uint8    // recirculation table, 255 for none
	Alg     uint16
	Actions []Action // exec(...) and nat(...)
}

// Action is one decoded action. Raw is the wire encoding it came from (or
// is to be encoded as); encoding uses it, so decoded lists re-encode byte
// for byte.
type Action struct {
	Type   ActionType
	Raw    RawAction
	Port   uint32 // output (16-bit form in OF1.0); resubmit in_port
	MaxLen uint16 // output
	Table  uint8  // resubmit table (255: the current one)
	Field  *mf.Field
	Value  []byte // set_field value (field width) or load value (8 bytes), network order
	Mask   []byte // set_field mask (OF1.5), nil if exact
	Src    Subfield
	Dst    Subfield
	CT     *CT
	Data   []byte // ActRaw: the whole wire action
}

// Standard and vendor action header fields.
const (
	ofpatVendor   = 0xffff
	actHeaderLen  = 8  // ofp_action_header
	extHeaderLen  = 16 // ext_action_header (Nicira/ONF)
	maxActionsLen = 65528
)

// DecodeActions decodes an action list for wire version v, with Open
// vSwitch's checks and errors: a list not a multiple of 8 bytes is
// OFPBRC_BAD_LEN; an unknown action OFPBAC_BAD_TYPE, OFPBAC_BAD_VENDOR or
// OFPBAC_BAD_VENDOR_TYPE; a length outside the action's range
// OFPBAC_BAD_LEN.
func DecodeActions(b []byte, v uint8) ([]Action, error) {
	if len(b)%8 != 0 {
		return nil, errorf(OFPBRC_BAD_LEN, "actions length %d is not a multiple of 8", len(b))
	}
	var out []Action
	for off := 0; off < len(b); {
		p := b[off:]
		in, err := lookupAction(p, v)
		if err != nil {
			return nil, fmt.Errorf("action at offset %d: %w", off, err)
		}
		n := int(binary.BigEndian.Uint16(p[2:]))
		switch {
		case n > len(p):
			err = errorf(OFPBAC_BAD_LEN, "%s length %d exceeds the %d bytes left", in.raw, n, len(p))
		case n < in.minLen || n > in.maxLen:
			err = errorf(OFPBAC_BAD_LEN, "%s length %d not in [%d,%d]", in.raw, n, in.minLen, in.maxLen)
		case n%8 != 0:
			err = errorf(OFPBAC_BAD_LEN, "%s length %d is not a multiple of 8", in.raw, n)
		}
		if err != nil {
			return nil, fmt.Errorf("action at offset %d: %w", off, err)
		}
		a := Action{Type: ActRaw, Raw: in.raw}
		if dec := actionDecoders[in.raw]; dec != nil {
			if a, err = dec(p[:n], v, in); err != nil {
				return nil, fmt.Errorf("%s at offset %d: %w", in.raw, off, err)
			}
			a.Raw = in.raw
		} else {
			a.Data = bytes.Clone(p[:n])
		}
		out = append(out, a)
		off += n
	}
	return out, nil
}

func lookupAction(p []byte, v uint8) (*actionInstance, error) {
	if len(p) < actHeaderLen {
		return nil, errorf(OFPBAC_BAD_LEN, "%d bytes left for an action", len(p))
	}
	k := actionKey{code: binary.BigEndian.Uint16(p), version: v}
	if k.code == ofpatVendor {
		k.vendor = binary.BigEndian.Uint32(p[4:])
		if k.vendor != VendorNicira && k.vendor != VendorONF {
			return nil, errorf(OFPBAC_BAD_VENDOR, "action vendor %#x", k.vendor)
		}
		if len(p) < extHeaderLen {
			return nil, errorf(OFPBAC_BAD_LEN, "%d bytes left for a vendor action", len(p))
		}
		k.code = binary.BigEndian.Uint16(p[8:])
	}
	in := actionByWire[k]
	if in == nil {
		if k.vendor != 0 {
			return nil, errorf(OFPBAC_BAD_VENDOR_TYPE, "vendor %#x action %d in version %#x", k.vendor, k.code, v)
		}
		return nil, errorf(OFPBAC_BAD_TYPE, "action type %d in version %#x", k.code, v)
	}
	return in, nil
}

type actionDecoder func(p []byte, v uint8, in *actionInstance) (Action, error)
type actionEncoder func(b []byte, a *Action, v uint8) ([]byte, error)

// Typed action codecs, by raw action. They are filled in init (the ct
// codecs recurse through the list codecs) and read-only afterwards.
var (
	actionDecoders map[RawAction]actionDecoder
	actionEncoders map[RawAction]actionEncoder
)

func init() {
	ctClear := func([]byte, uint8, *actionInstance) (Action, error) { return Action{Type: ActCTClear}, nil }
	actionDecoders = map[RawAction]actionDecoder{
		RawActOFPAT10_OUTPUT:          decodeOutput,
		RawActOFPAT11_OUTPUT:          decodeOutput,
		RawActOFPAT12_SET_FIELD:       decodeSetField,
		RawActOFPAT15_SET_FIELD:       decodeSetField,
		RawActNXAST_RESUBMIT:          decodeResubmit,
		RawActNXAST_RESUBMIT_TABLE:    decodeResubmit,
		RawActNXAST_RESUBMIT_TABLE_CT: decodeResubmit,
		RawActNXAST_REG_LOAD:          decodeRegLoad,
		RawActNXAST_REG_MOVE:          decodeRegMove,
		RawActNXAST_CT:                decodeCT,
		RawActNXAST_CT_CLEAR:          ctClear,
	}
	actionEncoders = map[RawAction]actionEncoder{
		RawActOFPAT10_OUTPUT:          encodeOutput,
		RawActOFPAT11_OUTPUT:          encodeOutput,
		RawActOFPAT12_SET_FIELD:       encodeSetField,
		RawActOFPAT15_SET_FIELD:       encodeSetField,
		RawActNXAST_RESUBMIT:          encodeResubmit,
		RawActNXAST_RESUBMIT_TABLE:    encodeResubmit,
		RawActNXAST_RESUBMIT_TABLE_CT: encodeResubmit,
		RawActNXAST_REG_LOAD:          encodeRegLoad,
		RawActNXAST_REG_MOVE:          encodeRegMove,
		RawActNXAST_CT:                encodeCT,
		RawActNXAST_CT_CLEAR:          func(b []byte, _ *Action, _ uint8) ([]byte, error) { return b, nil },
	}
}

func decodeOutput(p []byte, v uint8, _ *actionInstance) (Action, error) {
	if v == 1 {
		return Action{Type: ActOutput, Port: uint32(binary.BigEndian.Uint16(p[4:])), MaxLen: binary.BigEndian.Uint16(p[6:])}, nil
	}
	return Action{Type: ActOutput, Port: binary.BigEndian.Uint32(p[4:]), MaxLen: binary.BigEndian.Uint16(p[8:])}, nil
}

func encodeOutput(b []byte, a *Action, v uint8) ([]byte, error) {
	if v == 1 {
		b = binary.BigEndian.AppendUint16(b, uint16(a.Port))
		return binary.BigEndian.AppendUint16(b, a.MaxLen), nil
	}
	b = binary.BigEndian.AppendUint32(b, a.Port)
	return binary.BigEndian.AppendUint16(b, a.MaxLen), nil
}

func decodeSetField(p []byte, v uint8, _ *actionInstance) (Action, error) {
	oxm := p[4:]
	n := 4 + int(oxm[3]) // for experimenter OXMs the length counts the ID
	if n > len(oxm) || pad8(4+n) != len(p) {
		return Action{}, errorf(OFPBAC_BAD_SET_LEN, "set_field OXM of %d bytes in a %d-byte action", n, len(p))
	}
	h := binary.BigEndian.Uint32(oxm)
	var exp uint32
	if uint16(h>>16) == mf.ClassExperimenter && n >= 8 {
		exp = binary.BigEndian.Uint32(oxm[4:])
	}
	f := mf.Std.ByHeader(uint16(h>>16), uint8(h>>9&0x7f), exp)
	if f == nil {
		return Action{}, errorf(OFPBAC_BAD_SET_TYPE, "set_field of unknown OXM %#x", h)
	}
	var m mf.Match
	if err := DecodeNXM(oxm[:n], false, &m, nil); err != nil || m.IsWild(f) {
		return Action{}, errorf(OFPBAC_BAD_SET_ARGUMENT, "set_field %s: %v", f.Name, err)
	}
	w := m.Width(f)
	a := Action{Type: ActSetField, Field: f, Value: make([]byte, w)}
	mask := make([]byte, w)
	m.Get(f, a.Value, mask)
	if h>>8&1 == 1 {
		a.Mask = mask
	}
	return a, nil
}

func encodeSetField(b []byte, a *Action, v uint8) ([]byte, error) {
	var m mf.Match
	if a.Field == nil {
		return b, errorf(OFPBAC_BAD_SET_TYPE, "set_field without a field")
	}
	if err := m.SetMasked(a.Field, a.Value, a.Mask); err != nil {
		return b, errorf(OFPBAC_BAD_SET_ARGUMENT, "set_field %s: %v", a.Field.Name, err)
	}
	w := nxmWriter{b: b, version: v}
	w.header(a.Field, len(a.Value), a.Mask != nil)
	w.b = append(w.b, a.Value...)
	if a.Mask != nil {
		w.b = append(w.b, a.Mask...)
	}
	return w.b, nil
}

func decodeResubmit(p []byte, _ uint8, in *actionInstance) (Action, error) {
	a := Action{Type: ActResubmit, Port: uint32(binary.BigEndian.Uint16(p[10:])), Table: p[12]}
	if in.raw == RawActNXAST_RESUBMIT {
		a.Table = 255
	}
	return a, nil
}

func encodeResubmit(b []byte, a *Action, _ uint8) ([]byte, error) {
	b = binary.BigEndian.AppendUint16(b, uint16(a.Port))
	if a.Raw == RawActNXAST_RESUBMIT {
		return b, nil
	}
	return append(b, a.Table), nil
}

func decodeRegLoad(p []byte, _ uint8, _ *actionInstance) (Action, error) {
	ofsNBits, hdr := binary.BigEndian.Uint16(p[10:]), binary.BigEndian.Uint32(p[12:])
	f := fieldOfHeader(hdr)
	if f == nil {
		return Action{}, errorf(OFPBAC_BAD_SET_TYPE, "reg_load to unknown field %#x", hdr)
	}
	return Action{Type: ActLoad, Dst: Subfield{f, int(ofsNBits >> 6), int(ofsNBits&0x3f) + 1},
		Value: bytes.Clone(p[16:24])}, nil
}

func encodeRegLoad(b []byte, a *Action, _ uint8) ([]byte, error) {
	if a.Dst.Field == nil || len(a.Value) != 8 || a.Dst.NBits < 1 || a.Dst.NBits > 64 {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "reg_load needs a destination and an 8-byte value")
	}
	b = binary.BigEndian.AppendUint16(b, uint16(a.Dst.Ofs<<6|(a.Dst.NBits-1)))
	b = binary.BigEndian.AppendUint32(b, header32(a.Dst.Field))
	return append(b, a.Value...), nil
}

func decodeRegMove(p []byte, _ uint8, in *actionInstance) (Action, error) {
	nbits, sofs, dofs := binary.BigEndian.Uint16(p[10:]), binary.BigEndian.Uint16(p[12:]), binary.BigEndian.Uint16(p[14:])
	if len(p) != 24 {
		// Experimenter (8-byte) headers: kept raw until decoded.
		return Action{Type: ActRaw, Data: bytes.Clone(p)}, nil
	}
	src, dst := binary.BigEndian.Uint32(p[16:]), binary.BigEndian.Uint32(p[20:])
	sf, df := fieldOfHeader(src), fieldOfHeader(dst)
	if sf == nil || df == nil {
		return Action{}, errorf(OFPBAC_BAD_SET_TYPE, "move between unknown fields %#x, %#x", src, dst)
	}
	return Action{Type: ActMove, Src: Subfield{sf, int(sofs), int(nbits)}, Dst: Subfield{df, int(dofs), int(nbits)}}, nil
}

func encodeRegMove(b []byte, a *Action, _ uint8) ([]byte, error) {
	if a.Src.Field == nil || a.Dst.Field == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "move needs a source and a destination")
	}
	b = binary.BigEndian.AppendUint16(b, uint16(a.Src.NBits))
	b = binary.BigEndian.AppendUint16(b, uint16(a.Src.Ofs))
	b = binary.BigEndian.AppendUint16(b, uint16(a.Dst.Ofs))
	b = binary.BigEndian.AppendUint32(b, header32(a.Src.Field))
	return binary.BigEndian.AppendUint32(b, header32(a.Dst.Field)), nil
}

func decodeCT(p []byte, v uint8, _ *actionInstance) (Action, error) {
	c := &CT{Flags: binary.BigEndian.Uint16(p[10:])}
	zsrc, zone := binary.BigEndian.Uint32(p[12:]), binary.BigEndian.Uint16(p[16:])
	if zsrc != 0 {
		f := fieldOfHeader(zsrc)
		if f == nil {
			return Action{}, errorf(OFPBAC_BAD_SET_TYPE, "ct zone from unknown field %#x", zsrc)
		}
		c.ZoneSrc = Subfield{f, int(zone >> 6), int(zone&0x3f) + 1}
	} else {
		c.ZoneImm = zone
	}
	c.Table, c.Alg = p[18], binary.BigEndian.Uint16(p[22:])
	nested, err := DecodeActions(p[24:], v)
	if err != nil {
		return Action{}, err
	}
	c.Actions = nested
	return Action{Type: ActCT, CT: c}, nil
}

func encodeCT(b []byte, a *Action, v uint8) ([]byte, error) {
	c := a.CT
	if c == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "ct without its body")
	}
	b = binary.BigEndian.AppendUint16(b, c.Flags)
	if c.ZoneSrc.Field != nil {
		b = binary.BigEndian.AppendUint32(b, header32(c.ZoneSrc.Field))
		b = binary.BigEndian.AppendUint16(b, uint16(c.ZoneSrc.Ofs<<6|(c.ZoneSrc.NBits-1)))
	} else {
		b = binary.BigEndian.AppendUint32(b, 0)
		b = binary.BigEndian.AppendUint16(b, c.ZoneImm)
	}
	b = append(b, c.Table, 0, 0, 0)
	b = binary.BigEndian.AppendUint16(b, c.Alg)
	return AppendActions(b, c.Actions, v)
}

// fieldOfHeader finds the field of a 32-bit NXM/OXM header (as in
// reg_load/reg_move/ct zone); the header's length must be the field's.
func fieldOfHeader(h uint32) *mf.Field {
	f := mf.Std.ByHeader(uint16(h>>16), uint8(h>>9&0x7f), 0)
	if f == nil || (!f.Variable && int(h&0xff) != f.Bytes) {
		return nil
	}
	return f
}

// header32 is the NXM-preferred 32-bit header of f, as reg_load and
// reg_move carry.
func header32(f *mf.Field) uint32 {
	h, _ := f.HeaderFor(0)
	return uint32(h.Class)<<16 | uint32(h.Field)<<9 | uint32(f.Bytes)
}

// AppendActions encodes actions for wire version v. Each action is
// encoded in its Raw form, which must exist in v.
func AppendActions(b []byte, acts []Action, v uint8) ([]byte, error) {
	for i := range acts {
		a := &acts[i]
		start := len(b)
		if a.Type == ActRaw {
			b = append(b, a.Data...)
			continue
		}
		in := actionByRaw[rawVersion{a.Raw, v}]
		enc := actionEncoders[a.Raw]
		if in == nil || enc == nil {
			return b[:start], errorf(OFPBAC_BAD_TYPE, "%s cannot be encoded in version %#x", a.Raw, v)
		}
		if in.vendor == 0 {
			b = binary.BigEndian.AppendUint16(b, in.code)
			b = append(b, 0, 0)
		} else {
			b = append(b, 0xff, 0xff, 0, 0)
			b = binary.BigEndian.AppendUint32(b, in.vendor)
			b = binary.BigEndian.AppendUint16(b, in.code)
		}
		var err error
		if b, err = enc(b, a, v); err != nil {
			return b[:start], err
		}
		n := len(b) - start
		b = appendZeros(b, max(pad8(n), in.minLen)-n)
		n = len(b) - start
		if n > in.maxLen {
			return b[:start], errorf(OFPBAC_BAD_LEN, "%s of %d bytes", a.Raw, n)
		}
		binary.BigEndian.PutUint16(b[start+2:], uint16(n))
	}
	return b, nil
}

// Instruction types (OF1.1+).
const (
	InstGotoTable     = 1
	InstWriteMetadata = 2
	InstWriteActions  = 3
	InstApplyActions  = 4
	InstClearActions  = 5
	InstMeter         = 6
)

// Instruction is one OF1.1+ instruction. Actions holds the list of write
// and apply instructions; other instructions keep their body (after the
// 4-byte header) in Data.
type Instruction struct {
	Type    uint16
	Actions []Action
	Data    []byte
}

// DecodeInstructions decodes an OF1.1+ instruction list.
func DecodeInstructions(b []byte, v uint8) ([]Instruction, error) {
	var out []Instruction
	for off := 0; off < len(b); {
		if len(b)-off < 4 {
			return nil, errorf(OFPBIC_BAD_LEN, "partial instruction at offset %d", off)
		}
		typ, n := binary.BigEndian.Uint16(b[off:]), int(binary.BigEndian.Uint16(b[off+2:]))
		if n < 8 || n%8 != 0 || n > len(b)-off {
			return nil, errorf(OFPBIC_BAD_LEN, "instruction %d of length %d at offset %d", typ, n, off)
		}
		in := Instruction{Type: typ}
		body := b[off+4 : off+n]
		if typ == InstApplyActions || typ == InstWriteActions {
			acts, err := DecodeActions(body[4:], v)
			if err != nil {
				return nil, err
			}
			in.Actions = acts
		} else {
			in.Data = bytes.Clone(body)
		}
		out = append(out, in)
		off += n
	}
	return out, nil
}

// AppendInstructions encodes an OF1.1+ instruction list.
func AppendInstructions(b []byte, ins []Instruction, v uint8) ([]byte, error) {
	for _, in := range ins {
		start := len(b)
		b = binary.BigEndian.AppendUint16(b, in.Type)
		b = append(b, 0, 0)
		if in.Type == InstApplyActions || in.Type == InstWriteActions {
			b = append(b, 0, 0, 0, 0)
			var err error
			if b, err = AppendActions(b, in.Actions, v); err != nil {
				return b[:start], err
			}
		} else {
			b = append(b, in.Data...)
		}
		if len(b)-start > 0xffff {
			return b[:start], errorf(OFPBIC_BAD_LEN, "instruction of %d bytes", len(b)-start)
		}
		binary.BigEndian.PutUint16(b[start+2:], uint16(len(b)-start))
	}
	return b, nil
}
