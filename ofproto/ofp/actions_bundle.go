package ofp

// The load-balancing family: bundle, bundle_load and multipath. Action
// fields: bundle has Bundle (bundle_load: Bundle.Dst set); multipath has
// Multipath.

func init() {
	registerKinds(map[ActionType]kindOps{
		ActBundle:    {forms: bundleForms, check: checkBundle},
		ActMultipath: {check: checkMultipath},
	})
}

func bundleForms(a *Action, v uint8) ([]Action, error) {
	if a.Bundle != nil && a.Bundle.Dst.Field != nil {
		return oneForm(a, v, RawActNXAST_BUNDLE_LOAD)
	}
	return oneForm(a, v, RawActNXAST_BUNDLE)
}

func checkBundle(c *checker, a *Action, _ int) error {
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
	return nil
}

func checkMultipath(c *checker, a *Action, _ int) error {
	if a.Multipath == nil {
		return errorf(OFPBAC_BAD_ARGUMENT, "multipath without its body")
	}
	return c.sub(a.Multipath.Dst, "multipath")
}
