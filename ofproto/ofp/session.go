package ofp

import (
	"encoding/binary"
	"net/netip"
)

// Controller roles: OpenFlow 1.2+ (OFPCR12_ROLE_*) and Nicira (NX_ROLE_*)
// numbering. NX role n is OpenFlow role n+1.
const (
	RoleNoChange = 0
	RoleEqual    = 1
	RoleMaster   = 2
	RoleSlave    = 3

	NXRoleOther  = 0
	NXRoleMaster = 1
	NXRoleSlave  = 2
)

// RoleRequest is a role request or reply: OFPT12_ROLE_REQUEST/REPLY, or
// NXT_ROLE_REQUEST/REPLY when Nicira is set. Role is the wire value
// (Nicira or OpenFlow numbering, see OFRole); GenerationID exists only in
// the OpenFlow form (all-ones in a reply means "none").
type RoleRequest struct {
	Nicira       bool
	Reply        bool
	Role         uint32
	GenerationID uint64
}

// OFRole returns the role in OpenFlow 1.2+ numbering.
func (rr *RoleRequest) OFRole() uint32 {
	if rr.Nicira {
		return rr.Role + 1
	}
	return rr.Role
}

// SetOFRole sets Role from an OpenFlow 1.2+ role, converting to Nicira
// numbering if Nicira is set (which cannot express RoleNoChange).
func (rr *RoleRequest) SetOFRole(role uint32) error {
	if role > RoleSlave || (rr.Nicira && role == RoleNoChange) {
		return errorf(OFPRRFC_BAD_ROLE, "role %d (nicira %v)", role, rr.Nicira)
	}
	rr.Role = role
	if rr.Nicira {
		rr.Role--
	}
	return nil
}

// SetFlowFormat is NXT_SET_FLOW_FORMAT.
type SetFlowFormat struct{ Format uint32 }

// NXT_SET_FLOW_FORMAT formats.
const (
	NXFFOpenFlow10 = 0
	NXFFNXM        = 2
)

// SetPacketInFormat is NXT_SET_PACKET_IN_FORMAT; Format is PacketInStandard,
// PacketInNXT or PacketIn2.
type SetPacketInFormat struct{ Format uint32 }

// SetControllerID is NXT_SET_CONTROLLER_ID.
type SetControllerID struct{ ID uint16 }

// FlowModTableID is NXT_FLOW_MOD_TABLE_ID: lets OpenFlow 1.0 flow mods
// carry a table ID in the command's high byte.
type FlowModTableID struct{ Enable bool }

// FlowAgeExt is NXT_FLOW_AGE (no body; Open vSwitch ignores it).
type FlowAgeExt struct{}

// GetAsyncRequest is OFPT13/14_GET_ASYNC_REQUEST.
type GetAsyncRequest struct{}

// Async message kinds: indexes into AsyncConfig's masks (Open vSwitch's
// OAM_*). In the property form the property type for kind k is 2k for
// the slave mask and 2k+1 for the master mask.
const (
	AsyncPacketIn = iota
	AsyncPortStatus
	AsyncFlowRemoved
	AsyncRoleStatus
	AsyncTableStatus
	AsyncRequestForward
	NumAsyncKinds
)

// AsyncConfig is the asynchronous message configuration: a set request
// (OFPT13_SET_ASYNC, NXT_SET_ASYNC_CONFIG, and in property form
// OFPT14_SET_ASYNC and NXT_SET_ASYNC_CONFIG2) or, with Reply, a
// get-async reply (OFPT13/14_GET_ASYNC_REPLY). Masks are wire values: bit
// n set enables reason n.
//
// Present says which properties a property-form message carries (bit 2k
// slave, 2k+1 master mask of kind k): a property-form set changes only
// those. The legacy 24-byte form always carries packet-in, port-status
// and flow-removed masks; it decodes with Present zero. Property form is
// used in OpenFlow 1.4+, and before that when Nicira is set and Present
// is not zero (NXT_SET_ASYNC_CONFIG2).
type AsyncConfig struct {
	Reply         bool
	Nicira        bool
	Master, Slave [NumAsyncKinds]uint32
	Present       uint16
}

// DefaultAsyncConfig returns Open vSwitch's initial configuration for a
// connection of version v (ofputil_async_cfg_default) in wire terms: the
// master gets packet-ins for every reason but invalid TTL, port status
// and flow removed (the reasons v knows); slaves get port status only.
// All twelve properties are present, as in Open vSwitch's get-async reply.
func DefaultAsyncConfig(v uint8) AsyncConfig {
	ac := AsyncConfig{Present: 1<<(2*NumAsyncKinds) - 1}
	ac.Master[AsyncPacketIn] = 0x3f &^ (1 << OFPRInvalidTTL)
	ac.Master[AsyncPortStatus], ac.Slave[AsyncPortStatus] = 0x7, 0x7
	switch {
	case v >= 5:
		ac.Master[AsyncFlowRemoved] = 0x3f
	case v == 4:
		ac.Master[AsyncFlowRemoved] = 0xf
	default:
		ac.Master[AsyncFlowRemoved] = 0x7
	}
	return ac
}

// asyncAllowed is the valid reasons per kind: [kind][0] before OpenFlow
// 1.4, [kind][1] from 1.4 (Open vSwitch's async_props).
var asyncAllowed = [NumAsyncKinds][2]uint32{
	AsyncPacketIn:       {0x07, 0x3f},
	AsyncPortStatus:     {0x07, 0x07},
	AsyncFlowRemoved:    {0x3f, 0x3f},
	AsyncRoleStatus:     {0x07, 0x07},
	AsyncTableStatus:    {0x18, 0x18},
	AsyncRequestForward: {0x03, 0x03},
}

// Bundle control types (OFPBCT_*) and flags (OFPBF_*).
const (
	BundleOpenRequest    = 0
	BundleOpenReply      = 1
	BundleCloseRequest   = 2
	BundleCloseReply     = 3
	BundleCommitRequest  = 4
	BundleCommitReply    = 5
	BundleDiscardRequest = 6
	BundleDiscardReply   = 7

	BundleAtomic  = 1
	BundleOrdered = 2
)

// CTFlushZone is NXT_CT_FLUSH_ZONE.
type CTFlushZone struct{ Zone uint16 }

// CTFlush is NXT_CT_FLUSH (Open vSwitch 3.1): flush the conntrack entries
// matching the tuples (zero fields are wildcards) in Zone, or in the
// default zone if HasZone is false.
type CTFlush struct {
	Zone    uint16
	HasZone bool
	IPProto uint8
	Orig    CTTuple
	Reply   CTTuple
}

// CTTuple is one direction of a conntrack 5-tuple; addresses are IPv6 or
// IPv4-mapped IPv6.
type CTTuple struct {
	Src, Dst           [16]byte
	SrcPort, DstPort   uint16
	ICMPID             uint16
	ICMPType, ICMPCode uint8
}

// TLV table mod commands (NXTTMC_*).
const (
	TLVAdd    = 0
	TLVDelete = 1
	TLVClear  = 2
)

// maxTLVIndex is the number of tun_metadata fields; maxTLVOptLen the
// largest option Open vSwitch maps.
const (
	maxTLVIndex  = 64
	maxTLVOptLen = 124
)

// TLVMap maps a Geneve option (class, type, length) to tun_metadata<Index>.
type TLVMap struct {
	OptClass uint16
	OptType  uint8
	OptLen   uint8
	Index    uint16
}

// TLVTableMod is NXT_TLV_TABLE_MOD.
type TLVTableMod struct {
	Command  uint16
	Mappings []TLVMap
}

// TLVTableRequest is NXT_TLV_TABLE_REQUEST.
type TLVTableRequest struct{}

// TLVTableReply is NXT_TLV_TABLE_REPLY.
type TLVTableReply struct {
	MaxOptionSpace uint32
	MaxFields      uint16
	Mappings       []TLVMap
}

func init() {
	for _, r := range []Raw{RawOFPT12_ROLE_REQUEST, RawOFPT12_ROLE_REPLY, RawNXT_ROLE_REQUEST, RawNXT_ROLE_REPLY} {
		decoders[r] = decodeRole
	}
	decoders[RawNXT_SET_FLOW_FORMAT] = func(r *reader, _ uint8, _ Raw) (Message, error) {
		f := r.u32()
		if r.Err() == nil && f != NXFFOpenFlow10 && f != NXFFNXM {
			return nil, errorf(OFPBRC_EPERM, "flow format %d", f)
		}
		return &SetFlowFormat{Format: f}, nil
	}
	decoders[RawNXT_SET_PACKET_IN_FORMAT] = func(r *reader, _ uint8, _ Raw) (Message, error) {
		f := r.u32()
		if r.Err() == nil && f > PacketIn2 {
			return nil, errorf(OFPBRC_EPERM, "packet-in format %d", f)
		}
		return &SetPacketInFormat{Format: f}, nil
	}
	decoders[RawNXT_SET_CONTROLLER_ID] = func(r *reader, _ uint8, _ Raw) (Message, error) {
		if err := mustBeZero(r, 6); err != nil {
			return nil, err
		}
		return &SetControllerID{ID: r.u16()}, nil
	}
	decoders[RawNXT_FLOW_MOD_TABLE_ID] = func(r *reader, _ uint8, _ Raw) (Message, error) {
		m := &FlowModTableID{Enable: r.u8() != 0}
		r.skip(7)
		return m, nil
	}
	decoders[RawNXT_FLOW_AGE] = func(*reader, uint8, Raw) (Message, error) { return &FlowAgeExt{}, nil }
	decoders[RawOFPT13_GET_ASYNC_REQUEST] = func(*reader, uint8, Raw) (Message, error) { return &GetAsyncRequest{}, nil }
	decoders[RawOFPT14_GET_ASYNC_REQUEST] = decoders[RawOFPT13_GET_ASYNC_REQUEST]
	for _, r := range []Raw{RawOFPT13_GET_ASYNC_REPLY, RawOFPT14_GET_ASYNC_REPLY, RawOFPT13_SET_ASYNC,
		RawNXT_SET_ASYNC_CONFIG, RawNXT_SET_ASYNC_CONFIG2, RawOFPT14_SET_ASYNC} {
		decoders[r] = decodeAsyncConfig
	}
	decoders[RawNXT_CT_FLUSH_ZONE] = func(r *reader, _ uint8, _ Raw) (Message, error) {
		if err := mustBeZero(r, 6); err != nil {
			return nil, err
		}
		return &CTFlushZone{Zone: r.u16()}, nil
	}
	decoders[RawNXT_CT_FLUSH] = decodeCTFlush
	decoders[RawNXT_TLV_TABLE_MOD] = func(r *reader, _ uint8, _ Raw) (Message, error) {
		m := &TLVTableMod{Command: r.u16()}
		r.skip(6)
		if r.Err() == nil && m.Command > TLVClear {
			return nil, errorf(NXTTMFC_BAD_COMMAND, "TLV table mod command %d", m.Command)
		}
		var err error
		m.Mappings, err = decodeTLVMaps(r, maxTLVIndex)
		return m, err
	}
	decoders[RawNXT_TLV_TABLE_REQUEST] = func(*reader, uint8, Raw) (Message, error) { return &TLVTableRequest{}, nil }
	decoders[RawNXT_TLV_TABLE_REPLY] = func(r *reader, _ uint8, _ Raw) (Message, error) {
		m := &TLVTableReply{MaxOptionSpace: r.u32(), MaxFields: r.u16()}
		r.skip(10)
		var err error
		m.Mappings, err = decodeTLVMaps(r, int(m.MaxFields))
		return m, err
	}
}

// mustBeZero reads n padding bytes that Open vSwitch requires to be zero.
func mustBeZero(r *reader, n int) error {
	for _, c := range r.take(n) {
		if c != 0 {
			return errorf(NXBRC_MUST_BE_ZERO, "%s: nonzero padding", r.what)
		}
	}
	return r.Err()
}

func decodeRole(r *reader, _ uint8, raw Raw) (Message, error) {
	rr := &RoleRequest{Reply: raw == RawOFPT12_ROLE_REPLY || raw == RawNXT_ROLE_REPLY}
	rr.Role = r.u32()
	if raw == RawNXT_ROLE_REQUEST || raw == RawNXT_ROLE_REPLY {
		rr.Nicira = true
		if rr.Role > NXRoleSlave {
			return nil, errorf(OFPRRFC_BAD_ROLE, "Nicira role %d", rr.Role)
		}
		return rr, nil
	}
	r.skip(4)
	rr.GenerationID = r.u64()
	if rr.Role > RoleSlave {
		return nil, errorf(OFPRRFC_BAD_ROLE, "role %d", rr.Role)
	}
	return rr, nil
}

// RawFor returns the role message's raw type.
func (rr *RoleRequest) RawFor(v uint8) (Raw, error) {
	switch {
	case rr.Nicira && rr.Reply:
		return RawNXT_ROLE_REPLY, nil
	case rr.Nicira:
		return RawNXT_ROLE_REQUEST, nil
	case rr.Reply:
		return versionRange(v, RawOFPT12_ROLE_REPLY)
	}
	return versionRange(v, RawOFPT12_ROLE_REQUEST)
}

func (rr *RoleRequest) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = binary.BigEndian.AppendUint32(b, rr.Role)
	if rr.Nicira {
		return b, nil
	}
	b = append(b, 0, 0, 0, 0)
	return binary.BigEndian.AppendUint64(b, rr.GenerationID), nil
}

func (*SetFlowFormat) RawFor(uint8) (Raw, error) { return RawNXT_SET_FLOW_FORMAT, nil }
func (m *SetFlowFormat) appendBody(b []byte, _ uint8) ([]byte, error) {
	return binary.BigEndian.AppendUint32(b, m.Format), nil
}

func (*SetPacketInFormat) RawFor(uint8) (Raw, error) { return RawNXT_SET_PACKET_IN_FORMAT, nil }
func (m *SetPacketInFormat) appendBody(b []byte, _ uint8) ([]byte, error) {
	return binary.BigEndian.AppendUint32(b, m.Format), nil
}

func (*SetControllerID) RawFor(uint8) (Raw, error) { return RawNXT_SET_CONTROLLER_ID, nil }
func (m *SetControllerID) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = append(b, 0, 0, 0, 0, 0, 0)
	return binary.BigEndian.AppendUint16(b, m.ID), nil
}

func (*FlowModTableID) RawFor(uint8) (Raw, error) { return RawNXT_FLOW_MOD_TABLE_ID, nil }
func (m *FlowModTableID) appendBody(b []byte, _ uint8) ([]byte, error) {
	var set byte
	if m.Enable {
		set = 1
	}
	return append(b, set, 0, 0, 0, 0, 0, 0, 0), nil
}

func (*FlowAgeExt) RawFor(uint8) (Raw, error)                    { return RawNXT_FLOW_AGE, nil }
func (*FlowAgeExt) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }

func (*GetAsyncRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPT13_GET_ASYNC_REQUEST, RawOFPT14_GET_ASYNC_REQUEST)
}
func (*GetAsyncRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }

func decodeAsyncConfig(r *reader, v uint8, raw Raw) (Message, error) {
	ac := &AsyncConfig{
		Reply:  raw == RawOFPT13_GET_ASYNC_REPLY || raw == RawOFPT14_GET_ASYNC_REPLY,
		Nicira: raw == RawNXT_SET_ASYNC_CONFIG || raw == RawNXT_SET_ASYNC_CONFIG2,
	}
	switch raw {
	case RawOFPT13_GET_ASYNC_REPLY, RawOFPT13_SET_ASYNC, RawNXT_SET_ASYNC_CONFIG:
		// Legacy form: [master, slave] for each of three kinds; never
		// validated (Open vSwitch decodes it loosely).
		for k := AsyncPacketIn; k <= AsyncFlowRemoved; k++ {
			ac.Master[k], ac.Slave[k] = r.u32(), r.u32()
		}
		return ac, nil
	}
	// A switch decodes set requests strictly; a controller decodes the
	// reply loosely, ignoring what it does not know.
	strict := !ac.Reply
	vi := 0
	if v >= 5 {
		vi = 1
	}
	it := newOfpropIter(r.take(r.len()), 0xfffe, rawTable[raw].name)
	for it.next() {
		if it.Type >= 2*NumAsyncKinds {
			if !strict {
				continue
			}
			if err := it.unknown(); CodeOf(err) == OFPBPC_BAD_TYPE {
				return nil, errorf(OFPACFC_UNSUPPORTED, "async config property type %d", it.Type)
			} else {
				return nil, err
			}
		}
		mask, err := it.u32()
		if err != nil {
			return nil, err
		}
		k := it.Type / 2
		if allowed := asyncAllowed[k][vi]; strict && mask&^allowed != 0 {
			return nil, errorf(OFPACFC_INVALID, "async config property %d: mask %#x outside %#x", it.Type, mask, allowed)
		}
		if it.Type%2 == 1 {
			ac.Master[k] = mask
		} else {
			ac.Slave[k] = mask
		}
		ac.Present |= 1 << it.Type
	}
	return ac, it.Err()
}

func (ac *AsyncConfig) propForm(v uint8) bool { return v >= 5 || (ac.Nicira && ac.Present != 0) }

// RawFor returns the raw type for the configuration in version v.
func (ac *AsyncConfig) RawFor(v uint8) (Raw, error) {
	switch {
	case ac.Reply:
		return versionRange(v, RawOFPT13_GET_ASYNC_REPLY, RawOFPT14_GET_ASYNC_REPLY)
	case v >= 5:
		return versionRange(v, RawOFPT14_SET_ASYNC)
	case ac.propForm(v):
		return RawNXT_SET_ASYNC_CONFIG2, nil
	case v == 4 && !ac.Nicira:
		return RawOFPT13_SET_ASYNC, nil
	}
	return RawNXT_SET_ASYNC_CONFIG, nil
}

// appendBody encodes the masks limited to the reasons version v knows, as
// Open vSwitch does (so a configuration kept in OpenFlow 1.4 terms can be
// sent in any version).
func (ac *AsyncConfig) appendBody(b []byte, v uint8) ([]byte, error) {
	vi := 0
	if v >= 5 {
		vi = 1
	}
	if !ac.propForm(v) {
		for k := AsyncPacketIn; k <= AsyncFlowRemoved; k++ {
			b = binary.BigEndian.AppendUint32(b, ac.Master[k]&asyncAllowed[k][vi])
			b = binary.BigEndian.AppendUint32(b, ac.Slave[k]&asyncAllowed[k][vi])
		}
		return b, nil
	}
	for t := uint16(0); t < 2*NumAsyncKinds; t++ {
		if ac.Present&(1<<t) == 0 {
			continue
		}
		mask := ac.Slave[t/2]
		if t%2 == 1 {
			mask = ac.Master[t/2]
		}
		b = ofpropAppendU32(b, t, mask&asyncAllowed[t/2][vi])
	}
	return b, nil
}

// NXT_CT_FLUSH property types.
const (
	ctFlushOrigTuple  = 0
	ctFlushReplyTuple = 1
	ctFlushZoneID     = 2

	ctTupleSrc      = 0
	ctTupleDst      = 1
	ctTupleSrcPort  = 2
	ctTupleDstPort  = 3
	ctTupleICMPID   = 4
	ctTupleICMPType = 5
	ctTupleICMPCode = 6
)

func decodeCTFlush(r *reader, _ uint8, _ Raw) (Message, error) {
	m := &CTFlush{IPProto: r.u8()}
	if err := mustBeZero(r, 7); err != nil {
		return nil, err
	}
	var l3 int // 4 or 6 once an address is seen: both tuples must agree
	it := newOfpropIter(r.take(r.len()), 0xffff, "NXT_CT_FLUSH")
	for it.next() {
		var err error
		switch it.Type {
		case ctFlushOrigTuple:
			err = m.Orig.decode(&it.Value, &l3)
		case ctFlushReplyTuple:
			err = m.Reply.decode(&it.Value, &l3)
		case ctFlushZoneID:
			m.HasZone = true
			m.Zone, err = it.u16()
		}
		if err != nil {
			return nil, err
		}
	}
	return m, it.Err()
}

func (t *CTTuple) decode(prop *[]byte, l3 *int) error {
	p := *prop
	if len(p) < 4 {
		return errorf(OFPBPC_BAD_LEN, "NXT_CT_FLUSH tuple property of %d bytes", len(p)+4)
	}
	it := newOfpropIter(p[4:], 0xffff, "NXT_CT_FLUSH tuple")
	for it.next() {
		var err error
		switch it.Type {
		case ctTupleSrc, ctTupleDst:
			if len(it.Value) < 16 {
				return it.badLen("16")
			}
			a := &t.Src
			if it.Type == ctTupleDst {
				a = &t.Dst
			}
			copy(a[:], it.Value)
			if *a != ([16]byte{}) {
				fam := 6
				if netip.AddrFrom16(*a).Is4In6() {
					fam = 4
				}
				if *l3 != 0 && *l3 != fam {
					return errorf(OFPBPC_BAD_VALUE, "NXT_CT_FLUSH mixes IPv4 and IPv6 addresses")
				}
				*l3 = fam
			}
		case ctTupleSrcPort:
			t.SrcPort, err = it.u16()
		case ctTupleDstPort:
			t.DstPort, err = it.u16()
		case ctTupleICMPID:
			t.ICMPID, err = it.u16()
		case ctTupleICMPType:
			t.ICMPType, err = it.u8()
		case ctTupleICMPCode:
			t.ICMPCode, err = it.u8()
		}
		if err != nil {
			return err
		}
	}
	return it.Err()
}

// append appends the tuple's nested property as Open vSwitch does: only
// non-zero addresses; for ICMP the id, type and code, otherwise non-zero
// ports; nothing at all for an empty tuple.
func (t *CTTuple) append(b []byte, typ uint16, proto uint8) []byte {
	var in []byte
	if t.Src != ([16]byte{}) {
		in = ofpropAppend(in, ctTupleSrc, t.Src[:])
	}
	if t.Dst != ([16]byte{}) {
		in = ofpropAppend(in, ctTupleDst, t.Dst[:])
	}
	if proto == 1 || proto == 58 {
		in = ofpropAppendU16(in, ctTupleICMPID, t.ICMPID)
		in = ofpropAppendU8(in, ctTupleICMPType, t.ICMPType)
		in = ofpropAppendU8(in, ctTupleICMPCode, t.ICMPCode)
	} else {
		if t.SrcPort != 0 {
			in = ofpropAppendU16(in, ctTupleSrcPort, t.SrcPort)
		}
		if t.DstPort != 0 {
			in = ofpropAppendU16(in, ctTupleDstPort, t.DstPort)
		}
	}
	if len(in) == 0 {
		return b
	}
	return ofpropAppendNested(b, typ, in)
}

func (*CTFlush) RawFor(uint8) (Raw, error) { return RawNXT_CT_FLUSH, nil }
func (m *CTFlush) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = append(b, m.IPProto, 0, 0, 0, 0, 0, 0, 0)
	b = m.Orig.append(b, ctFlushOrigTuple, m.IPProto)
	b = m.Reply.append(b, ctFlushReplyTuple, m.IPProto)
	if m.HasZone {
		b = ofpropAppendU16(b, ctFlushZoneID, m.Zone)
	}
	return b, nil
}

func (*CTFlushZone) RawFor(uint8) (Raw, error) { return RawNXT_CT_FLUSH_ZONE, nil }
func (m *CTFlushZone) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = append(b, 0, 0, 0, 0, 0, 0)
	return binary.BigEndian.AppendUint16(b, m.Zone), nil
}

func decodeTLVMaps(r *reader, maxFields int) ([]TLVMap, error) {
	var ms []TLVMap
	for r.Err() == nil && r.len() > 0 {
		m := TLVMap{OptClass: r.u16(), OptType: r.u8(), OptLen: r.u8(), Index: r.u16()}
		r.skip(2)
		if r.Err() != nil {
			break
		}
		if m.OptLen%4 != 0 || m.OptLen > maxTLVOptLen {
			return nil, errorf(NXTTMFC_BAD_OPT_LEN, "TLV option length %d", m.OptLen)
		}
		if int(m.Index) >= maxFields {
			return nil, errorf(NXTTMFC_BAD_FIELD_IDX, "TLV field index %d (maximum %d)", m.Index, maxFields-1)
		}
		ms = append(ms, m)
	}
	return ms, r.Err()
}

func appendTLVMaps(b []byte, ms []TLVMap) []byte {
	for _, m := range ms {
		b = binary.BigEndian.AppendUint16(b, m.OptClass)
		b = append(b, m.OptType, m.OptLen)
		b = binary.BigEndian.AppendUint16(b, m.Index)
		b = append(b, 0, 0)
	}
	return b
}

func (*TLVTableMod) RawFor(uint8) (Raw, error) { return RawNXT_TLV_TABLE_MOD, nil }
func (m *TLVTableMod) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = binary.BigEndian.AppendUint16(b, m.Command)
	b = append(b, 0, 0, 0, 0, 0, 0)
	return appendTLVMaps(b, m.Mappings), nil
}

func (*TLVTableRequest) RawFor(uint8) (Raw, error)                    { return RawNXT_TLV_TABLE_REQUEST, nil }
func (*TLVTableRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }

func (*TLVTableReply) RawFor(uint8) (Raw, error) { return RawNXT_TLV_TABLE_REPLY, nil }
func (m *TLVTableReply) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = binary.BigEndian.AppendUint32(b, m.MaxOptionSpace)
	b = binary.BigEndian.AppendUint16(b, m.MaxFields)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	return appendTLVMaps(b, m.Mappings), nil
}
