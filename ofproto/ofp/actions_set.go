package ofp

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// The header-setting family, OpenFlow 1.0's set actions and their
// relatives: mod_dl_src/dst, mod_nw_src/dst, mod_nw_tos, mod_nw_ecn,
// mod_nw_ttl, mod_tp_src/dst, set_tunnel(64) and dec_ttl. Each has one
// scalar argument in Arg (a MAC in the low 48 bits, an IPv4 address, the
// DSCP in place, the tunnel id), except dec_ttl whose controller ids are
// IDs ([0] for plain dec_ttl). mod_tp_* record the flow's IP protocol in
// FlowIPProto when checked, for their OpenFlow 1.2+ set_field form.

func init() {
	registerKinds(map[ActionType]kindOps{
		ActSetDLSrc:  {forms: setL2L3Forms, canonical: []RawAction{RawActOFPAT_SET_DL_SRC}, actionSet: true},
		ActSetDLDst:  {forms: setL2L3Forms, canonical: []RawAction{RawActOFPAT_SET_DL_DST}, actionSet: true},
		ActSetNWSrc:  {forms: setL2L3Forms, check: checkSetIPv4, canonical: []RawAction{RawActOFPAT_SET_NW_SRC}, actionSet: true},
		ActSetNWDst:  {forms: setL2L3Forms, check: checkSetIPv4, canonical: []RawAction{RawActOFPAT_SET_NW_DST}, actionSet: true},
		ActSetNWTos:  {forms: setNWTosForms, check: checkSetIP, canonical: []RawAction{RawActOFPAT_SET_NW_TOS}, actionSet: true},
		ActSetNWECN:  {forms: setNWECNForms, check: checkSetIP, canonical: []RawAction{RawActOFPAT11_SET_NW_ECN}, actionSet: true},
		ActSetNWTTL:  {forms: setNWTTLForms, check: checkSetIP, canonical: []RawAction{RawActOFPAT11_SET_NW_TTL}, actionSet: true},
		ActDecTTL:    {forms: decTTLForms, check: checkSetIP, actionSet: true},
		ActSetTPSrc:  {forms: setTPForms, check: checkSetTP, canonical: []RawAction{RawActOFPAT_SET_TP_SRC}, actionSet: true},
		ActSetTPDst:  {forms: setTPForms, check: checkSetTP, canonical: []RawAction{RawActOFPAT_SET_TP_DST}, actionSet: true},
		ActSetTunnel: {forms: setTunnelForms, actionSet: true},
	})
	registerRaws(map[RawAction]rawOps{
		RawActOFPAT_SET_DL_SRC:      scalar(ActSetDLSrc, 0),
		RawActOFPAT_SET_DL_DST:      scalar(ActSetDLDst, 0),
		RawActOFPAT_SET_NW_SRC:      scalar(ActSetNWSrc, 0),
		RawActOFPAT_SET_NW_DST:      scalar(ActSetNWDst, 0),
		RawActOFPAT_SET_NW_TOS:      scalarPost(ActSetNWTos, 0, checkNWTosArg),
		RawActOFPAT11_SET_NW_ECN:    scalar(ActSetNWECN, 3),
		RawActOFPAT11_SET_NW_TTL:    scalar(ActSetNWTTL, 0),
		RawActOFPAT_SET_TP_SRC:      scalar(ActSetTPSrc, 0),
		RawActOFPAT_SET_TP_DST:      scalar(ActSetTPDst, 0),
		RawActNXAST_SET_TUNNEL:      scalar(ActSetTunnel, 0),
		RawActNXAST_SET_TUNNEL64:    scalar(ActSetTunnel, 0),
		RawActOFPAT_DEC_NW_TTL:      codec(ActDecTTL, decodeDecTTL, encodeDecTTL),
		RawActNXAST_DEC_TTL_CNT_IDS: codec(ActDecTTL, decodeDecTTL, encodeDecTTL),
	})
}

// setL2L3Forms: set_field from OpenFlow 1.2.
func setL2L3Forms(e *ActionEncoder, a *Action, v uint8) error {
	if v >= mf.OF12 {
		id := map[ActionType]mf.ID{ActSetDLSrc: mf.IDEthSrc, ActSetDLDst: mf.IDEthDst,
			ActSetNWSrc: mf.IDIPv4Src, ActSetNWDst: mf.IDIPv4Dst}[a.Type]
		return e.via(e.exactSetField(id, a.Arg), v)
	}
	return defaultForms(e, a, v)
}

func setNWTosForms(e *ActionEncoder, a *Action, v uint8) error {
	if v >= mf.OF12 {
		return e.via(e.exactSetField(mf.IDIPDSCPShifted, a.Arg>>2), v)
	}
	return defaultForms(e, a, v)
}

// setNWECNForms: OpenFlow 1.0 has no set-ECN: a reg_load.
func setNWECNForms(e *ActionEncoder, a *Action, v uint8) error {
	switch {
	case v == mf.OF10:
		e.forms = append(e.forms, e.loadOf(mf.IDIPECN, a.Arg))
		return nil
	case v >= mf.OF12:
		return e.via(e.exactSetField(mf.IDIPECN, a.Arg), v)
	}
	return defaultForms(e, a, v)
}

// setNWTTLForms: OpenFlow 1.0 has no set-TTL: a reg_load.
func setNWTTLForms(e *ActionEncoder, a *Action, v uint8) error {
	if v == mf.OF10 {
		e.forms = append(e.forms, e.loadOf(mf.IDIPTTL, a.Arg))
		return nil
	}
	return defaultForms(e, a, v)
}

// decTTLForms: NXAST_DEC_TTL_CNT_IDS unless the ids are just [0].
func decTTLForms(e *ActionEncoder, a *Action, v uint8) error {
	if a.Raw == RawActNXAST_DEC_TTL_CNT_IDS || len(a.IDs()) != 1 || a.IDs()[0] != 0 {
		return e.one(a, v, RawActNXAST_DEC_TTL_CNT_IDS)
	}
	return e.one(a, v, RawActOFPAT_DEC_NW_TTL)
}

// setTPForms: from OpenFlow 1.2 the set_field of the flow's transport
// protocol, dropped (as Open vSwitch does) when the flow names none.
func setTPForms(e *ActionEncoder, a *Action, v uint8) error {
	if v < mf.OF12 {
		return defaultForms(e, a, v)
	}
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
		return nil // no transport protocol known: Open vSwitch drops it
	}
	return e.via(e.exactSetField(id, a.Arg), v)
}

// setTunnelForms: set_field from OpenFlow 1.2, else set_tunnel64 when
// the id needs it or it came that way.
func setTunnelForms(e *ActionEncoder, a *Action, v uint8) error {
	if v >= mf.OF12 {
		return e.via(e.exactSetField(mf.IDTunID, a.Arg), v)
	}
	if a.Arg > 0xffffffff || a.Raw == RawActNXAST_SET_TUNNEL64 {
		return e.one(a, v, RawActNXAST_SET_TUNNEL64)
	}
	return e.one(a, v, RawActNXAST_SET_TUNNEL)
}

func checkSetIPv4(c *checker, a *Action, _ int) error {
	return c.soft(c.ethType() == 0x0800, a.Type.String())
}

func checkSetIP(c *checker, a *Action, _ int) error { return c.soft(c.isIP(), a.Type.String()) }

func checkSetTP(c *checker, a *Action, _ int) error {
	p := c.nwProto()
	a.FlowIPProto = p
	return c.soft(p == 6 || p == 17 || p == 132, a.Type.String())
}

func decodeDecTTL(p []byte, _ uint8, in *actionInstance, _ int) (Action, error) {
	if in.raw == RawActOFPAT_DEC_NW_TTL {
		return Action{Type: ActDecTTL, Body: []uint16{0}}, nil
	}
	n := int(binary.BigEndian.Uint16(p[10:]))
	if !isZero(p[12:16]) {
		return Action{}, errorf(NXBRC_MUST_BE_ZERO, "dec_ttl_cnt_ids padding is not zero")
	}
	if 16+2*n > len(p) {
		return Action{}, errorf(OFPBAC_BAD_LEN, "dec_ttl_cnt_ids with %d ids in %d bytes", n, len(p))
	}
	a := Action{Type: ActDecTTL, Body: make([]uint16, n)}
	for i := range a.IDs() {
		a.IDs()[i] = binary.BigEndian.Uint16(p[16+2*i:])
	}
	return a, nil
}

func encodeDecTTL(b []byte, a *Action, _ uint8, in *actionInstance, _ int) ([]byte, error) {
	if in.raw == RawActOFPAT_DEC_NW_TTL {
		return b, nil
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(a.IDs())))
	b = appendZeros(b, 4)
	for _, id := range a.IDs() {
		b = binary.BigEndian.AppendUint16(b, id)
	}
	return b, nil
}

// checkNWTosArg refuses a mod_nw_tos that sets the ECN bits.
func checkNWTosArg(a *Action, _ RawAction) error {
	if a.Arg&3 != 0 {
		return errorf(OFPBAC_BAD_ARGUMENT, "mod_nw_tos %#x sets ECN bits", a.Arg)
	}
	return nil
}
