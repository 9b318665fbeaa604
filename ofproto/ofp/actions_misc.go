package ofp

// The remaining family: note, sample, clone, check_pkt_larger,
// conjunction and the testing actions debug_slow and debug_recirc.
// Action fields: note has Data (the note bytes); sample Sample; clone
// Nested; check_pkt_larger Arg (the length) and Dst (1 bit); conjunction
// Conj. sample with a field-sourced domain (NXAST_SAMPLE4) stays ActRaw.

func init() {
	registerKinds(map[ActionType]kindOps{
		ActSample:      {forms: sampleForms},
		ActClone:       {check: checkNested},
		ActCheckPktLen: {check: func(c *checker, a *Action, _ int) error { return c.sub(a.Dst, "check_pkt_larger") }},
	})
}

// sampleForms: the shortest of NXAST_SAMPLE, SAMPLE2 (a sampling port)
// and SAMPLE3 (a direction) that carries the action, or the one it came
// in.
func sampleForms(a *Action, v uint8) ([]Action, error) {
	s := a.Sample
	switch {
	case s == nil:
		return nil, errorf(OFPBAC_BAD_ARGUMENT, "sample without its body")
	case a.Raw == RawActNXAST_SAMPLE3 || s.Direction != 0:
		return oneForm(a, v, RawActNXAST_SAMPLE3)
	case a.Raw == RawActNXAST_SAMPLE2 || s.SamplingPort != PortNone:
		return oneForm(a, v, RawActNXAST_SAMPLE2)
	}
	return oneForm(a, v, RawActNXAST_SAMPLE)
}
