package mf

import (
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/datapath/flow"
)

// Prereq names a field's prerequisite, as Open vSwitch's MFP_*. Its meaning
// is the expression PrereqExpr returns.
type Prereq uint8

// Prerequisites.
const (
	PrereqNone Prereq = iota
	PrereqEthernet
	PrereqARP
	PrereqVLANVID
	PrereqIPv4
	PrereqIPv6
	PrereqIPAny
	PrereqMPLS
	PrereqCT
	PrereqTCP
	PrereqUDP
	PrereqSCTP
	PrereqICMPv4
	PrereqICMPv6
	PrereqND
	PrereqNDSolicit
	PrereqNDAdvert
	PrereqNSH
	numPrereqs
)

// Expr is a prerequisite as a conjunction of simple tests on the match's
// flow values (not its mask, except CTValid), evaluated the way Open
// vSwitch's mf_are_match_prereqs_ok does.
type Expr struct {
	Ethernet bool     // packet_type == ethernet
	VLAN     bool     // an 802.1Q header is present (vlan_tci & CFI)
	EthTypes []uint16 // eth_type ∈ EthTypes (when not empty)
	NwProto  int16    // nw_proto == NwProto (when >= 0)
	NotLater bool     // !(ip_frag & later)
	TpDst    int32    // tp_dst == TpDst (when >= 0): ND has ICMPv6 code 0
	TpSrc    []uint16 // tp_src ∈ TpSrc (when not empty): ICMPv6 ND types
	CTValid  bool     // ct_state shows a valid connection
}

var (
	ethIP     = []uint16{flow.EthTypeIPv4}
	ethIPv6   = []uint16{flow.EthTypeIPv6}
	ethIPAny  = []uint16{flow.EthTypeIPv4, flow.EthTypeIPv6}
	ethARP    = []uint16{flow.EthTypeARP, flow.EthTypeRARP}
	ethMPLS   = []uint16{flow.EthTypeMPLS, flow.EthTypeMPLSMcst}
	ndTypes   = []uint16{135, 136}
	ndSolicit = []uint16{135}
	ndAdvert  = []uint16{136}
	ethNSH    = []uint16{0x894f} // Network Service Header
)

var prereqExprs = [numPrereqs]Expr{
	PrereqNone:      {NwProto: -1, TpDst: -1},
	PrereqEthernet:  {Ethernet: true, NwProto: -1, TpDst: -1},
	PrereqARP:       {EthTypes: ethARP, NwProto: -1, TpDst: -1},
	PrereqVLANVID:   {Ethernet: true, VLAN: true, NwProto: -1, TpDst: -1},
	PrereqIPv4:      {EthTypes: ethIP, NwProto: -1, TpDst: -1},
	PrereqIPv6:      {EthTypes: ethIPv6, NwProto: -1, TpDst: -1},
	PrereqIPAny:     {EthTypes: ethIPAny, NwProto: -1, TpDst: -1},
	PrereqMPLS:      {EthTypes: ethMPLS, NwProto: -1, TpDst: -1},
	PrereqCT:        {CTValid: true, NwProto: -1, TpDst: -1},
	PrereqTCP:       {EthTypes: ethIPAny, NwProto: flow.IPProtoTCP, NotLater: true, TpDst: -1},
	PrereqUDP:       {EthTypes: ethIPAny, NwProto: flow.IPProtoUDP, NotLater: true, TpDst: -1},
	PrereqSCTP:      {EthTypes: ethIPAny, NwProto: flow.IPProtoSCTP, NotLater: true, TpDst: -1},
	PrereqICMPv4:    {EthTypes: ethIP, NwProto: flow.IPProtoICMP, TpDst: -1},
	PrereqICMPv6:    {EthTypes: ethIPv6, NwProto: flow.IPProtoICMPv6, TpDst: -1},
	PrereqND:        {EthTypes: ethIPv6, NwProto: flow.IPProtoICMPv6, TpDst: 0, TpSrc: ndTypes},
	PrereqNDSolicit: {EthTypes: ethIPv6, NwProto: flow.IPProtoICMPv6, TpDst: 0, TpSrc: ndSolicit},
	PrereqNDAdvert:  {EthTypes: ethIPv6, NwProto: flow.IPProtoICMPv6, TpDst: 0, TpSrc: ndAdvert},
	PrereqNSH:       {EthTypes: ethNSH, NwProto: -1, TpDst: -1},
}

// Expr returns the prerequisite's expression.
func (p Prereq) Expr() Expr {
	if p < numPrereqs {
		return prereqExprs[p]
	}
	return prereqExprs[PrereqNone]
}

// String renders the expression, e.g. "eth_type in {0x0800,0x86dd} && nw_proto == 6".
func (p Prereq) String() string {
	e := p.Expr()
	var parts []string
	if e.Ethernet {
		parts = append(parts, "packet_type == ethernet")
	}
	if e.VLAN {
		parts = append(parts, "vlan_tci & 0x1000")
	}
	if len(e.EthTypes) > 0 {
		parts = append(parts, "eth_type in "+setString(e.EthTypes, "0x%04x"))
	}
	if e.NwProto >= 0 {
		parts = append(parts, fmt.Sprintf("nw_proto == %d", e.NwProto))
	}
	if e.NotLater {
		parts = append(parts, "!ip_frag.later")
	}
	if e.TpDst >= 0 {
		parts = append(parts, fmt.Sprintf("tp_dst == %d", e.TpDst))
	}
	if len(e.TpSrc) > 0 {
		parts = append(parts, "tp_src in "+setString(e.TpSrc, "%d"))
	}
	if e.CTValid {
		parts = append(parts, "ct_state valid")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " && ")
}

func setString(vs []uint16, f string) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprintf(f, v)
	}
	return "{" + strings.Join(s, ",") + "}"
}

// DLType returns the Ethertype the flow has for prerequisite purposes: the
// Ethernet type, the type of a non-Ethernet packet_type in the Ethertype
// namespace, or 0x05ff (none).
func (fl *Flow) DLType() uint16 {
	switch {
	case fl.PacketType == 0:
		return fl.EthType
	case fl.PacketType>>16 == 1: // OFPHTN_ETHERTYPE
		return uint16(fl.PacketType)
	default:
		return flow.EthTypeNone
	}
}

// PrereqsOK reports whether m satisfies f's prerequisites.
func (m *Match) PrereqsOK(f *Field) bool { return m.Satisfies(f.Prereq.Expr()) }

// Satisfies evaluates e against m.
func (m *Match) Satisfies(e Expr) bool {
	fl := &m.Flow
	if e.Ethernet && fl.PacketType != 0 {
		return false
	}
	if e.VLAN && fl.VLANs[0].TCI&flow.VLANCFI == 0 {
		return false
	}
	if len(e.EthTypes) > 0 && !contains(e.EthTypes, fl.DLType()) {
		return false
	}
	if e.NwProto >= 0 && fl.NwProto != uint8(e.NwProto) {
		return false
	}
	if e.NotLater && fl.NwFrag&flow.FragLater != 0 {
		return false
	}
	if e.TpDst >= 0 && fl.TpDst != uint16(e.TpDst) {
		return false
	}
	if len(e.TpSrc) > 0 && !contains(e.TpSrc, fl.TpSrc) {
		return false
	}
	if e.CTValid && !m.ctValid() {
		return false
	}
	return true
}

// ctValid: a match must test at least one bit that implies a valid
// connection, or test +trk-inv explicitly.
func (m *Match) ctValid() bool {
	s := m.Flow.CtState
	const valid = flow.CsNew | flow.CsEstablished | flow.CsRelated | flow.CsReplyDir | flow.CsSrcNAT | flow.CsDstNAT
	return s&valid != 0 ||
		(s&flow.CsTracked != 0 && m.Mask.CtState&flow.CsInvalid != 0 && s&flow.CsInvalid == 0)
}

func contains(vs []uint16, v uint16) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}
