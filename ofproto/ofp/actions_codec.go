package ofp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// Per-raw action codecs. A decoder gets the whole wire action (length
// already checked against the raw table); an encoder appends the body
// after the header (4 bytes standard, 10 vendor) and appendWire pads.
type actionDecoder func(p []byte, v uint8, in *actionInstance, depth int) (Action, error)
type actionEncoder func(b []byte, a *Action, v uint8, in *actionInstance, depth int) ([]byte, error)

type actionCodec struct {
	dec actionDecoder
	enc actionEncoder
}

// actionCodecs is filled in init (ct, clone and write_actions recurse
// through the list codecs) and read-only afterwards.
var actionCodecs map[RawAction]actionCodec

// scalarKinds are the raw actions whose body is one scalar argument at
// the instance's argOfs/argLen (or none): their kind, and the largest
// valid value (0: any).
var scalarKinds = map[RawAction]struct {
	typ ActionType
	max uint64
}{
	RawActOFPAT10_SET_VLAN_VID: {ActSetVLANVID, 0xfff}, RawActOFPAT11_SET_VLAN_VID: {ActSetVLANVID, 0xfff},
	RawActOFPAT10_SET_VLAN_PCP: {ActSetVLANPCP, 7}, RawActOFPAT11_SET_VLAN_PCP: {ActSetVLANPCP, 7},
	RawActOFPAT11_PUSH_VLAN: {ActPushVLAN, 0}, RawActOFPAT10_STRIP_VLAN: {ActStripVLAN, 0},
	RawActOFPAT11_POP_VLAN: {ActStripVLAN, 0},
	RawActOFPAT_SET_DL_SRC: {ActSetDLSrc, 0}, RawActOFPAT_SET_DL_DST: {ActSetDLDst, 0},
	RawActOFPAT_SET_NW_SRC: {ActSetNWSrc, 0}, RawActOFPAT_SET_NW_DST: {ActSetNWDst, 0},
	RawActOFPAT_SET_NW_TOS: {ActSetNWTos, 0}, RawActOFPAT11_SET_NW_ECN: {ActSetNWECN, 3},
	RawActOFPAT_SET_TP_SRC: {ActSetTPSrc, 0}, RawActOFPAT_SET_TP_DST: {ActSetTPDst, 0},
	RawActOFPAT_SET_MPLS_LABEL: {ActSetMPLSLabel, 0xfffff}, RawActOFPAT_SET_MPLS_TC: {ActSetMPLSTC, 7},
	RawActOFPAT_SET_MPLS_TTL: {ActSetMPLSTTL, 0}, RawActOFPAT_DEC_MPLS_TTL: {ActDecMPLSTTL, 0},
	RawActOFPAT_PUSH_MPLS: {ActPushMPLS, 0}, RawActOFPAT_POP_MPLS: {ActPopMPLS, 0},
	RawActOFPAT_SET_QUEUE: {ActSetQueue, 0}, RawActOFPAT_GROUP: {ActGroup, 0},
	RawActOFPAT11_SET_NW_TTL: {ActSetNWTTL, 0}, RawActOFPAT15_METER: {ActMeter, 0},
	RawActNXAST_SET_TUNNEL: {ActSetTunnel, 0}, RawActNXAST_SET_TUNNEL64: {ActSetTunnel, 0},
	RawActNXAST_POP_QUEUE: {ActPopQueue, 0}, RawActNXAST_EXIT: {ActExit, 0},
	RawActNXAST_CT_CLEAR: {ActCTClear, 0}, RawActNXAST_DEC_NSH_TTL: {ActDecNSHTTL, 0},
	RawActNXAST_DEBUG_SLOW: {ActDebugSlow, 0}, RawActNXAST_DEBUG_RECIRC: {ActDebugRecirc, 0},
}

func init() {
	actionCodecs = map[RawAction]actionCodec{
		RawActOFPAT10_OUTPUT:          {decodeOutput, encodeOutput},
		RawActOFPAT11_OUTPUT:          {decodeOutput, encodeOutput},
		RawActOFPAT12_SET_FIELD:       {decodeSetField, encodeSetField},
		RawActOFPAT15_SET_FIELD:       {decodeSetField, encodeSetField},
		RawActNXAST_REG_LOAD2:         {decodeSetField, encodeSetField},
		RawActNXAST_RESUBMIT:          {decodeResubmit, encodeResubmit},
		RawActNXAST_RESUBMIT_TABLE:    {decodeResubmit, encodeResubmit},
		RawActNXAST_RESUBMIT_TABLE_CT: {decodeResubmit, encodeResubmit},
		RawActNXAST_REG_LOAD:          {decodeRegLoad, encodeRegLoad},
		RawActNXAST_REG_MOVE:          {decodeRegMove, encodeRegMove},
		RawActOFPAT15_COPY_FIELD:      {decodeRegMove, encodeRegMove},
		RawActONFACT13_COPY_FIELD:     {decodeRegMove, encodeRegMove},
		RawActNXAST_CT:                {decodeCT, encodeCT},
		RawActNXAST_NAT:               {decodeNAT, encodeNAT},
		RawActOFPAT10_ENQUEUE:         {decodeEnqueue, encodeEnqueue},
		RawActNXAST_CONTROLLER:        {decodeController, encodeController},
		RawActNXAST_CONTROLLER2:       {decodeController2, encodeController2},
		RawActNXAST_OUTPUT_REG:        {decodeOutputReg, encodeOutputReg},
		RawActNXAST_OUTPUT_REG2:       {decodeOutputReg, encodeOutputReg},
		RawActNXAST_OUTPUT_TRUNC:      {decodeOutputTrunc, encodeOutputTrunc},
		RawActNXAST_NOTE:              {decodeNote, encodeNote},
		RawActNXAST_LEARN:             {decodeLearn, encodeLearn},
		RawActNXAST_LEARN2:            {decodeLearn, encodeLearn},
		RawActNXAST_CONJUNCTION:       {decodeConjunction, encodeConjunction},
		RawActOFPAT_DEC_NW_TTL:        {decodeDecTTL, encodeDecTTL},
		RawActNXAST_DEC_TTL_CNT_IDS:   {decodeDecTTL, encodeDecTTL},
		RawActNXAST_MULTIPATH:         {decodeMultipath, encodeMultipath},
		RawActNXAST_BUNDLE:            {decodeBundle, encodeBundle},
		RawActNXAST_BUNDLE_LOAD:       {decodeBundle, encodeBundle},
		RawActNXAST_FIN_TIMEOUT:       {decodeFinTimeout, encodeFinTimeout},
		RawActNXAST_CLONE:             {decodeClone, encodeClone},
		RawActNXAST_CHECK_PKT_LARGER:  {decodeCheckPktLarger, encodeCheckPktLarger},
		RawActNXAST_SAMPLE:            {decodeSample, encodeSample},
		RawActNXAST_SAMPLE2:           {decodeSample, encodeSample},
		RawActNXAST_SAMPLE3:           {decodeSample, encodeSample},
		RawActNXAST_STACK_PUSH:        {decodeStack, encodeStack},
		RawActNXAST_STACK_POP:         {decodeStack, encodeStack},
		RawActNXAST_WRITE_METADATA:    {decodeWriteMetadata, encodeWriteMetadata},
		RawActNXAST_DELETE_FIELD:      {decodeDeleteField, encodeDeleteField},
	}
	for raw := range scalarKinds {
		actionCodecs[raw] = actionCodec{decodeScalar, encodeScalar}
	}
	// The debug actions decode like any other; DecodeActions refuses
	// them unless asked not to (DecodeActionsWithDebug).
}

func hdrLen(in *actionInstance) int {
	if in.vendor == 0 {
		return 4
	}
	return 10
}

func getUintN(p []byte) uint64 {
	var v uint64
	for _, c := range p {
		v = v<<8 | uint64(c)
	}
	return v
}

func appendUintN(b []byte, v uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

func decodeScalar(p []byte, _ uint8, in *actionInstance, _ int) (Action, error) {
	k := scalarKinds[in.raw]
	a := Action{Type: k.typ}
	if in.argLen > 0 {
		a.Arg = getUintN(p[in.argOfs : in.argOfs+in.argLen])
	}
	if k.max != 0 && a.Arg > k.max {
		return a, errorf(OFPBAC_BAD_ARGUMENT, "%s argument %#x exceeds %#x", in.raw, a.Arg, k.max)
	}
	switch k.typ {
	case ActSetNWTos:
		if a.Arg&3 != 0 {
			return a, errorf(OFPBAC_BAD_ARGUMENT, "mod_nw_tos %#x sets ECN bits", a.Arg)
		}
	case ActPushVLAN:
		if a.Arg != 0x8100 && a.Arg != 0x88a8 {
			return a, errorf(OFPBAC_BAD_ARGUMENT, "push_vlan ethertype %#x", a.Arg)
		}
	case ActPushMPLS:
		if a.Arg != 0x8847 && a.Arg != 0x8848 {
			return a, errorf(OFPBAC_BAD_ARGUMENT, "push_mpls ethertype %#x", a.Arg)
		}
	case ActSetVLANVID, ActSetVLANPCP:
		a.PushVLANIfNeeded = in.raw == RawActOFPAT10_SET_VLAN_VID || in.raw == RawActOFPAT10_SET_VLAN_PCP
	}
	return a, nil
}

func encodeScalar(b []byte, a *Action, _ uint8, in *actionInstance, _ int) ([]byte, error) {
	if in.argLen == 0 {
		return b, nil
	}
	if in.argLen < 8 && a.Arg>>(8*in.argLen) != 0 {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "%s argument %#x does not fit %d bytes", in.raw, a.Arg, in.argLen)
	}
	b = appendZeros(b, in.argOfs-hdrLen(in))
	return appendUintN(b, a.Arg, in.argLen), nil
}

// Reserved ports (ofp_port_t, 16-bit) and the OpenFlow 1.1+ offset.
const (
	PortMax        = 0xff00
	PortInPort     = 0xfff8
	PortTable      = 0xfff9
	PortNormal     = 0xfffa
	PortFlood      = 0xfffb
	PortAll        = 0xfffc
	PortController = 0xfffd
	PortLocal      = 0xfffe
	PortNone       = 0xffff
	port11Offset   = 0xffff0000
)

// checkOutputPort accepts ports below maxPorts and the reserved ports an
// action may output to (OFPBAC_BAD_OUT_PORT otherwise).
func checkOutputPort(port uint32, maxPorts uint32) error {
	if port < maxPorts {
		return nil
	}
	switch port {
	case PortInPort, PortTable, PortNormal, PortFlood, PortAll, PortController, PortLocal:
		return nil
	}
	return errorf(OFPBAC_BAD_OUT_PORT, "output to port %#x", port)
}

// portFrom11 converts an OpenFlow 1.1+ 32-bit port to its 16-bit form.
func portFrom11(p uint32) (uint32, error) {
	switch {
	case p < PortMax:
		return p, nil
	case p >= port11Offset+PortMax:
		return p - port11Offset, nil
	}
	return 0, errorf(OFPBAC_BAD_OUT_PORT, "port %#x is outside the supported range", p)
}

func portTo11(p uint32) uint32 {
	if p >= PortMax {
		return p + port11Offset
	}
	return p
}

func decodeOutput(p []byte, v uint8, _ *actionInstance, _ int) (Action, error) {
	a := Action{Type: ActOutput}
	if v == mf.OF10 {
		a.Port, a.MaxLen = uint32(binary.BigEndian.Uint16(p[4:])), binary.BigEndian.Uint16(p[6:])
	} else {
		port, err := portFrom11(binary.BigEndian.Uint32(p[4:]))
		if err != nil {
			return a, err
		}
		a.Port, a.MaxLen = port, binary.BigEndian.Uint16(p[8:])
	}
	return a, checkOutputPort(a.Port, PortMax)
}

func encodeOutput(b []byte, a *Action, v uint8, _ *actionInstance, _ int) ([]byte, error) {
	if a.Port > 0xffff {
		return b, errorf(OFPBAC_BAD_OUT_PORT, "output to port %#x", a.Port)
	}
	if v == mf.OF10 {
		b = binary.BigEndian.AppendUint16(b, uint16(a.Port))
		return binary.BigEndian.AppendUint16(b, a.MaxLen), nil
	}
	b = binary.BigEndian.AppendUint32(b, portTo11(a.Port))
	return binary.BigEndian.AppendUint16(b, a.MaxLen), nil
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

func decodeResubmit(p []byte, _ uint8, in *actionInstance, _ int) (Action, error) {
	a := Action{Type: ActResubmit, Port: uint32(binary.BigEndian.Uint16(p[10:])), Table: p[12]}
	if in.raw == RawActNXAST_RESUBMIT {
		a.Table = 255
	} else if p[13] != 0 || p[14] != 0 || p[15] != 0 {
		return a, errorf(OFPBAC_BAD_ARGUMENT, "resubmit padding is not zero")
	}
	return a, nil
}

func encodeResubmit(b []byte, a *Action, _ uint8, in *actionInstance, _ int) ([]byte, error) {
	b = binary.BigEndian.AppendUint16(b, uint16(a.Port))
	if in.raw == RawActNXAST_RESUBMIT {
		return b, nil
	}
	return append(b, a.Table), nil
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

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func decodeCT(p []byte, v uint8, _ *actionInstance, depth int) (Action, error) {
	c := &CT{Flags: binary.BigEndian.Uint16(p[10:])}
	zsrc, zone := binary.BigEndian.Uint32(p[12:]), binary.BigEndian.Uint16(p[16:])
	if zsrc != 0 {
		f := fieldOfHeader(zsrc)
		if f == nil {
			return Action{}, errorf(OFPBAC_BAD_SET_TYPE, "ct zone from unknown field %#x", zsrc)
		}
		c.ZoneSrc = subfieldOf(f, zone)
		if err := checkSubfield(c.ZoneSrc); err != nil {
			return Action{}, err
		}
		if c.ZoneSrc.NBits != 16 { // a zone is 16 bits, as Open vSwitch checks
			return Action{}, errorf(OFPBAC_BAD_SET_LEN, "ct zone from %d bits", c.ZoneSrc.NBits)
		}
	} else {
		c.ZoneImm = zone
	}
	if c.Flags&^3 != 0 {
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "ct flags %#x", c.Flags)
	}
	c.Table, c.Alg = p[18], binary.BigEndian.Uint16(p[22:])
	nested, err := decodeActions(p[24:], v, depth+1)
	if err != nil {
		return Action{}, err
	}
	for i := range nested {
		switch t := nested[i].Type; {
		case t == ActNAT:
		case ctWritable(&nested[i]):
		default:
			return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "%s is not allowed inside ct", t)
		}
	}
	// As Open vSwitch: without commit, the only action ct may hold is a
	// nat without arguments (the one that applies the existing mapping).
	if c.Flags&1 == 0 {
		for i := range nested {
			n := nested[i].NAT
			if nested[i].Type != ActNAT || n == nil || n.Flags != 0 || n.AddrMin.IsValid() || n.ProtoMin != 0 {
				return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "ct requires commit for actions other than nat without arguments")
			}
		}
	}
	c.Actions = nested
	return Action{Type: ActCT, CT: c}, nil
}

// writtenField is the field an action writes (set_field, load, move), or
// nil.
func writtenField(a *Action) *mf.Field {
	switch a.Type {
	case ActSetField:
		return a.Field
	case ActLoad, ActMove:
		return a.Dst.Field
	}
	return nil
}

func isCTField(f *mf.Field) bool { return f != nil && (f.ID == mf.IDCtMark || f.ID == mf.IDCtLabel) }

// ctWritable: ct(exec(...)) may only write ct_mark and ct_label.
func ctWritable(a *Action) bool { return isCTField(writtenField(a)) }

func encodeCT(b []byte, a *Action, v uint8, _ *actionInstance, depth int) ([]byte, error) {
	c := a.CT
	if c == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "ct without its body")
	}
	b = binary.BigEndian.AppendUint16(b, c.Flags)
	if c.ZoneSrc.Field != nil {
		b = binary.BigEndian.AppendUint32(b, header32(c.ZoneSrc.Field))
		b = binary.BigEndian.AppendUint16(b, ofsNBits(c.ZoneSrc))
	} else {
		b = binary.BigEndian.AppendUint32(b, 0)
		b = binary.BigEndian.AppendUint16(b, c.ZoneImm)
	}
	b = append(b, c.Table, 0, 0, 0)
	b = binary.BigEndian.AppendUint16(b, c.Alg)
	return appendActionList(b, c.Actions, v, depth+1)
}

// NAT range bits (NX_NAT_RANGE_*).
const (
	natIPv4Min  = 1
	natIPv4Max  = 2
	natIPv6Min  = 4
	natIPv6Max  = 8
	natProtoMin = 16
	natProtoMax = 32
)

func decodeNAT(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	n := &NAT{Flags: binary.BigEndian.Uint16(p[12:])}
	present := binary.BigEndian.Uint16(p[14:])
	if n.Flags&^0x1f != 0 || n.Flags&(NATSrc|NATDst) == NATSrc|NATDst || present&^0x3f != 0 ||
		present&(natIPv4Min|natIPv4Max) != 0 && present&(natIPv6Min|natIPv6Max) != 0 {
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "nat flags %#x ranges %#x", n.Flags, present)
	}
	r := newReader(p[16:], "nat")
	// A zero address means none, as Open vSwitch encodes it.
	addr := func(a netip.Addr) netip.Addr {
		if a.IsUnspecified() {
			return netip.Addr{}
		}
		return a
	}
	if present&natIPv4Min != 0 {
		n.AddrMin = addr(netip.AddrFrom4([4]byte(r.takeOrZero(4))))
	}
	if present&natIPv4Max != 0 {
		n.AddrMax = addr(netip.AddrFrom4([4]byte(r.takeOrZero(4))))
	}
	if present&natIPv6Min != 0 {
		n.AddrMin = addr(netip.AddrFrom16([16]byte(r.takeOrZero(16))))
	}
	if present&natIPv6Max != 0 {
		n.AddrMax = addr(netip.AddrFrom16([16]byte(r.takeOrZero(16))))
	}
	if present&natProtoMin != 0 {
		n.ProtoMin = r.u16()
	}
	if present&natProtoMax != 0 {
		n.ProtoMax = r.u16()
	}
	if r.Err() != nil {
		return Action{}, errorf(OFPBAC_BAD_LEN, "nat ranges %#x in %d bytes", present, len(p))
	}
	return Action{Type: ActNAT, NAT: n}, nil
}

func (r *reader) takeOrZero(n int) []byte {
	if p := r.take(n); p != nil {
		return p
	}
	return make([]byte, n)
}

func encodeNAT(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	n := a.NAT
	if n == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "nat without its body")
	}
	b = append(b, 0, 0)
	b = binary.BigEndian.AppendUint16(b, n.Flags)
	at := len(b)
	b = append(b, 0, 0)
	var present uint16
	if n.AddrMin.Is4() || n.AddrMax.Is4() {
		if n.AddrMin.Is4() && !n.AddrMin.IsUnspecified() {
			present |= natIPv4Min
			b = append(b, n.AddrMin.AsSlice()...)
		}
		if n.AddrMax.Is4() && !n.AddrMax.IsUnspecified() {
			present |= natIPv4Max
			b = append(b, n.AddrMax.AsSlice()...)
		}
	} else if n.AddrMin.Is6() || n.AddrMax.Is6() {
		if n.AddrMin.Is6() && !n.AddrMin.IsUnspecified() {
			present |= natIPv6Min
			b = append(b, n.AddrMin.AsSlice()...)
		}
		if n.AddrMax.Is6() && !n.AddrMax.IsUnspecified() {
			present |= natIPv6Max
			b = append(b, n.AddrMax.AsSlice()...)
		}
	}
	{ // Open vSwitch sends ports only with an address family; zero
		// addresses are dropped above, so keep ports whenever set.
		if n.ProtoMin != 0 {
			present |= natProtoMin
			b = binary.BigEndian.AppendUint16(b, n.ProtoMin)
		}
		if n.ProtoMax != 0 {
			present |= natProtoMax
			b = binary.BigEndian.AppendUint16(b, n.ProtoMax)
		}
	}
	binary.BigEndian.PutUint16(b[at:], present)
	return b, nil
}

func decodeEnqueue(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	a := Action{Type: ActEnqueue, Port: uint32(binary.BigEndian.Uint16(p[4:])), Arg: uint64(binary.BigEndian.Uint32(p[12:]))}
	if a.Port >= PortMax && a.Port != PortInPort && a.Port != PortLocal {
		return a, errorf(OFPBAC_BAD_OUT_PORT, "enqueue on port %#x", a.Port)
	}
	return a, nil
}

func encodeEnqueue(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	b = binary.BigEndian.AppendUint16(b, uint16(a.Port))
	b = appendZeros(b, 6)
	return binary.BigEndian.AppendUint32(b, uint32(a.Arg)), nil
}

func decodeController(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	c := &Controller{MaxLen: binary.BigEndian.Uint16(p[10:]), ID: binary.BigEndian.Uint16(p[12:]), Reason: p[14], MeterID: NoMeter}
	return Action{Type: ActController, Controller: c}, nil
}

func encodeController(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	c := a.Controller
	if c == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "controller without its body")
	}
	b = binary.BigEndian.AppendUint16(b, c.MaxLen)
	b = binary.BigEndian.AppendUint16(b, c.ID)
	return append(b, c.Reason, 0), nil
}

// NXAST_CONTROLLER2 property types (NXAC2PT_*).
const (
	ac2MaxLen = iota
	ac2ControllerID
	ac2Reason
	ac2Userdata
	ac2Pause
	ac2MeterID
)

func decodeController2(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	c := &Controller{MaxLen: 0xffff, Reason: ReasonAction, MeterID: NoMeter}
	if !isZero(p[10:16]) {
		return Action{}, errorf(NXBAC_MUST_BE_ZERO, "controller2 padding is not zero")
	}
	t := newTLVReader(p[16:], 8, "controller2 property")
	for t.Next() {
		bad := false
		switch t.Type {
		case ac2MaxLen: // 16-bit values come in 8-byte properties; be forgiving, as Open vSwitch
			bad = len(t.Value) < 2
			if !bad {
				c.MaxLen = binary.BigEndian.Uint16(t.Value)
			}
		case ac2ControllerID:
			bad = len(t.Value) < 2
			if !bad {
				c.ID = binary.BigEndian.Uint16(t.Value)
			}
		case ac2Reason:
			bad = len(t.Value) < 1
			if !bad {
				c.Reason = t.Value[0]
			}
		case ac2Userdata:
			if len(t.Value) > 0 {
				c.Userdata = bytes.Clone(t.Value)
			}
		case ac2Pause:
			c.Pause = true
		case ac2MeterID:
			bad = len(t.Value) < 4
			if !bad {
				c.MeterID = binary.BigEndian.Uint32(t.Value)
			}
		default:
			return Action{}, errorf(OFPBPC_BAD_TYPE, "controller2 property %d", t.Type)
		}
		if bad {
			return Action{}, errorf(OFPBPC_BAD_LEN, "controller2 property %d of %d bytes", t.Type, len(t.Value))
		}
	}
	if err := t.Err(); err != nil {
		return Action{}, errorf(OFPBPC_BAD_LEN, "controller2: %v", err)
	}
	return Action{Type: ActController, Controller: c}, nil
}

func putProp(b []byte, typ uint16, val []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, typ)
	b = binary.BigEndian.AppendUint16(b, uint16(4+len(val)))
	b = append(b, val...)
	return appendZeros(b, pad8(4+len(val))-4-len(val))
}

func encodeController2(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	c := a.Controller
	if c == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "controller without its body")
	}
	b = appendZeros(b, 6)
	if c.MaxLen != 0xffff {
		b = putProp(b, ac2MaxLen, binary.BigEndian.AppendUint32(nil, uint32(c.MaxLen)<<16))
	}
	if c.ID != 0 {
		b = putProp(b, ac2ControllerID, binary.BigEndian.AppendUint32(nil, uint32(c.ID)<<16))
	}
	if c.Reason != ReasonAction {
		b = putProp(b, ac2Reason, []byte{c.Reason})
	}
	if len(c.Userdata) > 0 {
		b = putProp(b, ac2Userdata, c.Userdata)
	}
	if c.Pause {
		b = putProp(b, ac2Pause, nil)
	}
	if c.MeterID != NoMeter {
		b = putProp(b, ac2MeterID, binary.BigEndian.AppendUint32(nil, c.MeterID))
	}
	return b, nil
}

func decodeOutputReg(p []byte, _ uint8, in *actionInstance, _ int) (Action, error) {
	ofsNbits := binary.BigEndian.Uint16(p[10:])
	a := Action{Type: ActOutputReg}
	if in.raw == RawActNXAST_OUTPUT_REG {
		f := fieldOfHeader(binary.BigEndian.Uint32(p[12:]))
		if f == nil {
			return a, errorf(OFPBAC_BAD_ARGUMENT, "output_reg from unknown field")
		}
		a.Src, a.MaxLen = subfieldOf(f, ofsNbits), binary.BigEndian.Uint16(p[16:])
		if !isZero(p[18:24]) {
			return a, errorf(OFPBAC_BAD_ARGUMENT, "output_reg padding is not zero")
		}
	} else {
		a.MaxLen = binary.BigEndian.Uint16(p[12:])
		f, n, err := pullHeader(p[14:])
		if err != nil {
			return a, err
		}
		a.Src = subfieldOf(f, ofsNbits)
		if !isZero(p[14+n:]) {
			return a, errorf(OFPBAC_BAD_ARGUMENT, "output_reg2 padding is not zero")
		}
	}
	return a, checkSubfield(a.Src)
}

func encodeOutputReg(b []byte, a *Action, _ uint8, in *actionInstance, _ int) ([]byte, error) {
	if a.Src.Field == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "output_reg without a source")
	}
	b = binary.BigEndian.AppendUint16(b, ofsNBits(a.Src))
	if in.raw == RawActNXAST_OUTPUT_REG {
		b = binary.BigEndian.AppendUint32(b, header32(a.Src.Field))
		return binary.BigEndian.AppendUint16(b, a.MaxLen), nil
	}
	b = binary.BigEndian.AppendUint16(b, a.MaxLen)
	return putHeader(b, a.Src.Field), nil
}

func decodeOutputTrunc(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	a := Action{Type: ActOutputTrunc, Port: uint32(binary.BigEndian.Uint16(p[10:])), Arg: uint64(binary.BigEndian.Uint32(p[12:]))}
	if a.Arg < 14 {
		return a, errorf(OFPBAC_BAD_ARGUMENT, "output_trunc max_len %d is shorter than an Ethernet header", a.Arg)
	}
	return a, checkOutputPort(a.Port, PortMax)
}

func encodeOutputTrunc(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	b = binary.BigEndian.AppendUint16(b, uint16(a.Port))
	return binary.BigEndian.AppendUint32(b, uint32(a.Arg)), nil
}

func decodeNote(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	return Action{Type: ActNote, Data: bytes.Clone(p[10:])}, nil
}

func encodeNote(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	return append(b, a.Data...), nil
}

func decodeConjunction(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	c := &Conjunction{Clause: p[10], NClauses: p[11], ID: binary.BigEndian.Uint32(p[12:])}
	if c.NClauses < 2 || c.NClauses > 64 || c.Clause >= c.NClauses {
		return Action{}, errorf(NXBAC_BAD_CONJUNCTION, "conjunction clause %d of %d", c.Clause, c.NClauses)
	}
	return Action{Type: ActConjunction, Conj: c}, nil
}

func encodeConjunction(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	c := a.Conj
	if c == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "conjunction without its body")
	}
	b = append(b, c.Clause, c.NClauses)
	return binary.BigEndian.AppendUint32(b, c.ID), nil
}

func decodeDecTTL(p []byte, _ uint8, in *actionInstance, _ int) (Action, error) {
	if in.raw == RawActOFPAT_DEC_NW_TTL {
		return Action{Type: ActDecTTL, IDs: []uint16{0}}, nil
	}
	n := int(binary.BigEndian.Uint16(p[10:]))
	if !isZero(p[12:16]) {
		return Action{}, errorf(NXBRC_MUST_BE_ZERO, "dec_ttl_cnt_ids padding is not zero")
	}
	if 16+2*n > len(p) {
		return Action{}, errorf(OFPBAC_BAD_LEN, "dec_ttl_cnt_ids with %d ids in %d bytes", n, len(p))
	}
	a := Action{Type: ActDecTTL, IDs: make([]uint16, n)}
	for i := range a.IDs {
		a.IDs[i] = binary.BigEndian.Uint16(p[16+2*i:])
	}
	return a, nil
}

func encodeDecTTL(b []byte, a *Action, _ uint8, in *actionInstance, _ int) ([]byte, error) {
	if in.raw == RawActOFPAT_DEC_NW_TTL {
		return b, nil
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(a.IDs)))
	b = appendZeros(b, 4)
	for _, id := range a.IDs {
		b = binary.BigEndian.AppendUint16(b, id)
	}
	return b, nil
}

func decodeMultipath(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	m := &Multipath{Fields: binary.BigEndian.Uint16(p[10:]), Basis: binary.BigEndian.Uint16(p[12:]),
		Algorithm: binary.BigEndian.Uint16(p[16:]), MaxLink: binary.BigEndian.Uint16(p[18:]),
		Arg: binary.BigEndian.Uint32(p[20:])}
	f := fieldOfHeader(binary.BigEndian.Uint32(p[28:]))
	if f == nil {
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "multipath to unknown field")
	}
	m.Dst = subfieldOf(f, binary.BigEndian.Uint16(p[26:]))
	if HashFieldsName(m.Fields) == "" {
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "multipath fields %d", m.Fields)
	}
	if MultipathAlgName(m.Algorithm) == "" {
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "multipath algorithm %d", m.Algorithm)
	}
	if err := checkSubfield(m.Dst); err != nil {
		return Action{}, err
	}
	if m.Dst.NBits < 32 && uint32(m.MaxLink)>>m.Dst.NBits != 0 {
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "multipath needs more than %d bits for %d links", m.Dst.NBits, int(m.MaxLink)+1)
	}
	return Action{Type: ActMultipath, Multipath: m}, nil
}

// hashFieldNames are the NX_HASH_FIELDS_* names, by value; read-only.
var hashFieldNames = [...]string{"eth_src", "symmetric_l4", "symmetric_l3l4", "symmetric_l3l4+udp",
	"nw_src", "nw_dst", "symmetric_l3"}

// multipathAlgNames are the NX_MP_ALG_* names, by value; read-only.
var multipathAlgNames = [...]string{"modulo_n", "hash_threshold", "hrw", "iter_hash"}

// HashFieldsName is the text name of an NX_HASH_FIELDS_* value (as
// multipath and bundle spell it), or "" if unknown.
func HashFieldsName(v uint16) string { return nameAt(hashFieldNames[:], v) }

// HashFieldsByName is the NX_HASH_FIELDS_* value of a name.
func HashFieldsByName(s string) (uint16, bool) { return indexOf(hashFieldNames[:], s) }

// MultipathAlgName is the text name of an NX_MP_ALG_* value, or "".
func MultipathAlgName(v uint16) string { return nameAt(multipathAlgNames[:], v) }

// MultipathAlgByName is the NX_MP_ALG_* value of a name.
func MultipathAlgByName(s string) (uint16, bool) { return indexOf(multipathAlgNames[:], s) }

func nameAt(names []string, v uint16) string {
	if int(v) < len(names) {
		return names[v]
	}
	return ""
}

func indexOf(names []string, s string) (uint16, bool) {
	for i, n := range names {
		if n == s {
			return uint16(i), true
		}
	}
	return 0, false
}

func encodeMultipath(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	m := a.Multipath
	if m == nil || m.Dst.Field == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "multipath without its body")
	}
	b = binary.BigEndian.AppendUint16(b, m.Fields)
	b = binary.BigEndian.AppendUint16(b, m.Basis)
	b = append(b, 0, 0)
	b = binary.BigEndian.AppendUint16(b, m.Algorithm)
	b = binary.BigEndian.AppendUint16(b, m.MaxLink)
	b = binary.BigEndian.AppendUint32(b, m.Arg)
	b = append(b, 0, 0)
	b = binary.BigEndian.AppendUint16(b, ofsNBits(m.Dst))
	return binary.BigEndian.AppendUint32(b, header32(m.Dst.Field)), nil
}

// nxmInPort is the NXM_OF_IN_PORT header, bundle's member type.
const nxmInPort = 0x00000002

func decodeBundle(p []byte, _ uint8, in *actionInstance, _ int) (Action, error) {
	bd := &Bundle{Algorithm: binary.BigEndian.Uint16(p[10:]), Fields: binary.BigEndian.Uint16(p[12:]),
		Basis: binary.BigEndian.Uint16(p[14:])}
	memberType, n := binary.BigEndian.Uint32(p[16:]), int(binary.BigEndian.Uint16(p[20:]))
	ofsNbits, dst := binary.BigEndian.Uint16(p[22:]), binary.BigEndian.Uint32(p[24:])
	switch {
	case bd.Algorithm > 1:
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "bundle algorithm %d", bd.Algorithm)
	case HashFieldsName(bd.Fields) == "":
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "bundle fields %d", bd.Fields)
	case memberType != nxmInPort:
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "bundle member type %#x", memberType)
	case !isZero(p[28:32]):
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "bundle padding is not zero")
	case 32+2*n > len(p):
		return Action{}, errorf(OFPBAC_BAD_LEN, "bundle with %d members in %d bytes", n, len(p))
	}
	if in.raw == RawActNXAST_BUNDLE_LOAD {
		f := fieldOfHeader(dst)
		if f == nil {
			return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "bundle_load to unknown field")
		}
		bd.Dst = subfieldOf(f, ofsNbits)
		if err := checkSubfield(bd.Dst); err != nil {
			return Action{}, err
		}
		if bd.Dst.NBits < 16 {
			return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "bundle_load destination of %d bits", bd.Dst.NBits)
		}
	} else if ofsNbits != 0 || dst != 0 {
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "bundle with a destination")
	}
	bd.Members = make([]uint16, n)
	for i := range bd.Members {
		bd.Members[i] = binary.BigEndian.Uint16(p[32+2*i:])
	}
	return Action{Type: ActBundle, Bundle: bd}, nil
}

func encodeBundle(b []byte, a *Action, _ uint8, in *actionInstance, _ int) ([]byte, error) {
	bd := a.Bundle
	if bd == nil || (in.raw == RawActNXAST_BUNDLE_LOAD) != (bd.Dst.Field != nil) {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "bundle without its body or with a mismatched destination")
	}
	b = binary.BigEndian.AppendUint16(b, bd.Algorithm)
	b = binary.BigEndian.AppendUint16(b, bd.Fields)
	b = binary.BigEndian.AppendUint16(b, bd.Basis)
	b = binary.BigEndian.AppendUint32(b, nxmInPort)
	b = binary.BigEndian.AppendUint16(b, uint16(len(bd.Members)))
	if bd.Dst.Field != nil {
		b = binary.BigEndian.AppendUint16(b, ofsNBits(bd.Dst))
		b = binary.BigEndian.AppendUint32(b, header32(bd.Dst.Field))
	} else {
		b = appendZeros(b, 6)
	}
	b = appendZeros(b, 4)
	for _, m := range bd.Members {
		b = binary.BigEndian.AppendUint16(b, m)
	}
	return b, nil
}

func decodeFinTimeout(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	return Action{Type: ActFinTimeout, FinTimeout: &FinTimeout{Idle: binary.BigEndian.Uint16(p[10:]), Hard: binary.BigEndian.Uint16(p[12:])}}, nil
}

func encodeFinTimeout(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	if a.FinTimeout == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "fin_timeout without its body")
	}
	b = binary.BigEndian.AppendUint16(b, a.FinTimeout.Idle)
	return binary.BigEndian.AppendUint16(b, a.FinTimeout.Hard), nil
}

func decodeClone(p []byte, v uint8, _ *actionInstance, depth int) (Action, error) {
	nested, err := decodeActions(p[16:], v, depth+1)
	if err != nil {
		return Action{}, err
	}
	return Action{Type: ActClone, Nested: nested}, nil
}

func encodeClone(b []byte, a *Action, v uint8, _ *actionInstance, depth int) ([]byte, error) {
	b = appendZeros(b, 6)
	return appendActionList(b, a.Nested, v, depth+1)
}

func decodeCheckPktLarger(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	a := Action{Type: ActCheckPktLen, Arg: uint64(binary.BigEndian.Uint16(p[10:]))}
	f := fieldOfHeader(binary.BigEndian.Uint32(p[14:]))
	if f == nil {
		return a, errorf(OFPBAC_BAD_ARGUMENT, "check_pkt_larger to unknown field")
	}
	a.Dst = Subfield{f, int(binary.BigEndian.Uint16(p[12:])), 1}
	return a, checkSubfield(a.Dst)
}

func encodeCheckPktLarger(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	if a.Dst.Field == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "check_pkt_larger without a destination")
	}
	b = binary.BigEndian.AppendUint16(b, uint16(a.Arg))
	b = binary.BigEndian.AppendUint16(b, uint16(a.Dst.Ofs))
	return binary.BigEndian.AppendUint32(b, header32(a.Dst.Field)), nil
}

func decodeSample(p []byte, _ uint8, in *actionInstance, _ int) (Action, error) {
	s := &Sample{Probability: binary.BigEndian.Uint16(p[10:]), CollectorSetID: binary.BigEndian.Uint32(p[12:]),
		ObsDomainID: binary.BigEndian.Uint32(p[16:]), ObsPointID: binary.BigEndian.Uint32(p[20:]), SamplingPort: PortNone}
	if in.raw != RawActNXAST_SAMPLE {
		s.SamplingPort = binary.BigEndian.Uint16(p[24:])
	}
	if in.raw == RawActNXAST_SAMPLE3 {
		s.Direction = p[26]
		if s.Direction > 2 {
			return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "sample direction %d", s.Direction)
		}
	}
	if s.Probability == 0 {
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "sample probability 0")
	}
	return Action{Type: ActSample, Sample: s}, nil
}

func encodeSample(b []byte, a *Action, _ uint8, in *actionInstance, _ int) ([]byte, error) {
	s := a.Sample
	if s == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "sample without its body")
	}
	b = binary.BigEndian.AppendUint16(b, s.Probability)
	b = binary.BigEndian.AppendUint32(b, s.CollectorSetID)
	b = binary.BigEndian.AppendUint32(b, s.ObsDomainID)
	b = binary.BigEndian.AppendUint32(b, s.ObsPointID)
	if in.raw != RawActNXAST_SAMPLE {
		b = binary.BigEndian.AppendUint16(b, s.SamplingPort)
	}
	if in.raw == RawActNXAST_SAMPLE3 {
		b = append(b, s.Direction)
	}
	return b, nil
}

func decodeStack(p []byte, _ uint8, in *actionInstance, _ int) (Action, error) {
	f, n, err := pullHeader(p[12:])
	if err != nil {
		return Action{}, err
	}
	if 12+n+2 > len(p) {
		return Action{}, errorf(OFPBAC_BAD_LEN, "stack action of %d bytes", len(p))
	}
	sf := Subfield{f, int(binary.BigEndian.Uint16(p[10:])), int(binary.BigEndian.Uint16(p[12+n:]))}
	if !isZero(p[12+n+2:]) {
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "stack action padding is not zero")
	}
	if err := checkSubfield(sf); err != nil {
		return Action{}, err
	}
	if in.raw == RawActNXAST_STACK_PUSH {
		return Action{Type: ActStackPush, Src: sf}, nil
	}
	return Action{Type: ActStackPop, Dst: sf}, nil
}

func encodeStack(b []byte, a *Action, _ uint8, in *actionInstance, _ int) ([]byte, error) {
	sf := a.Src
	if in.raw == RawActNXAST_STACK_POP {
		sf = a.Dst
	}
	if sf.Field == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "stack action without a field")
	}
	b = binary.BigEndian.AppendUint16(b, uint16(sf.Ofs))
	b = putHeader(b, sf.Field)
	return binary.BigEndian.AppendUint16(b, uint16(sf.NBits)), nil
}

func decodeWriteMetadata(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	if !isZero(p[10:16]) {
		return Action{}, errorf(NXBRC_MUST_BE_ZERO, "write_metadata padding is not zero")
	}
	return Action{Type: ActWriteMetadata, Arg: binary.BigEndian.Uint64(p[16:]), Arg2: binary.BigEndian.Uint64(p[24:])}, nil
}

func encodeWriteMetadata(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	b = appendZeros(b, 6)
	b = binary.BigEndian.AppendUint64(b, a.Arg)
	return binary.BigEndian.AppendUint64(b, a.Arg2), nil
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
