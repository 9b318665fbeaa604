package ofp

import (
	"bytes"
	"encoding/binary"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// The output family: output, output_reg, output_trunc, enqueue,
// set_queue, pop_queue, controller and group. Action fields: output has
// Port (16-bit ofp_port) and MaxLen; output_reg Src and MaxLen;
// output_trunc Port and Arg (max_len); enqueue Port and Arg (queue id);
// set_queue Arg (queue id); group Arg (group id); controller Controller.

func init() {
	registerKinds(map[ActionType]kindOps{
		ActOutput:      {forms: outputForms, check: checkOutput, actionSet: true},
		ActOutputTrunc: {check: checkOutput, canonical: []RawAction{RawActNXAST_OUTPUT_TRUNC}, actionSet: true},
		ActOutputReg:   {forms: outputRegForms, check: checkOutputReg},
		ActEnqueue:     {forms: enqueueForms, check: checkEnqueue, canonical: []RawAction{RawActOFPAT10_ENQUEUE}},
		ActController:  {forms: controllerForms},
		ActSetQueue:    {canonical: []RawAction{RawActOFPAT_SET_QUEUE}, actionSet: true},
		ActPopQueue:    {canonical: []RawAction{RawActNXAST_POP_QUEUE}},
		ActGroup:       {canonical: []RawAction{RawActOFPAT_GROUP}, actionSet: true},
	})
	registerRaws(map[RawAction]rawOps{
		RawActOFPAT10_OUTPUT:     codec(ActOutput, decodeOutput, encodeOutput),
		RawActOFPAT11_OUTPUT:     codec(ActOutput, decodeOutput, encodeOutput),
		RawActOFPAT10_ENQUEUE:    codec(ActEnqueue, decodeEnqueue, encodeEnqueue),
		RawActNXAST_CONTROLLER:   codec(ActController, decodeController, encodeController),
		RawActNXAST_CONTROLLER2:  codec(ActController, decodeController2, encodeController2),
		RawActNXAST_OUTPUT_REG:   codec(ActOutputReg, decodeOutputReg, encodeOutputReg),
		RawActNXAST_OUTPUT_REG2:  codec(ActOutputReg, decodeOutputReg, encodeOutputReg),
		RawActNXAST_OUTPUT_TRUNC: codec(ActOutputTrunc, decodeOutputTrunc, encodeOutputTrunc),
		RawActOFPAT_SET_QUEUE:    scalar(ActSetQueue, 0),
		RawActNXAST_POP_QUEUE:    scalar(ActPopQueue, 0),
		RawActOFPAT_GROUP:        scalar(ActGroup, 0),
	})
}

func outputForms(e *ActionEncoder, a *Action, v uint8) error {
	if v == mf.OF10 {
		return e.one(a, v, RawActOFPAT10_OUTPUT)
	}
	return e.one(a, v, RawActOFPAT11_OUTPUT)
}

// outputRegForms: NXAST_OUTPUT_REG2 for a field without a 32-bit header
// or when the action came that way.
func outputRegForms(e *ActionEncoder, a *Action, v uint8) error {
	f := a.Src.Field
	if f == nil {
		return errorf(OFPBAC_BAD_ARGUMENT, "output_reg without a source")
	}
	if a.Raw == RawActNXAST_OUTPUT_REG2 || len(f.Headers) == 0 || f.Headers[0].IsExperimenter() {
		return e.one(a, v, RawActNXAST_OUTPUT_REG2)
	}
	return e.one(a, v, RawActNXAST_OUTPUT_REG)
}

// enqueueForms: after OpenFlow 1.0, set_queue, output, pop_queue, as Open
// vSwitch.
func enqueueForms(e *ActionEncoder, a *Action, v uint8) error {
	if v != mf.OF10 {
		e.forms = append(e.forms, Action{Type: ActSetQueue, Raw: RawActOFPAT_SET_QUEUE, Arg: a.Arg},
			Action{Type: ActOutput, Raw: RawActOFPAT11_OUTPUT, Port: a.Port, MaxLen: 0xffff}, Action{Type: ActPopQueue, Raw: RawActNXAST_POP_QUEUE})
		return nil
	}
	return defaultForms(e, a, v)
}

// controllerForms: NXAST_CONTROLLER2 when the short form cannot carry the
// action (userdata, pause, a meter) or it came that way.
func controllerForms(e *ActionEncoder, a *Action, v uint8) error {
	c := a.Controller()
	if c == nil {
		return errorf(OFPBAC_BAD_ARGUMENT, "controller without its body")
	}
	if len(c.Userdata) > 0 || c.Pause || c.MeterID != NoMeter || a.Raw == RawActNXAST_CONTROLLER2 {
		return e.one(a, v, RawActNXAST_CONTROLLER2)
	}
	return e.one(a, v, RawActNXAST_CONTROLLER)
}

func checkOutput(c *checker, a *Action, _ int) error { return checkOutputPort(a.Port, c.maxPorts) }

func checkOutputReg(c *checker, a *Action, _ int) error { return c.sub(a.Src, "output_reg") }

func checkEnqueue(c *checker, a *Action, _ int) error {
	if a.Port >= c.maxPorts && a.Port != PortInPort && a.Port != PortLocal {
		return errorf(OFPBAC_BAD_OUT_PORT, "enqueue on port %#x", a.Port)
	}
	return nil
}

func decodeOutput(p []byte, v uint8, _ *actionInstance, _ int) (Action, error) {
	a := Action{Type: ActOutput}
	if v == mf.OF10 {
		a.Port, a.MaxLen = uint32(binary.BigEndian.Uint16(p[4:])), binary.BigEndian.Uint16(p[6:])
	} else {
		port, err := portFrom11(binary.BigEndian.Uint32(p[4:]))
		if err != nil {
			return a, err
		}
		a.Port, a.MaxLen = port, binary.BigEndian.Uint16(p[8:])
	}
	return a, checkOutputPort(a.Port, PortMax)
}

func encodeOutput(b []byte, a *Action, v uint8, _ *actionInstance, _ int) ([]byte, error) {
	if a.Port > 0xffff {
		return b, errorf(OFPBAC_BAD_OUT_PORT, "output to port %#x", a.Port)
	}
	if v == mf.OF10 {
		b = binary.BigEndian.AppendUint16(b, uint16(a.Port))
		return binary.BigEndian.AppendUint16(b, a.MaxLen), nil
	}
	b = binary.BigEndian.AppendUint32(b, portTo11(a.Port))
	return binary.BigEndian.AppendUint16(b, a.MaxLen), nil
}

func decodeEnqueue(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	a := Action{Type: ActEnqueue, Port: uint32(binary.BigEndian.Uint16(p[4:])), Arg: uint64(binary.BigEndian.Uint32(p[12:]))}
	if a.Port >= PortMax && a.Port != PortInPort && a.Port != PortLocal {
		return a, errorf(OFPBAC_BAD_OUT_PORT, "enqueue on port %#x", a.Port)
	}
	return a, nil
}

func encodeEnqueue(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	b = binary.BigEndian.AppendUint16(b, uint16(a.Port))
	b = appendZeros(b, 6)
	return binary.BigEndian.AppendUint32(b, uint32(a.Arg)), nil
}

func decodeController(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	c := &Controller{MaxLen: binary.BigEndian.Uint16(p[10:]), ID: binary.BigEndian.Uint16(p[12:]), Reason: p[14], MeterID: NoMeter}
	return Action{Type: ActController, Body: c}, nil
}

func encodeController(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	c := a.Controller()
	if c == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "controller without its body")
	}
	b = binary.BigEndian.AppendUint16(b, c.MaxLen)
	b = binary.BigEndian.AppendUint16(b, c.ID)
	return append(b, c.Reason, 0), nil
}

// NXAST_CONTROLLER2 property types (NXAC2PT_*).
const (
	ac2MaxLen = iota
	ac2ControllerID
	ac2Reason
	ac2Userdata
	ac2Pause
	ac2MeterID
)

func decodeController2(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	c := &Controller{MaxLen: 0xffff, Reason: ReasonAction, MeterID: NoMeter}
	if !isZero(p[10:16]) {
		return Action{}, errorf(NXBAC_MUST_BE_ZERO, "controller2 padding is not zero")
	}
	t := newTLVReader(p[16:], 8, "controller2 property")
	for t.Next() {
		bad := false
		switch t.Type {
		case ac2MaxLen: // 16-bit values come in 8-byte properties; be forgiving, as Open vSwitch
			bad = len(t.Value) < 2
			if !bad {
				c.MaxLen = binary.BigEndian.Uint16(t.Value)
			}
		case ac2ControllerID:
			bad = len(t.Value) < 2
			if !bad {
				c.ID = binary.BigEndian.Uint16(t.Value)
			}
		case ac2Reason:
			bad = len(t.Value) < 1
			if !bad {
				c.Reason = t.Value[0]
			}
		case ac2Userdata:
			if len(t.Value) > 0 {
				c.Userdata = bytes.Clone(t.Value)
			}
		case ac2Pause:
			c.Pause = true
		case ac2MeterID:
			bad = len(t.Value) < 4
			if !bad {
				c.MeterID = binary.BigEndian.Uint32(t.Value)
			}
		default:
			return Action{}, errorf(OFPBPC_BAD_TYPE, "controller2 property %d", t.Type)
		}
		if bad {
			return Action{}, errorf(OFPBPC_BAD_LEN, "controller2 property %d of %d bytes", t.Type, len(t.Value))
		}
	}
	if err := t.Err(); err != nil {
		return Action{}, errorf(OFPBPC_BAD_LEN, "controller2: %v", err)
	}
	return Action{Type: ActController, Body: c}, nil
}

func putProp(b []byte, typ uint16, val []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, typ)
	b = binary.BigEndian.AppendUint16(b, uint16(4+len(val)))
	b = append(b, val...)
	return appendZeros(b, pad8(4+len(val))-4-len(val))
}

func encodeController2(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	c := a.Controller()
	if c == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "controller without its body")
	}
	b = appendZeros(b, 6)
	if c.MaxLen != 0xffff {
		b = putProp(b, ac2MaxLen, binary.BigEndian.AppendUint32(nil, uint32(c.MaxLen)<<16))
	}
	if c.ID != 0 {
		b = putProp(b, ac2ControllerID, binary.BigEndian.AppendUint32(nil, uint32(c.ID)<<16))
	}
	if c.Reason != ReasonAction {
		b = putProp(b, ac2Reason, []byte{c.Reason})
	}
	if len(c.Userdata) > 0 {
		b = putProp(b, ac2Userdata, c.Userdata)
	}
	if c.Pause {
		b = putProp(b, ac2Pause, nil)
	}
	if c.MeterID != NoMeter {
		b = putProp(b, ac2MeterID, binary.BigEndian.AppendUint32(nil, c.MeterID))
	}
	return b, nil
}

func decodeOutputReg(p []byte, _ uint8, in *actionInstance, _ int) (Action, error) {
	ofsNbits := binary.BigEndian.Uint16(p[10:])
	a := Action{Type: ActOutputReg}
	if in.raw == RawActNXAST_OUTPUT_REG {
		f := fieldOfHeader(binary.BigEndian.Uint32(p[12:]))
		if f == nil {
			return a, errorf(OFPBAC_BAD_ARGUMENT, "output_reg from unknown field")
		}
		a.Src, a.MaxLen = subfieldOf(f, ofsNbits), binary.BigEndian.Uint16(p[16:])
		if !isZero(p[18:24]) {
			return a, errorf(OFPBAC_BAD_ARGUMENT, "output_reg padding is not zero")
		}
	} else {
		a.MaxLen = binary.BigEndian.Uint16(p[12:])
		f, n, err := pullHeader(p[14:])
		if err != nil {
			return a, err
		}
		a.Src = subfieldOf(f, ofsNbits)
		if !isZero(p[14+n:]) {
			return a, errorf(OFPBAC_BAD_ARGUMENT, "output_reg2 padding is not zero")
		}
	}
	return a, checkSubfield(a.Src)
}

func encodeOutputReg(b []byte, a *Action, _ uint8, in *actionInstance, _ int) ([]byte, error) {
	if a.Src.Field == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "output_reg without a source")
	}
	b = binary.BigEndian.AppendUint16(b, ofsNBits(a.Src))
	if in.raw == RawActNXAST_OUTPUT_REG {
		b = binary.BigEndian.AppendUint32(b, header32(a.Src.Field))
		return binary.BigEndian.AppendUint16(b, a.MaxLen), nil
	}
	b = binary.BigEndian.AppendUint16(b, a.MaxLen)
	return putHeader(b, a.Src.Field), nil
}

func decodeOutputTrunc(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	a := Action{Type: ActOutputTrunc, Port: uint32(binary.BigEndian.Uint16(p[10:])), Arg: uint64(binary.BigEndian.Uint32(p[12:]))}
	if a.Arg < 14 {
		return a, errorf(OFPBAC_BAD_ARGUMENT, "output_trunc max_len %d is shorter than an Ethernet header", a.Arg)
	}
	return a, checkOutputPort(a.Port, PortMax)
}

func encodeOutputTrunc(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	b = binary.BigEndian.AppendUint16(b, uint16(a.Port))
	return binary.BigEndian.AppendUint32(b, uint32(a.Arg)), nil
}
