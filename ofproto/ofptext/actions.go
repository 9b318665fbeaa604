package ofptext

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// unsupportedActions are ovs-ofctl actions ofp has no typed form for yet;
// they are refused with a clear error rather than "unknown action".
var unsupportedActions = map[string]bool{
	"enqueue": true, "mod_vlan_vid": true, "mod_vlan_pcp": true,
	"strip_vlan": true, "pop_vlan": true, "push_vlan": true, "mod_nw_tos": true, "mod_nw_ecn": true, "dec_ttl": true, "mod_nw_ttl": true, "set_mpls_label": true, "set_mpls_tc": true,
	"set_mpls_ttl": true, "dec_mpls_ttl": true, "push_mpls": true, "pop_mpls": true, "set_queue": true,
	"pop_queue": true, "set_tunnel": true, "set_tunnel64": true, "push": true, "pop": true,
	"note": true, "learn": true, "conjunction": true, "multipath": true, "bundle": true,
	"bundle_load": true, "fin_timeout": true, "exit": true, "clone": true, "check_pkt_len": true,
	"sample": true, "write_metadata": true, "goto_table": true, "write_actions": true,
	"apply_actions": true, "clear_actions": true, "meter": true, "group": true, "nat": true,
	"output_trunc": true, "dec_nsh_ttl": true, "encap": true, "decap": true, "delete_field": true,
	"debug_recirc": true, "debug_slow": true,
}

// Bare keywords that are output actions to a reserved port.
var portActions = map[string]uint16{
	"in_port": portInPort, "table": portTable, "normal": portNormal, "flood": portFlood,
	"all": portAll, "local": portLocal,
}

// splitTop splits s at commas not inside parentheses.
func splitTop(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return nil, errf("%s: unbalanced parentheses", s)
			}
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, errf("%s: unbalanced parentheses", s)
	}
	if t := strings.TrimSpace(s[start:]); t != "" || len(out) > 0 {
		out = append(out, t)
	}
	return out, nil
}

// splitAction splits "name:arg", "name=arg" or "name(arg)".
func splitAction(s string) (name, arg string) {
	i := strings.IndexAny(s, ":=(")
	if i < 0 {
		return s, ""
	}
	if s[i] == '(' {
		return s[:i], strings.TrimSuffix(s[i+1:], ")")
	}
	return s[:i], s[i+1:]
}

func parseActions(s string, v uint8, m *mf.Match) ([]ofp.Action, error) {
	items, err := splitTop(s)
	if err != nil {
		return nil, err
	}
	var out []ofp.Action
	for i, it := range items {
		name, arg := splitAction(it)
		if name == "drop" {
			if len(items) != 1 || i != 0 {
				return nil, errf("\"drop\" must not be accompanied by any other action or instruction")
			}
			return nil, nil
		}
		as, err := parseAction(name, arg, it, v, m)
		if err != nil {
			return nil, err
		}
		out = append(out, as...)
	}
	return out, nil
}

func parseAction(name, arg, whole string, v uint8, m *mf.Match) ([]ofp.Action, error) {
	switch name {
	case "output":
		p, ok := parsePort(arg)
		if !ok || p == portNone {
			return nil, errf("%s: output to unknown port", arg)
		}
		return []ofp.Action{outputAction(p, v)}, nil
	case "resubmit":
		return one(parseResubmit(arg, whole))
	case "set_field":
		return parseSetField(arg, v)
	case "load":
		return parseLoad(arg, v)
	case "move":
		src, dst, ok := strings.Cut(arg, "->")
		if !ok {
			return nil, errf("%s: missing `->' following source", arg)
		}
		s, err := parseSubfield(src)
		if err != nil {
			return nil, err
		}
		d, err := parseSubfield(dst)
		if err != nil {
			return nil, err
		}
		if s.NBits != d.NBits {
			return nil, errf("%s: source field is %d bits wide but destination is %d bits wide", arg, s.NBits, d.NBits)
		}
		return []ofp.Action{{Type: ofp.ActMove, Raw: ofp.RawActNXAST_REG_MOVE, Src: s, Dst: d}}, nil
	case "ct":
		return one(parseCT(arg, v, m))
	case "controller", "CONTROLLER":
		// Without reason, id, userdata or pause, ovs-ofctl makes
		// controller[:max_len] an output to the controller port.
		a := outputAction(portController, v)
		if arg == "" {
			return []ofp.Action{a}, nil
		}
		ml := strings.TrimPrefix(arg, "max_len=")
		n, err := strconv.ParseUint(ml, 0, 16)
		if err != nil {
			return nil, errf("%s: controller options other than max_len are not supported by gvs's text syntax yet", whole)
		}
		a.MaxLen = uint16(n)
		return []ofp.Action{a}, nil
	case "ct_clear":
		return []ofp.Action{{Type: ofp.ActCTClear, Raw: ofp.RawActNXAST_CT_CLEAR}}, nil
	}
	if id, ok := legacyActions[name]; ok {
		f := mf.ByID(tpField(id, m))
		val, _, err := parseFieldValue(f, arg)
		if err != nil {
			return nil, &syntaxError{err.Error()}
		}
		return normalizeSetField(f, val, nil, v), nil
	}
	if p, ok := portActions[name]; ok && arg == "" {
		return []ofp.Action{outputAction(p, v)}, nil
	}
	if p, ok := parsePort(name); ok && arg == "" && p != portNone {
		return []ofp.Action{outputAction(p, v)}, nil
	}
	if unsupportedActions[name] {
		return nil, errf("%s: action %s is not supported by gvs's text syntax yet", whole, name)
	}
	return nil, errf("unknown action %s", name)
}

// one adapts a single-action parser to parseAction's result.
func one(a ofp.Action, err error) ([]ofp.Action, error) {
	if err != nil {
		return nil, err
	}
	return []ofp.Action{a}, nil
}

func outputAction(p uint16, v uint8) ofp.Action {
	a := ofp.Action{Type: ofp.ActOutput, Raw: ofp.RawActOFPAT10_OUTPUT, Port: uint32(p)}
	if p == portController {
		a.MaxLen = 0xffff
	}
	if v >= mf.OF11 {
		a.Raw = ofp.RawActOFPAT11_OUTPUT
		if p >= portMax {
			a.Port |= 0xffff0000
		}
	}
	return a
}

func parseResubmit(arg, whole string) (ofp.Action, error) {
	a := ofp.Action{Type: ofp.ActResubmit, Raw: ofp.RawActNXAST_RESUBMIT, Port: portInPort, Table: 0xff}
	if !strings.HasPrefix(whole, "resubmit(") {
		p, ok := parsePort(arg)
		if !ok {
			return a, errf("%s: resubmit to unknown port", arg)
		}
		a.Port = uint32(p)
		return a, nil
	}
	parts := strings.Split(arg, ",")
	if len(parts) > 3 {
		return a, errf("%s: too many arguments to resubmit", arg)
	}
	if parts[0] != "" {
		p, ok := parsePort(parts[0])
		if !ok {
			return a, errf("%s: resubmit to unknown port", parts[0])
		}
		a.Port = uint32(p)
	}
	if len(parts) > 1 && parts[1] != "" {
		t, err := strconv.ParseUint(parts[1], 0, 8)
		if err != nil || t == 0xff {
			return a, errf("%s: resubmit to unknown table", parts[1])
		}
		a.Table = uint8(t)
	}
	if len(parts) > 2 {
		if parts[2] != "ct" {
			return a, errf("%s: unknown resubmit argument (expected \"ct\")", parts[2])
		}
		a.Raw = ofp.RawActNXAST_RESUBMIT_TABLE_CT
	} else if a.Table != 0xff || a.Port == portInPort {
		a.Raw = ofp.RawActNXAST_RESUBMIT_TABLE
	}
	if a.Port == portInPort && a.Table == 0xff {
		return a, errf("at least one \"in_port\" or \"table\" must be specified on resubmit")
	}
	return a, nil
}

// parseSubfield parses "field[]", "field[n]" or "field[a..b]".
func parseSubfield(s string) (ofp.Subfield, error) {
	name, rng, ok := strings.Cut(s, "[")
	if !ok || !strings.HasSuffix(rng, "]") {
		f := mf.Lookup(name)
		if f == nil {
			return ofp.Subfield{}, errf("%s: unknown field `%s'", s, name)
		}
		return ofp.Subfield{}, errf("%s: missing [ looking for field name", s)
	}
	f := mf.Lookup(name)
	if f == nil {
		return ofp.Subfield{}, errf("%s: unknown field `%s'", s, name)
	}
	width := f.Bits
	rng = strings.TrimSuffix(rng, "]")
	if rng == "" {
		return ofp.Subfield{Field: f, Ofs: 0, NBits: width}, nil
	}
	lo, hi, isRange := strings.Cut(rng, "..")
	start, err := strconv.Atoi(lo)
	if err != nil || start < 0 {
		return ofp.Subfield{}, errf("%s: syntax error expecting bit number", s)
	}
	end := start
	if isRange {
		if end, err = strconv.Atoi(hi); err != nil || end < 0 {
			return ofp.Subfield{}, errf("%s: syntax error expecting bit number", s)
		}
	}
	switch {
	case start >= width:
		return ofp.Subfield{}, errf("%s: starting bit %d is not valid because field is only %d bits wide", s, start, width)
	case end >= width:
		return ofp.Subfield{}, errf("%s: ending bit %d is not valid because field is only %d bits wide", s, end, width)
	case start > end:
		return ofp.Subfield{}, errf("%s: starting bit %d is greater than ending bit %d", s, start, end)
	}
	return ofp.Subfield{Field: f, Ofs: start, NBits: end - start + 1}, nil
}

func parseSetField(arg string, v uint8) ([]ofp.Action, error) {
	vs, name, ok := strings.Cut(arg, "->")
	if !ok {
		return nil, errf("%s: missing `->'", arg)
	}
	f := mf.ByName(name)
	if f == nil {
		return nil, errf("%s is not a valid OXM field name", name)
	}
	if !f.Writable {
		return nil, errf("%s is read-only", name)
	}
	val, mask, err := parseFieldValue(f, vs)
	if err != nil {
		return nil, &syntaxError{err.Error()}
	}
	return normalizeSetField(f, val, mask, v), nil
}

func parseLoad(arg string, v uint8) ([]ofp.Action, error) {
	vs, dst, ok := strings.Cut(arg, "->")
	if !ok {
		return nil, errf("%s: missing `->' following value", arg)
	}
	d, err := parseSubfield(dst)
	if err != nil {
		return nil, err
	}
	val, err := parseInt(vs, 16)
	if err != nil {
		return nil, errf("%s: %v %s", vs, err, dst)
	}
	if bitLen(val) > d.NBits {
		return nil, errf("%s: value %s does not fit into %d bits", arg, vs, d.NBits)
	}
	if !d.Field.Writable {
		return nil, errf("%s: destination field %s is not writable", arg, d.Field.Name)
	}
	if v <= mf.OF10 && d.NBits <= 64 {
		return []ofp.Action{{Type: ofp.ActLoad, Raw: ofp.RawActNXAST_REG_LOAD, Dst: d, Value: val[8:]}}, nil
	}
	// OpenFlow 1.2+ (or wider than 64 bits): a masked set_field.
	w := d.Field.Bytes
	fv, fm := make([]byte, w), make([]byte, w)
	shiftInto(fv, val, d.Ofs)
	for i := d.Ofs; i < d.Ofs+d.NBits; i++ {
		fm[w-1-i/8] |= 1 << (i % 8)
	}
	return normalizeSetField(d.Field, fv, fm, v), nil
}

// normalizeSetField turns set_field into the form version v carries:
// OpenFlow 1.0 has no set_field, so it becomes NXAST_REG_LOAD when the
// mask is one contiguous run (ovs-ofctl prints it as load:).
func normalizeSetField(f *mf.Field, val, mask []byte, v uint8) []ofp.Action {
	if isAllOnes(mask) {
		mask = nil
	}
	for i := range mask {
		val[i] &= mask[i] // bits outside the mask are not written
	}
	if _, legacy := legacyNames[f.ID]; v <= mf.OF10 && !(legacy && mask == nil) {
		if ofs, n, ok := contiguous(mask, f.Bits); ok {
			// NXAST_REG_LOAD carries at most 64 bits: wider runs become
			// one load per 64 bits, lowest first, as ovs-ofctl does.
			var out []ofp.Action
			for lo := ofs; lo < ofs+n; lo += 64 {
				nb := min(64, ofs+n-lo)
				buf := make([]byte, 16)
				shiftOut(buf, val, lo)
				for i := 0; i < 128-nb; i++ {
					buf[15-(nb+i)/8] &^= 1 << ((nb + i) % 8)
				}
				out = append(out, ofp.Action{Type: ofp.ActLoad, Raw: ofp.RawActNXAST_REG_LOAD,
					Dst: ofp.Subfield{Field: f, Ofs: lo, NBits: nb}, Value: buf[8:]})
			}
			return out
		}
	}
	raw := ofp.RawActOFPAT12_SET_FIELD
	if v >= mf.OF15 {
		raw = ofp.RawActOFPAT15_SET_FIELD
	}
	return []ofp.Action{{Type: ofp.ActSetField, Raw: raw, Field: f, Value: val, Mask: mask}}
}

// contiguous returns the single run of 1-bits in mask (nil: the whole
// field of width bits).
func contiguous(mask []byte, width int) (ofs, n int, ok bool) {
	if mask == nil {
		return 0, width, true
	}
	total := 8 * len(mask)
	ofs = -1
	for i := 0; i < total; i++ {
		if mask[len(mask)-1-i/8]&(1<<(i%8)) != 0 {
			if ofs < 0 {
				ofs = i
			} else if i != ofs+n {
				return 0, 0, false
			}
			n++
		}
	}
	return ofs, n, ofs >= 0
}

// shiftInto ORs src (16 bytes, network order) shifted left by ofs bits
// into dst.
func shiftInto(dst, src []byte, ofs int) {
	for i := 0; i < 8*len(src); i++ {
		if src[len(src)-1-i/8]&(1<<(i%8)) != 0 {
			j := i + ofs
			if j < 8*len(dst) {
				dst[len(dst)-1-j/8] |= 1 << (j % 8)
			}
		}
	}
}

// shiftOut writes src shifted right by ofs bits into dst.
func shiftOut(dst, src []byte, ofs int) {
	for i := ofs; i < 8*len(src); i++ {
		if src[len(src)-1-i/8]&(1<<(i%8)) != 0 {
			j := i - ofs
			if j < 8*len(dst) {
				dst[len(dst)-1-j/8] |= 1 << (j % 8)
			}
		}
	}
}

func bitLen(b []byte) int {
	for i, c := range b {
		if c != 0 {
			n := 0
			for ; c != 0; c >>= 1 {
				n++
			}
			return 8*(len(b)-1-i) + n
		}
	}
	return 0
}

func parseCT(arg string, v uint8, m *mf.Match) (ofp.Action, error) {
	ct := &ofp.CT{Table: 0xff}
	items, err := splitTop(arg)
	if err != nil {
		return ofp.Action{}, err
	}
	for _, it := range items {
		if it == "" {
			continue
		}
		name, val := splitAction(it)
		switch name {
		case "commit":
			ct.Flags |= 1
		case "force":
			ct.Flags |= 2
		case "table":
			t, err := strconv.ParseUint(val, 0, 8)
			if err != nil || t == 0xff {
				return ofp.Action{}, errf("%s: invalid table for \"ct\" action", val)
			}
			ct.Table = uint8(t)
		case "zone":
			if z, err := strconv.ParseUint(val, 0, 16); err == nil {
				ct.ZoneImm = uint16(z)
				ct.ZoneSrc = ofp.Subfield{}
				break
			}
			sf, err := parseSubfield(val)
			if err != nil {
				return ofp.Action{}, err
			}
			ct.ZoneSrc = sf
		case "alg":
			switch val {
			case "ftp":
				ct.Alg = 21
			case "tftp":
				ct.Alg = 69
			default:
				a, err := strconv.ParseUint(val, 0, 16)
				if err != nil {
					return ofp.Action{}, errf("%s: unknown \"ct\" alg", val)
				}
				ct.Alg = uint16(a)
			}
		case "exec":
			acts, err := parseActions(val, v, m)
			if err != nil {
				return ofp.Action{}, err
			}
			ct.Actions = append(ct.Actions, acts...)
		case "nat":
			return ofp.Action{}, errf("ct(%s): nat is not supported by gvs's text syntax yet", arg)
		default:
			return ofp.Action{}, errf("invalid argument to \"ct\" action: `%s'", it)
		}
	}
	return ofp.Action{Type: ofp.ActCT, Raw: ofp.RawActNXAST_CT, CT: ct}, nil
}

// legacyNames are the OpenFlow 1.0 actions ovs-ofctl uses for an exact
// set_field of these fields in OpenFlow 1.0. ofp has no typed form for
// them yet, so they stay ActSetField (not encodable in OpenFlow 1.0).
var legacyNames = map[mf.ID]string{
	mf.IDEthSrc: "mod_dl_src", mf.IDEthDst: "mod_dl_dst",
	mf.IDIPv4Src: "mod_nw_src", mf.IDIPv4Dst: "mod_nw_dst",
	mf.IDTCPSrc: "mod_tp_src", mf.IDTCPDst: "mod_tp_dst",
	mf.IDUDPSrc: "mod_tp_src", mf.IDUDPDst: "mod_tp_dst",
}

// legacyActions maps an OpenFlow 1.0 action name to the field it sets;
// mod_tp_* is resolved to the match's transport protocol by tpField.
var legacyActions = map[string]mf.ID{
	"mod_dl_src": mf.IDEthSrc, "mod_dl_dst": mf.IDEthDst,
	"mod_nw_src": mf.IDIPv4Src, "mod_nw_dst": mf.IDIPv4Dst,
	"mod_tp_src": mf.IDTCPSrc, "mod_tp_dst": mf.IDTCPDst,
}

// tpField resolves mod_tp_src/mod_tp_dst (which name no protocol) to the
// port field of the match's transport protocol, TCP by default.
func tpField(id mf.ID, m *mf.Match) mf.ID {
	if m.Mask.NwProto != 0xff || (id != mf.IDTCPSrc && id != mf.IDTCPDst) {
		return id
	}
	src := id == mf.IDTCPSrc
	switch m.Flow.NwProto {
	case 17:
		if src {
			return mf.IDUDPSrc
		}
		return mf.IDUDPDst
	case 132:
		if src {
			return mf.IDSCTPSrc
		}
		return mf.IDSCTPDst
	}
	return id
}

// FormatActions prints an action list as ovs-ofctl does for version v
// ("drop" for an empty list).
func FormatActions(acts []ofp.Action, v uint8) string {
	if len(acts) == 0 {
		return "drop"
	}
	var sb strings.Builder
	formatActionList(&sb, acts, v)
	return sb.String()
}

func formatActionList(sb *strings.Builder, acts []ofp.Action, v uint8) {
	for i := range acts {
		if i > 0 {
			sb.WriteByte(',')
		}
		formatAction(sb, &acts[i], v)
	}
}

func formatAction(sb *strings.Builder, a *ofp.Action, v uint8) {
	switch a.Type {
	case ofp.ActOutput:
		p := uint16(a.Port)
		switch {
		case p == portController:
			fmt.Fprintf(sb, "CONTROLLER:%d", a.MaxLen)
		case p >= portMax:
			sb.WriteString(formatPort(p))
		default:
			fmt.Fprintf(sb, "output:%d", p)
		}
	case ofp.ActResubmit:
		if a.Raw == ofp.RawActNXAST_RESUBMIT {
			sb.WriteString("resubmit:" + formatPort(uint16(a.Port)))
			return
		}
		sb.WriteString("resubmit(")
		if uint16(a.Port) != portInPort {
			sb.WriteString(formatPort(uint16(a.Port)))
		}
		sb.WriteByte(',')
		if a.Table != 0xff {
			sb.WriteString(strconv.Itoa(int(a.Table)))
		}
		if a.Raw == ofp.RawActNXAST_RESUBMIT_TABLE_CT {
			sb.WriteString(",ct")
		}
		sb.WriteByte(')')
	case ofp.ActLoad:
		fmt.Fprintf(sb, "load:%s->%s", formatHex(a.Value), formatSubfield(a.Dst))
	case ofp.ActMove:
		fmt.Fprintf(sb, "move:%s->%s", formatSubfield(a.Src), formatSubfield(a.Dst))
	case ofp.ActSetField:
		if name, ok := legacyNames[a.Field.ID]; ok && v <= mf.OF10 && a.Mask == nil {
			fmt.Fprintf(sb, "%s:%s", name, formatValue(a.Field, a.Value, ones(len(a.Value))))
			return
		}
		mask := a.Mask
		if mask == nil {
			mask = ones(len(a.Value))
		}
		fmt.Fprintf(sb, "set_field:%s->%s", formatValue(a.Field, a.Value, mask), a.Field.Name)
	case ofp.ActCT:
		formatCT(sb, a.CT, v)
	case ofp.ActCTClear:
		sb.WriteString("ct_clear")
	default:
		fmt.Fprintf(sb, "<%s>", a.Raw)
	}
}

func formatCT(sb *strings.Builder, ct *ofp.CT, v uint8) {
	var parts []string
	if ct.Flags&1 != 0 {
		parts = append(parts, "commit")
	}
	if ct.Flags&2 != 0 {
		parts = append(parts, "force")
	}
	if ct.Table != 0xff {
		parts = append(parts, "table="+strconv.Itoa(int(ct.Table)))
	}
	switch {
	case ct.ZoneSrc.Field != nil:
		parts = append(parts, "zone="+formatSubfield(ct.ZoneSrc))
	case ct.ZoneImm != 0:
		parts = append(parts, "zone="+strconv.Itoa(int(ct.ZoneImm)))
	}
	if len(ct.Actions) > 0 {
		var in strings.Builder
		formatActionList(&in, ct.Actions, v)
		parts = append(parts, "exec("+in.String()+")")
	}
	switch ct.Alg {
	case 0:
	case 21:
		parts = append(parts, "alg=ftp")
	case 69:
		parts = append(parts, "alg=tftp")
	default:
		parts = append(parts, "alg="+strconv.Itoa(int(ct.Alg)))
	}
	if len(parts) == 0 {
		sb.WriteString("ct")
		return
	}
	sb.WriteString("ct(" + strings.Join(parts, ",") + ")")
}

// formatSubfield prints NXM_NX_REG0[0..15] style, using the field's NXM
// name (OXM name if it has none).
func formatSubfield(sf ofp.Subfield) string {
	name := sf.Field.Name
	if h, ok := sf.Field.HeaderFor(0); ok {
		name = h.Name
	}
	switch {
	case sf.Ofs == 0 && sf.NBits == sf.Field.Bits:
		return name + "[]"
	case sf.NBits == 1:
		return fmt.Sprintf("%s[%d]", name, sf.Ofs)
	}
	return fmt.Sprintf("%s[%d..%d]", name, sf.Ofs, sf.Ofs+sf.NBits-1)
}
