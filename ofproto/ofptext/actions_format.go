package ofptext

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// FormatActions prints an action list (ofpacts, instructions included) as
// ovs-ofctl does for version v ("drop" for an empty list). v matters only
// where the same action prints differently by version.
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

// simpleFormats are the kinds printed as a fixed word or "word:decimal".
var simpleFormats = map[ofp.ActionType]string{
	ofp.ActCTClear: "ct_clear", ofp.ActPopQueue: "pop_queue", ofp.ActExit: "exit",
	ofp.ActDecMPLSTTL: "dec_mpls_ttl", ofp.ActDecNSHTTL: "dec_nsh_ttl", ofp.ActDebugSlow: "debug_slow",
	ofp.ActDebugRecirc: "debug_recirc", ofp.ActClearActions: "clear_actions",
}

var decimalFormats = map[ofp.ActionType]string{
	ofp.ActSetQueue: "set_queue:", ofp.ActGroup: "group:", ofp.ActMeter: "meter:",
	ofp.ActSetNWTTL: "mod_nw_ttl:", ofp.ActSetVLANVID: "mod_vlan_vid:", ofp.ActSetVLANPCP: "mod_vlan_pcp:",
	ofp.ActSetNWTos: "mod_nw_tos:", ofp.ActSetNWECN: "mod_nw_ecn:", ofp.ActSetTPSrc: "mod_tp_src:",
	ofp.ActSetTPDst: "mod_tp_dst:",
}

func formatAction(sb *strings.Builder, a *ofp.Action, v uint8) {
	if s, ok := simpleFormats[a.Type]; ok {
		sb.WriteString(s)
		return
	}
	if s, ok := decimalFormats[a.Type]; ok {
		sb.WriteString(s + strconv.FormatUint(a.Arg, 10))
		return
	}
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
		if uint16(a.Port) != portInPort && a.Table == 0xff && a.Raw != ofp.RawActNXAST_RESUBMIT_TABLE_CT {
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
		if a.Field == nil {
			sb.WriteString("set_field:?")
			return
		}
		mask := a.Mask
		if mask == nil {
			mask = ones(len(a.Value))
		}
		val := formatValue(a.Field, a.Value, mask)
		if a.Field.Format == mf.FormatTunFlags {
			// A set value prints as the flags' names joined by "|",
			// not in the +flag/-flag match syntax.
			val = "0"
			if getUint(a.Value)&1 != 0 {
				val = "oam"
			}
		}
		if a.Field.Variable && a.Mask != nil {
			// tun_metadata: a mask as wide as the value is still shown.
			val = formatHex(a.Value) + "/" + formatHex(a.Mask)
		}
		if a.Field.Format == mf.FormatDecimal && a.Mask != nil && len(a.Value) <= 8 {
			val = strconv.FormatUint(getUint(a.Value), 10) + "/" + formatHex(a.Mask) // as ovs-ofctl: decimal value, hex mask
		}
		if (a.Field.Format == mf.FormatOFPPortOXM || a.Field.Format == mf.FormatOFPPort) && val == "NONE" {
			val = "ANY" // OpenFlow 1.1+ names the 32-bit OFPP_ANY so
		}
		fmt.Fprintf(sb, "set_field:%s->%s", val, a.Field.Name)
	case ofp.ActCT:
		formatCT(sb, a.CT, v)
	case ofp.ActNAT:
		formatNAT(sb, a.NAT)
	case ofp.ActController:
		formatController(sb, a.Controller)
	case ofp.ActEnqueue:
		fmt.Fprintf(sb, "enqueue:%s:%d", formatPort(uint16(a.Port)), a.Arg)
	case ofp.ActOutputReg:
		sb.WriteString("output:" + formatSubfield(a.Src))
	case ofp.ActOutputTrunc:
		fmt.Fprintf(sb, "output(port=%s,max_len=%d)", formatPort(uint16(a.Port)), a.Arg)
	case ofp.ActNote:
		sb.WriteString("note:" + formatDotHex(a.Data))
	case ofp.ActLearn:
		if a.Learn != nil {
			formatLearn(sb, a.Learn)
		}
	case ofp.ActConjunction:
		if c := a.Conj; c != nil {
			fmt.Fprintf(sb, "conjunction(%d,%d/%d)", c.ID, int(c.Clause)+1, c.NClauses)
		}
	case ofp.ActDecTTL:
		if a.Raw != ofp.RawActNXAST_DEC_TTL_CNT_IDS && len(a.IDs) == 1 && a.IDs[0] == 0 {
			sb.WriteString("dec_ttl")
			return
		}
		sb.WriteString("dec_ttl(")
		for i, id := range a.IDs {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.Itoa(int(id)))
		}
		sb.WriteByte(')')
	case ofp.ActSetMPLSLabel:
		fmt.Fprintf(sb, "set_mpls_label(%d)", a.Arg)
	case ofp.ActSetMPLSTC:
		fmt.Fprintf(sb, "set_mpls_tc(%d)", a.Arg)
	case ofp.ActSetMPLSTTL:
		fmt.Fprintf(sb, "set_mpls_ttl(%d)", a.Arg)
	case ofp.ActPushMPLS:
		fmt.Fprintf(sb, "push_mpls:0x%04x", a.Arg)
	case ofp.ActPopMPLS:
		fmt.Fprintf(sb, "pop_mpls:0x%04x", a.Arg)
	case ofp.ActPushVLAN:
		fmt.Fprintf(sb, "push_vlan:%#x", a.Arg)
	case ofp.ActStripVLAN:
		if a.Raw == ofp.RawActOFPAT11_POP_VLAN {
			sb.WriteString("pop_vlan")
		} else {
			sb.WriteString("strip_vlan")
		}
	case ofp.ActSetDLSrc, ofp.ActSetDLDst:
		var mac [8]byte
		putUint(mac[:], a.Arg)
		name := "mod_dl_src:"
		if a.Type == ofp.ActSetDLDst {
			name = "mod_dl_dst:"
		}
		sb.WriteString(name + formatMAC(mac[2:]))
	case ofp.ActSetNWSrc, ofp.ActSetNWDst:
		name := "mod_nw_src:"
		if a.Type == ofp.ActSetNWDst {
			name = "mod_nw_dst:"
		}
		ip := netip.AddrFrom4([4]byte{byte(a.Arg >> 24), byte(a.Arg >> 16), byte(a.Arg >> 8), byte(a.Arg)})
		sb.WriteString(name + ip.String())
	case ofp.ActSetTunnel:
		if a.Arg > 0xffffffff || a.Raw == ofp.RawActNXAST_SET_TUNNEL64 {
			fmt.Fprintf(sb, "set_tunnel64:%#x", a.Arg)
		} else {
			fmt.Fprintf(sb, "set_tunnel:%#x", a.Arg)
		}
	case ofp.ActMultipath:
		if m := a.Multipath; m != nil {
			fmt.Fprintf(sb, "multipath(%s,%d,%s,%d,%d,%s)", ofp.HashFieldsName(m.Fields), m.Basis,
				ofp.MultipathAlgName(m.Algorithm), int(m.MaxLink)+1, m.Arg, formatSubfield(m.Dst))
		}
	case ofp.ActBundle:
		if b := a.Bundle; b != nil {
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
	case ofp.ActFinTimeout:
		if ft := a.FinTimeout; ft != nil {
			var parts []string
			if ft.Idle != 0 {
				parts = append(parts, "idle_timeout="+strconv.Itoa(int(ft.Idle)))
			}
			if ft.Hard != 0 {
				parts = append(parts, "hard_timeout="+strconv.Itoa(int(ft.Hard)))
			}
			sb.WriteString("fin_timeout(" + strings.Join(parts, ",") + ")")
		}
	case ofp.ActClone:
		sb.WriteString("clone(")
		if len(a.Nested) == 0 {
			sb.WriteString("drop") // an empty list prints as it does at top level
		}
		formatActionList(sb, a.Nested, v)
		sb.WriteByte(')')
	case ofp.ActWriteActions:
		sb.WriteString("write_actions(")
		formatActionList(sb, a.Nested, v)
		sb.WriteByte(')')
	case ofp.ActCheckPktLen:
		fmt.Fprintf(sb, "check_pkt_larger(%d)->%s", a.Arg, formatSubfield(a.Dst))
	case ofp.ActSample:
		if s := a.Sample; s != nil {
			fmt.Fprintf(sb, "sample(probability=%d,collector_set_id=%d,obs_domain_id=%d,obs_point_id=%d",
				s.Probability, s.CollectorSetID, s.ObsDomainID, s.ObsPointID)
			if s.SamplingPort != portNone {
				sb.WriteString(",sampling_port=" + formatPort(s.SamplingPort))
			}
			switch s.Direction {
			case 1:
				sb.WriteString(",ingress")
			case 2:
				sb.WriteString(",egress")
			}
			sb.WriteByte(')')
		}
	case ofp.ActStackPush:
		sb.WriteString("push:" + formatSubfield(a.Src))
	case ofp.ActStackPop:
		sb.WriteString("pop:" + formatSubfield(a.Dst))
	case ofp.ActDeleteField:
		if a.Field != nil {
			sb.WriteString("delete_field:" + a.Field.Name)
		}
	case ofp.ActGotoTable:
		sb.WriteString("goto_table:" + strconv.Itoa(int(a.Table)))
	case ofp.ActWriteMetadata:
		fmt.Fprintf(sb, "write_metadata:%#x", a.Arg)
		if a.Arg2 != ^uint64(0) {
			fmt.Fprintf(sb, "/%#x", a.Arg2)
		}
	default:
		if a.Type == ofp.ActRaw && (a.Raw == ofp.RawActNXAST_ENCAP || a.Raw == ofp.RawActNXAST_DECAP) && formatEncapDecap(sb, a) {
			return
		}
		fmt.Fprintf(sb, "<%s>", a.Raw)
	}
}

func nameOf(names []string, i uint16) string {
	if int(i) < len(names) {
		return names[i]
	}
	return strconv.Itoa(int(i))
}

// formatDotHex prints bytes as "01.02.0a", as note and userdata.
func formatDotHex(b []byte) string {
	var sb strings.Builder
	for i, c := range b {
		if i > 0 {
			sb.WriteByte('.')
		}
		fmt.Fprintf(&sb, "%02x", c)
	}
	return sb.String()
}

func formatController(sb *strings.Builder, c *ofp.Controller) {
	if c == nil {
		return
	}
	if c.Reason == ofp.ReasonAction && c.ID == 0 && len(c.Userdata) == 0 && !c.Pause && c.MeterID == ofp.NoMeter {
		fmt.Fprintf(sb, "CONTROLLER:%d", c.MaxLen)
		return
	}
	var parts []string
	if c.Reason != ofp.ReasonAction {
		parts = append(parts, "reason="+nameOf(reasonNames[:], uint16(c.Reason)))
	}
	if c.MaxLen != 0xffff {
		parts = append(parts, "max_len="+strconv.Itoa(int(c.MaxLen)))
	}
	if c.ID != 0 {
		parts = append(parts, "id="+strconv.Itoa(int(c.ID)))
	}
	if len(c.Userdata) > 0 {
		parts = append(parts, "userdata="+formatDotHex(c.Userdata))
	}
	if c.Pause {
		parts = append(parts, "pause")
	}
	if c.MeterID != ofp.NoMeter {
		parts = append(parts, "meter_id="+strconv.FormatUint(uint64(c.MeterID), 10))
	}
	sb.WriteString("controller(" + strings.Join(parts, ",") + ")")
}

func formatNAT(sb *strings.Builder, n *ofp.NAT) {
	sb.WriteString("nat")
	if n == nil || n.Flags&(ofp.NATSrc|ofp.NATDst) == 0 {
		return
	}
	if n.Flags&ofp.NATSrc != 0 {
		sb.WriteString("(src")
	} else {
		sb.WriteString("(dst")
	}
	addr := func(a netip.Addr) string {
		if a.Is6() {
			return "[" + a.String() + "]"
		}
		return a.String()
	}
	if n.AddrMin.IsValid() {
		sb.WriteString("=" + addr(n.AddrMin))
		if n.AddrMax.IsValid() && !n.AddrMax.IsUnspecified() && n.AddrMax != n.AddrMin {
			sb.WriteString("-" + addr(n.AddrMax))
		}
		if n.ProtoMin != 0 {
			fmt.Fprintf(sb, ":%d", n.ProtoMin)
			if n.ProtoMax != 0 && n.ProtoMax != n.ProtoMin {
				fmt.Fprintf(sb, "-%d", n.ProtoMax)
			}
		}
	}
	for _, f := range []struct {
		bit  uint16
		name string
	}{{ofp.NATPersistent, ",persistent"}, {ofp.NATHash, ",hash"}, {ofp.NATRandom, ",random"}} {
		if n.Flags&f.bit != 0 {
			sb.WriteString(f.name)
		}
	}
	sb.WriteByte(')')
}

func formatCT(sb *strings.Builder, ct *ofp.CT, v uint8) {
	if ct == nil {
		sb.WriteString("ct")
		return
	}
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
	// A nat() that is the first nested action prints outside exec(), as
	// Open vSwitch's format_CT; any other stays in the list.
	exec := ct.Actions
	if len(exec) > 0 && exec[0].Type == ofp.ActNAT {
		var nb strings.Builder
		formatNAT(&nb, exec[0].NAT)
		parts = append(parts, nb.String())
		exec = exec[1:]
	}
	if len(exec) > 0 {
		var in strings.Builder
		formatActionList(&in, exec, v)
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
	if sf.Field == nil {
		return "?"
	}
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

// FormatSubfieldIsNow is the trace line of a subfield an action loaded,
// given its field's whole value: "SUB is now V", V the field's value
// when the subfield is the whole field and the subfield's bits in hex
// otherwise (Open vSwitch's xlate_report_subfield).
func FormatSubfieldIsNow(sf ofp.Subfield, value []byte) string {
	s := formatSubfield(sf) + " is now "
	if sf.Field == nil {
		return s + "?"
	}
	if sf.Ofs == 0 && sf.NBits >= sf.Field.Bits {
		return s + formatValue(sf.Field, value, ones(len(value)))
	}
	// The subfield's bits, right-aligned, printed as ds_put_hex does.
	bitsOut := make([]byte, (sf.NBits+7)/8)
	for i := 0; i < sf.NBits; i++ {
		b := sf.Ofs + i
		if b/8 >= len(value) {
			break
		}
		if value[len(value)-1-b/8]>>(b%8)&1 != 0 {
			bitsOut[len(bitsOut)-1-i/8] |= 1 << (i % 8)
		}
	}
	var hex strings.Builder
	for _, v := range bitsOut {
		switch {
		case hex.Len() == 0 && v == 0:
		case hex.Len() == 0:
			fmt.Fprintf(&hex, "0x%x", v)
		default:
			fmt.Fprintf(&hex, "%02x", v)
		}
	}
	if hex.Len() == 0 {
		return s + "0"
	}
	return s + hex.String()
}

// instIndex is the instruction an ofpact belongs to for ovs-ofctl's
// ordering check, which treats meter as an instruction in every version.
func instIndex(t ofp.ActionType) int {
	switch t {
	case ofp.ActMeter:
		return 0
	case ofp.ActClearActions:
		return 2
	case ofp.ActWriteActions:
		return 3
	case ofp.ActWriteMetadata:
		return 4
	case ofp.ActGotoTable:
		return 5
	}
	return 1
}

var instTextNames = [...]string{"meter", "apply_actions", "clear_actions", "write_actions", "write_metadata", "goto_table"}

// verifyActions applies ovs-ofctl's ofpacts_verify to parsed actions, with
// its messages.
func verifyActions(acts []ofp.Action, v uint8, inCT bool) error {
	last := -1
	for i := range acts {
		a := &acts[i]
		if a.Type == ofp.ActConjunction {
			for j := range acts {
				if t := acts[j].Type; t != ofp.ActConjunction && t != ofp.ActNote {
					return errf("\"conjunction\" actions may be used along with \"note\" but not any other kind of action (such as the \"%s\" action used here)", t)
				}
			}
		}
		if !inCT && (a.Type == ofp.ActSetField && isCTField(a.Field) || (a.Type == ofp.ActLoad || a.Type == ofp.ActMove) && isCTField(a.Dst.Field)) {
			return errf("cannot set CT fields outside of ct action")
		}
		o := instIndex(a.Type)
		if o == last && o != 1 {
			return errf("duplicate %s instruction not allowed, for OpenFlow 1.1+ compatibility", instTextNames[o])
		}
		if o < last {
			return errf("invalid instruction ordering: %s must appear before %s, for OpenFlow 1.1+ compatibility", instTextNames[o], instTextNames[last])
		}
		last = o
		var err error
		switch {
		case a.Type == ofp.ActCT && a.CT != nil:
			err = verifyActions(a.CT.Actions, v, true)
		case a.Type == ofp.ActClone, a.Type == ofp.ActWriteActions:
			err = verifyActions(a.Nested, v, inCT)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func isCTField(f *mf.Field) bool {
	return f != nil && (f.ID == mf.IDCtMark || f.ID == mf.IDCtLabel)
}

// finishActions turns parsed ofpacts into what version v carries, as
// ovs-ofctl prints them: verified, checked against the match, encoded
// for v and decoded again (so load/set_field, mod_vlan_vid, enqueue... take
// their form for v).
func finishActions(acts []ofp.Action, v uint8, m *mf.Match, table uint8) ([]ofp.Action, error) {
	// An empty write_actions() is not sent at all by ovs-ofctl.
	acts = slices.DeleteFunc(acts, func(a ofp.Action) bool { return a.Type == ofp.ActWriteActions && len(a.Nested) == 0 })
	if err := verifyActions(acts, v, false); err != nil {
		return nil, err
	}
	if err := usableIn(acts, v); err != nil {
		return nil, err
	}
	if err := ofp.ValidateOfpactsVersion(v, acts, m, portMax, table, 0xff); err != nil {
		if errors.Is(err, ofp.ErrOnlyOF10) {
			return nil, errf("none of the usable flow formats (OpenFlow10,NXM) is among the allowed flow formats (%s)", protocolNames[v])
		}
		if code := ofp.CodeOf(err); code != 0 {
			return nil, errf("actions are invalid with specified match (%s)", code)
		}
		return nil, &syntaxError{err.Error()}
	}
	inst := v >= mf.OF11
	b, err := ofp.AppendOfpacts(nil, acts, v, inst)
	if err != nil {
		return nil, &syntaxError{err.Error()}
	}
	out, err := ofp.DecodeOfpacts(b, v, inst)
	if err != nil {
		if ofp.CodeOf(err) != 0 {
			// Encodable but refused on decoding (debug_slow is for
			// testing only, ct without commit may hold only a bare nat):
			// ovs-ofctl still sends these, and the switch refuses them.
			return acts, nil
		}
		return nil, &syntaxError{err.Error()}
	}
	return out, nil
}

// protocolNames are ovs-ofctl's names of the flow formats -O allows.
var protocolNames = map[uint8]string{mf.OF10: "OpenFlow10,NXM", mf.OF11: "OpenFlow11", mf.OF12: "OXM-OpenFlow12",
	mf.OF13: "OXM-OpenFlow13", mf.OF14: "OXM-OpenFlow14", mf.OF15: "OXM-OpenFlow15"}

// usableIn refuses, as ovs-ofctl's protocol negotiation does, actions that
// version v cannot carry at all.
func usableIn(acts []ofp.Action, v uint8) error {
	for i := range acts {
		var need string
		switch a := &acts[i]; {
		case a.Type == ofp.ActPushVLAN && v < mf.OF11:
			need = "OXM,OpenFlow11"
		case a.Type == ofp.ActMeter && v < mf.OF13:
			need = "OXM-OpenFlow13,OXM-OpenFlow14,OXM-OpenFlow15"
		}
		if need != "" {
			return errf("none of the usable flow formats (%s) is among the allowed flow formats (%s)", need, protocolNames[v])
		}
		if err := usableIn(acts[i].Nested, v); err != nil {
			return err
		}
	}
	return nil
}
