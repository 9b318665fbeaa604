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
	var out []Action
	if p := insts[InstMeter]; p != nil {
		a := Action{Type: ActMeter, Arg: uint64(binary.BigEndian.Uint32(p))}
		if v >= mf.OF15 {
			a.Raw = RawActOFPAT15_METER // OpenFlow 1.5 deprecates the instruction for this action
		}
		out = append(out, a)
	}
	if p := insts[InstApplyActions]; p != nil {
		acts, err := decodeTopActions(p[4:], v, debug)
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
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
			if !inActionSet[acts[i].Type] {
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
		return AppendActions(b, acts, v)
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
			if b, err = AppendActions(b, a.Nested, v); err != nil {
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
			if b, err = appendAction(b, &acts[i], v, 0); err != nil {
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

// wireForms returns the wire actions (each with a Raw that v has) that
// encode a in version v, following Open vSwitch's encode_* choices. The
// result may be empty where Open vSwitch silently drops an action that v
// cannot express (enqueue after OF1.0, mod_nw_ttl/mod_nw_ecn/push_vlan in
// OF1.0, meter before OF1.3, clear/write_actions in OF1.0).
func wireForms(a *Action, v uint8) ([]Action, error) {
	w := *a
	one := func(r RawAction) ([]Action, error) {
		if actionByRaw[rawVersion{r, v}] == nil {
			return nil, errorf(OFPBAC_BAD_TYPE, "%s (%s) cannot be encoded in version %#x", a.Type, r, v)
		}
		w.Raw = r
		return []Action{w}, nil
	}
	has := func(r RawAction) bool { return r != 0 && actionByRaw[rawVersion{r, v}] != nil }
	pre12 := v < mf.OF12
	switch a.Type {
	case ActOutput:
		if v == mf.OF10 {
			return one(RawActOFPAT10_OUTPUT)
		}
		return one(RawActOFPAT11_OUTPUT)
	case ActResubmit:
		switch {
		case a.Raw == RawActNXAST_RESUBMIT_TABLE_CT:
			return one(a.Raw)
		case a.Raw == RawActNXAST_RESUBMIT && a.Table == 0xff:
			return one(RawActNXAST_RESUBMIT)
		}
		return one(RawActNXAST_RESUBMIT_TABLE)
	case ActSetField:
		return setFieldForms(a, v)
	case ActLoad:
		if v >= mf.OF15 {
			sf, err := loadToSetField(a)
			if err != nil {
				return nil, err
			}
			return setFieldForms(&sf, v)
		}
		return one(RawActNXAST_REG_LOAD)
	case ActMove:
		switch {
		case v == mf.OF13 && a.Raw == RawActONFACT13_COPY_FIELD:
			return one(a.Raw)
		case v <= mf.OF14:
			return one(RawActNXAST_REG_MOVE)
		}
		return one(RawActOFPAT15_COPY_FIELD)
	case ActController:
		c := a.Controller
		if c == nil {
			return nil, errorf(OFPBAC_BAD_ARGUMENT, "controller without its body")
		}
		if len(c.Userdata) > 0 || c.Pause || c.MeterID != NoMeter || a.Raw == RawActNXAST_CONTROLLER2 {
			return one(RawActNXAST_CONTROLLER2)
		}
		return one(RawActNXAST_CONTROLLER)
	case ActEnqueue:
		if v != mf.OF10 { // set_queue, output, pop_queue, as Open vSwitch
			return []Action{{Type: ActSetQueue, Raw: RawActOFPAT_SET_QUEUE, Arg: a.Arg},
				{Type: ActOutput, Raw: RawActOFPAT11_OUTPUT, Port: a.Port, MaxLen: 0xffff}, {Type: ActPopQueue, Raw: RawActNXAST_POP_QUEUE}}, nil
		}
	case ActMeter:
		if v < mf.OF15 {
			return nil, nil // an instruction (AppendOfpacts) before OpenFlow 1.5
		}
	case ActDecTTL:
		if a.Raw == RawActNXAST_DEC_TTL_CNT_IDS || len(a.IDs) != 1 || a.IDs[0] != 0 {
			return one(RawActNXAST_DEC_TTL_CNT_IDS)
		}
		return one(RawActOFPAT_DEC_NW_TTL)
	case ActSetNWTTL:
		if v == mf.OF10 { // OpenFlow 1.0 has no set-TTL: a reg_load
			return []Action{loadOf(mf.IDIPTTL, a.Arg)}, nil
		}
	case ActSetMPLSLabel, ActSetMPLSTC:
		if !pre12 {
			id := mf.IDMPLSLabel
			if a.Type == ActSetMPLSTC {
				id = mf.IDMPLSTC
			}
			return setFieldForms(exactSetField(id, a.Arg), v)
		}
	case ActPushVLAN:
		if v == mf.OF10 {
			return nil, nil // implied by the mod_vlan_vid/pcp that follows
		}
		return one(RawActOFPAT11_PUSH_VLAN)
	case ActStripVLAN:
		if v == mf.OF10 {
			return one(RawActOFPAT10_STRIP_VLAN)
		}
		return one(RawActOFPAT11_POP_VLAN)
	case ActSetVLANVID, ActSetVLANPCP:
		var out []Action
		if v > mf.OF10 && a.PushVLANIfNeeded && !a.FlowHasVLAN {
			out = append(out, Action{Type: ActPushVLAN, Raw: RawActOFPAT11_PUSH_VLAN, Arg: 0x8100})
		}
		vid := a.Type == ActSetVLANVID
		var r RawAction
		switch {
		case v == mf.OF10 && vid:
			r = RawActOFPAT10_SET_VLAN_VID
		case v == mf.OF10:
			r = RawActOFPAT10_SET_VLAN_PCP
		case v == mf.OF11 && vid:
			r = RawActOFPAT11_SET_VLAN_VID
		case v == mf.OF11:
			r = RawActOFPAT11_SET_VLAN_PCP
		case vid:
			sf, err := setFieldForms(exactSetField(mf.IDVLANVID, a.Arg|0x1000), v)
			return append(out, sf...), err
		default:
			sf, err := setFieldForms(exactSetField(mf.IDVLANPCP, a.Arg), v)
			return append(out, sf...), err
		}
		w.Raw = r
		return append(out, w), nil
	case ActSetDLSrc, ActSetDLDst, ActSetNWSrc, ActSetNWDst:
		if !pre12 {
			id := map[ActionType]mf.ID{ActSetDLSrc: mf.IDEthSrc, ActSetDLDst: mf.IDEthDst,
				ActSetNWSrc: mf.IDIPv4Src, ActSetNWDst: mf.IDIPv4Dst}[a.Type]
			return setFieldForms(exactSetField(id, a.Arg), v)
		}
	case ActSetNWTos:
		if !pre12 {
			return setFieldForms(exactSetField(mf.IDIPDSCPShifted, a.Arg>>2), v)
		}
	case ActSetNWECN:
		switch {
		case v == mf.OF10:
			return []Action{loadOf(mf.IDIPECN, a.Arg)}, nil
		case !pre12:
			return setFieldForms(exactSetField(mf.IDIPECN, a.Arg), v)
		}
	case ActSetTPSrc, ActSetTPDst:
		if !pre12 {
			src := a.Type == ActSetTPSrc
			var id mf.ID
			switch a.FlowIPProto {
			case 6:
				id = map[bool]mf.ID{true: mf.IDTCPSrc, false: mf.IDTCPDst}[src]
			case 17:
				id = map[bool]mf.ID{true: mf.IDUDPSrc, false: mf.IDUDPDst}[src]
			case 132:
				id = map[bool]mf.ID{true: mf.IDSCTPSrc, false: mf.IDSCTPDst}[src]
			default:
				return nil, nil // no transport protocol known: Open vSwitch drops it
			}
			return setFieldForms(exactSetField(id, a.Arg), v)
		}
	case ActSetTunnel:
		if !pre12 {
			return setFieldForms(exactSetField(mf.IDTunID, a.Arg), v)
		}
		if a.Arg > 0xffffffff || a.Raw == RawActNXAST_SET_TUNNEL64 {
			return one(RawActNXAST_SET_TUNNEL64)
		}
		return one(RawActNXAST_SET_TUNNEL)
	case ActOutputReg:
		f := a.Src.Field
		if f == nil {
			return nil, errorf(OFPBAC_BAD_ARGUMENT, "output_reg without a source")
		}
		if a.Raw == RawActNXAST_OUTPUT_REG2 || len(f.Headers) == 0 || f.Headers[0].IsExperimenter() {
			return one(RawActNXAST_OUTPUT_REG2)
		}
		return one(RawActNXAST_OUTPUT_REG)
	case ActBundle:
		if a.Bundle != nil && a.Bundle.Dst.Field != nil {
			return one(RawActNXAST_BUNDLE_LOAD)
		}
		return one(RawActNXAST_BUNDLE)
	case ActLearn:
		if l := a.Learn; a.Raw == RawActNXAST_LEARN2 || l != nil && (l.Limit != 0 || l.Flags&LearnWriteResult != 0) {
			return one(RawActNXAST_LEARN2)
		}
		return one(RawActNXAST_LEARN)
	case ActSample:
		s := a.Sample
		switch {
		case s == nil:
			return nil, errorf(OFPBAC_BAD_ARGUMENT, "sample without its body")
		case a.Raw == RawActNXAST_SAMPLE3 || s.Direction != 0:
			return one(RawActNXAST_SAMPLE3)
		case a.Raw == RawActNXAST_SAMPLE2 || s.SamplingPort != PortNone:
			return one(RawActNXAST_SAMPLE2)
		}
		return one(RawActNXAST_SAMPLE)
	case ActStackPush:
		return one(RawActNXAST_STACK_PUSH)
	case ActStackPop:
		return one(RawActNXAST_STACK_POP)
	case ActGotoTable:
		if v == mf.OF10 {
			return []Action{{Type: ActResubmit, Raw: RawActNXAST_RESUBMIT_TABLE, Port: PortInPort, Table: a.Table}}, nil
		}
		return nil, errorf(OFPBIC_UNSUP_INST, "goto_table in an action list")
	case ActWriteMetadata:
		return one(RawActNXAST_WRITE_METADATA)
	case ActClearActions, ActWriteActions:
		if v == mf.OF10 {
			return nil, nil
		}
		return nil, errorf(OFPBIC_UNSUP_INST, "%s in an action list", a.Type)
	}
	if has(a.Raw) && actionKindOf(a.Raw) == a.Type {
		return one(a.Raw)
	}
	for _, r := range canonicalRaws[a.Type] {
		if has(r) {
			return one(r)
		}
	}
	return nil, errorf(OFPBAC_BAD_TYPE, "%s cannot be encoded in version %#x", a.Type, v)
}

// inActionSet are the kinds write_actions may hold (OpenFlow's action set
// as Open vSwitch 3.1 accepts it: ct, ct_clear and resubmit included).
var inActionSet = map[ActionType]bool{
	ActDecMPLSTTL: true, ActDecTTL: true, ActGroup: true, ActOutput: true, ActOutputTrunc: true,
	ActPopMPLS: true, ActPushMPLS: true, ActPushVLAN: true, ActMove: true, ActSetField: true, ActLoad: true,
	ActSetDLDst: true, ActSetDLSrc: true, ActSetNWTos: true, ActSetNWECN: true, ActSetNWTTL: true,
	ActSetNWDst: true, ActSetNWSrc: true, ActSetTPDst: true, ActSetTPSrc: true, ActSetMPLSLabel: true,
	ActSetMPLSTC: true, ActSetMPLSTTL: true, ActSetQueue: true, ActSetTunnel: true, ActSetVLANPCP: true,
	ActSetVLANVID: true, ActStripVLAN: true, ActDecNSHTTL: true, ActCT: true, ActCTClear: true, ActResubmit: true,
}

// canonicalRaws are the wire forms of the kinds whose form depends only
// on the version, in order of preference.
var canonicalRaws = map[ActionType][]RawAction{
	ActCT: {RawActNXAST_CT}, ActCTClear: {RawActNXAST_CT_CLEAR}, ActNAT: {RawActNXAST_NAT},
	ActEnqueue: {RawActOFPAT10_ENQUEUE}, ActSetQueue: {RawActOFPAT_SET_QUEUE}, ActPopQueue: {RawActNXAST_POP_QUEUE},
	ActOutputTrunc: {RawActNXAST_OUTPUT_TRUNC}, ActGroup: {RawActOFPAT_GROUP}, ActMeter: {RawActOFPAT15_METER},
	ActNote: {RawActNXAST_NOTE}, ActConjunction: {RawActNXAST_CONJUNCTION}, ActSetNWTTL: {RawActOFPAT11_SET_NW_TTL},
	ActDecMPLSTTL: {RawActOFPAT_DEC_MPLS_TTL}, ActSetMPLSLabel: {RawActOFPAT_SET_MPLS_LABEL},
	ActSetMPLSTC: {RawActOFPAT_SET_MPLS_TC}, ActSetMPLSTTL: {RawActOFPAT_SET_MPLS_TTL},
	ActPushMPLS: {RawActOFPAT_PUSH_MPLS}, ActPopMPLS: {RawActOFPAT_POP_MPLS},
	ActSetDLSrc: {RawActOFPAT_SET_DL_SRC}, ActSetDLDst: {RawActOFPAT_SET_DL_DST},
	ActSetNWSrc: {RawActOFPAT_SET_NW_SRC}, ActSetNWDst: {RawActOFPAT_SET_NW_DST},
	ActSetNWTos: {RawActOFPAT_SET_NW_TOS}, ActSetNWECN: {RawActOFPAT11_SET_NW_ECN},
	ActSetTPSrc: {RawActOFPAT_SET_TP_SRC}, ActSetTPDst: {RawActOFPAT_SET_TP_DST},
	ActMultipath: {RawActNXAST_MULTIPATH}, ActFinTimeout: {RawActNXAST_FIN_TIMEOUT}, ActExit: {RawActNXAST_EXIT},
	ActClone: {RawActNXAST_CLONE}, ActCheckPktLen: {RawActNXAST_CHECK_PKT_LARGER},
	ActDecNSHTTL: {RawActNXAST_DEC_NSH_TTL}, ActDeleteField: {RawActNXAST_DELETE_FIELD},
	ActDebugSlow: {RawActNXAST_DEBUG_SLOW}, ActDebugRecirc: {RawActNXAST_DEBUG_RECIRC},
}

// rawKind is the kind a raw action decodes to.
func actionKindOf(r RawAction) ActionType {
	if k, ok := scalarKinds[r]; ok {
		return k.typ
	}
	return rawKinds[r]
}

var rawKinds = map[RawAction]ActionType{
	RawActOFPAT10_OUTPUT: ActOutput, RawActOFPAT11_OUTPUT: ActOutput,
	RawActOFPAT12_SET_FIELD: ActSetField, RawActOFPAT15_SET_FIELD: ActSetField, RawActNXAST_REG_LOAD2: ActSetField,
	RawActNXAST_REG_LOAD: ActLoad, RawActNXAST_REG_MOVE: ActMove, RawActOFPAT15_COPY_FIELD: ActMove,
	RawActONFACT13_COPY_FIELD: ActMove, RawActNXAST_CT: ActCT, RawActNXAST_NAT: ActNAT,
	RawActOFPAT10_ENQUEUE: ActEnqueue, RawActNXAST_OUTPUT_TRUNC: ActOutputTrunc, RawActNXAST_NOTE: ActNote,
	RawActNXAST_CONJUNCTION: ActConjunction, RawActNXAST_MULTIPATH: ActMultipath,
	RawActNXAST_FIN_TIMEOUT: ActFinTimeout, RawActNXAST_CLONE: ActClone,
	RawActNXAST_CHECK_PKT_LARGER: ActCheckPktLen, RawActNXAST_DELETE_FIELD: ActDeleteField,
	RawActNXAST_WRITE_METADATA: ActWriteMetadata,
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
	c := checker{m: *m, v: v, maxPorts: maxPorts, table: tableID, nTables: nTables}
	return c.check(acts, 0)
}

type checker struct {
	m        mf.Match // mutated as actions change the packet (push_vlan, pop_mpls, ...)
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
	_ = c.m.SetMasked(tci, val[:], mask[:]) // width matches
}

func (c *checker) setEthType(t uint16) {
	_ = c.m.SetMasked(mf.ByID(mf.IDEthType), []byte{byte(t >> 8), byte(t)}, nil)
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

func (c *checker) check1(a *Action, depth int) error {
	switch a.Type {
	case ActOutput:
		return checkOutputPort(a.Port, c.maxPorts)
	case ActOutputTrunc:
		return checkOutputPort(a.Port, c.maxPorts)
	case ActEnqueue:
		if a.Port >= c.maxPorts && a.Port != PortInPort && a.Port != PortLocal {
			return errorf(OFPBAC_BAD_OUT_PORT, "enqueue on port %#x", a.Port)
		}
	case ActOutputReg:
		return c.sub(a.Src, "output_reg")
	case ActSetField:
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
	case ActLoad:
		return c.sub(a.Dst, "load")
	case ActMove:
		if err := c.sub(a.Src, "move"); err != nil {
			return err
		}
		return c.sub(a.Dst, "move")
	case ActStackPush:
		return c.sub(a.Src, "push")
	case ActStackPop:
		return c.sub(a.Dst, "pop")
	case ActCheckPktLen:
		return c.sub(a.Dst, "check_pkt_larger")
	case ActMultipath:
		if a.Multipath == nil {
			return errorf(OFPBAC_BAD_ARGUMENT, "multipath without its body")
		}
		return c.sub(a.Multipath.Dst, "multipath")
	case ActBundle:
		if a.Bundle == nil {
			return errorf(OFPBAC_BAD_ARGUMENT, "bundle without its body")
		}
		for _, p := range a.Bundle.Members {
			if uint32(p) >= c.maxPorts && p != PortLocal {
				return errorf(OFPBAC_BAD_OUT_PORT, "bundle member %d", p)
			}
		}
		if a.Bundle.Dst.Field != nil {
			return c.sub(a.Bundle.Dst, "bundle_load")
		}
	case ActLearn:
		if a.Learn == nil {
			return errorf(OFPBAC_BAD_ARGUMENT, "learn without its body")
		}
		// Sources are read from this flow; destinations belong to the
		// learned flow, whose match the specs build in order (a field
		// copied from the packet counts as matched with value 0 for the
		// later specs' prerequisites, as in Open vSwitch's learn_check).
		var learned mf.Match
		for _, s := range a.Learn.Specs {
			if !s.SrcImm {
				if err := c.sub(s.Src, "learn"); err != nil {
					return err
				}
			}
			if s.Dst == LearnOutput {
				continue
			}
			if err := checkSubfield(s.DstSub); err != nil {
				return err
			}
			if !learned.PrereqsOK(s.DstSub.Field) {
				return errInconsistent("learn of " + s.DstSub.Field.Name)
			}
			if s.Dst == LearnMatch {
				writeSubfield(&learned, s.DstSub, s.Imm)
			}
		}
		if a.Learn.Table >= c.nTables && c.nTables != 0xff {
			return errorf(OFPBRC_BAD_TABLE_ID, "learn into table %d of %d", a.Learn.Table, c.nTables)
		}
	case ActResubmit:
		if a.Raw == RawActNXAST_RESUBMIT_TABLE_CT && !c.m.Satisfies(mf.PrereqCT.Expr()) {
			return errInconsistent("resubmit(...,ct)")
		}
	case ActCT:
		ct := a.CT
		if ct == nil {
			return errorf(OFPBAC_BAD_ARGUMENT, "ct without its body")
		}
		if !c.isIP() {
			return errInconsistent("ct")
		}
		if ct.ZoneSrc.Field != nil {
			if err := c.sub(ct.ZoneSrc, "ct zone"); err != nil {
				return err
			}
		}
		if p := c.nwProto(); ct.Alg != 0 && p != 6 && p != 17 {
			return errInconsistent("ct alg")
		}
		if ct.Table != 0xff && ct.Table >= c.nTables && c.nTables != 0xff {
			return errorf(OFPBIC_BAD_TABLE_ID, "ct recirculates to table %d of %d", ct.Table, c.nTables)
		}
		return c.check(ct.Actions, depth+1)
	case ActNAT:
		t := c.ethType()
		n := a.NAT
		if n == nil || !c.isIP() || n.AddrMin.Is4() && t != 0x0800 || n.AddrMin.Is6() && t != 0x86dd {
			return errInconsistent("nat")
		}
	case ActGotoTable:
		if a.Table == 0xff || c.table != 0xff && a.Table <= c.table || a.Table >= c.nTables && c.nTables != 0xff {
			return errorf(OFPBIC_BAD_TABLE_ID, "goto_table:%d from table %d of %d", a.Table, c.table, c.nTables)
		}
	case ActMeter:
		if a.Arg == 0 || a.Arg > 0xffff0000 {
			return errorf(OFPMMFC_INVALID_METER, "meter %d", a.Arg)
		}
	case ActClone:
		saved := c.m
		err := c.check(a.Nested, depth+1)
		c.m = saved
		return err
	case ActWriteActions:
		saved := c.m
		err := c.check(a.Nested, depth+1)
		c.m = saved
		return err
	case ActPushVLAN:
		c.setVLAN(true)
	case ActStripVLAN:
		c.setVLAN(false)
	case ActSetVLANVID, ActSetVLANPCP:
		a.FlowHasVLAN = c.hasVLAN()
		err := c.soft(a.FlowHasVLAN || a.PushVLANIfNeeded, a.Type.String())
		c.setVLAN(true)
		return err
	case ActSetDLSrc, ActSetDLDst:
	case ActSetNWSrc, ActSetNWDst:
		return c.soft(c.ethType() == 0x0800, a.Type.String())
	case ActSetNWTos, ActSetNWECN, ActSetNWTTL, ActDecTTL:
		return c.soft(c.isIP(), a.Type.String())
	case ActSetTPSrc, ActSetTPDst:
		p := c.nwProto()
		a.FlowIPProto = p
		return c.soft(p == 6 || p == 17 || p == 132, a.Type.String())
	case ActPushMPLS:
		c.setEthType(uint16(a.Arg))
	case ActPopMPLS:
		t := c.ethType()
		if err := c.soft(t == 0x8847 || t == 0x8848, "pop_mpls"); err != nil {
			return err
		}
		c.setEthType(uint16(a.Arg))
	case ActSetMPLSLabel, ActSetMPLSTC, ActSetMPLSTTL, ActDecMPLSTTL:
		t := c.ethType()
		return c.soft(t == 0x8847 || t == 0x8848, a.Type.String())
	case ActFinTimeout:
		return c.soft(c.nwProto() == 6, "fin_timeout")
	case ActDecNSHTTL:
		return c.soft(c.m.Mask.PacketType == ^uint32(0) && c.m.Flow.PacketType == 0x1894f || c.ethType() == 0x894f, "dec_nsh_ttl")
	}
	return nil
}

// writeSubfield sets sf in m to imm (network order, zero if nil), exact on
// sf's bits and keeping m's other bits of the field.
func writeSubfield(m *mf.Match, sf Subfield, imm []byte) {
	f := sf.Field
	if f.Variable || f.Bytes > 16 {
		return
	}
	var val, mask [16]byte
	v, k := val[:f.Bytes], mask[:f.Bytes]
	m.Get(f, v, k)
	for i := 0; i < sf.NBits; i++ {
		j := sf.Ofs + i
		bit := byte(1) << (j % 8)
		k[len(k)-1-j/8] |= bit
		v[len(v)-1-j/8] &^= bit
		if i/8 < len(imm) && imm[len(imm)-1-i/8]>>(i%8)&1 == 1 {
			v[len(v)-1-j/8] |= bit
		}
	}
	_ = m.SetMasked(f, v, k) // a value mf refuses leaves the field as it was
}
