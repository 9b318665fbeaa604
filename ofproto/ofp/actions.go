package ofp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// ActionType is the version-independent kind of an action, as Open
// vSwitch's enum ofpact_type. Every action Open vSwitch knows decodes to a
// typed kind except encap/decap and sample with a field-sourced domain
// (NXAST_SAMPLE4), which stay ActRaw with their bytes.
type ActionType uint8

// Action kinds. The comment names the Action fields each kind uses (or the
// accessor of its Body).
const (
	ActRaw           ActionType = iota // Data: the whole wire action
	ActOutput                          // Port (16-bit ofp_port), MaxLen
	ActResubmit                        // Port, Table (255: current); Raw RESUBMIT_TABLE_CT for ct
	ActSetField                        // Field, Value, Mask (nil: exact)
	ActLoad                            // Dst, Value (8 bytes) — NXAST_REG_LOAD
	ActMove                            // Src, Dst
	ActCT                              // CT
	ActCTClear                         //
	ActController                      // Controller
	ActEnqueue                         // Port, Arg (queue id)
	ActSetQueue                        // Arg (queue id)
	ActPopQueue                        //
	ActOutputReg                       // Src, MaxLen
	ActOutputTrunc                     // Port, Arg (max_len)
	ActGroup                           // Arg (group id)
	ActMeter                           // Arg (meter id): OF1.3/1.4 instruction, OF1.5 action
	ActNote                            // Data (the note bytes)
	ActLearn                           // Learn
	ActConjunction                     // Conj
	ActDecTTL                          // IDs (controller ids; [0] for plain dec_ttl)
	ActSetNWTTL                        // Arg — mod_nw_ttl
	ActDecMPLSTTL                      //
	ActSetMPLSLabel                    // Arg
	ActSetMPLSTC                       // Arg
	ActSetMPLSTTL                      // Arg
	ActPushMPLS                        // Arg (ethertype)
	ActPopMPLS                         // Arg (ethertype)
	ActPushVLAN                        // Arg (ethertype)
	ActStripVLAN                       // strip_vlan, pop_vlan (Raw OFPAT11_POP_VLAN)
	ActSetVLANVID                      // Arg; PushVLANIfNeeded, FlowHasVLAN
	ActSetVLANPCP                      // Arg; PushVLANIfNeeded, FlowHasVLAN
	ActSetDLSrc                        // Arg (48-bit MAC)
	ActSetDLDst                        // Arg (48-bit MAC)
	ActSetNWSrc                        // Arg (IPv4 address)
	ActSetNWDst                        // Arg (IPv4 address)
	ActSetNWTos                        // Arg (DSCP in place: low 2 bits zero)
	ActSetNWECN                        // Arg
	ActSetTPSrc                        // Arg; FlowIPProto
	ActSetTPDst                        // Arg; FlowIPProto
	ActSetTunnel                       // Arg (tunnel id); Raw SET_TUNNEL64 for set_tunnel64
	ActMultipath                       // Multipath
	ActBundle                          // Bundle (Raw BUNDLE_LOAD: bundle_load)
	ActFinTimeout                      // FinTimeout
	ActExit                            //
	ActClone                           // Nested
	ActCheckPktLen                     // Arg (packet length), Dst (1 bit) — check_pkt_larger
	ActSample                          // Sample
	ActStackPush                       // Src
	ActStackPop                        // Dst
	ActNAT                             // NAT (inside ct)
	ActDecNSHTTL                       //
	ActDeleteField                     // Field
	ActDebugSlow                       //
	ActDebugRecirc                     //
	ActGotoTable                       // Table — instruction
	ActWriteMetadata                   // Arg (value), Arg2 (mask) — instruction (NXAST in OF1.0)
	ActClearActions                    // instruction
	ActWriteActions                    // Nested — instruction
	numActionTypes
)

// NumActionTypes is one more than the largest ActionType, for tables
// indexed by kind.
const NumActionTypes = numActionTypes

// ActPopVLAN is the kind of pop_vlan: the same ofpact as strip_vlan.
const ActPopVLAN = ActStripVLAN

var actionTypeNames = [numActionTypes]string{
	"raw", "output", "resubmit", "set_field", "load", "move", "ct", "ct_clear", "controller",
	"enqueue", "set_queue", "pop_queue", "output_reg", "output_trunc", "group", "meter", "note",
	"learn", "conjunction", "dec_ttl", "mod_nw_ttl", "dec_mpls_ttl", "set_mpls_label",
	"set_mpls_tc", "set_mpls_ttl", "push_mpls", "pop_mpls", "push_vlan", "strip_vlan",
	"mod_vlan_vid", "mod_vlan_pcp", "mod_dl_src", "mod_dl_dst", "mod_nw_src", "mod_nw_dst",
	"mod_nw_tos", "mod_nw_ecn", "mod_tp_src", "mod_tp_dst", "set_tunnel", "multipath", "bundle",
	"fin_timeout", "exit", "clone", "check_pkt_larger", "sample", "push", "pop", "nat",
	"dec_nsh_ttl", "delete_field", "debug_slow", "debug_recirc", "goto_table", "write_metadata",
	"clear_actions", "write_actions",
}

func (t ActionType) String() string {
	if t < numActionTypes {
		return actionTypeNames[t]
	}
	return fmt.Sprintf("ActionType(%d)", uint8(t))
}

// IsInstruction reports whether the kind is an OpenFlow 1.1+ instruction
// rather than an action (meter is an action from OpenFlow 1.5).
func (t ActionType) IsInstruction(v uint8) bool {
	switch t {
	case ActGotoTable, ActWriteMetadata, ActClearActions, ActWriteActions:
		return true
	case ActMeter:
		return v < mf.OF15
	}
	return false
}

// RawAction identifies an action's wire encoding, as Open vSwitch's enum
// ofp_raw_action_type (action_table.go). 0 means "no preference": the
// canonical encoding for the version is used.
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

// Packet-in reasons (OFPR_*), as controller() names them.
const (
	ReasonNoMatch    = 0
	ReasonAction     = 1
	ReasonInvalidTTL = 2
	ReasonActionSet  = 3
	ReasonGroup      = 4
	ReasonPacketOut  = 5
)

// NoMeter is Controller.MeterID when the controller action names no meter.
const NoMeter = 0xffffffff

// Controller is the body of controller(...) (NXAST_CONTROLLER and
// NXAST_CONTROLLER2). An output to the CONTROLLER port is ActOutput.
type Controller struct {
	MaxLen   uint16 // 0xffff: the whole packet
	ID       uint16 // controller connection id
	Reason   uint8  // Reason*
	Userdata []byte
	Pause    bool
	MeterID  uint32 // NoMeter for none
}

// Learn flags (NX_LEARN_F_*).
const (
	LearnSendFlowRem   = 1
	LearnDeleteLearned = 2
	LearnWriteResult   = 4
)

// Learn spec destinations (NX_LEARN_DST_*).
const (
	LearnMatch  = 0
	LearnLoad   = 1
	LearnOutput = 2
)

// Learn is the body of learn(...) (NXAST_LEARN and NXAST_LEARN2).
type Learn struct {
	IdleTimeout    uint16
	HardTimeout    uint16
	Priority       uint16
	Cookie         uint64
	Flags          uint16 // Learn*
	Table          uint8
	FinIdleTimeout uint16
	FinHardTimeout uint16
	Limit          uint32   // LEARN2 only
	ResultDst      Subfield // LEARN2 with LearnWriteResult
	Specs          []LearnSpec
}

// LearnSpec is one flow_mod_spec of a learn action: NBits bits from Src
// (a field) or Imm (an immediate, network order, 2*ceil(NBits/16) bytes
// as on the wire) to a match field, a load or an output.
type LearnSpec struct {
	NBits  int
	SrcImm bool
	Src    Subfield
	Imm    []byte
	Dst    uint8 // LearnMatch, LearnLoad, LearnOutput
	DstSub Subfield
}

// Conjunction is conjunction(ID, Clause+1/NClauses).
type Conjunction struct {
	ID       uint32
	Clause   uint8 // 0-based, as on the wire
	NClauses uint8
}

// NAT flags (NX_NAT_F_*).
const (
	NATSrc        = 1
	NATDst        = 2
	NATPersistent = 4
	NATHash       = 8
	NATRandom     = 16
)

// NAT is the body of nat(...) inside ct(). AddrMin/AddrMax are the
// zero netip.Addr when absent.
type NAT struct {
	Flags    uint16
	AddrMin  netip.Addr
	AddrMax  netip.Addr
	ProtoMin uint16
	ProtoMax uint16
}

// Multipath is multipath(fields, basis, algorithm, n_links, arg, dst).
type Multipath struct {
	Fields    uint16 // NX_HASH_FIELDS_*
	Basis     uint16
	Algorithm uint16 // NX_MP_ALG_*
	MaxLink   uint16 // n_links - 1
	Arg       uint32
	Dst       Subfield
}

// Bundle is bundle(...) or bundle_load(...) (Dst set).
type Bundle struct {
	Algorithm uint16 // NX_BD_ALG_*: 0 active_backup, 1 hrw
	Fields    uint16
	Basis     uint16
	Members   []uint16
	Dst       Subfield
}

// Sample is sample(...) (NXAST_SAMPLE, SAMPLE2, SAMPLE3).
type Sample struct {
	Probability    uint16
	CollectorSetID uint32
	ObsDomainID    uint32
	ObsPointID     uint32
	SamplingPort   uint16 // 0xffff (OFPP_NONE) for none
	Direction      uint8  // 0 default, 1 ingress, 2 egress
}

// FinTimeout is fin_timeout(idle_timeout=, hard_timeout=).
type FinTimeout struct {
	Idle, Hard uint16
}

// Action is one decoded action (an ofpact). Raw is the wire encoding it
// came from, or 0; encoding uses it when version v has it, so decoded
// lists re-encode byte for byte, and otherwise picks Open vSwitch's
// canonical encoding for v. Ports are 16-bit (OpenFlow 1.0 numbering,
// OFPP_CONTROLLER = 0xfffd) in every version.
type Action struct {
	Type ActionType
	// Flow context that some cross-version encodings need, as Open
	// vSwitch keeps it in the ofpact: set by the decoder or parser
	// (PushVLANIfNeeded for OpenFlow 1.0 mod_vlan_vid/pcp) and by
	// ValidateOfpacts from the flow's match (FlowHasVLAN, FlowIPProto).
	PushVLANIfNeeded bool
	Raw              RawAction
	Port             uint32
	MaxLen           uint16
	Table            uint8
	FlowHasVLAN      bool
	FlowIPProto      uint8

	Field  *mf.Field
	Value  []byte // set_field value (field width) or load value (8 bytes), network order
	Mask   []byte // set_field mask, nil if exact
	Src    Subfield
	Dst    Subfield
	Arg    uint64   // the scalar argument of simple kinds (see the kind list)
	Arg2   uint64   // write_metadata mask
	Nested []Action // clone, write_actions

	// Body is the structure of the kinds that have one: *CT, *Controller,
	// *Learn, *Conjunction, *NAT, *Multipath, *Bundle, *Sample,
	// *FinTimeout, dec_ttl's []uint16, a raw action's or a note's []byte
	// (see the kind list and the accessors in body.go). One field for all of them keeps an Action,
	// which rules hold by the hundred thousand, small.
	Body any
}

// Standard and vendor action header fields.
const (
	ofpatVendor   = 0xffff
	actHeaderLen  = 8  // ofp_action_header
	extHeaderLen  = 16 // ext_action_header (Nicira/ONF)
	maxActionsLen = 65528
	// maxNesting bounds clone/ct/write_actions recursion, as Open vSwitch
	// does, so hostile input cannot exhaust the stack.
	maxNesting = 32
)

// DecodeActions decodes an action list for wire version v, with Open
// vSwitch's checks and errors: a list not a multiple of 8 bytes is
// OFPBRC_BAD_LEN; an unknown action OFPBAC_BAD_TYPE, OFPBAC_BAD_VENDOR or
// OFPBAC_BAD_VENDOR_TYPE; a length outside the action's range
// OFPBAC_BAD_LEN; bad arguments the action's own error.
//
// The testing actions debug_slow and debug_recirc are refused with
// OFPBAC_BAD_VENDOR_TYPE, as by Open vSwitch unless it runs with
// --enable-dummy; DecodeActionsWithDebug accepts them.
func DecodeActions(b []byte, v uint8) ([]Action, error) {
	return decodeTopActions(b, v, false)
}

// DecodeActionsWithDebug is DecodeActions accepting debug_slow and
// debug_recirc (a switch run for testing).
func DecodeActionsWithDebug(b []byte, v uint8) ([]Action, error) {
	return decodeTopActions(b, v, true)
}

func decodeTopActions(b []byte, v uint8, debug bool) ([]Action, error) {
	acts, err := decodeActions(b, v, 0)
	if err == nil {
		err = refuseDebugActions(acts, debug)
	}
	if err != nil {
		return nil, err
	}
	return acts, nil
}

// refuseDebugActions is the error for a testing action in acts (nested
// ones included) unless debug.
func refuseDebugActions(acts []Action, debug bool) error {
	if raw, ok := findDebugAction(acts); ok && !debug {
		return errorf(OFPBAC_BAD_VENDOR_TYPE, "%s is for testing only", raw)
	}
	return nil
}

// findDebugAction finds a testing action, nested ones included.
func findDebugAction(acts []Action) (RawAction, bool) {
	for i := range acts {
		if acts[i].Type == ActDebugSlow || acts[i].Type == ActDebugRecirc {
			return acts[i].Raw, true
		}
		if r, ok := findDebugAction(acts[i].Nested); ok {
			return r, true
		}
	}
	return 0, false
}

func decodeActions(b []byte, v uint8, depth int) ([]Action, error) {
	return appendDecodedActions(nil, b, v, depth)
}

// countActions is the number of actions in the list b, as far as their
// lengths can be walked (decoding reports any bad length): lists are
// decoded into slices of exactly this size, since rules keep them.
func countActions(b []byte) int {
	n := 0
	for off := 0; off+4 <= len(b); n++ {
		l := int(binary.BigEndian.Uint16(b[off+2:]))
		if l < 8 {
			return n + 1
		}
		off += l
	}
	return n
}

// appendDecodedActions decodes the action list b onto out, which it
// first grows to hold all of b's actions.
func appendDecodedActions(out []Action, b []byte, v uint8, depth int) ([]Action, error) {
	if len(b)%8 != 0 {
		return nil, errorf(OFPBRC_BAD_LEN, "actions length %d is not a multiple of 8", len(b))
	}
	if depth > maxNesting {
		return nil, errorf(OFPBAC_BAD_ARGUMENT, "actions nested more than %d deep", maxNesting)
	}
	out = slices.Grow(out, countActions(b))
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
		if c := rawOpsOf(in.raw); c.dec != nil {
			if a, err = c.dec(p[:n], v, in, depth); err != nil {
				return nil, fmt.Errorf("%s at offset %d: %w", in.raw, off, err)
			}
			a.Raw = in.raw
		} else {
			a.Body = bytes.Clone(p[:n])
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

// An ActionEncoder encodes action lists. It holds the wire forms of the
// action being encoded and the bytes they point into, and reuses them
// for the next action and the next list: a flow dump that encodes
// every rule's actions with one encoder allocates nothing per action.
// The zero value is ready; an encoder is not safe for concurrent use.
type ActionEncoder struct {
	forms []Action
	arena []byte
}

// alloc returns n zero bytes that stay valid until the next top-level
// encode with e.
func (e *ActionEncoder) alloc(n int) []byte {
	if cap(e.arena)-len(e.arena) < n {
		e.arena = make([]byte, 0, max(512, n)) // earlier slices keep the old array
	}
	at := len(e.arena)
	e.arena = e.arena[:at+n]
	b := e.arena[at : at+n : at+n]
	clear(b)
	return b
}

// reset forgets the previous top-level encode's forms and bytes (their
// arrays, and what old forms point to, are kept until overwritten or the
// encoder goes: a dump's encoder lives as long as the dump).
func (e *ActionEncoder) reset() {
	e.forms = e.forms[:0]
	e.arena = e.arena[:0]
}

// AppendActions encodes actions for wire version v as an action list:
// each in its Raw form when v has it, else in Open vSwitch's canonical
// form for v (which may be several wire actions, or none where Open
// vSwitch drops an action the version cannot express). Instructions
// (goto_table, write_metadata) are only encodable in OpenFlow 1.0, as the
// Nicira actions Open vSwitch uses there.
func AppendActions(b []byte, acts []Action, v uint8) ([]byte, error) {
	var e ActionEncoder
	return e.AppendActions(b, acts, v)
}

// AppendActions is the package's AppendActions with e's buffers.
func (e *ActionEncoder) AppendActions(b []byte, acts []Action, v uint8) ([]byte, error) {
	e.reset()
	return e.appendList(b, acts, v, 0)
}

// appendActionList encodes a nested list (clone, ct's exec) from an
// action's wire encoder, which has no encoder to hand down.
func appendActionList(b []byte, acts []Action, v uint8, depth int) ([]byte, error) {
	if len(acts) == 0 && depth <= maxNesting {
		return b, nil
	}
	var e ActionEncoder
	return e.appendList(b, acts, v, depth)
}

func (e *ActionEncoder) appendList(b []byte, acts []Action, v uint8, depth int) ([]byte, error) {
	if depth > maxNesting {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "actions nested more than %d deep", maxNesting)
	}
	for i := range acts {
		var err error
		if b, err = e.appendAction(b, &acts[i], v, depth); err != nil {
			return b, err
		}
	}
	return b, nil
}

// appendAction encodes one action as the wire actions chosen by
// wireForms.
func (e *ActionEncoder) appendAction(b []byte, a *Action, v uint8, depth int) ([]byte, error) {
	if a.Type == ActRaw {
		if _, err := lookupAction(a.Data(), v); err != nil {
			return b, err
		}
		return append(b, a.Data()...), nil
	}
	k := len(e.forms)
	defer func() { e.forms = e.forms[:k] }()
	if err := wireForms(e, a, v); err != nil {
		return b, err
	}
	start := len(b)
	for i := k; i < len(e.forms); i++ {
		var err error
		if b, err = appendWire(b, &e.forms[i], v, depth); err != nil {
			return b[:start], err
		}
	}
	return b, nil
}

// appendWire encodes a in its Raw form, which must exist in v.
func appendWire(b []byte, a *Action, v uint8, depth int) ([]byte, error) {
	start := len(b)
	in := actionByRaw[rawVersion{a.Raw, v}]
	c := rawOpsOf(a.Raw)
	if in == nil || c.enc == nil {
		return b, errorf(OFPBAC_BAD_TYPE, "%s cannot be encoded in version %#x", a.Raw, v)
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
	if b, err = c.enc(b, a, v, in, depth); err != nil {
		return b[:start], err
	}
	n := len(b) - start
	b = appendZeros(b, max(pad8(n), in.minLen)-n)
	n = len(b) - start
	if n > in.maxLen {
		return b[:start], errorf(OFPBAC_BAD_LEN, "%s of %d bytes", a.Raw, n)
	}
	binary.BigEndian.PutUint16(b[start+2:], uint16(n))
	return b, nil
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

// pullHeader reads a 4-byte NXM/OXM header, or an 8-byte experimenter
// one, from p (as subfield-carrying actions hold them) and returns its
// field and size. Masked headers are refused.
func pullHeader(p []byte) (*mf.Field, int, error) {
	if len(p) < 4 {
		return nil, 0, errorf(OFPBAC_BAD_LEN, "%d bytes left for a field header", len(p))
	}
	h := binary.BigEndian.Uint32(p)
	class, code, length := uint16(h>>16), uint8(h>>9&0x7f), int(h&0xff)
	n, exp := 4, uint32(0)
	if class == mf.ClassExperimenter {
		if len(p) < 8 || length < 4 {
			return nil, 0, errorf(OFPBAC_BAD_LEN, "partial experimenter field header %#x", h)
		}
		n, exp, length = 8, binary.BigEndian.Uint32(p[4:]), length-4
	}
	if h>>8&1 == 1 {
		return nil, 0, errorf(OFPBAC_BAD_ARGUMENT, "masked field header %#x", h)
	}
	f := mf.Std.ByHeader(class, code, exp)
	if f == nil || (!f.Variable && length != f.Bytes) {
		return nil, 0, errorf(OFPBAC_BAD_SET_TYPE, "unknown field header %#x", h)
	}
	return f, n, nil
}

// putHeader appends f's NXM-preferred header (8 bytes for an
// experimenter field).
func putHeader(b []byte, f *mf.Field) []byte {
	h, _ := f.HeaderFor(0)
	n := uint32(f.Bytes)
	if h.IsExperimenter() {
		b = binary.BigEndian.AppendUint32(b, uint32(h.Class)<<16|uint32(h.Field)<<9|(n+4))
		return binary.BigEndian.AppendUint32(b, h.Experimenter)
	}
	return binary.BigEndian.AppendUint32(b, uint32(h.Class)<<16|uint32(h.Field)<<9|n)
}

// checkSubfield checks that sf lies within its field (OFPBAC_BAD_SET_LEN
// otherwise, as Open vSwitch's mf_check_src/dst).
func checkSubfield(sf Subfield) error {
	if sf.Field == nil {
		return errorf(OFPBAC_BAD_ARGUMENT, "subfield without a field")
	}
	if sf.NBits < 1 || sf.Ofs < 0 || sf.Ofs >= sf.Field.Bits || sf.NBits > sf.Field.Bits-sf.Ofs {
		return errorf(OFPBAC_BAD_SET_LEN, "%s[%d..%d] is outside the %d-bit field", sf.Field.Name, sf.Ofs, sf.Ofs+sf.NBits-1, sf.Field.Bits)
	}
	return nil
}

// ofsNBits packs a subfield's offset and width as NXM actions carry them.
func ofsNBits(sf Subfield) uint16 { return uint16(sf.Ofs<<6 | (sf.NBits-1)&0x3f) }

func subfieldOf(f *mf.Field, ofsNbits uint16) Subfield {
	return Subfield{f, int(ofsNbits >> 6), int(ofsNbits&0x3f) + 1}
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
// 4-byte header) in Data. DecodeOfpacts gives the version-independent
// list most callers want.
type Instruction struct {
	Type    uint16
	Actions []Action
	Data    []byte
}

// DecodeInstructions decodes an OF1.1+ instruction list in wire order.
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
