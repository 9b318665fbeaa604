package ofp

import "encoding/binary"

// The load-balancing family: bundle, bundle_load and multipath. Action
// fields: bundle has Bundle (bundle_load: Bundle.Dst set); multipath has
// Multipath.

func init() {
	registerKinds(map[ActionType]kindOps{
		ActBundle:    {forms: bundleForms, check: checkBundle},
		ActMultipath: {check: checkMultipath, canonical: []RawAction{RawActNXAST_MULTIPATH}},
	})
	registerRaws(map[RawAction]rawOps{
		RawActNXAST_BUNDLE:      codec(ActBundle, decodeBundle, encodeBundle),
		RawActNXAST_BUNDLE_LOAD: codec(ActBundle, decodeBundle, encodeBundle),
		RawActNXAST_MULTIPATH:   codec(ActMultipath, decodeMultipath, encodeMultipath),
	})
}

func bundleForms(e *ActionEncoder, a *Action, v uint8) error {
	if a.Bundle() != nil && a.Bundle().Dst.Field != nil {
		return e.one(a, v, RawActNXAST_BUNDLE_LOAD)
	}
	return e.one(a, v, RawActNXAST_BUNDLE)
}

func checkBundle(c *checker, a *Action, _ int) error {
	if a.Bundle() == nil {
		return errorf(OFPBAC_BAD_ARGUMENT, "bundle without its body")
	}
	for _, p := range a.Bundle().Members {
		if uint32(p) >= c.maxPorts && p != PortLocal {
			return errorf(OFPBAC_BAD_OUT_PORT, "bundle member %d", p)
		}
	}
	if a.Bundle().Dst.Field != nil {
		return c.sub(a.Bundle().Dst, "bundle_load")
	}
	return nil
}

func checkMultipath(c *checker, a *Action, _ int) error {
	if a.Multipath() == nil {
		return errorf(OFPBAC_BAD_ARGUMENT, "multipath without its body")
	}
	return c.sub(a.Multipath().Dst, "multipath")
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
	return Action{Type: ActMultipath, Body: m}, nil
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

func encodeMultipath(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	m := a.Multipath()
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
	return Action{Type: ActBundle, Body: bd}, nil
}

func encodeBundle(b []byte, a *Action, _ uint8, in *actionInstance, _ int) ([]byte, error) {
	bd := a.Bundle()
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
