package ofptext

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The load-balancing family's text (see package ofp's actions_bundle.go):
// bundle(...), bundle_load(...) and multipath(...).

func init() {
	registerParsers(map[string]actionParser{
		"bundle": func(t *actionText) ([]ofp.Action, error) {
			return one(parseBundle(t.arg, false))
		},
		"bundle_load": func(t *actionText) ([]ofp.Action, error) {
			return one(parseBundle(t.arg, true))
		},
		"multipath": single(parseMultipath),
	})
	registerFormatters(map[ofp.ActionType]actionFormatter{
		ofp.ActBundle:    formatBundle,
		ofp.ActMultipath: formatMultipath,
	})
}

func formatMultipath(sb *strings.Builder, a *ofp.Action, _ uint8) {
	if m := a.Multipath(); m != nil {
		fmt.Fprintf(sb, "multipath(%s,%d,%s,%d,%d,%s)", ofp.HashFieldsName(m.Fields), m.Basis,
			ofp.MultipathAlgName(m.Algorithm), int(m.MaxLink)+1, m.Arg, formatSubfield(m.Dst))
	}
}

func formatBundle(sb *strings.Builder, a *ofp.Action, _ uint8) {
	b := a.Bundle()
	if b == nil {
		return
	}
	name := "bundle"
	if b.Dst.Field != nil {
		name = "bundle_load"
	}
	fmt.Fprintf(sb, "%s(%s,%d,%s,ofport,", name, ofp.HashFieldsName(b.Fields), b.Basis, nameOf(bundleAlgs[:], b.Algorithm))
	if b.Dst.Field != nil {
		sb.WriteString(formatSubfield(b.Dst) + ",")
	}
	sb.WriteString("members:")
	for i, m := range b.Members {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(formatPort(m))
	}
	sb.WriteByte(')')
}

func parseMultipath(arg string) (ofp.Action, error) {
	parts := strings.Split(arg, ",")
	if len(parts) != 6 {
		return ofp.Action{}, errf("%s: not enough arguments to multipath action", arg)
	}
	mp := &ofp.Multipath{}
	fi, ok := ofp.HashFieldsByName(parts[0])
	if !ok {
		return ofp.Action{}, errf("%s: unknown fields `%s'", arg, parts[0])
	}
	ai, ok := ofp.MultipathAlgByName(parts[2])
	if !ok {
		return ofp.Action{}, errf("%s: unknown algorithm `%s'", arg, parts[2])
	}
	basis, err1 := strconv.ParseUint(parts[1], 10, 16)
	nLinks, err2 := strconv.ParseUint(parts[3], 10, 32)
	marg, err3 := strconv.ParseUint(parts[4], 10, 32)
	if err1 != nil || err2 != nil || err3 != nil {
		return ofp.Action{}, errf("%s: invalid multipath argument", arg)
	}
	if nLinks == 0 || nLinks > 65536 {
		return ofp.Action{}, errf("%s: n_links %d is not in valid range 1 to 65536", arg, nLinks)
	}
	dst, err := parseSubfield(parts[5])
	if err != nil {
		return ofp.Action{}, err
	}
	need := 0
	for (uint64(1) << need) < nLinks {
		need++
	}
	if dst.NBits < need {
		return ofp.Action{}, errf("%s: %d-bit destination field has %d possible values, less than specified n_links %d", arg, dst.NBits, uint64(1)<<dst.NBits, nLinks)
	}
	mp.Fields, mp.Basis, mp.Algorithm, mp.MaxLink, mp.Arg, mp.Dst = uint16(fi), uint16(basis), uint16(ai), uint16(nLinks-1), uint32(marg), dst
	return ofp.Action{Type: ofp.ActMultipath, Body: mp}, nil
}

// bundleAlgs are the NX_BD_ALG_* names, by value; read-only.
var bundleAlgs = [...]string{"active_backup", "hrw"}

func parseBundle(arg string, load bool) (ofp.Action, error) {
	head, members, ok := strings.Cut(arg, ",members:")
	if !ok {
		head, members, ok = strings.Cut(arg, ",slaves:")
	}
	parts := strings.Split(head, ",")
	want := 4
	if load {
		want = 5
	}
	if !ok || len(parts) != want {
		return ofp.Action{}, errf("%s: not enough arguments to bundle action", arg)
	}
	bd := &ofp.Bundle{}
	fi, ok := ofp.HashFieldsByName(parts[0])
	if !ok {
		return ofp.Action{}, errf("%s: unknown fields `%s'", arg, parts[0])
	}
	ai, ok := lookupName(bundleAlgs[:], parts[2])
	if !ok {
		return ofp.Action{}, errf("%s: unknown algorithm `%s'", arg, parts[2])
	}
	basis, err := strconv.ParseUint(parts[1], 10, 16)
	if err != nil {
		return ofp.Action{}, errf("%s: invalid basis", parts[1])
	}
	if parts[3] != "ofport" {
		return ofp.Action{}, errf("%s: unknown member_type `%s'", arg, parts[3])
	}
	if load {
		if bd.Dst, err = parseSubfield(parts[4]); err != nil {
			return ofp.Action{}, err
		}
	}
	for _, m := range strings.Split(members, ",") {
		if m == "" && members == "" {
			break // "members:" with none
		}
		p, ok := parsePort(m)
		if !ok {
			return ofp.Action{}, errf("%s: bad port number", m)
		}
		bd.Members = append(bd.Members, p)
	}
	bd.Fields, bd.Basis, bd.Algorithm = uint16(fi), uint16(basis), uint16(ai)
	return ofp.Action{Type: ofp.ActBundle, Body: bd}, nil
}
