package ofp

import (
	"encoding/binary"
	"net/netip"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// The connection-tracking family: ct, ct_clear and nat (which appears
// only inside ct's actions). Action fields: ct has CT (its nested exec
// and nat actions in CT.Actions); nat has NAT. Both encode in their one
// Nicira form.

func init() {
	registerKinds(map[ActionType]kindOps{
		ActCT:      {check: checkCT, canonical: []RawAction{RawActNXAST_CT}, actionSet: true},
		ActCTClear: {canonical: []RawAction{RawActNXAST_CT_CLEAR}, actionSet: true},
		ActNAT:     {check: checkNAT, canonical: []RawAction{RawActNXAST_NAT}},
	})
	registerRaws(map[RawAction]rawOps{
		RawActNXAST_CT:       codec(ActCT, decodeCT, encodeCT),
		RawActNXAST_NAT:      codec(ActNAT, decodeNAT, encodeNAT),
		RawActNXAST_CT_CLEAR: scalar(ActCTClear, 0),
	})
}

func checkCT(c *checker, a *Action, depth int) error {
	ct := a.CT()
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
}

func checkNAT(c *checker, a *Action, _ int) error {
	t := c.ethType()
	n := a.NAT()
	if n == nil || !c.isIP() || n.AddrMin.Is4() && t != 0x0800 || n.AddrMin.Is6() && t != 0x86dd {
		return errInconsistent("nat")
	}
	return nil
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
			n := nested[i].NAT()
			if nested[i].Type != ActNAT || n == nil || n.Flags != 0 || n.AddrMin.IsValid() || n.ProtoMin != 0 {
				return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "ct requires commit for actions other than nat without arguments")
			}
		}
	}
	c.Actions = nested
	return Action{Type: ActCT, Body: c}, nil
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
	c := a.CT()
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
	return Action{Type: ActNAT, Body: n}, nil
}

func (r *reader) takeOrZero(n int) []byte {
	if p := r.take(n); p != nil {
		return p
	}
	return make([]byte, n)
}

func encodeNAT(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	n := a.NAT()
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
