package ofp

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// The pipeline family: resubmit, goto_table, write_metadata,
// clear_actions, write_actions, meter and exit (the instructions, and the
// actions that move through the tables). Action fields: resubmit has
// Port and Table (255: the current table; Raw RESUBMIT_TABLE_CT for the
// ct variant); goto_table Table; write_metadata Arg (value) and Arg2
// (mask); write_actions Nested; meter Arg (the meter id).

func init() {
	registerKinds(map[ActionType]kindOps{
		ActResubmit:      {forms: resubmitForms, check: checkResubmit, actionSet: true},
		ActGotoTable:     {forms: gotoTableForms, check: checkGotoTable},
		ActWriteMetadata: {forms: writeMetadataForms},
		ActClearActions:  {forms: actionSetForms},
		ActWriteActions:  {forms: actionSetForms, check: checkNested},
		ActMeter:         {forms: meterForms, check: checkMeter, canonical: []RawAction{RawActOFPAT15_METER}},
		ActExit:          {canonical: []RawAction{RawActNXAST_EXIT}},
	})
	registerRaws(map[RawAction]rawOps{
		RawActNXAST_RESUBMIT:          codec(ActResubmit, decodeResubmit, encodeResubmit),
		RawActNXAST_RESUBMIT_TABLE:    codec(ActResubmit, decodeResubmit, encodeResubmit),
		RawActNXAST_RESUBMIT_TABLE_CT: codec(ActResubmit, decodeResubmit, encodeResubmit),
		RawActNXAST_WRITE_METADATA:    codec(ActWriteMetadata, decodeWriteMetadata, encodeWriteMetadata),
		RawActOFPAT15_METER:           scalar(ActMeter, 0),
		RawActNXAST_EXIT:              scalar(ActExit, 0),
	})
}

// resubmitForms: NXAST_RESUBMIT only for resubmit:port that came that
// way; the ct variant as it came.
func resubmitForms(e *ActionEncoder, a *Action, v uint8) error {
	switch {
	case a.Raw == RawActNXAST_RESUBMIT_TABLE_CT:
		return e.one(a, v, a.Raw)
	case a.Raw == RawActNXAST_RESUBMIT && a.Table == 0xff:
		return e.one(a, v, RawActNXAST_RESUBMIT)
	}
	return e.one(a, v, RawActNXAST_RESUBMIT_TABLE)
}

// gotoTableForms: OpenFlow 1.0 has it as resubmit(,T); elsewhere it is an
// instruction (AppendOfpacts).
func gotoTableForms(e *ActionEncoder, a *Action, v uint8) error {
	if v == mf.OF10 {
		e.forms = append(e.forms, Action{Type: ActResubmit, Raw: RawActNXAST_RESUBMIT_TABLE, Port: PortInPort, Table: a.Table})
		return nil
	}
	return errorf(OFPBIC_UNSUP_INST, "goto_table in an action list")
}

func writeMetadataForms(e *ActionEncoder, a *Action, v uint8) error {
	return e.one(a, v, RawActNXAST_WRITE_METADATA)
}

// actionSetForms: clear_actions and write_actions are dropped in
// OpenFlow 1.0 and are instructions elsewhere.
func actionSetForms(e *ActionEncoder, a *Action, v uint8) error {
	if v == mf.OF10 {
		return nil
	}
	return errorf(OFPBIC_UNSUP_INST, "%s in an action list", a.Type)
}

func meterForms(e *ActionEncoder, a *Action, v uint8) error {
	if v < mf.OF15 {
		return nil // an instruction (AppendOfpacts) before OpenFlow 1.5
	}
	return defaultForms(e, a, v)
}

func checkResubmit(c *checker, a *Action, _ int) error {
	if a.Raw == RawActNXAST_RESUBMIT_TABLE_CT && !c.m.Satisfies(mf.PrereqCT.Expr()) {
		return errInconsistent("resubmit(...,ct)")
	}
	return nil
}

func checkGotoTable(c *checker, a *Action, _ int) error {
	if a.Table == 0xff || c.table != 0xff && a.Table <= c.table || a.Table >= c.nTables && c.nTables != 0xff {
		return errorf(OFPBIC_BAD_TABLE_ID, "goto_table:%d from table %d of %d", a.Table, c.table, c.nTables)
	}
	return nil
}

func checkMeter(_ *checker, a *Action, _ int) error {
	if a.Arg == 0 || a.Arg > 0xffff0000 {
		return errorf(OFPMMFC_INVALID_METER, "meter %d", a.Arg)
	}
	return nil
}

// checkNested checks a nested list (clone, write_actions) against the
// match as it stands, whose changes do not outlive the list.
func checkNested(c *checker, a *Action, depth int) error {
	saved, owned := c.m, c.owned
	c.owned = false // a change inside copies, leaving saved as it is
	err := c.check(a.Nested, depth+1)
	c.m, c.owned = saved, owned
	return err
}

func decodeResubmit(p []byte, _ uint8, in *actionInstance, _ int) (Action, error) {
	a := Action{Type: ActResubmit, Port: uint32(binary.BigEndian.Uint16(p[10:])), Table: p[12]}
	if in.raw == RawActNXAST_RESUBMIT {
		a.Table = 255
	} else if p[13] != 0 || p[14] != 0 || p[15] != 0 {
		return a, errorf(OFPBAC_BAD_ARGUMENT, "resubmit padding is not zero")
	}
	return a, nil
}

func encodeResubmit(b []byte, a *Action, _ uint8, in *actionInstance, _ int) ([]byte, error) {
	b = binary.BigEndian.AppendUint16(b, uint16(a.Port))
	if in.raw == RawActNXAST_RESUBMIT {
		return b, nil
	}
	return append(b, a.Table), nil
}

func decodeWriteMetadata(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	if !isZero(p[10:16]) {
		return Action{}, errorf(NXBRC_MUST_BE_ZERO, "write_metadata padding is not zero")
	}
	return Action{Type: ActWriteMetadata, Arg: binary.BigEndian.Uint64(p[16:]), Arg2: binary.BigEndian.Uint64(p[24:])}, nil
}

func encodeWriteMetadata(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	b = appendZeros(b, 6)
	b = binary.BigEndian.AppendUint64(b, a.Arg)
	return binary.BigEndian.AppendUint64(b, a.Arg2), nil
}
