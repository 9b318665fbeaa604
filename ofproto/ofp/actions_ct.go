package ofp

// The connection-tracking family: ct, ct_clear and nat (which appears
// only inside ct's actions). Action fields: ct has CT (its nested exec
// and nat actions in CT.Actions); nat has NAT. Both encode in their one
// Nicira form (canonicalRaws).

func init() {
	registerKinds(map[ActionType]kindOps{
		ActCT:  {check: checkCT},
		ActNAT: {check: checkNAT},
	})
}

func checkCT(c *checker, a *Action, depth int) error {
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
}

func checkNAT(c *checker, a *Action, _ int) error {
	t := c.ethType()
	n := a.NAT
	if n == nil || !c.isIP() || n.AddrMin.Is4() && t != 0x0800 || n.AddrMin.Is6() && t != 0x86dd {
		return errInconsistent("nat")
	}
	return nil
}
