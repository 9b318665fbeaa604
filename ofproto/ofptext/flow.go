package ofptext

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Flow mod flags (OFPFF_*), as the text syntax names them.
const (
	FlagSendFlowRem    uint16 = 1 << 0
	FlagCheckOverlap   uint16 = 1 << 1
	FlagResetCounts    uint16 = 1 << 2
	FlagNoPacketCounts uint16 = 1 << 3
	FlagNoByteCounts   uint16 = 1 << 4
)

var flagKeywords = []struct {
	name string
	flag uint16
}{
	{"send_flow_rem", FlagSendFlowRem}, {"check_overlap", FlagCheckOverlap},
	{"reset_counts", FlagResetCounts}, {"no_packet_counts", FlagNoPacketCounts},
	{"no_byte_counts", FlagNoByteCounts},
}

// ofp10VLANNone is OpenFlow 1.0's dl_vlan value for "no 802.1Q header".
const ofp10VLANNone = 0xffff

// TableUnset is Flow.Table when the text names no table.
const TableUnset = 0xff

// Flow is a flow as the text syntax describes it: the flow-mod header,
// the match and the actions. Actions are in the form the OpenFlow version
// the flow was parsed for can carry (ParseFlow normalises load/set_field
// as ovs-ofctl does).
type Flow struct {
	Version     uint8 // mf.OF10 ... mf.OF15
	Table       uint8 // TableUnset when not given
	Priority    uint16
	Cookie      uint64
	CookieMask  uint64
	IdleTimeout uint16
	HardTimeout uint16
	Importance  uint16
	Flags       uint16
	Match       mf.Match
	Actions     []ofp.Action
}

// ErrSyntax is wrapped by every parse error; the message names the
// offending token as ovs-ofctl does.
var ErrSyntax = errors.New("ofptext: syntax error")

type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return e.msg }
func (e *syntaxError) Unwrap() error { return ErrSyntax }

func errf(format string, args ...any) error {
	return &syntaxError{fmt.Sprintf(format, args...)}
}

// ParseFlow parses an ovs-ofctl flow ("add-flow" syntax) for OpenFlow
// version v (mf.OF10 means OpenFlow 1.0 with Nicira extensions, ovs-ofctl's
// default). Errors carry ovs-ofctl's message for the same input.
func ParseFlow(s string, v uint8) (*Flow, error) {
	fl := &Flow{Version: v, Table: TableUnset, Priority: DefaultPriority}
	matchPart, actPart, hasActions := splitActions(s)
	if !hasActions {
		return nil, errf("must specify an action")
	}
	for tok := range tokens(matchPart) {
		name, value, hasValue := cutKeyValue(tok)
		if err := fl.parseMatchToken(name, value, hasValue); err != nil {
			return nil, err
		}
	}
	if fl.CookieMask != 0 {
		return nil, errf("flow additions cannot use a cookie mask")
	}
	normalize(&fl.Match)
	acts, err := parseActions(actPart, v, &fl.Match, fl.Table)
	if err != nil {
		return nil, err
	}
	// Fields no NXM or OXM header carries (skb_priority, tun_ttl, ...)
	// leave no protocol that can send the flow: ovs-ofctl reports that
	// from its action check.
	for i := range mf.Std.Fields() {
		if f := &mf.Std.Fields()[i]; len(f.Headers) == 0 && !f.Variable && !fl.Match.IsWild(f) && f.Name != "dl_vlan" && f.Name != "dl_vlan_pcp" {
			return nil, errf("actions are invalid with specified match (OFPBAC_MATCH_INCONSISTENT)")
		}
	}
	fl.Actions = acts
	return fl, nil
}

// SplitActions splits a flow's text at its "actions" keyword into the
// match part and the action list; ok is false when there is none.
func SplitActions(s string) (match, acts string, ok bool) { return splitActions(s) }

// splitActions finds the "actions" keyword; the rest of the string after
// "actions=" (or "actions:") is the action list.
func splitActions(s string) (match, acts string, ok bool) {
	i := 0
	for {
		j := strings.Index(s[i:], "actions")
		if j < 0 {
			return s, "", false
		}
		j += i
		before := j == 0 || strings.IndexByte(", \t", s[j-1]) >= 0
		k := j + len("actions")
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		if before && k < len(s) && (s[k] == '=' || s[k] == ':') {
			return s[:j], strings.TrimSpace(s[k+1:]), true
		}
		i = j + 1
	}
}

// tokens yields the comma/space separated tokens of a match; separators
// inside parentheses ("packet_type=(1,0x800)") do not split.
func tokens(s string) func(func(string) bool) {
	return func(yield func(string) bool) {
		depth, start := 0, -1
		for i := 0; i <= len(s); i++ {
			sep := i == len(s)
			if !sep {
				switch c := s[i]; {
				case c == '(':
					depth++
				case c == ')' && depth > 0:
					depth--
				case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n'):
					sep = true
				}
			}
			switch {
			case sep && start >= 0:
				if !yield(s[start:i]) {
					return
				}
				start = -1
			case !sep && start < 0:
				start = i
			}
		}
	}
}

func cutKeyValue(tok string) (k, v string, ok bool) {
	if i := strings.IndexAny(tok, "=:"); i >= 0 {
		return tok[:i], tok[i+1:], true
	}
	return tok, "", false
}

func (fl *Flow) parseMatchToken(name, value string, hasValue bool) error {
	if sh, ok := lookupShorthand(name); ok && !hasValue {
		fl.setShorthand(sh)
		return nil
	}
	for _, k := range flagKeywords {
		if name == k.name { // a value ("send_flow_rem=1") is ignored
			fl.Flags |= k.flag
			return nil
		}
	}
	switch name {
	case "table":
		n, err := strconv.ParseUint(value, 0, 8)
		if err != nil || n == TableUnset {
			return errf("unknown table %q", value)
		}
		fl.Table = uint8(n)
		return nil
	case "priority", "idle_timeout", "hard_timeout", "importance":
		n, err := strconv.ParseUint(value, 0, 16)
		if err != nil {
			return errf("invalid %s %q", name, value)
		}
		switch name {
		case "priority":
			fl.Priority = uint16(n)
		case "idle_timeout":
			fl.IdleTimeout = uint16(n)
		case "hard_timeout":
			fl.HardTimeout = uint16(n)
		default:
			fl.Importance = uint16(n)
		}
		return nil
	case "cookie":
		// A mask is refused before the value is read, as by ovs-ofctl.
		vs, _, masked := strings.Cut(value, "/")
		if masked {
			return errf("flow additions cannot use a cookie mask")
		}
		c, err := strconv.ParseUint(vs, 0, 64)
		if err != nil {
			return errf("invalid numeric format %s", vs)
		}
		fl.Cookie = c
		return nil
	case "duration", "n_packets", "n_bytes", "idle_age", "hard_age":
		// Accepted and ignored by add-flow, as ovs-ofctl does for dump output.
		return nil
	}
	if !hasValue {
		return errf("field %s missing value", name)
	}
	f := mf.ByName(name)
	if f == nil {
		return errf("unknown keyword %s", name)
	}
	val, mask, err := parseFieldValue(f, value)
	if err != nil {
		return &syntaxError{err.Error()}
	}
	if !f.ValueValid(val) {
		switch {
		case f.Format == mf.FormatTunFlags || f.Format == mf.FormatTCPFlags || f.Format == mf.FormatCtState:
			return &syntaxError{flagErr(f, value).Error()}
		case f.ID == mf.IDDLVLAN && getUint(val) == ofp10VLANNone:
			// OpenFlow 1.0's "no VLAN header" VID.
			tci := mf.ByID(mf.IDVLANTCI)
			_ = fl.Match.SetMasked(tci, []byte{0, 0}, nil) // cannot fail: widths match
			return nil
		case f.Format == mf.FormatDecimal || f.Format == mf.FormatHex:
			// ovs-ofctl keeps only the bits the field holds.
			f.Truncate(val)
			if mask != nil && f.Maskable {
				f.Truncate(mask)
			}
		}
		if !f.ValueValid(val) {
			return errf("%s: value %s is not valid for field %s", value, value, f.Name)
		}
	}
	if err := fl.Match.SetMasked(f, val, mask); err != nil {
		return errf("%s: %s: %v", value, f.Name, err)
	}
	return nil
}

func (fl *Flow) setShorthand(sh shorthand) {
	if sh.ethType == 0 { // "eth": packet_type=(0,0)
		_ = fl.Match.SetMasked(mf.ByID(mf.IDPacketType), []byte{0, 0, 0, 0}, nil)
		return
	}
	var v [2]byte
	v[0], v[1] = byte(sh.ethType>>8), byte(sh.ethType)
	_ = fl.Match.SetMasked(mf.ByID(mf.IDEthType), v[:], nil)
	if sh.proto >= 0 {
		_ = fl.Match.SetMasked(mf.ByID(mf.IDIPProto), []byte{byte(sh.proto)}, nil)
	}
}

// wipeUnlessPrereqs are fields with storage of their own that ofp.Normalize
// (the OpenFlow 1.0 wildcard rules) leaves alone but ovs-ofctl drops when
// their prerequisites are missing.
var wipeUnlessPrereqs = []mf.ID{mf.IDTCPFlags, mf.IDNDReserved, mf.IDNDOptionsType}

// normalize drops match fields whose prerequisites the match lacks, as
// ovs-ofctl does before sending a flow.
func normalize(m *mf.Match) {
	ofp.Normalize(m)
	var zero [16]byte
	for _, id := range wipeUnlessPrereqs {
		f := mf.ByID(id)
		if !m.IsWild(f) && !m.PrereqsOK(f) {
			_ = m.SetMasked(f, zero[:f.Bytes], zero[:f.Bytes]) // cannot fail: widths match
		}
	}
}
