package ofp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// This file is the version-independent action list (Open vSwitch's
// ofpacts): instructions decode into Actions in place, and encoding picks
// each action's wire form for the target version.

// Instruction order in an ofpacts list, as Open vSwitch's enum
// ovs_instruction_type: apply-actions first (after meter), goto_table last.
func instOrder(t ActionType, v uint8) int {
	switch t {
	case ActMeter:
		if v >= mf.OF15 {
			return 1
		}
		return 0
	case ActClearActions:
		return 2
	case ActWriteActions:
		return 3
	case ActWriteMetadata:
		return 4
	case ActGotoTable:
		return 5
	}
	return 1 // apply_actions
}

var instNames = [...]string{"meter", "apply_actions", "clear_actions", "write_actions", "write_metadata", "goto_table"}

// verifyOfpacts applies Open vSwitch's ofpacts_verify: instructions in
// order, each at most once (OFPBAC_UNSUPPORTED_ORDER), and conjunction
// only with other conjunctions and notes (NXBAC_BAD_CONJUNCTION).
func verifyOfpacts(acts []Action, v uint8) error {
	last := -1
	hasConj := false
	for i := range acts {
		if acts[i].Type == ActConjunction {
			hasConj = true
		}
	}
	for i := range acts {
		t := acts[i].Type
		if isCTField(writtenField(&acts[i])) {
			return errorf(OFPBAC_BAD_SET_ARGUMENT, "cannot set CT fields outside of ct action")
		}
		if hasConj && t != ActConjunction && t != ActNote {
			return errorf(NXBAC_BAD_CONJUNCTION, "conjunction may be used along with note but not with %s", t)
		}
		o := instOrder(t, v)
		if o == last && o != 1 {
			return errorf(OFPBIC_DUP_INST, "duplicate %s instruction", instNames[o])
		}
		if o < last {
			return errorf(OFPBAC_UNSUPPORTED_ORDER, "%s must appear before %s", instNames[o], instNames[last])
		}
		last = o
	}
	return nil
}

// DecodeOfpacts decodes a flow's actions: for OF1.0 (and NXM flow mods)
// b is an action list; for OF1.1+ with instructions set, b is an
// instruction list whose instructions become Actions of type
// ActGotoTable, ActWriteMetadata, ActClearActions, ActWriteActions
// (Nested) and ActMeter, with apply-actions flattened in place, in Open
// vSwitch's instruction order (as ofpacts_pull_openflow_instructions).
// Errors are Open vSwitch's: OFPBIC_UNKNOWN_INST, OFPBIC_DUP_INST,
// OFPBIC_BAD_LEN, OFPBIC_BAD_EXPERIMENTER, OFPBAC_UNSUPPORTED_ORDER...
func DecodeOfpacts(b []byte, v uint8, instructions bool) ([]Action, error) {
	return decodeOfpacts(b, v, instructions, false)
}

// DecodeOfpactsWithDebug is DecodeOfpacts accepting debug_slow and
// debug_recirc (see DecodeActionsWithDebug).
func DecodeOfpactsWithDebug(b []byte, v uint8, instructions bool) ([]Action, error) {
	return decodeOfpacts(b, v, instructions, true)
}

func decodeOfpacts(b []byte, v uint8, instructions, debug bool) ([]Action, error) {
	if !instructions || v < mf.OF11 {
		acts, err := decodeTopActions(b, v, debug)
		if err != nil {
			return nil, err
		}
		return acts, verifyOfpacts(acts, v)
	}
	var insts [7][]byte // by instruction type, the body after the 4-byte header
	for off := 0; off < len(b); {
		if len(b)-off < 8 {
			return nil, errorf(OFPBIC_BAD_LEN, "partial instruction at offset %d", off)
		}
		typ, n := binary.BigEndian.Uint16(b[off:]), int(binary.BigEndian.Uint16(b[off+2:]))
		if n < 8 || n%8 != 0 || n > len(b)-off {
			return nil, errorf(OFPBIC_BAD_LEN, "instruction %d of length %d at offset %d", typ, n, off)
		}
		switch {
		case typ == 0xffff:
			return nil, errorf(OFPBIC_BAD_EXPERIMENTER, "experimenter instruction at offset %d", off)
		case typ < InstGotoTable || typ > InstMeter: // Open vSwitch takes meter from OF1.1 on
			return nil, errorf(OFPBIC_UNKNOWN_INST, "instruction type %d in version %#x", typ, v)
		case insts[typ] != nil:
			return nil, errorf(OFPBIC_DUP_INST, "duplicate instruction type %d", typ)
		}
		want := map[uint16]int{InstGotoTable: 8, InstWriteMetadata: 24, InstMeter: 8, InstClearActions: 8}[typ]
		if want != 0 && n != want {
			return nil, errorf(OFPBIC_BAD_LEN, "instruction %d of length %d, want %d", typ, n, want)
		}
		insts[typ] = b[off+4 : off+n]
		off += n
	}
	size := countActions(insts[InstApplyActions][min(4, len(insts[InstApplyActions])):])
	for _, t := range []uint16{InstMeter, InstClearActions, InstWriteActions, InstWriteMetadata, InstGotoTable} {
		if insts[t] != nil {
			size++
		}
	}
	var out []Action
	if size > 0 {
		out = make([]Action, 0, size) // rules keep it: no slack
	}
	if p := insts[InstMeter]; p != nil {
		a := Action{Type: ActMeter, Arg: uint64(binary.BigEndian.Uint32(p))}
		if v >= mf.OF15 {
			a.Raw = RawActOFPAT15_METER // OpenFlow 1.5 deprecates the instruction for this action
		}
		out = append(out, a)
	}
	if p := insts[InstApplyActions]; p != nil {
		start := len(out)
		var err error
		if out, err = appendDecodedActions(out, p[4:], v, 0); err != nil {
			return nil, err
		}
		if err := refuseDebugActions(out[start:], debug); err != nil {
			return nil, err
		}
	}
	if insts[InstClearActions] != nil {
		out = append(out, Action{Type: ActClearActions})
	}
	if p := insts[InstWriteActions]; p != nil {
		acts, err := decodeTopActions(p[4:], v, debug)
		if err != nil {
			return nil, err
		}
		for i := range acts {
			if !inActionSet(acts[i].Type) {
				return nil, errorf(OFPBAC_BAD_TYPE, "%s is not allowed in an action set", acts[i].Type)
			}
		}
		out = append(out, Action{Type: ActWriteActions, Nested: acts})
	}
	if p := insts[InstWriteMetadata]; p != nil {
		out = append(out, Action{Type: ActWriteMetadata, Arg: binary.BigEndian.Uint64(p[4:]), Arg2: binary.BigEndian.Uint64(p[12:])})
	}
	if p := insts[InstGotoTable]; p != nil {
		out = append(out, Action{Type: ActGotoTable, Table: p[0]})
	}
	return out, verifyOfpacts(out, v)
}

// AppendOfpacts encodes acts for version v: as an action list for OF1.0
// and NXM flow mods (instructions false), as instructions for OF1.1+
// (ofpacts_put_openflow_instructions): runs of actions become one
// apply-actions instruction. Each action keeps its Raw form when v has
// it, else takes Open vSwitch's canonical form for v (see wireForms), so
// a flow added in OF1.0 dumps in OF1.5 as Open vSwitch would send it.
func AppendOfpacts(b []byte, acts []Action, v uint8, instructions bool) ([]byte, error) {
	var e ActionEncoder
	return e.AppendOfpacts(b, acts, v, instructions)
}

// AppendOfpacts is the package's AppendOfpacts with e's buffers.
func (e *ActionEncoder) AppendOfpacts(b []byte, acts []Action, v uint8, instructions bool) ([]byte, error) {
	e.reset()
	if err := verifyOfpacts(acts, v); err != nil {
		return b, err
	}
	start := len(b)
	if !instructions || v < mf.OF11 {
		for i := range acts {
			if acts[i].Type.IsInstruction(v) && v != mf.OF10 && acts[i].Type != ActMeter {
				return b, errorf(OFPBIC_UNSUP_INST, "%s in an action list for version %#x", acts[i].Type, v)
			}
		}
		return e.appendList(b, acts, v, 0)
	}
	for i := 0; i < len(acts); {
		a := &acts[i]
		var err error
		switch a.Type {
		case ActMeter:
			if v < mf.OF15 { // Open vSwitch decodes the instruction from OF1.1 on
				b = binary.BigEndian.AppendUint16(b, InstMeter)
				b = binary.BigEndian.AppendUint16(b, 8)
				b = binary.BigEndian.AppendUint32(b, uint32(a.Arg))
				i++
				continue
			}
		case ActClearActions:
			b = append(b, 0, InstClearActions, 0, 8, 0, 0, 0, 0)
			i++
			continue
		case ActWriteActions:
			at := len(b)
			b = append(b, 0, InstWriteActions, 0, 0, 0, 0, 0, 0)
			if b, err = e.appendList(b, a.Nested, v, 0); err != nil {
				return b[:start], err
			}
			if len(b)-at > 0xffff {
				return b[:start], errorf(OFPBIC_BAD_LEN, "write_actions of %d bytes", len(b)-at)
			}
			binary.BigEndian.PutUint16(b[at+2:], uint16(len(b)-at))
			i++
			continue
		case ActWriteMetadata:
			b = append(b, 0, InstWriteMetadata, 0, 24, 0, 0, 0, 0)
			b = binary.BigEndian.AppendUint64(b, a.Arg)
			b = binary.BigEndian.AppendUint64(b, a.Arg2)
			i++
			continue
		case ActGotoTable:
			b = append(b, 0, InstGotoTable, 0, 8, a.Table, 0, 0, 0)
			i++
			continue
		}
		// A run of actions: one apply-actions instruction.
		at := len(b)
		b = append(b, 0, InstApplyActions, 0, 0, 0, 0, 0, 0)
		for ; i < len(acts) && !acts[i].Type.IsInstruction(v); i++ {
			if b, err = e.appendAction(b, &acts[i], v, 0); err != nil {
				return b[:start], err
			}
		}
		if len(b)-at > 0xffff {
			return b[:start], errorf(OFPBIC_BAD_LEN, "apply_actions of %d bytes", len(b)-at)
		}
		binary.BigEndian.PutUint16(b[at+2:], uint16(len(b)-at))
	}
	return b, nil
}

// ValidateOfpacts applies Open vSwitch's checks that need the flow's
// match (ofpacts_check_consistency) for an OpenFlow 1.1+ connection; see
// ValidateOfpactsVersion.
func ValidateOfpacts(acts []Action, m *mf.Match, maxPorts uint32, tableID uint8, nTables uint8) error {
	return ValidateOfpactsVersion(mf.OF13, acts, m, maxPorts, tableID, nTables)
}

// ValidateOfpactsVersion checks acts against the flow's match m for a
// flow mod received in version v, as Open vSwitch's
// ofpacts_check_consistency: fields read or written need their
// prerequisites (OFPBAC_MATCH_INCONSISTENT), outputs a valid port
// (OFPBAC_BAD_OUT_PORT), goto_table a later existing table
// (OFPBIC_BAD_TABLE_ID; tableID 255 means unknown, nTables 255 all of
// 0..254), meters a valid id (OFPMMFC_INVALID_METER). The
// OpenFlow 1.0 set actions (mod_nw_src on a non-IP flow, ...) are only
// accepted in OpenFlow 1.0, where they are no-ops on such packets. It
// records in each action the flow context its cross-version encodings
// need (FlowHasVLAN, FlowIPProto), so acts must be addressable.
func ValidateOfpactsVersion(v uint8, acts []Action, m *mf.Match, maxPorts uint32, tableID uint8, nTables uint8) error {
	c := checker{m: m, v: v, maxPorts: maxPorts, table: tableID, nTables: nTables}
	return c.check(acts, 0)
}

type checker struct {
	// m is the match as the actions so far leave the packet (push_vlan,
	// pop_mpls, ...): the caller's until an action changes it, then a
	// copy the checker owns (most lists change nothing, and a Match is a
	// kilobyte that every flow_mod would otherwise copy to the heap).
	m        *mf.Match
	owned    bool
	v        uint8
	maxPorts uint32
	table    uint8
	nTables  uint8
}

var errInconsistent = func(what string) error {
	return errorf(OFPBAC_MATCH_INCONSISTENT, "%s is inconsistent with the flow's match", what)
}

func (c *checker) sub(sf Subfield, what string) error {
	if err := checkSubfield(sf); err != nil {
		return err
	}
	if !c.m.PrereqsOK(sf.Field) {
		return errInconsistent(what + " " + sf.Field.Name)
	}
	return nil
}

// ErrOnlyOF10 is wrapped by the OFPBAC_MATCH_INCONSISTENT errors that
// OpenFlow 1.0 tolerates (its set actions are no-ops on packets they do
// not apply to): ovs-ofctl reports them as "usable only in OpenFlow 1.0".
var ErrOnlyOF10 = errors.New("usable only in OpenFlow 1.0")

// soft is an inconsistency Open vSwitch tolerates only in OpenFlow 1.0.
func (c *checker) soft(ok bool, what string) error {
	if ok || c.v == mf.OF10 {
		return nil
	}
	return &Error{Code: OFPBAC_MATCH_INCONSISTENT, Err: fmt.Errorf("%s is inconsistent with the flow's match: %w", what, ErrOnlyOF10)}
}

func (c *checker) ethType() uint16 {
	if c.m.Mask.EthType != 0xffff {
		return 0
	}
	return c.m.Flow.EthType
}

func (c *checker) isIP() bool { t := c.ethType(); return t == 0x0800 || t == 0x86dd }

func (c *checker) nwProto() uint8 {
	if c.m.Mask.NwProto != 0xff || !c.isIP() {
		return 0
	}
	return c.m.Flow.NwProto
}

func (c *checker) hasVLAN() bool {
	tci := mf.ByID(mf.IDVLANTCI)
	var val, mask [2]byte
	c.m.Get(tci, val[:], mask[:])
	return val[0]&0x10 != 0
}

func (c *checker) setVLAN(present bool) {
	tci := mf.ByID(mf.IDVLANTCI)
	var val, mask [2]byte
	c.m.Get(tci, val[:], mask[:])
	if present {
		val[0] |= 0x10
		mask[0] |= 0x10
	} else {
		val, mask = [2]byte{}, [2]byte{0xff, 0xff}
	}
	_ = c.mutable().SetMasked(tci, val[:], mask[:]) // width matches
}

func (c *checker) setEthType(t uint16) {
	_ = c.mutable().SetMasked(mf.ByID(mf.IDEthType), []byte{byte(t >> 8), byte(t)}, nil)
}

// mutable returns c.m, copied first unless the checker owns it.
func (c *checker) mutable() *mf.Match {
	if !c.owned {
		cp := *c.m
		c.m, c.owned = &cp, true
	}
	return c.m
}

func (c *checker) check(acts []Action, depth int) error {
	if depth > maxNesting {
		return errorf(OFPBAC_BAD_ARGUMENT, "actions nested more than %d deep", maxNesting)
	}
	for i := range acts {
		if err := c.check1(&acts[i], depth); err != nil {
			return fmt.Errorf("action %d (%s): %w", i, acts[i].Type, err)
		}
	}
	return nil
}
