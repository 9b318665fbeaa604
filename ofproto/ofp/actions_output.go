package ofp

import "github.com/gvs-project/gvs/ofproto/mf"

// The output family: output, output_reg, output_trunc, enqueue,
// set_queue, pop_queue, controller and group. Action fields: output has
// Port (16-bit ofp_port) and MaxLen; output_reg Src and MaxLen;
// output_trunc Port and Arg (max_len); enqueue Port and Arg (queue id);
// set_queue Arg (queue id); group Arg (group id); controller Controller.

func init() {
	registerKinds(map[ActionType]kindOps{
		ActOutput:      {forms: outputForms, check: checkOutput},
		ActOutputTrunc: {check: checkOutput},
		ActOutputReg:   {forms: outputRegForms, check: checkOutputReg},
		ActEnqueue:     {forms: enqueueForms, check: checkEnqueue},
		ActController:  {forms: controllerForms},
	})
}

func outputForms(a *Action, v uint8) ([]Action, error) {
	if v == mf.OF10 {
		return oneForm(a, v, RawActOFPAT10_OUTPUT)
	}
	return oneForm(a, v, RawActOFPAT11_OUTPUT)
}

// outputRegForms: NXAST_OUTPUT_REG2 for a field without a 32-bit header
// or when the action came that way.
func outputRegForms(a *Action, v uint8) ([]Action, error) {
	f := a.Src.Field
	if f == nil {
		return nil, errorf(OFPBAC_BAD_ARGUMENT, "output_reg without a source")
	}
	if a.Raw == RawActNXAST_OUTPUT_REG2 || len(f.Headers) == 0 || f.Headers[0].IsExperimenter() {
		return oneForm(a, v, RawActNXAST_OUTPUT_REG2)
	}
	return oneForm(a, v, RawActNXAST_OUTPUT_REG)
}

// enqueueForms: after OpenFlow 1.0, set_queue, output, pop_queue, as Open
// vSwitch.
func enqueueForms(a *Action, v uint8) ([]Action, error) {
	if v != mf.OF10 {
		return []Action{{Type: ActSetQueue, Raw: RawActOFPAT_SET_QUEUE, Arg: a.Arg},
			{Type: ActOutput, Raw: RawActOFPAT11_OUTPUT, Port: a.Port, MaxLen: 0xffff}, {Type: ActPopQueue, Raw: RawActNXAST_POP_QUEUE}}, nil
	}
	return defaultForms(a, v)
}

// controllerForms: NXAST_CONTROLLER2 when the short form cannot carry the
// action (userdata, pause, a meter) or it came that way.
func controllerForms(a *Action, v uint8) ([]Action, error) {
	c := a.Controller
	if c == nil {
		return nil, errorf(OFPBAC_BAD_ARGUMENT, "controller without its body")
	}
	if len(c.Userdata) > 0 || c.Pause || c.MeterID != NoMeter || a.Raw == RawActNXAST_CONTROLLER2 {
		return oneForm(a, v, RawActNXAST_CONTROLLER2)
	}
	return oneForm(a, v, RawActNXAST_CONTROLLER)
}

func checkOutput(c *checker, a *Action, _ int) error { return checkOutputPort(a.Port, c.maxPorts) }

func checkOutputReg(c *checker, a *Action, _ int) error { return c.sub(a.Src, "output_reg") }

func checkEnqueue(c *checker, a *Action, _ int) error {
	if a.Port >= c.maxPorts && a.Port != PortInPort && a.Port != PortLocal {
		return errorf(OFPBAC_BAD_OUT_PORT, "enqueue on port %#x", a.Port)
	}
	return nil
}
