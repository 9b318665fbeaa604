package ofp

import (
	"bytes"
	"encoding/binary"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// The learn family: learn (NXAST_LEARN, NXAST_LEARN2) and fin_timeout.
// Action fields: learn has Learn; fin_timeout FinTimeout.

func init() {
	registerKinds(map[ActionType]kindOps{
		ActLearn:      {forms: learnForms, check: checkLearn},
		ActFinTimeout: {check: checkFinTimeout, canonical: []RawAction{RawActNXAST_FIN_TIMEOUT}},
	})
	registerRaws(map[RawAction]rawOps{
		RawActNXAST_LEARN:       codec(ActLearn, decodeLearn, encodeLearn),
		RawActNXAST_LEARN2:      codec(ActLearn, decodeLearn, encodeLearn),
		RawActNXAST_FIN_TIMEOUT: codec(ActFinTimeout, decodeFinTimeout, encodeFinTimeout),
	})
}

// learnForms: NXAST_LEARN2 when the action needs it (a limit, a result
// written) or came that way.
func learnForms(e *ActionEncoder, a *Action, v uint8) error {
	if l := a.Learn(); a.Raw == RawActNXAST_LEARN2 || l != nil && (l.Limit != 0 || l.Flags&LearnWriteResult != 0) {
		return e.one(a, v, RawActNXAST_LEARN2)
	}
	return e.one(a, v, RawActNXAST_LEARN)
}

func checkLearn(c *checker, a *Action, _ int) error {
	if a.Learn() == nil {
		return errorf(OFPBAC_BAD_ARGUMENT, "learn without its body")
	}
	// Sources are read from this flow; destinations belong to the
	// learned flow, whose match the specs build in order (a field
	// copied from the packet counts as matched with value 0 for the
	// later specs' prerequisites, as in Open vSwitch's learn_check).
	var learned mf.Match
	for _, s := range a.Learn().Specs {
		if !s.SrcImm {
			if err := c.sub(s.Src, "learn"); err != nil {
				return err
			}
		}
		if s.Dst == LearnOutput {
			continue
		}
		if err := checkSubfield(s.DstSub); err != nil {
			return err
		}
		if !learned.PrereqsOK(s.DstSub.Field) {
			return errInconsistent("learn of " + s.DstSub.Field.Name)
		}
		if s.Dst == LearnMatch {
			writeSubfield(&learned, s.DstSub, s.Imm)
		}
	}
	if a.Learn().Table >= c.nTables && c.nTables != 0xff {
		return errorf(OFPBRC_BAD_TABLE_ID, "learn into table %d of %d", a.Learn().Table, c.nTables)
	}
	return nil
}

func checkFinTimeout(c *checker, _ *Action, _ int) error {
	return c.soft(c.nwProto() == 6, "fin_timeout")
}

// Learn spec header bits (nx_action_learn flow_mod_spec header).
const (
	learnNBitsMask = 0x3ff
	learnSrcImm    = 1 << 13
	learnDstShift  = 11
	learnDstMask   = 3 << learnDstShift
)

// learnFixed is the size of nx_action_learn; NXAST_LEARN2 adds limit,
// result_dst_ofs and padding.
const (
	learnFixed  = 32
	learn2Fixed = 40
)

func decodeLearn(p []byte, _ uint8, in *actionInstance, _ int) (Action, error) {
	l := &Learn{IdleTimeout: binary.BigEndian.Uint16(p[10:]), HardTimeout: binary.BigEndian.Uint16(p[12:]),
		Priority: binary.BigEndian.Uint16(p[14:]), Cookie: binary.BigEndian.Uint64(p[16:]),
		Flags: binary.BigEndian.Uint16(p[24:]), Table: p[26],
		FinIdleTimeout: binary.BigEndian.Uint16(p[28:]), FinHardTimeout: binary.BigEndian.Uint16(p[30:])}
	switch {
	case p[27] != 0:
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "learn padding is not zero")
	case l.Flags&^(LearnSendFlowRem|LearnDeleteLearned|LearnWriteResult) != 0:
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "learn flags %#x", l.Flags)
	case l.Table == 0xff:
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "learn to table 255")
	}
	rest := p[learnFixed:]
	if in.raw == RawActNXAST_LEARN2 {
		l.Limit = binary.BigEndian.Uint32(p[32:])
		ofs := int(binary.BigEndian.Uint16(p[36:]))
		if p[38] != 0 || p[39] != 0 {
			return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "learn2 padding is not zero")
		}
		rest = p[learn2Fixed:]
		if l.Flags&LearnWriteResult != 0 {
			f, n, err := pullHeader(rest)
			if err != nil {
				return Action{}, err
			}
			l.ResultDst = Subfield{f, ofs, 1}
			if err := checkSubfield(l.ResultDst); err != nil {
				return Action{}, err
			}
			rest = rest[n:]
		}
	} else if l.Flags&LearnWriteResult != 0 {
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "learn with write_result needs NXAST_LEARN2")
	}
	for len(rest) >= 2 {
		h := binary.BigEndian.Uint16(rest)
		if h == 0 {
			break
		}
		rest = rest[2:]
		s := LearnSpec{NBits: int(h & learnNBitsMask), SrcImm: h&learnSrcImm != 0, Dst: uint8(h & learnDstMask >> learnDstShift)}
		if h&^(learnNBitsMask|learnSrcImm|learnDstMask) != 0 || s.Dst > LearnOutput || s.NBits == 0 {
			return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "learn spec header %#x", h)
		}
		var err error
		if s.SrcImm {
			if s.Dst == LearnOutput {
				return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "learn output from an immediate")
			}
			n := 2 * ((s.NBits + 15) / 16)
			if len(rest) < n {
				return Action{}, errorf(OFPBAC_BAD_LEN, "learn spec immediate of %d bytes, %d left", n, len(rest))
			}
			s.Imm, rest = bytes.Clone(rest[:n]), rest[n:]
		} else if s.Src, rest, err = pullLearnSubfield(rest, s.NBits); err != nil {
			return Action{}, err
		}
		if s.Dst != LearnOutput {
			if s.DstSub, rest, err = pullLearnSubfield(rest, s.NBits); err != nil {
				return Action{}, err
			}
		}
		l.Specs = append(l.Specs, s)
	}
	if !isZero(rest) {
		return Action{}, errorf(OFPBAC_BAD_ARGUMENT, "learn has %d trailing bytes that are not zero", len(rest))
	}
	return Action{Type: ActLearn, Body: l}, nil
}

func pullLearnSubfield(p []byte, nbits int) (Subfield, []byte, error) {
	f, n, err := pullHeader(p)
	if err != nil {
		return Subfield{}, p, err
	}
	if len(p) < n+2 {
		return Subfield{}, p, errorf(OFPBAC_BAD_LEN, "learn spec subfield truncated")
	}
	sf := Subfield{f, int(binary.BigEndian.Uint16(p[n:])), nbits}
	return sf, p[n+2:], checkSubfield(sf)
}

func encodeLearn(b []byte, a *Action, _ uint8, in *actionInstance, _ int) ([]byte, error) {
	l := a.Learn()
	if l == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "learn without its body")
	}
	b = binary.BigEndian.AppendUint16(b, l.IdleTimeout)
	b = binary.BigEndian.AppendUint16(b, l.HardTimeout)
	b = binary.BigEndian.AppendUint16(b, l.Priority)
	b = binary.BigEndian.AppendUint64(b, l.Cookie)
	b = binary.BigEndian.AppendUint16(b, l.Flags)
	b = append(b, l.Table, 0)
	b = binary.BigEndian.AppendUint16(b, l.FinIdleTimeout)
	b = binary.BigEndian.AppendUint16(b, l.FinHardTimeout)
	if in.raw == RawActNXAST_LEARN2 {
		b = binary.BigEndian.AppendUint32(b, l.Limit)
		b = binary.BigEndian.AppendUint16(b, uint16(l.ResultDst.Ofs))
		b = append(b, 0, 0)
		if l.Flags&LearnWriteResult != 0 {
			if l.ResultDst.Field == nil {
				return b, errorf(OFPBAC_BAD_ARGUMENT, "learn write_result without a destination")
			}
			b = putHeader(b, l.ResultDst.Field)
		}
	}
	for _, s := range l.Specs {
		h := uint16(s.NBits&learnNBitsMask) | uint16(s.Dst)<<learnDstShift
		if s.SrcImm {
			h |= learnSrcImm
		}
		b = binary.BigEndian.AppendUint16(b, h)
		switch {
		case s.SrcImm:
			n := 2 * ((s.NBits + 15) / 16)
			b = appendZeros(b, n-min(n, len(s.Imm)))
			b = append(b, s.Imm[max(0, len(s.Imm)-n):]...)
		case s.Src.Field == nil:
			return b, errorf(OFPBAC_BAD_ARGUMENT, "learn spec without a source")
		default:
			b = putHeader(b, s.Src.Field)
			b = binary.BigEndian.AppendUint16(b, uint16(s.Src.Ofs))
		}
		if s.Dst != LearnOutput {
			if s.DstSub.Field == nil {
				return b, errorf(OFPBAC_BAD_ARGUMENT, "learn spec without a destination")
			}
			b = putHeader(b, s.DstSub.Field)
			b = binary.BigEndian.AppendUint16(b, uint16(s.DstSub.Ofs))
		}
	}
	return b, nil
}

// writeSubfield sets sf in m to imm (network order, zero if nil), exact on
// sf's bits and keeping m's other bits of the field.
func writeSubfield(m *mf.Match, sf Subfield, imm []byte) {
	f := sf.Field
	if f.Variable || f.Bytes > 16 {
		return
	}
	var val, mask [16]byte
	v, k := val[:f.Bytes], mask[:f.Bytes]
	m.Get(f, v, k)
	for i := 0; i < sf.NBits; i++ {
		j := sf.Ofs + i
		bit := byte(1) << (j % 8)
		k[len(k)-1-j/8] |= bit
		v[len(v)-1-j/8] &^= bit
		if i/8 < len(imm) && imm[len(imm)-1-i/8]>>(i%8)&1 == 1 {
			v[len(v)-1-j/8] |= bit
		}
	}
	_ = m.SetMasked(f, v, k) // a value mf refuses leaves the field as it was
}

func decodeFinTimeout(p []byte, _ uint8, _ *actionInstance, _ int) (Action, error) {
	return Action{Type: ActFinTimeout, Body: &FinTimeout{Idle: binary.BigEndian.Uint16(p[10:]), Hard: binary.BigEndian.Uint16(p[12:])}}, nil
}

func encodeFinTimeout(b []byte, a *Action, _ uint8, _ *actionInstance, _ int) ([]byte, error) {
	if a.FinTimeout() == nil {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "fin_timeout without its body")
	}
	b = binary.BigEndian.AppendUint16(b, a.FinTimeout().Idle)
	return binary.BigEndian.AppendUint16(b, a.FinTimeout().Hard), nil
}
