package ofp

import "encoding/binary"

// The stack family: push and pop of a subfield on the translation's
// stack. Action fields: push has Src, pop Dst.

func init() {
	registerKinds(map[ActionType]kindOps{
		ActStackPush: {
			forms: func(e *ActionEncoder, a *Action, v uint8) error { return e.one(a, v, RawActNXAST_STACK_PUSH) },
			check: func(c *checker, a *Action, _ int) error { return c.sub(a.Src, "push") },
		},
		ActStackPop: {
			forms: func(e *ActionEncoder, a *Action, v uint8) error { return e.one(a, v, RawActNXAST_STACK_POP) },
			check: func(c *checker, a *Action, _ int) error { return c.sub(a.Dst, "pop") },
		},
	})
	registerRaws(map[RawAction]rawOps{
		RawActNXAST_STACK_PUSH: codec(ActStackPush, decodeStack, encodeStack),
		RawActNXAST_STACK_POP:  codec(ActStackPop, decodeStack, encodeStack),
	})
}

func decodeStack(p []byte, _ uint8, in *actionInstance, _ int) (Action, error) {
	f, n, err := pullHeader(p[12:])
	if err != nil {
		return Action{}, err
	}
	if 12+n+2 > len(p) {
		return Action{}, errorf(OFPBAC_BAD_LEN, "stack action of %d bytes", len(p))
	}
	sf := Subfield{f, int(binary.BigEndian.Uint16(p[10:])), int(binary.BigEndian.Uint16(p[12+n:]))}
	if !isZero(p[12+n+2:]) {
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "stack action padding is not zero")
	}
	if err := checkSubfield(sf); err != nil {
		return Action{}, err
	}
	if in.raw == RawActNXAST_STACK_PUSH {
		return Action{Type: ActStackPush, Src: sf}, nil
	}
	return Action{Type: ActStackPop, Dst: sf}, nil
}

func encodeStack(b []byte, a *Action, _ uint8, in *actionInstance, _ int) ([]byte, error) {
	sf := a.Src
	if in.raw == RawActNXAST_STACK_POP {
		sf = a.Dst
	}
	if sf.Field == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "stack action without a field")
	}
	b = binary.BigEndian.AppendUint16(b, uint16(sf.Ofs))
	b = putHeader(b, sf.Field)
	return binary.BigEndian.AppendUint16(b, uint16(sf.NBits)), nil
}
