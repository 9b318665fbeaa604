package ofptext

import (
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The learn family's text (see package ofp's actions_learn.go): learn(...)
// and fin_timeout(...).

func init() {
	registerParsers(map[string]actionParser{
		"learn": func(t *actionText) ([]ofp.Action, error) {
			return one(parseLearn(t.arg, t.m))
		},
		"fin_timeout": parseFinTimeout,
	})
	registerFormatters(map[ofp.ActionType]actionFormatter{
		ofp.ActLearn: func(sb *strings.Builder, a *ofp.Action, _ uint8) {
			if a.Learn() != nil {
				formatLearn(sb, a.Learn())
			}
		},
		ofp.ActFinTimeout: formatFinTimeout,
	})
}

func parseFinTimeout(t *actionText) ([]ofp.Action, error) {
	ft := &ofp.FinTimeout{}
	for _, kv := range strings.Split(t.arg, ",") {
		if kv == "" {
			continue
		}
		k, val, _ := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(val, 0, 16)
		switch {
		case err != nil && (k == "idle_timeout" || k == "hard_timeout"):
			return nil, errf("invalid %s \"%s\"", k, val)
		case err != nil:
			return nil, errf("%s: invalid fin_timeout argument", kv)
		case k == "idle_timeout":
			ft.Idle = uint16(n)
		case k == "hard_timeout":
			ft.Hard = uint16(n)
		default:
			return nil, errf("invalid key '%s' in 'fin_timeout' argument", k)
		}
	}
	return []ofp.Action{{Type: ofp.ActFinTimeout, Body: ft}}, nil
}

func formatFinTimeout(sb *strings.Builder, a *ofp.Action, _ uint8) {
	ft := a.FinTimeout()
	if ft == nil {
		return
	}
	var parts []string
	if ft.Idle != 0 {
		parts = append(parts, "idle_timeout="+strconv.Itoa(int(ft.Idle)))
	}
	if ft.Hard != 0 {
		parts = append(parts, "hard_timeout="+strconv.Itoa(int(ft.Hard)))
	}
	sb.WriteString("fin_timeout(" + strings.Join(parts, ",") + ")")
}

// parseLearn parses the argument of learn(...) as ovs-ofctl's learn_parse.
func parseLearn(arg string, m *mf.Match) (ofp.Action, error) {
	l := &ofp.Learn{Priority: DefaultPriority, Table: 1}
	items, err := splitTop(arg)
	if err != nil {
		return ofp.Action{}, err
	}
	for _, it := range items {
		if it == "" {
			continue
		}
		k, val, hasVal := strings.Cut(it, "=")
		// ovs-ofctl reads learn's numbers as atoi does (text is 0,
		// values wrap to the width); only the table is checked.
		num := func(bits int) (uint64, error) {
			if k == "table" {
				n, err := strconv.ParseUint(val, 0, bits)
				if err != nil {
					return 0, errf("unknown table \"%s\"", val)
				}
				return n, nil
			}
			if k == "cookie" {
				n, _ := strconv.ParseUint(val, 0, 64)
				return n, nil
			}
			return uint64(atoi(val)) & (1<<bits - 1), nil
		}
		var n uint64
		switch {
		case k == "table" && hasVal:
			if n, err = num(8); err == nil && n == 0xff {
				err = errf("%s: table id 255 not valid for `learn' action", it)
			}
			l.Table = uint8(n)
		case k == "priority" && hasVal:
			n, err = num(16)
			l.Priority = uint16(n)
		case k == "idle_timeout" && hasVal:
			n, err = num(16)
			l.IdleTimeout = uint16(n)
		case k == "hard_timeout" && hasVal:
			n, err = num(16)
			l.HardTimeout = uint16(n)
		case k == "fin_idle_timeout" && hasVal:
			n, err = num(16)
			l.FinIdleTimeout = uint16(n)
		case k == "fin_hard_timeout" && hasVal:
			n, err = num(16)
			l.FinHardTimeout = uint16(n)
		case k == "cookie" && hasVal:
			l.Cookie, err = num(64)
		case k == "limit" && hasVal:
			n, err = num(32)
			l.Limit = uint32(n)
		case k == "result_dst" && hasVal:
			l.Flags |= ofp.LearnWriteResult
			if l.ResultDst, err = parseSubfield(val); err == nil && l.ResultDst.NBits != 1 {
				err = errf("result_dst in 'learn' action must be a single bit")
			}
		case it == "send_flow_rem":
			l.Flags |= ofp.LearnSendFlowRem
		case it == "delete_learned":
			l.Flags |= ofp.LearnDeleteLearned
		default:
			var s ofp.LearnSpec
			if s, err = parseLearnSpec(it); err == nil {
				l.Specs = append(l.Specs, s)
			} else if name, _, _ := strings.Cut(it, "="); strings.HasSuffix(err.Error(), ": unknown keyword "+name) {
				err = errf("%s: unknown keyword %s", arg, name) // ovs-ofctl names the whole argument
			}
		}
		if err != nil {
			return ofp.Action{}, err
		}
	}
	return ofp.Action{Type: ofp.ActLearn, Body: l}, nil
}

// immBytes is an immediate of nbits bits as NXAST_LEARN carries it:
// 2*ceil(nbits/16) bytes, network order.
func immBytes(val []byte, nbits int) []byte {
	n := 2 * ((nbits + 15) / 16)
	out := make([]byte, n)
	for i := 0; i < n && i < len(val); i++ {
		out[n-1-i] = val[len(val)-1-i]
	}
	return out
}

func parseLearnSpec(s string) (ofp.LearnSpec, error) {
	switch {
	case strings.HasPrefix(s, "load:"):
		src, dst, ok := strings.Cut(s[len("load:"):], "->")
		if !ok {
			return ofp.LearnSpec{}, errf("%s: missing `->' following value", s)
		}
		d, err := parseSubfield(dst)
		if err != nil {
			return ofp.LearnSpec{}, err
		}
		sp := ofp.LearnSpec{NBits: d.NBits, Dst: ofp.LearnLoad, DstSub: d}
		if strings.Contains(src, "[") || mf.Lookup(src) != nil {
			if sp.Src, err = parseSubfield(src); err != nil {
				return sp, err
			}
			if sp.Src.NBits != d.NBits {
				return sp, errf("%s: source field is %d bits wide but destination is %d bits wide", s, sp.Src.NBits, d.NBits)
			}
			return sp, nil
		}
		v, err := parseInt(src, 16)
		if err != nil || bitLen(v) > d.NBits {
			return sp, errf("%s: value does not fit into %d bits", s[len("load:"):], d.NBits)
		}
		sp.SrcImm, sp.Imm = true, immBytes(v, d.NBits)
		return sp, nil
	case strings.HasPrefix(s, "output:"):
		src, err := parseSubfield(s[len("output:"):])
		if err != nil {
			return ofp.LearnSpec{}, err
		}
		return ofp.LearnSpec{NBits: src.NBits, Src: src, Dst: ofp.LearnOutput}, nil
	}
	name, val, hasVal := strings.Cut(s, "=")
	if !hasVal && strings.Contains(s, "->") { // not a spec ovs-ofctl knows
		return ofp.LearnSpec{}, errf("%s: unknown keyword %s", s, s)
	}
	var d ofp.Subfield
	var err error
	if strings.Contains(name, "[") {
		if d, err = parseSubfield(name); err != nil {
			return ofp.LearnSpec{}, err
		}
	} else {
		f := mf.Lookup(name)
		if f == nil {
			return ofp.LearnSpec{}, errf("%s: unknown keyword %s", s, name)
		}
		d = ofp.Subfield{Field: f, NBits: f.Bits}
	}
	sp := ofp.LearnSpec{NBits: d.NBits, Dst: ofp.LearnMatch, DstSub: d}
	switch {
	case !hasVal:
		sp.Src = d
	case strings.Contains(val, "["):
		if sp.Src, err = parseSubfield(val); err != nil {
			return sp, err
		}
		if sp.Src.NBits != d.NBits {
			return sp, errf("%s: source field is %d bits wide but destination is %d bits wide", s, sp.Src.NBits, d.NBits)
		}
	case d.Ofs == 0 && d.NBits == d.Field.Bits && !strings.Contains(name, "["):
		if src := mf.Lookup(val); src != nil {
			sp.Src = ofp.Subfield{Field: src, NBits: src.Bits}
			if src.Bits != d.NBits {
				return sp, errf("%s: source field is %d bits wide but destination is %d bits wide", s, src.Bits, d.NBits)
			}
			break
		}
		v, mask, err := parseFieldValue(d.Field, val)
		if err != nil {
			return sp, &syntaxError{err.Error()}
		}
		if !isAllOnes(mask) {
			return sp, errf("%s: %s value %s cannot be parsed as a subfield (%s: unknown field `%s') or an immediate value (%s: wildcards not allowed here)",
				s, name, val, val, val, val)
		}
		sp.SrcImm, sp.Imm = true, immBytes(v, d.NBits)
	default:
		v, err := parseInt(val, 16)
		if err != nil || bitLen(v) > d.NBits {
			return sp, errf("%s: value %s does not fit into %d bits", s, val, d.NBits)
		}
		sp.SrcImm, sp.Imm = true, immBytes(v, d.NBits)
	}
	return sp, nil
}

func formatLearn(sb *strings.Builder, l *ofp.Learn) {
	sb.WriteString("learn(table=" + strconv.Itoa(int(l.Table)))
	num := func(name string, v uint64) {
		if v != 0 {
			sb.WriteString("," + name + "=" + strconv.FormatUint(v, 10))
		}
	}
	num("idle_timeout", uint64(l.IdleTimeout))
	num("hard_timeout", uint64(l.HardTimeout))
	num("fin_idle_timeout", uint64(l.FinIdleTimeout))
	num("fin_hard_timeout", uint64(l.FinHardTimeout))
	if l.Priority != DefaultPriority {
		sb.WriteString(",priority=" + strconv.Itoa(int(l.Priority)))
	}
	if l.Flags&ofp.LearnSendFlowRem != 0 {
		sb.WriteString(",send_flow_rem")
	}
	if l.Flags&ofp.LearnDeleteLearned != 0 {
		sb.WriteString(",delete_learned")
	}
	if l.Cookie != 0 {
		sb.WriteString(",cookie=0x" + strconv.FormatUint(l.Cookie, 16))
	}
	num("limit", uint64(l.Limit))
	if l.Flags&ofp.LearnWriteResult != 0 && l.ResultDst.Field != nil {
		sb.WriteString(",result_dst=" + formatSubfield(l.ResultDst))
	}
	for _, s := range l.Specs {
		sb.WriteByte(',')
		switch {
		case s.Dst == ofp.LearnOutput:
			sb.WriteString("output:" + formatSubfield(s.Src))
		case s.Dst == ofp.LearnLoad && s.SrcImm:
			sb.WriteString("load:" + formatHex(s.Imm) + "->" + formatSubfield(s.DstSub))
		case s.Dst == ofp.LearnLoad:
			sb.WriteString("load:" + formatSubfield(s.Src) + "->" + formatSubfield(s.DstSub))
		case s.SrcImm && s.DstSub.Field != nil && s.DstSub.Ofs == 0 && s.DstSub.NBits == s.DstSub.Field.Bits:
			f := s.DstSub.Field
			v := make([]byte, f.Bytes)
			for i := 0; i < len(v) && i < len(s.Imm); i++ {
				v[len(v)-1-i] = s.Imm[len(s.Imm)-1-i]
			}
			sb.WriteString(f.Name + "=" + formatValue(f, v, ones(len(v))))
		case s.SrcImm:
			sb.WriteString(formatSubfield(s.DstSub) + "=" + formatHex(s.Imm))
		case s.Src == s.DstSub:
			sb.WriteString(formatSubfield(s.DstSub))
		default:
			sb.WriteString(formatSubfield(s.DstSub) + "=" + formatSubfield(s.Src))
		}
	}
	sb.WriteByte(')')
}
