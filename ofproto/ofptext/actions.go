package ofptext

import (
	"encoding/hex"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

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

// ParseActionsFor parses an action list (ovs-ofctl syntax, OpenFlow 1.0
// with Nicira extensions) checked against match m rather than a flow's
// own match, as ofproto/trace-packet-out checks a packet-out's actions
// against the traced packet.
func ParseActionsFor(s string, m *mf.Match) ([]ofp.Action, error) {
	acts, err := parseActionList(s, mf.OF10, m, 0)
	if err != nil {
		return nil, err
	}
	if acts == nil {
		return []ofp.Action{}, nil
	}
	// Checked but kept as parsed: no flow_mod carries them, so they
	// need no version's encoding (set_field stays set_field).
	if err := verifyActions(acts, mf.OF10, false); err != nil {
		return nil, err
	}
	if err := ofp.ValidateOfpactsVersion(mf.OF15, acts, m, portMax, TableUnset, 0xff); err != nil {
		if code := ofp.CodeOf(err); code != 0 {
			return nil, errf("actions are invalid with specified match (%s)", code)
		}
		return nil, &syntaxError{err.Error()}
	}
	return acts, nil
}

// parseActions parses the action list of a flow in table (TableUnset if
// none), checks it against the flow's match and returns it in the form
// version v carries, as ovs-ofctl prints the flow mod it sends.
func parseActions(s string, v uint8, m *mf.Match, table uint8) ([]ofp.Action, error) {
	acts, err := parseActionList(s, v, m, 0)
	if err != nil || len(acts) == 0 {
		return nil, err
	}
	return finishActions(acts, v, m, table)
}

func parseActionList(s string, v uint8, m *mf.Match, depth int) ([]ofp.Action, error) {
	if depth > 16 {
		return nil, errf("%s: actions nested too deeply", s)
	}
	items, err := splitTop(s)
	if err != nil {
		return nil, err
	}
	// Empty items ("output:1,,output:2", a trailing comma) are skipped,
	// as ovs-ofctl's key-value scanner does.
	items = slices.DeleteFunc(items, func(it string) bool { return it == "" })
	var out []ofp.Action
	for i, it := range items {
		name, arg := splitAction(it)
		if strings.EqualFold(name, "drop") {
			if len(items) != 1 || i != 0 {
				return nil, errf("\"drop\" must not be accompanied by any other action or instruction")
			}
			return nil, nil
		}
		as, err := parseAction(strings.ToLower(name), name, arg, it, v, m, depth)
		if err != nil {
			return nil, err
		}
		out = append(out, as...)
	}
	return out, nil
}

func parseAction(name, origName, arg, whole string, v uint8, m *mf.Match, depth int) ([]ofp.Action, error) {
	a := ofp.Action{}
	var err error
	switch name {
	case "output":
		return one(parseOutput(arg))
	case "resubmit":
		return one(parseResubmit(arg, whole))
	case "set_field":
		return parseSetField(arg)
	case "load":
		return parseLoad(arg)
	case "move":
		src, dst, ok := strings.Cut(arg, "->")
		if !ok {
			return nil, errf("%s: missing `->' following source", arg)
		}
		s, err := parseSubfield(src)
		if err != nil {
			// ovs-ofctl names the rest of the text from the source on.
			if msg, ok := strings.CutPrefix(err.Error(), src+": "); ok {
				return nil, errf("%s: %s", arg, msg)
			}
			return nil, err
		}
		d, err := parseSubfield(dst)
		if err != nil {
			return nil, err
		}
		if s.NBits != d.NBits {
			return nil, errf("%s: source field is %d bits wide but destination is %d bits wide", arg, s.NBits, d.NBits)
		}
		if !d.Field.Writable {
			return nil, errf("%s: destination field %s is not writable", arg, d.Field.Name)
		}
		return []ofp.Action{{Type: ofp.ActMove, Raw: ofp.RawActNXAST_REG_MOVE, Src: s, Dst: d}}, nil
	case "ct":
		return one(parseCT(arg, v, m, depth))
	case "ct_clear":
		a.Type = ofp.ActCTClear
	case "controller":
		return one(parseController(arg))
	case "enqueue":
		port, queue, ok := strings.Cut(arg, ":")
		if !ok {
			port, queue, ok = strings.Cut(arg, ",")
		}
		if !ok {
			return nil, errf("\"enqueue\" syntax is \"enqueue:PORT:QUEUE\" or \"enqueue(PORT,QUEUE)\"")
		}
		p, pok := parsePort(port)
		if !pok {
			return nil, errf("%s: enqueue to unknown port", port)
		}
		q, qerr := strconv.ParseUint(queue, 0, 32)
		if qerr != nil {
			return nil, errf("invalid numeric format %s", queue)
		}
		a = ofp.Action{Type: ofp.ActEnqueue, Port: uint32(p), Arg: q}
	case "set_queue":
		a.Type = ofp.ActSetQueue
		if a.Arg, err = parseUint32Wrap(arg); err != nil {
			return nil, err
		}
	case "pop_queue":
		a.Type = ofp.ActPopQueue
	case "group":
		a.Type = ofp.ActGroup
		if a.Arg, err = parseUint32Wrap(arg); err != nil {
			return nil, err
		}
	case "meter":
		a.Type = ofp.ActMeter
		if a.Arg, err = parseUint32Wrap(arg); err != nil {
			return nil, err
		}
		if a.Arg == 0 || a.Arg > 0xffff0000 { // not a meter id (OFPM_MAX)
			return nil, errf("actions are invalid with specified match (OFPMMFC_INVALID_METER)")
		}
	case "note":
		b, err := parseHexBytes(arg)
		if err != nil {
			return nil, errf("bad hex digit in `note' argument")
		}
		a = ofp.Action{Type: ofp.ActNote, Data: b}
	case "learn":
		return one(parseLearn(arg, m))
	case "conjunction":
		return one(parseConjunction(arg))
	case "dec_ttl":
		a = ofp.Action{Type: ofp.ActDecTTL, IDs: []uint16{0}}
		if strings.HasPrefix(whole, "dec_ttl(") && arg != "" {
			// Ids are read as atoi reads them (leading digits, else 0;
			// kept modulo 2^16), split at commas and spaces.
			a.Raw, a.IDs = ofp.RawActNXAST_DEC_TTL_CNT_IDS, nil
			for _, s := range strings.FieldsFunc(arg, func(r rune) bool { return r == ',' || r == ' ' }) {
				a.IDs = append(a.IDs, uint16(atoi(s)))
			}
			if len(a.IDs) == 0 {
				return nil, errf("dec_ttl_cnt_ids: expected at least one controller id.")
			}
		}
	case "mod_nw_ttl", "set_nw_ttl":
		a.Type = ofp.ActSetNWTTL
		if a.Arg, err = parseUintArg(arg, 8); err != nil {
			return nil, err
		}
	case "dec_mpls_ttl":
		a.Type = ofp.ActDecMPLSTTL
	case "set_mpls_label", "set_mpls_tc", "set_mpls_ttl":
		a.Type = map[string]ofp.ActionType{"set_mpls_label": ofp.ActSetMPLSLabel, "set_mpls_tc": ofp.ActSetMPLSTC,
			"set_mpls_ttl": ofp.ActSetMPLSTTL}[name]
		bits := map[string]int{"set_mpls_label": 20, "set_mpls_tc": 3, "set_mpls_ttl": 8}[name]
		if a.Arg, err = parseUintArg(arg, 64); err != nil {
			if name == "set_mpls_ttl" {
				return nil, errf("invalid MPLS TTL \"%s\"", arg)
			}
			return nil, err
		}
		if a.Arg>>bits != 0 {
			switch name {
			case "set_mpls_label":
				return nil, errf("%s: not a valid MPLS label", arg)
			case "set_mpls_tc":
				return nil, errf("%s: not a valid MPLS TC", arg)
			}
			return nil, errf("invalid MPLS TTL \"%s\"", arg)
		}
	case "push_mpls", "pop_mpls", "push_vlan":
		a.Type = map[string]ofp.ActionType{"push_mpls": ofp.ActPushMPLS, "pop_mpls": ofp.ActPopMPLS, "push_vlan": ofp.ActPushVLAN}[name]
		if a.Arg, err = parseUintArg(arg, 16); err != nil {
			return nil, err
		}
		if a.Type == ofp.ActPushVLAN && a.Arg != 0x8100 && a.Arg != 0x88a8 {
			return nil, errf("%s: not a valid VLAN ethertype", arg)
		}
		if a.Type == ofp.ActPushMPLS && a.Arg != 0x8847 && a.Arg != 0x8848 {
			return nil, errf("%s: not a valid MPLS ethertype", arg)
		}
	case "strip_vlan":
		a.Type = ofp.ActStripVLAN
	case "pop_vlan":
		a = ofp.Action{Type: ofp.ActStripVLAN, Raw: ofp.RawActOFPAT11_POP_VLAN}
	case "mod_vlan_vid", "set_vlan_vid":
		n, err := strconv.ParseUint(arg, 0, 16)
		if err != nil {
			return nil, errf("invalid VLAN VID \"%s\"", arg)
		}
		if n > 0xfff {
			return nil, errf("%s: not a valid VLAN VID", arg)
		}
		a = ofp.Action{Type: ofp.ActSetVLANVID, Arg: n, PushVLANIfNeeded: name == "mod_vlan_vid"}
	case "mod_vlan_pcp", "set_vlan_pcp":
		n, err := strconv.ParseUint(arg, 0, 8)
		if err != nil {
			return nil, errf("invalid VLAN PCP \"%s\"", arg)
		}
		if n > 7 {
			return nil, errf("%s: not a valid VLAN PCP", arg)
		}
		a = ofp.Action{Type: ofp.ActSetVLANPCP, Arg: n, PushVLANIfNeeded: name == "mod_vlan_pcp"}
	case "mod_dl_src", "mod_dl_dst":
		mac, err := parseMAC(arg)
		if err != nil {
			return nil, errf("invalid mac address %s", arg)
		}
		a = ofp.Action{Type: ofp.ActSetDLSrc, Arg: getUint(mac)}
		if name == "mod_dl_dst" {
			a.Type = ofp.ActSetDLDst
		}
	case "mod_nw_src", "mod_nw_dst":
		ip, ok := parseIPv4Octets(arg)
		if !ok {
			return nil, errf("%s: could not convert to IP address", arg)
		}
		a = ofp.Action{Type: ofp.ActSetNWSrc, Arg: getUint(ip[:])}
		if name == "mod_nw_dst" {
			a.Type = ofp.ActSetNWDst
		}
	case "mod_nw_tos":
		n, err := strconv.ParseUint(arg, 0, 8)
		if err != nil {
			return nil, errf("invalid TOS \"%s\"", arg)
		}
		if n&3 != 0 {
			return nil, errf("%s: not a valid TOS", arg)
		}
		a = ofp.Action{Type: ofp.ActSetNWTos, Arg: n}
	case "mod_nw_ecn":
		n, err := strconv.ParseUint(arg, 0, 8)
		if err != nil {
			return nil, errf("invalid ECN \"%s\"", arg)
		}
		if n > 3 {
			return nil, errf("%s: not a valid ECN", arg)
		}
		a = ofp.Action{Type: ofp.ActSetNWECN, Arg: n}
	case "mod_tp_src", "mod_tp_dst":
		a.Type = ofp.ActSetTPSrc
		if name == "mod_tp_dst" {
			a.Type = ofp.ActSetTPDst
		}
		if a.Arg, err = parseUintArg(arg, 16); err != nil {
			return nil, err
		}
	case "set_tunnel", "set_tunnel64":
		a.Type = ofp.ActSetTunnel
		if name == "set_tunnel64" {
			a.Raw = ofp.RawActNXAST_SET_TUNNEL64
		}
		if a.Arg, err = parseUintArg(arg, 64); err != nil {
			return nil, err
		}
	case "multipath":
		return one(parseMultipath(arg))
	case "bundle", "bundle_load":
		return one(parseBundle(arg, name == "bundle_load"))
	case "fin_timeout":
		ft := &ofp.FinTimeout{}
		for _, kv := range strings.Split(arg, ",") {
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
		a = ofp.Action{Type: ofp.ActFinTimeout, FinTimeout: ft}
	case "exit":
		a.Type = ofp.ActExit
	case "clone":
		nested, err := parseActionList(arg, v, m, depth+1)
		if err != nil {
			return nil, err
		}
		for i := range nested {
			if name, ok := nestedInstructionNames[nested[i].Type]; ok {
				return nil, errf("%s instruction not allowed here", name)
			}
			if nested[i].Type == ofp.ActMeter {
				return nil, errf("clone action doesn't support nested action meter")
			}
		}
		a = ofp.Action{Type: ofp.ActClone, Nested: nested}
	case "check_pkt_larger":
		n, dst, ok := strings.Cut(arg, ")->")
		if !ok {
			return nil, errf("%s: missing `->'", strings.TrimSuffix(arg, ")"))
		}
		pl, err := strconv.ParseUint(n, 10, 16)
		if err != nil {
			return nil, errf("invalid (null) \"%s\"", n) // sic: ovs-ofctl's message
		}
		d, err := parseSubfield(dst)
		if err != nil {
			return nil, err
		}
		if d.NBits != 1 {
			return nil, errf("Only 1-bit destination field is allowed")
		}
		a = ofp.Action{Type: ofp.ActCheckPktLen, Arg: pl, Dst: d}
	case "sample":
		return one(parseSample(arg))
	case "push", "pop":
		sf, err := parseSubfield(arg)
		if err != nil {
			return nil, err
		}
		if name == "push" {
			a = ofp.Action{Type: ofp.ActStackPush, Src: sf}
		} else {
			a = ofp.Action{Type: ofp.ActStackPop, Dst: sf}
		}
	case "goto_table":
		t, err := strconv.ParseUint(arg, 0, 8)
		if err != nil {
			return nil, errf("unknown table \"%s\"", arg)
		}
		a = ofp.Action{Type: ofp.ActGotoTable, Table: uint8(t)}
	case "write_metadata":
		vs, ms, masked := strings.Cut(arg, "/")
		val, err := strconv.ParseUint(vs, 0, 64)
		if err != nil {
			return nil, errf("invalid numeric format %s", vs)
		}
		mask := ^uint64(0)
		if masked {
			if mask, err = strconv.ParseUint(ms, 0, 64); err != nil {
				return nil, errf("invalid numeric format %s", ms)
			}
		}
		a = ofp.Action{Type: ofp.ActWriteMetadata, Arg: val, Arg2: mask}
	case "clear_actions":
		a.Type = ofp.ActClearActions
	case "write_actions":
		nested, err := parseActionList(arg, v, m, depth+1)
		if err != nil {
			return nil, err
		}
		a = ofp.Action{Type: ofp.ActWriteActions, Nested: nested}
	case "apply_actions":
		return nil, errf("apply_actions is the default instruction")
	case "dec_nsh_ttl":
		a.Type = ofp.ActDecNSHTTL
	case "delete_field":
		f := mf.Lookup(arg)
		if f == nil {
			return nil, errf("%s: unknown field", arg)
		}
		if !f.Variable { // only tun_metadata can be deleted
			return nil, errf("actions are invalid with specified match (OFPBAC_BAD_ARGUMENT)")
		}
		a = ofp.Action{Type: ofp.ActDeleteField, Field: f}
	case "debug_recirc":
		a.Type = ofp.ActDebugRecirc
	case "debug_slow":
		a.Type = ofp.ActDebugSlow
	case "encap":
		return one(parseEncap(arg))
	case "decap":
		return one(parseDecap(arg))
	default:
		if p, ok := portActions[name]; ok && arg == "" {
			return []ofp.Action{outputAction(p)}, nil
		}
		if p, ok := parsePort(origName); ok && arg == "" && p != portNone {
			return []ofp.Action{outputAction(p)}, nil
		}
		return nil, errf("unknown action %s", origName)
	}
	return []ofp.Action{a}, nil
}

func parseUintArg(s string, bits int) (uint64, error) {
	n, err := strconv.ParseUint(s, 0, 64)
	if err != nil || bits < 64 && n>>bits != 0 {
		return 0, errf("invalid numeric format %s", s)
	}
	return n, nil
}

// parseHexBytes parses "01.02.0a" (dots optional) as ovs-ofctl's note
// and userdata.
func parseHexBytes(s string) ([]byte, error) {
	h := strings.ReplaceAll(s, ".", "")
	b, err := hex.DecodeString(h)
	if err != nil {
		return nil, errf("%s: invalid hex bytes", s)
	}
	return b, nil
}

// one adapts a single-action parser to parseAction's result.
func one(a ofp.Action, err error) ([]ofp.Action, error) {
	if err != nil {
		return nil, err
	}
	return []ofp.Action{a}, nil
}

func outputAction(p uint16) ofp.Action {
	a := ofp.Action{Type: ofp.ActOutput, Port: uint32(p)}
	if p == portController {
		a.MaxLen = 0xffff
	}
	return a
}

func parseOutput(arg string) (ofp.Action, error) {
	if strings.Contains(arg, "port") && strings.Contains(arg, "max_len") {
		a := ofp.Action{Type: ofp.ActOutputTrunc}
		for _, kv := range strings.Split(arg, ",") {
			k, val, _ := strings.Cut(kv, "=")
			switch k {
			case "port":
				p, ok := parsePort(val)
				if !ok {
					return a, errf("output to unknown truncate port: %s", val)
				}
				a.Port = uint32(p)
			case "max_len":
				n, err := strconv.ParseUint(val, 0, 32)
				if err != nil {
					return a, errf("%s: invalid max_len", val)
				}
				if n < 14 { // an Ethernet header
					return a, errf("max_len %d is less than the minimum value 14", n)
				}
				a.Arg = n
			default:
				return a, errf("invalid key '%s' in output_trunc argument", k)
			}
		}
		return a, nil
	}
	p, ok := parsePort(arg)
	if ok && p != portNone {
		return outputAction(p), nil
	}
	if ok { // NONE (65535): refused by the action check
		return ofp.Action{}, errf("actions are invalid with specified match (OFPBAC_BAD_OUT_PORT)")
	}
	if sf, err := parseSubfield(arg); err == nil {
		return ofp.Action{Type: ofp.ActOutputReg, Src: sf, MaxLen: 0xffff}, nil
	}
	return ofp.Action{}, errf("%s: output to unknown port", arg)
}

// reasonNames are the packet-in reasons controller() names, by value;
// read-only.
var reasonNames = [...]string{"no_match", "action", "invalid_ttl", "action_set", "group", "packet_out"}

func parseController(arg string) (ofp.Action, error) {
	c := &ofp.Controller{MaxLen: 0xffff, Reason: ofp.ReasonAction, MeterID: ofp.NoMeter}
	if arg != "" && !strings.ContainsAny(arg, "=,") && arg != "pause" {
		n, err := strconv.ParseUint(arg, 0, 16)
		if err != nil {
			return ofp.Action{}, errf("unknown key \"%s\" parsing controller action", arg)
		}
		c.MaxLen = uint16(n)
	} else if arg != "" {
		items, err := splitTop(arg)
		if err != nil {
			return ofp.Action{}, err
		}
		for _, kv := range items {
			k, val, _ := strings.Cut(kv, "=")
			var n uint64
			switch k {
			case "reason":
				i := 0
				for i < len(reasonNames) && reasonNames[i] != val {
					i++
				}
				if i == len(reasonNames) {
					return ofp.Action{}, errf("unknown reason \"%s\"", val)
				}
				c.Reason = uint8(i)
			case "max_len", "id", "meter_id":
				bits := map[string]int{"max_len": 16, "id": 16, "meter_id": 32}[k]
				if n, err = parseUintArg(val, bits); err != nil {
					return ofp.Action{}, err
				}
				switch k {
				case "max_len":
					c.MaxLen = uint16(n)
				case "id":
					c.ID = uint16(n)
				default:
					c.MeterID = uint32(n)
				}
			case "userdata":
				if c.Userdata, err = parseHexBytes(val); err != nil {
					return ofp.Action{}, errf("bad hex digit in `controller' action `userdata'")
				}
			case "pause":
				c.Pause = true
			default:
				return ofp.Action{}, errf("unknown key \"%s\" parsing controller action", k)
			}
		}
	}
	if c.Reason == ofp.ReasonAction && c.ID == 0 && len(c.Userdata) == 0 && !c.Pause && c.MeterID == ofp.NoMeter {
		a := outputAction(portController)
		a.MaxLen = c.MaxLen
		return a, nil
	}
	return ofp.Action{Type: ofp.ActController, Controller: c}, nil
}

func parseResubmit(arg, whole string) (ofp.Action, error) {
	// Like ovs-ofctl, the parser sets no wire form (ct aside): resubmit
	// goes out as NXAST_RESUBMIT_TABLE.
	a := ofp.Action{Type: ofp.ActResubmit, Port: portInPort, Table: 0xff}
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
			return a, errf("%s: unknown parameter", parts[2])
		}
		a.Raw = ofp.RawActNXAST_RESUBMIT_TABLE_CT
	}
	if a.Port == portInPort && a.Table == 0xff {
		return a, errf("at least one \"in_port\" or \"table\" must be specified on resubmit")
	}
	return a, nil
}

// parseSubfield parses "field", "field[]", "field[n]" or "field[a..b]"
// (a bare name is the whole field, as in ovs-ofctl).
func parseSubfield(s string) (ofp.Subfield, error) {
	name, rng, ok := strings.Cut(s, "[")
	f := mf.Lookup(name)
	if f == nil {
		return ofp.Subfield{}, errf("%s: unknown field `%s'", s, name)
	}
	if !ok {
		return ofp.Subfield{Field: f, Ofs: 0, NBits: f.Bits}, nil
	}
	if !strings.HasSuffix(rng, "]") {
		return ofp.Subfield{}, errf("%s: missing ] looking for field name", s)
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

func parseSetField(arg string) ([]ofp.Action, error) {
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
	if !f.ValueValid(val) {
		return nil, errf("%s is not a valid value for field %s", vs, name)
	}
	if isAllOnes(mask) {
		mask = nil
	}
	return []ofp.Action{{Type: ofp.ActSetField, Field: f, Value: val, Mask: mask}}, nil
}

// parseLoad parses "value->dst[...]": a reg_load of at most 64 bits, or
// (wider) a masked set_field that is sent as reg_load, as ovs-ofctl.
func parseLoad(arg string) ([]ofp.Action, error) {
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
	if d.Field.Variable {
		// tun_metadata has no fixed width for reg_load: it becomes a
		// masked set_field (reg_load2) as wide as the bits loaded.
		w := (d.Ofs + d.NBits + 7) / 8
		fv, fm := make([]byte, w), make([]byte, w)
		shiftInto(fv, val, d.Ofs)
		for i := d.Ofs; i < d.Ofs+d.NBits; i++ {
			fm[w-1-i/8] |= 1 << (i % 8)
		}
		return []ofp.Action{{Type: ofp.ActSetField, Raw: ofp.RawActNXAST_REG_LOAD2, Field: d.Field, Value: fv, Mask: fm}}, nil
	}
	if d.NBits <= 64 {
		return []ofp.Action{{Type: ofp.ActLoad, Raw: ofp.RawActNXAST_REG_LOAD, Dst: d, Value: val[8:]}}, nil
	}
	w := d.Field.Bytes
	fv, fm := make([]byte, w), make([]byte, w)
	shiftInto(fv, val, d.Ofs)
	for i := d.Ofs; i < d.Ofs+d.NBits; i++ {
		fm[w-1-i/8] |= 1 << (i % 8)
	}
	if isAllOnes(fm) {
		fm = nil
	}
	return []ofp.Action{{Type: ofp.ActSetField, Raw: ofp.RawActNXAST_REG_LOAD, Field: d.Field, Value: fv, Mask: fm}}, nil
}

// shiftInto ORs src (network order) shifted left by ofs bits into dst.
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

func parseConjunction(arg string) (ofp.Action, error) {
	id, frac, ok := strings.Cut(arg, ",")
	k, n, ok2 := strings.Cut(frac, "/")
	idv, err1 := strconv.ParseUint(id, 0, 32) // "%i": 0x hex and 0 octal too
	kv, err2 := strconv.ParseUint(k, 10, 8)
	nv, err3 := strconv.ParseUint(n, 10, 8)
	switch {
	case !ok || !ok2 || err1 != nil || err2 != nil || err3 != nil:
		return ofp.Action{}, errf("\"conjunction\" syntax is \"conjunction(id,i/n)\"")
	case nv < 2:
		return ofp.Action{}, errf("conjunction must have at least 2 clauses")
	case nv > 64:
		return ofp.Action{}, errf("conjunction must have at most 64 clauses")
	case kv < 1:
		return ofp.Action{}, errf("clause index must be positive")
	case kv > nv:
		return ofp.Action{}, errf("clause index must be less than or equal to number of clauses")
	}
	return ofp.Action{Type: ofp.ActConjunction, Conj: &ofp.Conjunction{ID: uint32(idv), Clause: uint8(kv - 1), NClauses: uint8(nv)}}, nil
}

func lookupName(names []string, s string) (int, bool) {
	for i, n := range names {
		if n == s {
			return i, true
		}
	}
	return 0, false
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
	return ofp.Action{Type: ofp.ActMultipath, Multipath: mp}, nil
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
	return ofp.Action{Type: ofp.ActBundle, Bundle: bd}, nil
}

func parseSample(arg string) (ofp.Action, error) {
	s := &ofp.Sample{SamplingPort: portNone}
	for _, kv := range strings.Split(arg, ",") {
		k, val, _ := strings.Cut(kv, "=")
		var err error
		var n uint64
		switch k {
		case "probability":
			if n, err = strconv.ParseUint(val, 0, 16); err != nil {
				return ofp.Action{}, errf("invalid probability \"%s\"", val)
			}
			if n == 0 {
				return ofp.Action{}, errf("invalid probability value \"%s\"", val)
			}
			s.Probability = uint16(n)
		case "collector_set_id":
			n, err = parseUintArg(val, 32)
			s.CollectorSetID = uint32(n)
		case "obs_domain_id":
			n, err = parseUintArg(val, 32)
			s.ObsDomainID = uint32(n)
		case "obs_point_id":
			n, err = parseUintArg(val, 32)
			s.ObsPointID = uint32(n)
		case "sampling_port":
			p, ok := parsePort(val)
			if !ok {
				return ofp.Action{}, errf("%s: unknown port", val)
			}
			s.SamplingPort = p
		case "ingress":
			s.Direction = 1
		case "egress":
			s.Direction = 2
		default:
			return ofp.Action{}, errf("invalid key \"%s\" in \"sample\" argument", k)
		}
		if err != nil {
			return ofp.Action{}, err
		}
	}
	if s.Probability == 0 {
		return ofp.Action{}, errf("non-zero \"probability\" must be specified on sample")
	}
	return ofp.Action{Type: ofp.ActSample, Sample: s}, nil
}

func parseCT(arg string, v uint8, m *mf.Match, depth int) (ofp.Action, error) {
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
			if err != nil {
				return ofp.Action{}, errf("unknown table %s", val)
			}
			if t == 0xff {
				return ofp.Action{}, errf("invalid table 0xff")
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
			default: // ovs-ofctl knows the helpers by name only
				return ofp.Action{}, errf("invalid conntrack helper \"%s\"", val)
			}
		case "exec":
			acts, err := parseActionList(val, v, m, depth+1)
			if err != nil {
				return ofp.Action{}, err
			}
			if err := checkCTExec(val, acts); err != nil {
				return ofp.Action{}, err
			}
			ct.Actions = append(ct.Actions, acts...)
		case "nat":
			n, err := parseNAT(val, it)
			if err != nil {
				return ofp.Action{}, err
			}
			ct.Actions = append(ct.Actions, n)
		default:
			k, _, _ := strings.Cut(it, "=")
			return ofp.Action{}, errf("invalid argument to \"ct\" action: `%s'", k)
		}
	}
	return ofp.Action{Type: ofp.ActCT, Raw: ofp.RawActNXAST_CT, CT: ct}, nil
}

// parseNAT parses the argument of nat(...) inside ct.
func parseNAT(arg, whole string) (ofp.Action, error) {
	n := &ofp.NAT{}
	if whole != "nat" {
		for _, it := range strings.Split(arg, ",") {
			k, val, hasVal := strings.Cut(it, "=")
			switch k {
			case "src", "dst":
				if n.Flags&(ofp.NATSrc|ofp.NATDst) != 0 {
					return ofp.Action{}, errf("May only specify one of \"src\" or \"dst\".")
				}
				n.Flags |= ofp.NATSrc
				if k == "dst" {
					n.Flags = n.Flags&^ofp.NATSrc | ofp.NATDst
				}
				if hasVal {
					if err := parseNATRange(n, val); err != nil {
						return ofp.Action{}, err
					}
				}
			case "persistent":
				n.Flags |= ofp.NATPersistent
			case "hash":
				n.Flags |= ofp.NATHash
			case "random":
				n.Flags |= ofp.NATRandom
			default:
				return ofp.Action{}, errf("invalid key \"%s\" in \"nat\" argument", k)
			}
		}
	}
	return ofp.Action{Type: ofp.ActNAT, Raw: ofp.RawActNXAST_NAT, NAT: n}, nil
}

// parseNATRange parses ADDR[-ADDR][:PORT[-PORT]] (IPv6 addresses bare or
// in brackets) the way ovs-ofctl scans it: text that looks like an IPv6
// address but is not one leaves the range empty, a bad or decreasing
// range is "invalid", and anything left over is "garbage".
func parseNATRange(n *ofp.NAT, s string) error {
	invalid := errf("invalid nat range \"%s\"", s)
	pos := 0
	scanV6 := func() (netip.Addr, bool, bool) { // address, scanned, valid
		rest, bracket := s[pos:], false
		if strings.HasPrefix(rest, "[") {
			rest, bracket = rest[1:], true
		}
		l := 0
		for l < len(rest) && l < 46 && strings.IndexByte("0123456789abcdefABCDEF:.", rest[l]) >= 0 {
			l++
		}
		if l == 0 || bracket && (l >= len(rest) || rest[l] != ']') {
			return netip.Addr{}, false, false
		}
		a, err := netip.ParseAddr(rest[:l])
		if bracket {
			l += 2
		}
		pos += l
		return a, true, err == nil && a.Is6()
	}
	family := 0
	if v4, l, ok := scanIPv4(s); ok {
		pos, family = l, 4
		n.AddrMin = netip.AddrFrom4(v4)
		if pos < len(s) && s[pos] == '-' {
			hi, l, ok := scanIPv4(s[pos+1:])
			if !ok {
				return invalid
			}
			pos += 1 + l
			n.AddrMax = netip.AddrFrom4(hi)
			if n.AddrMax.Less(n.AddrMin) {
				return invalid
			}
		}
	} else if a, scanned, valid := scanV6(); scanned && valid {
		family = 6
		n.AddrMin = a
		if pos < len(s) && s[pos] == '-' {
			pos++
			hi, _, valid := scanV6()
			if !valid {
				return invalid
			}
			n.AddrMax = hi
			if n.AddrMax.Less(n.AddrMin) {
				return invalid
			}
		}
	}
	if family != 0 && pos < len(s) && s[pos] == ':' {
		lo, l, ok := scanUint(s[pos+1:])
		if !ok {
			return invalid
		}
		pos += 1 + l
		n.ProtoMin = uint16(lo)
		if pos < len(s) && s[pos] == '-' {
			hi, l, ok := scanUint(s[pos+1:])
			if !ok || uint16(hi) < uint16(lo) {
				return invalid
			}
			pos += 1 + l
			n.ProtoMax = uint16(hi)
		}
	}
	if pos != len(s) {
		return errf("garbage (%s) after nat range \"%s\" (pos: %d)", s[pos:], s, pos)
	}
	return nil
}

// scanUint reads the leading decimal digits of s, as scanf's %u.
func scanUint(s string) (uint64, int, bool) {
	l := 0
	var v uint64
	for l < len(s) && s[l] >= '0' && s[l] <= '9' {
		v = v*10 + uint64(s[l]-'0')
		l++
	}
	return v, l, l > 0
}

// scanIPv4 reads a leading dotted quad of s, each octet modulo 256, as
// ovs-ofctl's scanner does.
func scanIPv4(s string) ([4]byte, int, bool) {
	var out [4]byte
	pos := 0
	for i := range 4 {
		if i > 0 {
			if pos >= len(s) || s[pos] != '.' {
				return out, 0, false
			}
			pos++
		}
		v, l, ok := scanUint(s[pos:])
		if !ok {
			return out, 0, false
		}
		out[i] = byte(v)
		pos += l
	}
	return out, pos, true
}

// atoi is C's atoi: optional sign and leading decimal digits, else 0.
func atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	v, _, _ := scanUint(s)
	if neg {
		return -int64(v)
	}
	return int64(v)
}

// checkCTExec refuses, as ovs-ofctl does when parsing, actions ct's exec
// cannot hold: anything but writes of ct_mark and ct_label.
func checkCTExec(text string, acts []ofp.Action) error {
	items, _ := splitTop(text)
	for i := range acts {
		a := &acts[i]
		var f *mf.Field
		switch a.Type {
		case ofp.ActSetField:
			f = a.Field
		case ofp.ActLoad, ofp.ActMove:
			f = a.Dst.Field
		default:
			name := a.Type.String()
			if i < len(items) {
				name, _ = splitAction(items[i])
			}
			return errf("ct action doesn't support nested action %s", strings.ToLower(name))
		}
		if f == nil || f.ID != mf.IDCtMark && f.ID != mf.IDCtLabel {
			n := "?"
			if f != nil {
				n = f.Name
			}
			return errf("ct action doesn't support nested modification of %s", n)
		}
	}
	return nil
}

// parseUint32Wrap reads a number as strtoul does for ovs-ofctl's 32-bit
// action arguments (group, set_queue, meter): decimal or 0x-hex, a
// leading minus negating, and the result kept modulo 2^32.
func parseUint32Wrap(s string) (uint64, error) {
	t, neg := strings.CutPrefix(s, "-")
	n, err := strconv.ParseUint(t, 0, 64)
	if err != nil {
		return 0, errf("invalid numeric format %s", s)
	}
	if neg {
		n = -n
	}
	return n & 0xffffffff, nil
}

// nestedInstructionNames are the instructions an action list inside an
// action (clone) cannot hold.
var nestedInstructionNames = map[ofp.ActionType]string{
	ofp.ActGotoTable: "goto_table", ofp.ActWriteMetadata: "write_metadata",
	ofp.ActClearActions: "clear_actions", ofp.ActWriteActions: "write_actions",
}
