package ofp

import "github.com/gvs-project/gvs/ofproto/mf"

// The VLAN family: push_vlan, strip_vlan/pop_vlan, mod_vlan_vid and
// mod_vlan_pcp. Action fields: push_vlan has Arg (the ethertype); the
// mod_vlan_* have Arg (VID or PCP), PushVLANIfNeeded (OpenFlow 1.0's
// mod_vlan_* push a tag when there is none) and FlowHasVLAN (set when
// checked); pop_vlan is strip_vlan with Raw OFPAT11_POP_VLAN.

func init() {
	registerKinds(map[ActionType]kindOps{
		ActPushVLAN:   {forms: pushVLANForms, check: checkPushVLAN, actionSet: true},
		ActStripVLAN:  {forms: stripVLANForms, check: checkStripVLAN, actionSet: true},
		ActSetVLANVID: {forms: setVLANForms, check: checkSetVLAN, actionSet: true},
		ActSetVLANPCP: {forms: setVLANForms, check: checkSetVLAN, actionSet: true},
	})
	registerRaws(map[RawAction]rawOps{
		RawActOFPAT10_SET_VLAN_VID: scalarPost(ActSetVLANVID, 0xfff, markOF10VLAN),
		RawActOFPAT11_SET_VLAN_VID: scalarPost(ActSetVLANVID, 0xfff, markOF10VLAN),
		RawActOFPAT10_SET_VLAN_PCP: scalarPost(ActSetVLANPCP, 7, markOF10VLAN),
		RawActOFPAT11_SET_VLAN_PCP: scalarPost(ActSetVLANPCP, 7, markOF10VLAN),
		RawActOFPAT11_PUSH_VLAN:    scalarPost(ActPushVLAN, 0, checkPushVLANArg),
		RawActOFPAT10_STRIP_VLAN:   scalar(ActStripVLAN, 0),
		RawActOFPAT11_POP_VLAN:     scalar(ActStripVLAN, 0),
	})
}

func pushVLANForms(e *ActionEncoder, a *Action, v uint8) error {
	if v == mf.OF10 {
		return nil // implied by the mod_vlan_vid/pcp that follows
	}
	return e.one(a, v, RawActOFPAT11_PUSH_VLAN)
}

func stripVLANForms(e *ActionEncoder, a *Action, v uint8) error {
	if v == mf.OF10 {
		return e.one(a, v, RawActOFPAT10_STRIP_VLAN)
	}
	return e.one(a, v, RawActOFPAT11_POP_VLAN)
}

// setVLANForms: the OpenFlow 1.0 and 1.1 actions, set_field from 1.2; a
// push_vlan first after 1.0 when the action pushes a tag the flow lacks.
func setVLANForms(e *ActionEncoder, a *Action, v uint8) error {
	start := len(e.forms)
	if v > mf.OF10 && a.PushVLANIfNeeded && !a.FlowHasVLAN {
		e.forms = append(e.forms, Action{Type: ActPushVLAN, Raw: RawActOFPAT11_PUSH_VLAN, Arg: 0x8100})
	}
	vid := a.Type == ActSetVLANVID
	var r RawAction
	switch {
	case v == mf.OF10 && vid:
		r = RawActOFPAT10_SET_VLAN_VID
	case v == mf.OF10:
		r = RawActOFPAT10_SET_VLAN_PCP
	case v == mf.OF11 && vid:
		r = RawActOFPAT11_SET_VLAN_VID
	case v == mf.OF11:
		r = RawActOFPAT11_SET_VLAN_PCP
	default:
		id, x := mf.IDVLANPCP, a.Arg
		if vid {
			id, x = mf.IDVLANVID, a.Arg|0x1000
		}
		if err := e.via(e.exactSetField(id, x), v); err != nil {
			e.forms = e.forms[:start]
			return err
		}
		return nil
	}
	e.forms = append(e.forms, *a)
	e.forms[len(e.forms)-1].Raw = r
	return nil
}

func checkPushVLAN(c *checker, _ *Action, _ int) error {
	c.setVLAN(true)
	return nil
}

func checkStripVLAN(c *checker, _ *Action, _ int) error {
	c.setVLAN(false)
	return nil
}

func checkSetVLAN(c *checker, a *Action, _ int) error {
	a.FlowHasVLAN = c.hasVLAN()
	err := c.soft(a.FlowHasVLAN || a.PushVLANIfNeeded, a.Type.String())
	c.setVLAN(true)
	return err
}

// markOF10VLAN records that OpenFlow 1.0's mod_vlan_vid/pcp push a tag
// when there is none (PushVLANIfNeeded); OpenFlow 1.1's do not.
func markOF10VLAN(a *Action, raw RawAction) error {
	a.PushVLANIfNeeded = raw == RawActOFPAT10_SET_VLAN_VID || raw == RawActOFPAT10_SET_VLAN_PCP
	return nil
}

func checkPushVLANArg(a *Action, _ RawAction) error {
	if a.Arg != 0x8100 && a.Arg != 0x88a8 {
		return errorf(OFPBAC_BAD_ARGUMENT, "push_vlan ethertype %#x", a.Arg)
	}
	return nil
}
