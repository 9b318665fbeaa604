package ofp

import "github.com/gvs-project/gvs/ofproto/mf"

// The MPLS and NSH family: push_mpls, pop_mpls, set_mpls_label,
// set_mpls_tc, set_mpls_ttl, dec_mpls_ttl and dec_nsh_ttl. Action
// fields: push_mpls and pop_mpls have Arg (the ethertype); the set_mpls_*
// Arg (label, TC or TTL). encap and decap stay ActRaw with their bytes in
// Data (ofptext/actions_encap.go gives their text).

func init() {
	registerKinds(map[ActionType]kindOps{
		ActPushMPLS:     {check: checkPushMPLS},
		ActPopMPLS:      {check: checkPopMPLS},
		ActSetMPLSLabel: {forms: setMPLSForms, check: checkMPLS},
		ActSetMPLSTC:    {forms: setMPLSForms, check: checkMPLS},
		ActSetMPLSTTL:   {check: checkMPLS},
		ActDecMPLSTTL:   {check: checkMPLS},
		ActDecNSHTTL:    {check: checkDecNSHTTL},
	})
}

// setMPLSForms: set_field from OpenFlow 1.2.
func setMPLSForms(a *Action, v uint8) ([]Action, error) {
	if v >= mf.OF12 {
		id := mf.IDMPLSLabel
		if a.Type == ActSetMPLSTC {
			id = mf.IDMPLSTC
		}
		return setFieldForms(exactSetField(id, a.Arg), v)
	}
	return defaultForms(a, v)
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
