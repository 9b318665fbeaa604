package ofp

import "github.com/gvs-project/gvs/ofproto/mf"

// The MPLS and NSH family: push_mpls, pop_mpls, set_mpls_label,
// set_mpls_tc, set_mpls_ttl, dec_mpls_ttl and dec_nsh_ttl. Action
// fields: push_mpls and pop_mpls have Arg (the ethertype); the set_mpls_*
// Arg (label, TC or TTL). encap and decap stay ActRaw with their bytes in
// Data (ofptext/actions_encap.go gives their text).

func init() {
	registerKinds(map[ActionType]kindOps{
		ActPushMPLS:     {check: checkPushMPLS, canonical: []RawAction{RawActOFPAT_PUSH_MPLS}, actionSet: true},
		ActPopMPLS:      {check: checkPopMPLS, canonical: []RawAction{RawActOFPAT_POP_MPLS}, actionSet: true},
		ActSetMPLSLabel: {forms: setMPLSForms, check: checkMPLS, canonical: []RawAction{RawActOFPAT_SET_MPLS_LABEL}, actionSet: true},
		ActSetMPLSTC:    {forms: setMPLSForms, check: checkMPLS, canonical: []RawAction{RawActOFPAT_SET_MPLS_TC}, actionSet: true},
		ActSetMPLSTTL:   {check: checkMPLS, canonical: []RawAction{RawActOFPAT_SET_MPLS_TTL}, actionSet: true},
		ActDecMPLSTTL:   {check: checkMPLS, canonical: []RawAction{RawActOFPAT_DEC_MPLS_TTL}, actionSet: true},
		ActDecNSHTTL:    {check: checkDecNSHTTL, canonical: []RawAction{RawActNXAST_DEC_NSH_TTL}, actionSet: true},
	})
	registerRaws(map[RawAction]rawOps{
		RawActOFPAT_PUSH_MPLS:      scalarPost(ActPushMPLS, 0, checkPushMPLSArg),
		RawActOFPAT_POP_MPLS:       scalar(ActPopMPLS, 0),
		RawActOFPAT_SET_MPLS_LABEL: scalar(ActSetMPLSLabel, 0xfffff),
		RawActOFPAT_SET_MPLS_TC:    scalar(ActSetMPLSTC, 7),
		RawActOFPAT_SET_MPLS_TTL:   scalar(ActSetMPLSTTL, 0),
		RawActOFPAT_DEC_MPLS_TTL:   scalar(ActDecMPLSTTL, 0),
		RawActNXAST_DEC_NSH_TTL:    scalar(ActDecNSHTTL, 0),
	})
}

// setMPLSForms: set_field from OpenFlow 1.2.
func setMPLSForms(e *ActionEncoder, a *Action, v uint8) error {
	if v >= mf.OF12 {
		id := mf.IDMPLSLabel
		if a.Type == ActSetMPLSTC {
			id = mf.IDMPLSTC
		}
		return e.via(e.exactSetField(id, a.Arg), v)
	}
	return defaultForms(e, a, v)
}

func checkPushMPLS(c *checker, a *Action, _ int) error {
	c.setEthType(uint16(a.Arg))
	return nil
}

func checkPopMPLS(c *checker, a *Action, _ int) error {
	t := c.ethType()
	if err := c.soft(t == 0x8847 || t == 0x8848, "pop_mpls"); err != nil {
		return err
	}
	c.setEthType(uint16(a.Arg))
	return nil
}

func checkMPLS(c *checker, a *Action, _ int) error {
	t := c.ethType()
	return c.soft(t == 0x8847 || t == 0x8848, a.Type.String())
}

func checkDecNSHTTL(c *checker, _ *Action, _ int) error {
	return c.soft(c.m.Mask.PacketType == ^uint32(0) && c.m.Flow.PacketType == 0x1894f || c.ethType() == 0x894f, "dec_nsh_ttl")
}

func checkPushMPLSArg(a *Action, _ RawAction) error {
	if a.Arg != 0x8847 && a.Arg != 0x8848 {
		return errorf(OFPBAC_BAD_ARGUMENT, "push_mpls ethertype %#x", a.Arg)
	}
	return nil
}
