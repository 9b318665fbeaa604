package ofctl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofprint"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// protocols is a set of ovs-ofctl flow protocols, one bit each in the
// order ovs-ofctl lists them.
type protocols uint16

const (
	protoOF10    protocols = 1 << iota // OpenFlow10-table_id
	protoOF10TID                       // OpenFlow10+table_id
	protoNXM                           // NXM-table_id
	protoNXMTID                        // NXM+table_id
	protoOF11                          // OpenFlow11
	protoOXM12                         // OXM-OpenFlow12
	protoOXM13                         // OXM-OpenFlow13
	protoOXM14                         // OXM-OpenFlow14
	protoOXM15                         // OXM-OpenFlow15

	protoOXM      = protoOXM12 | protoOXM13 | protoOXM14 | protoOXM15
	protoAny      = protoOF10 | protoOF10TID | protoNXM | protoNXMTID | protoOF11 | protoOXM
	protoTableID  = protoOF10TID | protoNXMTID | protoOF11 | protoOXM
	protoNeedsNXM = protoNXM | protoNXMTID | protoOXM
)

var protocolBitNames = []string{"OpenFlow10-table_id", "OpenFlow10+table_id", "NXM-table_id",
	"NXM+table_id", "OpenFlow11", "OXM-OpenFlow12", "OXM-OpenFlow13", "OXM-OpenFlow14", "OXM-OpenFlow15"}

// protocolAbbrevs are tried first, in order, when naming a set.
var protocolAbbrevs = []struct {
	p    protocols
	name string
}{{protoAny, "any"}, {protoOF10 | protoOF10TID, "OpenFlow10"}, {protoNXM | protoNXMTID, "NXM"}, {protoOXM, "OXM"}}

// String names p as ovs-ofctl does: whole groups by abbreviation, then the
// remaining protocols one by one.
func (p protocols) String() string {
	var parts []string
	for _, a := range protocolAbbrevs {
		if p&a.p == a.p {
			parts = append(parts, a.name)
			p &^= a.p
		}
	}
	for i, name := range protocolBitNames {
		if p&(1<<i) != 0 {
			parts = append(parts, name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// fieldSet resolves field names and aliases once; read-only afterwards.
func fieldSet(names ...string) map[*mf.Field]bool {
	m := make(map[*mf.Field]bool, len(names))
	for _, n := range names {
		if f := mf.Lookup(n); f != nil {
			m[f] = true
		}
	}
	return m
}

var (
	// of11Exact are the fields OpenFlow 1.1's standard match carries
	// exactly; of11Masked those it carries with any mask.
	of11Exact = fieldSet("in_port", "in_port_oxm", "vlan_tci", "vlan_vid", "vlan_pcp", "dl_vlan", "dl_vlan_pcp", "eth_type", "nw_tos", "ip_dscp",
		"ip_ecn", "ip_proto", "tcp_src", "tcp_dst", "udp_src", "udp_dst", "sctp_src", "sctp_dst",
		"icmp_type", "icmp_code", "arp_op", "mpls_label", "mpls_tc")
	of11Masked = fieldSet("eth_src", "eth_dst", "ip_src", "ip_dst", "arp_spa", "arp_tpa", "metadata")
	// of11Only are the fields of those two sets OpenFlow 1.0 lacks.
	of11Only = fieldSet("in_port_oxm", "metadata", "mpls_label", "mpls_tc", "ip_ecn")
	// of10SetFields are the fields OpenFlow 1.0's own set actions write.
	// set_field restricts the protocols as matching the field would:
	// not at all for these, which OpenFlow 1.0 matches.
	of10SetFields = fieldSet("eth_src", "eth_dst", "vlan_tci", "dl_vlan", "vlan_vid", "dl_vlan_pcp", "vlan_pcp",
		"ip_src", "ip_dst", "nw_tos", "ip_dscp", "tcp_src", "tcp_dst", "udp_src", "udp_dst", "in_port",
		"arp_op", "arp_spa", "arp_tpa", "icmp_type", "icmp_code")
	fieldIPProto = mf.Lookup("ip_proto")
	fieldEthType = mf.Lookup("eth_type")
	fieldTpSrc   = fieldSet("tcp_src", "udp_src", "sctp_src", "icmp_type")
	fieldTpDst   = fieldSet("tcp_dst", "udp_dst", "sctp_dst", "icmp_code")
)

// setFieldRE finds the destination of each set_field action in a flow's
// text. ovs-ofctl restricts the protocols by the fields set_field writes
// but not by load, and ParseFlow turns both into the same action, so the
// text is consulted.
var setFieldRE = regexp.MustCompile(`set_field:[^>]*->([A-Za-z0-9_]+)`)

// usableProtocols is the set of protocols that can carry fl (parsed from
// text), as ovs-ofctl computes it from the match, the set_field actions,
// the table id and the flags.
func usableProtocols(fl *ofptext.Flow, text string) protocols {
	p := protoAny
	if !of10CanMatch(&fl.Match) {
		p &= protoNeedsNXM
		if of11CanMatch(&fl.Match) {
			p |= protoOF11
		}
	}
	p &^= wipedProtocols(fl, text)
	if bitwiseMatchOutsideOF1x(text) {
		p &= protoNeedsNXM
	}
	p &= matchFieldProtocols(text)
	for _, m := range setFieldRE.FindAllStringSubmatch(text, -1) {
		f := mf.Lookup(m[1])
		if f == nil || of10SetFields[f] {
			continue
		}
		if of11Exact[f] || of11Masked[f] {
			p &= protoNeedsNXM | protoOF11
		} else {
			p &= protoNeedsNXM
		}
	}
	p &= actionProtocols(fl)
	if fl.Table != ofptext.TableUnset {
		p &= protoTableID
	}
	if fl.Flags&ofptext.FlagResetCounts != 0 {
		p &= protoOXM
	}
	if fl.Flags&(ofptext.FlagNoPacketCounts|ofptext.FlagNoByteCounts) != 0 {
		p &= protoOXM13 | protoOXM14 | protoOXM15
	}
	return p
}

// wipedProtocols returns the protocols that cannot carry a match field
// text names but the parsed flow lost for want of its prerequisites
// (ipv6_dst without ipv6): ovs-ofctl judges the protocols before it drops
// such fields.
func wipedProtocols(fl *ofptext.Flow, text string) protocols {
	var out protocols
	matchPart, _, _ := ofptext.SplitActions(text)
	for _, tok := range strings.FieldsFunc(matchPart, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		name, _, _ := strings.Cut(tok, "=")
		f := mf.Lookup(name)
		if f == nil || !fl.Match.IsWild(f) || fl.Match.PrereqsOK(f) {
			continue
		}
		switch {
		case !of11Exact[f] && !of11Masked[f]:
			out |= protoOF10 | protoOF10TID | protoOF11
		case of11Only[f]:
			out |= protoOF10 | protoOF10TID
		}
	}
	return out
}

// fieldProtocols restricts the protocols for fields named in a match
// whose value alone would not show it: packet_type (even Ethernet's) needs
// NXM or OXM, in_port_oxm an OpenFlow 1.1+ match or NXM.
var fieldProtocols = map[string]protocols{
	"packet_type": protoNeedsNXM,
	"in_port_oxm": protoNeedsNXM | protoOF11,
}

// matchFieldProtocols is the set of protocols the fields named in the
// match part of text allow.
func matchFieldProtocols(text string) protocols {
	p := protoAny
	matchPart, _, _ := ofptext.SplitActions(text)
	for _, tok := range strings.FieldsFunc(matchPart, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		name, _, _ := strings.Cut(tok, "=")
		if fp, ok := fieldProtocols[name]; ok {
			p &= fp
		}
	}
	return p
}

// bitwiseMatchOutsideOF1x reports whether the match part of text gives a
// partial mask to a field OpenFlow 1.0 and 1.1 match only exactly (or not
// at all): ovs-ofctl then allows only NXM and OXM even when the masked
// value could be re-expressed (vlan_tci=0x1005/0x1fff is dl_vlan=5).
func bitwiseMatchOutsideOF1x(text string) bool {
	matchPart, _, _ := ofptext.SplitActions(text)
	for _, tok := range strings.FieldsFunc(matchPart, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		name, value, ok := strings.Cut(tok, "=")
		if !ok {
			continue
		}
		_, ms, masked := strings.Cut(value, "/")
		f := mf.Lookup(name)
		if !masked || f == nil || !f.Maskable || f.Bytes > 8 || f.Format != mf.FormatHex && f.Format != mf.FormatDecimal || of11Masked[f] {
			continue
		}
		m, err := strconv.ParseUint(ms, 0, 64)
		if err != nil || m == 0 { // an all-zero mask is a wildcard
			continue
		}
		if full := uint64(1)<<(8*uint(f.Bytes)) - 1; f.Bytes < 8 && m&full != full || f.Bytes == 8 && m != ^uint64(0) {
			return true
		}
	}
	return false
}

// protoOF10Family is what ovs-ofctl allows for actions that OpenFlow 1.1+
// would reject as inconsistent with the match: OpenFlow 1.0 and NXM.
const protoOF10Family = protoOF10 | protoOF10TID | protoNXM | protoNXMTID

// actionProtocols narrows the protocols by the actions, as ovs-ofctl's
// action parser and consistency check do: write_metadata needs NXM or an
// OpenFlow 1.1+ match, and popping a VLAN header the match (or an earlier push)
// does not guarantee is tolerated by OpenFlow 1.0 and NXM only.
func actionProtocols(fl *ofptext.Flow) protocols {
	p := protoAny
	tci, mask := fieldUint(&fl.Match, mf.ByID(mf.IDVLANTCI))
	vlan := tci&mask&flow.VLANCFI != 0
	var walk func(acts []ofp.Action)
	walk = func(acts []ofp.Action) {
		for i := range acts {
			switch a := &acts[i]; a.Type {
			case ofp.ActWriteMetadata:
				p &= protoNXM | protoNXMTID | protoOF11 | protoOXM
			case ofp.ActPushVLAN:
				vlan = true
			case ofp.ActStripVLAN: // and pop_vlan
				if !vlan {
					p &= protoOF10Family
				}
				vlan = false
			}
			saved := vlan // nested lists (clone, ...) leave the outer packet alone
			walk(acts[i].Nested)
			vlan = saved
		}
	}
	walk(fl.Actions)
	return p
}

func fieldUint(m *mf.Match, f *mf.Field) (val, mask uint64) {
	var v, k [16]byte
	m.Get(f, v[:f.Bytes], k[:f.Bytes])
	for i := 0; i < f.Bytes && i < 8; i++ {
		val, mask = val<<8|uint64(v[i]), mask<<8|uint64(k[i])
	}
	return val, mask
}

// of10CanMatch reports whether m survives OpenFlow 1.0's match encoding
// (compared as ovs-ofctl prints matches) and uses L3/L4 fields only where
// OpenFlow 1.0 defines them: IPv4 and ARP, and TCP, UDP and ICMP ports.
func of10CanMatch(m *mf.Match) bool {
	var back mf.Match
	if err := ofp.DecodeOF10Match(ofp.AppendOF10Match(nil, m), &back); err != nil {
		return false
	}
	// A TCI match that requires no 802.1Q header (CFI matched as 0), such
	// as vlan_vid=5, goes out as OpenFlow 1.0's "no VLAN": ovs-ofctl
	// counts that as carried.
	want := *m
	if tci := &want.Flow.VLANs[0].TCI; want.Mask.VLANs[0].TCI&flow.VLANCFI != 0 && *tci&flow.VLANCFI == 0 {
		*tci, want.Mask.VLANs[0].TCI = 0, 0xffff
	}
	if ofptext.FormatMatch(&want, 0) != ofptext.FormatMatch(&back, 0) {
		return false
	}
	if fieldIPProto == nil || fieldEthType == nil || m.IsWild(fieldIPProto) {
		return true
	}
	et, _ := fieldUint(m, fieldEthType)
	if et != 0x0800 && et != 0x0806 && et != 0x8035 {
		return false
	}
	proto, _ := fieldUint(m, fieldIPProto)
	if proto == 6 || proto == 17 || proto == 1 || et != 0x0800 {
		return true
	}
	for f := range fieldTpSrc {
		if !m.IsWild(f) {
			return false
		}
	}
	for f := range fieldTpDst {
		if !m.IsWild(f) {
			return false
		}
	}
	return true
}

// of11CanMatch reports whether OpenFlow 1.1's standard match carries m,
// as ovs-ofctl judges it from its field table (which, unlike the standard
// match, lets ip_ecn through).
func of11CanMatch(m *mf.Match) bool {
	fs := mf.Std.Fields()
	for i := range fs {
		f := &fs[i]
		// Fields sharing storage (tcp_dst, udp_dst, sctp_dst, ...) all
		// look matched; only the one whose prerequisites hold counts.
		// ct_* fields share no storage: missing prerequisites (a valid
		// ct_state) do not make them disappear.
		if m.IsWild(f) || of11Masked[f] || !m.PrereqsOK(f) && f.Prereq != mf.PrereqCT {
			continue
		}
		if !of11Exact[f] {
			return false
		}
		switch f.Name {
		case "vlan_tci":
			if _, mask := fieldUint(m, f); mask != 0xffff && mask != 0x1fff && mask != 0xf000 {
				return false
			}
			continue
		case "vlan_vid", "dl_vlan", "vlan_pcp", "dl_vlan_pcp":
			continue // views of the TCI, whose mask vlan_tci checks
		}
		if _, mask := fieldUint(m, f); f.Bits < 64 && mask&(1<<uint(f.Bits)-1) != 1<<uint(f.Bits)-1 {
			return false
		}
	}
	// OpenFlow 1.1 defines nw_proto only for IPv4 (and ARP's opcode).
	if fieldIPProto != nil && !m.IsWild(fieldIPProto) {
		if et, _ := fieldUint(m, fieldEthType); et != 0x0800 && et != 0x0806 && et != 0x8035 {
			return false
		}
	}
	return true
}

// allowedProtocols is the set of protocols the -O versions allow.
func allowedProtocols(versions []uint8) protocols {
	var p protocols
	for _, v := range versions {
		switch v {
		case mf.OF10:
			p |= protoOF10 | protoOF10TID | protoNXM | protoNXMTID
		case mf.OF11:
			p |= protoOF11
		default:
			p |= protoOXM12 << (v - mf.OF12)
		}
	}
	return p
}

// chooseProtocol picks what ovs-ofctl picks offline: the first protocol,
// in ovs-ofctl's fixed preference order, that is usable and allowed, with
// the OpenFlow version it runs on.
func chooseProtocol(usable, allowed protocols) (protocols, uint8, error) {
	both := usable & allowed
	if both == 0 {
		return 0, 0, errors.New("no usable protocol")
	}
	p := both & -both // lowest bit: the preferred one
	v := mf.OF10
	if p >= protoOXM12 {
		v = mf.OF12 + uint8(bits.TrailingZeros16(uint16(p/protoOXM12)))
	}
	return p, v, nil
}

func parseFlowCmd(e *env, args []string) error {
	return printFlowMods(e, []string{args[0]}, nil)
}

func parseFlowsCmd(e *env, args []string) error {
	var r io.Reader = e.stdin
	if args[0] != "-" {
		f, err := os.Open(args[0])
		if err != nil {
			return fmt.Errorf("%s: open failed (%w)", args[0], unwrapPathErr(err))
		}
		defer f.Close()
		r = f
	}
	var flows []string
	var lines []int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(l, '#'); i == 0 {
			continue
		}
		if l == "" {
			continue
		}
		flows = append(flows, l)
		lines = append(lines, n)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: read failed: %w", args[0], err)
	}
	return printFlowMods(e, flows, func(i int) string { return fmt.Sprintf("%s:%d: ", args[0], lines[i]) })
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		if pe.Err.Error() == "no such file or directory" {
			return fmt.Errorf("No such file or directory")
		}
		return pe.Err
	}
	return err
}

// printFlowMods parses every flow before printing anything, as ovs-ofctl
// does, then prints the protocol header and one flow mod per flow.
func printFlowMods(e *env, texts []string, where func(int) string) error {
	versions := e.versions
	if len(versions) == 0 {
		versions = []uint8{mf.OF10}
	}
	// Parse for the lowest allowed version to learn the usable protocols,
	// then again for the chosen one if it differs.
	parseAll := func(v uint8) ([]*ofptext.Flow, error) {
		flows := make([]*ofptext.Flow, 0, len(texts))
		for i, t := range texts {
			fl, err := ofptext.ParseFlow(t, v)
			if err != nil {
				if where != nil {
					return nil, fmt.Errorf("%s%w", where(i), err)
				}
				return nil, err
			}
			flows = append(flows, fl)
		}
		return flows, nil
	}
	// ovs-ofctl parses without a version and then lists the protocols
	// that can carry every flow; ParseFlow checks a flow against one
	// version, so each flow is tried in every version family.
	lowest := slices.Min(versions)
	usable := protoAny
	for i, t := range texts {
		u, err := flowProtocols(t)
		if u == 0 {
			if _, lerr := ofptext.ParseFlow(t, lowest); lerr != nil {
				err = lerr
			}
			if where != nil {
				return fmt.Errorf("%s%w", where(i), err)
			}
			return err
		}
		usable &= u
	}
	w := bufio.NewWriter(e.stdout)
	fmt.Fprintf(w, "usable protocols: %s\n", usable)
	chosen, v, err := chooseProtocol(usable, allowedProtocols(versions))
	if err != nil {
		w.Flush()
		return err
	}
	flows, err := parseAll(v)
	if err != nil {
		w.Flush()
		return err
	}
	fmt.Fprintf(w, "chosen protocol: %s\n", chosen)
	name := "OFPT_FLOW_MOD"
	if chosen&(protoNXM|protoNXMTID) != 0 {
		name = "NXT_FLOW_MOD"
	}
	tableID := chosen&(protoOF10TID|protoNXMTID) != 0
	for i, fl := range flows {
		// ovs-ofctl prints the flow mod it encodes, so print what the
		// wire form decodes to (OXM's vlan_vid cannot carry a VLAN-less
		// TCI's PCP bits, full masks become exact matches, ...).
		if b, err := encodeAddFlow(texts[i], chosen, v, uint32(i+1)); err == nil {
			var line strings.Builder
			lw := bufio.NewWriter(&line)
			if err := ofprint.Message(lw, b); err == nil && lw.Flush() == nil {
				w.WriteString(line.String())
				continue
			}
		}
		prefix := ""
		if tableID && fl.Table == ofptext.TableUnset {
			prefix = "table:255 "
		}
		fmt.Fprintf(w, "%s%s (xid=%#x): ADD %s%s\n", name, ofprint.VersionTag(v), i+1, prefix, ofptext.FormatFlowMod(fl))
	}
	return w.Flush()
}

// protocolFamilies are the versions ParseFlow checks flows for, with the
// protocols each stands for.
var protocolFamilies = []struct {
	v uint8
	p protocols
}{
	{mf.OF10, protoOF10 | protoOF10TID | protoNXM | protoNXMTID}, {mf.OF11, protoOF11},
	{mf.OF12, protoOXM12}, {mf.OF13, protoOXM13}, {mf.OF14, protoOXM14}, {mf.OF15, protoOXM15},
}

// flowProtocols is the set of protocols that can carry the flow in text:
// those of every version it parses in, narrowed by its match, flags and
// actions. With none, err is the error of the first version tried.
func flowProtocols(text string) (protocols, error) {
	var p protocols
	var first error
	for _, fam := range protocolFamilies {
		fl, err := ofptext.ParseFlow(text, fam.v)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		p |= fam.p & usableProtocols(fl, text)
	}
	if p == 0 && first == nil {
		first = errors.New("no usable protocol")
	}
	return p, first
}

// encodeAddFlow encodes text as the add flow mod ovs-ofctl sends with
// protocol p in version v.
func encodeAddFlow(text string, p protocols, v uint8, xid uint32) ([]byte, error) {
	r, err := parseFlowReq(text, fcAdd, v)
	if err != nil {
		return nil, err
	}
	fm, err := r.flowMod(fcAdd, p, v)
	if err != nil {
		return nil, err
	}
	return ofp.Encode(nil, v, xid, fm)
}
