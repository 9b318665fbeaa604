package mf_test

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/mf"
)

func TestIDConstantsNameTheirRows(t *testing.T) {
	if n := len(mf.Std.Fields()); n != int(mf.NumIDs) {
		t.Fatalf("table has %d rows, NumIDs is %d", n, mf.NumIDs)
	}
	for id, name := range map[mf.ID]string{
		mf.IDDPHash: "dp_hash", mf.IDTunGbpFlags: "tun_gbp_flags", mf.IDTunMetadata0: "tun_metadata0",
		mf.IDTunMetadata0 + 63: "tun_metadata63", mf.IDMetadata: "metadata", mf.IDInPort: "in_port",
		mf.IDCtTpDst: "ct_tp_dst", mf.IDReg0: "reg0", mf.IDReg0 + 15: "reg15", mf.IDXReg0: "xreg0",
		mf.IDXReg0 + 7: "xreg7", mf.IDXXReg0: "xxreg0", mf.IDXXReg0 + 3: "xxreg3", mf.IDEthSrc: "eth_src",
		mf.IDIPDSCP: "nw_tos", mf.IDIPDSCPShifted: "ip_dscp", mf.IDTCPFlags: "tcp_flags",
		mf.IDNDOptionsType: "nd_options_type",
	} {
		if f := mf.ByID(id); f.Name != name || f.ID != id {
			t.Errorf("ID %d is %q (row ID %d), want %q", id, f.Name, f.ID, name)
		}
	}
}

func TestNamesAliasesAndHeaderNamesFindTheField(t *testing.T) {
	for name, want := range map[string]string{
		"dl_src": "eth_src", "eth_src": "eth_src", "NXM_OF_ETH_SRC": "eth_src", "OXM_OF_ETH_SRC": "eth_src",
		"nw_src": "ip_src", "NXM_OF_IP_SRC": "ip_src", "OXM_OF_IPV4_SRC": "ip_src", "tp_dst": "tcp_dst",
		"NXM_NX_REG3": "reg3", "OXM_OF_PKT_REG4": "xreg4", "NXM_NX_XXREG1": "xxreg1", "tunnel_id": "tun_id",
		"NXM_NX_TUN_METADATA7": "tun_metadata7", "ONFOXM_ET_TCP_FLAGS": "tcp_flags", "NXOXM_ET_DP_HASH": "dp_hash",
		"ERICOXM_OF_ICMPV6_ND_RESERVED": "nd_reserved", "NXM_NX_CT_LABEL": "ct_label", "ip_frag": "ip_frag",
		"nw_frag": "ip_frag", "NXM_OF_VLAN_TCI_W": "vlan_tci",
	} {
		f := mf.Lookup(name)
		if f == nil || f.Name != want {
			t.Errorf("Lookup(%q) = %v, want %s", name, f, want)
		}
	}
	if f := mf.Lookup("no_such_field"); f != nil {
		t.Errorf("Lookup(no_such_field) = %s", f.Name)
	}
}

func TestHeaderForPicksTheVersionsPreferredHeader(t *testing.T) {
	for _, tc := range []struct {
		field string
		v     uint8
		want  string
	}{
		{"eth_src", 0, "NXM_OF_ETH_SRC"}, {"eth_src", mf.OF13, "OXM_OF_ETH_SRC"},
		{"metadata", 0, "OXM_OF_METADATA"}, {"tcp_flags", 0, "NXM_NX_TCP_FLAGS"},
		{"tcp_flags", mf.OF13, "ONFOXM_ET_TCP_FLAGS"}, {"tcp_flags", mf.OF15, "OXM_OF_TCP_FLAGS"},
		{"actset_output", mf.OF13, "ONFOXM_ET_ACTSET_OUTPUT"}, {"actset_output", mf.OF15, "OXM_OF_ACTSET_OUTPUT"},
		{"dp_hash", mf.OF15, "NXM_NX_DP_HASH"}, {"reg0", mf.OF15, "NXM_NX_REG0"}, {"xreg0", 0, "OXM_OF_PKT_REG0"},
	} {
		h, ok := mf.ByName(tc.field).HeaderFor(tc.v)
		if !ok || h.Name != tc.want {
			t.Errorf("%s in version %d: %s, want %s", tc.field, tc.v, h.Name, tc.want)
		}
	}
	if _, ok := mf.ByName("dl_vlan").HeaderFor(mf.OF13); ok {
		t.Error("dl_vlan has no wire header, HeaderFor found one")
	}
	h, _ := mf.ByName("actset_output").HeaderFor(mf.OF13)
	if h.Class != mf.ClassExperimenter || h.Experimenter != mf.ExpONF || h.Field != 43 {
		t.Errorf("ONFOXM_ET_ACTSET_OUTPUT header %+v", h)
	}
	if f := mf.Std.ByHeader(mf.ClassExperimenter, 0, mf.ExpNicira); f == nil || f.Name != "dp_hash" {
		t.Errorf("ByHeader(NXOXM_ET_DP_HASH) = %v", f)
	}
}

func TestPrereqExpressions(t *testing.T) {
	for p, want := range map[mf.Prereq]string{
		mf.PrereqNone:      "none",
		mf.PrereqTCP:       "eth_type in {0x0800,0x86dd} && nw_proto == 6 && !ip_frag.later",
		mf.PrereqARP:       "eth_type in {0x0806,0x8035}",
		mf.PrereqNDSolicit: "eth_type in {0x86dd} && nw_proto == 58 && tp_dst == 0 && tp_src in {135}",
		mf.PrereqVLANVID:   "packet_type == ethernet && vlan_tci & 0x1000",
		mf.PrereqCT:        "ct_state valid",
	} {
		if got := p.String(); got != want {
			t.Errorf("%d: %q, want %q", p, got, want)
		}
	}
	var m mf.Match
	tcpDst := mf.ByName("tcp_dst")
	if m.PrereqsOK(tcpDst) {
		t.Error("tcp_dst prerequisites met by an empty match")
	}
	m.Flow.EthType, m.Flow.NwProto = flow.EthTypeIPv6, flow.IPProtoTCP
	if !m.PrereqsOK(tcpDst) {
		t.Error("tcp_dst prerequisites not met by tcp6")
	}
	m.Flow.NwFrag = flow.FragAny | flow.FragLater
	if m.PrereqsOK(tcpDst) {
		t.Error("tcp_dst prerequisites met by a later fragment")
	}
	// ct_nw_src needs a match that implies a valid connection.
	var c mf.Match
	ctSrc := mf.ByName("ct_nw_src")
	c.Flow.CtState, c.Mask.CtState = flow.CsTracked, flow.CsTracked
	if c.PrereqsOK(ctSrc) {
		t.Error("+trk alone satisfies ct_nw_src")
	}
	c.Mask.CtState |= flow.CsInvalid
	if !c.PrereqsOK(ctSrc) {
		t.Error("+trk-inv does not satisfy ct_nw_src")
	}
}

func unhex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func TestSetMaskedStoresIntoTheFlowKey(t *testing.T) {
	var m mf.Match
	steps := []struct{ field, val, mask string }{
		{"eth_type", "0800", ""}, {"ip_src", "0a000001", "ffffff00"}, {"nw_proto", "06", ""},
		{"tcp_dst", "0050", ""}, {"reg1", "00000007", ""}, {"xreg1", "00000001000000ff", ""},
		{"xxreg3", "000000000000000000000000deadbeef", ""}, {"metadata", "0000000000000042", ""},
		{"vlan_vid", "1005", ""}, {"vlan_pcp", "03", ""}, {"ct_label", "00000000000000000000000000000002", "00000000000000000000000000000002"},
		{"in_port_oxm", "fffffffe", ""},
	}
	for _, s := range steps {
		var mask []byte
		if s.mask != "" {
			mask = unhex(s.mask)
		}
		if err := m.SetMasked(mf.ByName(s.field), unhex(s.val), mask); err != nil {
			t.Fatalf("%s: %v", s.field, err)
		}
	}
	fl := &m.Flow
	if fl.EthType != 0x0800 || fl.NwSrc != 0x0a000000 || m.Mask.NwSrc != 0xffffff00 || fl.NwProto != 6 || fl.TpDst != 80 {
		t.Errorf("L3/L4 key %#x %#x/%#x %d %d", fl.EthType, fl.NwSrc, m.Mask.NwSrc, fl.NwProto, fl.TpDst)
	}
	if fl.Regs[1] != 7 || fl.Regs[2] != 1 || fl.Regs[3] != 0xff || fl.Regs[15] != 0xdeadbeef || fl.Metadata != 0x42 {
		t.Errorf("registers %v metadata %#x", fl.Regs, fl.Metadata)
	}
	if fl.VLANs[0].TCI != 0x1000|3<<13|5 {
		t.Errorf("TCI %#04x", fl.VLANs[0].TCI)
	}
	if fl.CtLabel[15] != 2 || m.Mask.CtLabel[15] != 2 {
		t.Errorf("ct_label %x/%x", fl.CtLabel, m.Mask.CtLabel)
	}
	if fl.InPort != 0xfffe { // OFPP_LOCAL in 16-bit form
		t.Errorf("in_port %#x", fl.InPort)
	}
	got, mask := make([]byte, 4), make([]byte, 4)
	m.Get(mf.ByName("in_port_oxm"), got, mask)
	if !bytes.Equal(got, unhex("fffffffe")) || !bytes.Equal(mask, unhex("ffffffff")) {
		t.Errorf("in_port_oxm reads back %x/%x", got, mask)
	}
	if err := m.SetMasked(mf.ByName("nw_tos"), []byte{0x03}, nil); err != mf.ErrBadValue {
		t.Errorf("nw_tos with ECN bits: %v, want ErrBadValue", err)
	}
	if err := m.SetMasked(mf.ByName("eth_type"), unhex("0800"), unhex("ff00")); err != mf.ErrBadMask {
		t.Errorf("masked eth_type: %v, want ErrBadMask", err)
	}
	if err := m.SetMasked(mf.ByName("in_port_oxm"), unhex("0000ff00"), nil); err != mf.ErrBadValue {
		t.Errorf("in_port_oxm 0xff00: %v, want ErrBadValue", err)
	}
}

func TestTunMetadataAllocatesInOrderOfUse(t *testing.T) {
	var m mf.Match
	if err := m.SetMasked(mf.ByName("tun_metadata3"), unhex("00001234"), nil); err != nil {
		t.Fatal(err)
	}
	if err := m.SetMasked(mf.ByName("tun_metadata0"), unhex("ab"), unhex("ff")); err != nil {
		t.Fatal(err)
	}
	if m.Tun.Opts[3] != (mf.TunLoc{Off: 0, Len: 2}) || m.Tun.Opts[0] != (mf.TunLoc{Off: 2, Len: 1, Masked: true}) {
		t.Errorf("allocation %+v %+v", m.Tun.Opts[3], m.Tun.Opts[0])
	}
	if m.Flow.TunMetaPresent != 1<<3|1 || !bytes.Equal(m.Flow.TunMeta[:3], unhex("1234ab")) {
		t.Errorf("present %#x meta %x", m.Flow.TunMetaPresent, m.Flow.TunMeta[:3])
	}
}

func TestAccessorsDoNotAllocate(t *testing.T) {
	var m mf.Match
	v, k := make([]byte, 16), make([]byte, 16)
	fields := []*mf.Field{mf.ByName("ip_src"), mf.ByName("xxreg0"), mf.ByName("ct_state"), mf.ByName("eth_dst")}
	allocs := testing.AllocsPerRun(100, func() {
		for _, f := range fields {
			_ = m.SetMasked(f, v[:f.Bytes], nil)
			m.Get(f, v[:f.Bytes], k[:f.Bytes])
			_ = m.IsWild(f)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations", allocs)
	}
}
