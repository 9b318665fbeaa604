package ofp

import (
	"bytes"
	"encoding/binary"
)

// The remaining family: note, sample, clone, check_pkt_larger,
// conjunction and the testing actions debug_slow and debug_recirc.
// Action fields: note has Data (the note bytes); sample Sample; clone
// Nested; check_pkt_larger Arg (the length) and Dst (1 bit); conjunction
// Conj. sample with a field-sourced domain (NXAST_SAMPLE4) stays ActRaw.

func init() {
	registerKinds(map[ActionType]kindOps{
		ActNote:        {canonical: []RawAction{RawActNXAST_NOTE}},
		ActSample:      {forms: sampleForms},
		ActClone:       {check: checkNested, canonical: []RawAction{RawActNXAST_CLONE}},
		ActCheckPktLen: {check: checkCheckPktLarger, canonical: []RawAction{RawActNXAST_CHECK_PKT_LARGER}},
		ActConjunction: {canonical: []RawAction{RawActNXAST_CONJUNCTION}},
		ActDebugSlow:   {canonical: []RawAction{RawActNXAST_DEBUG_SLOW}},
		ActDebugRecirc: {canonical: []RawAction{RawActNXAST_DEBUG_RECIRC}},
	})
	// The debug actions decode like any other; DecodeActions refuses
	// them unless asked not to (DecodeActionsWithDebug).
	registerRaws(map[RawAction]rawOps{
		RawActNXAST_NOTE:             codec(ActNote, decodeNote, encodeNote),
		RawActNXAST_CONJUNCTION:      codec(ActConjunction, decodeConjunction, encodeConjunction),
		RawActNXAST_CLONE:            codec(ActClone, decodeClone, encodeClone),
		RawActNXAST_CHECK_PKT_LARGER: codec(ActCheckPktLen, decodeCheckPktLarger, encodeCheckPktLarger),
		RawActNXAST_SAMPLE:           codec(ActSample, decodeSample, encodeSample),
		RawActNXAST_SAMPLE2:          codec(ActSample, decodeSample, encodeSample),
		RawActNXAST_SAMPLE3:          codec(ActSample, decodeSample, encodeSample),
		RawActNXAST_DEBUG_SLOW:       scalar(ActDebugSlow, 0),
		RawActNXAST_DEBUG_RECIRC:     scalar(ActDebugRecirc, 0),
	})
}

func checkCheckPktLarger(c *checker, a *Action, _ int) error { return c.sub(a.Dst, "check_pkt_larger") }

// sampleForms: the shortest of NXAST_SAMPLE, SAMPLE2 (a sampling port)
// and SAMPLE3 (a direction) that carries the action, or the one it came
// in.
func sampleForms(e *ActionEncoder, a *Action, v uint8) error {
	s := a.Sample()
	switch {
	case s == nil:
		return errorf(OFPBAC_BAD_ARGUMENT, "sample without its body")
	case a.Raw == RawActNXAST_SAMPLE3 || s.Direction != 0:
		return e.one(a, v, RawActNXAST_SAMPLE3)
	case a.Raw == RawActNXAST_SAMPLE2 || s.SamplingPort != PortNone:
		return e.one(a, v, RawActNXAST_SAMPLE2)
	}
	return e.one(a, v, RawActNXAST_SAMPLE)
}

func decodeNote(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	return Action{Type: ActNote, Body: bytes.Clone(p[10:])}, nil
}

func encodeNote(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	return append(b, a.Data()...), nil
}

func decodeConjunction(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	c := &Conjunction{Clause: p[10], NClauses: p[11], ID: binary.BigEndian.Uint32(p[12:])}
	if c.NClauses < 2 || c.NClauses > 64 || c.Clause >= c.NClauses {
		return Action{}, errorf(NXBAC_BAD_CONJUNCTION, "conjunction clause %d of %d", c.Clause, c.NClauses)
	}
	return Action{Type: ActConjunction, Body: c}, nil
}

func encodeConjunction(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	c := a.Conj()
	if c == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "conjunction without its body")
	}
	b = append(b, c.Clause, c.NClauses)
	return binary.BigEndian.AppendUint32(b, c.ID), nil
}

func decodeClone(p []byte, v uint8, _ *actionInstance, depth int) (Action, error) {
	nested, err := decodeActions(p[16:], v, depth+1)
	if err != nil {
		return Action{}, err
	}
	return Action{Type: ActClone, Nested: nested}, nil
}

func encodeClone(b []byte, a *Action, v uint8, _ *actionInstance, depth int) ([]byte, error) {
	b = appendZeros(b, 6)
	return appendActionList(b, a.Nested, v, depth+1)
}

func decodeCheckPktLarger(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	a := Action{Type: ActCheckPktLen, Arg: uint64(binary.BigEndian.Uint16(p[10:]))}
	f := fieldOfHeader(binary.BigEndian.Uint32(p[14:]))
	if f == nil {
		return a, errorf(OFPBAC_BAD_ARGUMENT, "check_pkt_larger to unknown field")
	}
	a.Dst = Subfield{f, int(binary.BigEndian.Uint16(p[12:])), 1}
	return a, checkSubfield(a.Dst)
}

func encodeCheckPktLarger(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	if a.Dst.Field == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "check_pkt_larger without a destination")
	}
	b = binary.BigEndian.AppendUint16(b, uint16(a.Arg))
	b = binary.BigEndian.AppendUint16(b, uint16(a.Dst.Ofs))
	return binary.BigEndian.AppendUint32(b, header32(a.Dst.Field)), nil
}

func decodeSample(p []byte, _ uint8, in *actionInstance, _ int) (Action, error) {
	s := &Sample{Probability: binary.BigEndian.Uint16(p[10:]), CollectorSetID: binary.BigEndian.Uint32(p[12:]),
		ObsDomainID: binary.BigEndian.Uint32(p[16:]), ObsPointID: binary.BigEndian.Uint32(p[20:]), SamplingPort: PortNone}
	if in.raw != RawActNXAST_SAMPLE {
		s.SamplingPort = binary.BigEndian.Uint16(p[24:])
	}
	if in.raw == RawActNXAST_SAMPLE3 {
		s.Direction = p[26]
		if s.Direction > 2 {
			return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "sample direction %d", s.Direction)
		}
	}
	if s.Probability == 0 {
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "sample probability 0")
	}
	return Action{Type: ActSample, Body: s}, nil
}

func encodeSample(b []byte, a *Action, _ uint8, in *actionInstance, _ int) ([]byte, error) {
	s := a.Sample()
	if s == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "sample without its body")
	}
	b = binary.BigEndian.AppendUint16(b, s.Probability)
	b = binary.BigEndian.AppendUint32(b, s.CollectorSetID)
	b = binary.BigEndian.AppendUint32(b, s.ObsDomainID)
	b = binary.BigEndian.AppendUint32(b, s.ObsPointID)
	if in.raw != RawActNXAST_SAMPLE {
		b = binary.BigEndian.AppendUint16(b, s.SamplingPort)
	}
	if in.raw == RawActNXAST_SAMPLE3 {
		b = append(b, s.Direction)
	}
	return b, nil
}
