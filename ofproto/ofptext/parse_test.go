package ofptext

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Messages are ovs-ofctl's (Debian openvswitch-common 3.x), after its
// "FILE:LINE: " prefix, for `ovs-ofctl parse-flows` on the same line.
func TestParseFlowErrorsNameTheTokenLikeOVSOfctl(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"reg99=1,actions=drop", "unknown keyword reg99"},
		{"foo,actions=drop", "field foo missing value"},
		{"reg0=0x1/0x2/3,actions=drop", "0x1/0x2/3: bad syntax for reg0 mask"},
		{"metadata=0x1/0x1/0x1,actions=drop", "0x1/0x1/0x1: bad syntax for metadata mask"},
		{"ip,actions=bogus", "unknown action bogus"},
		{"priority=abc,actions=drop", `invalid priority "abc"`},
		{"in_port=foo,actions=drop", "foo: invalid or unknown port for in_port"},
		{"dl_src=zz,actions=drop", "zz: invalid Ethernet address"},
		{"ct_state=+foo,actions=drop", "foo: unknown ct_state flag(s)"},
		{"table=300,actions=drop", `unknown table "300"`},
		{"reg0=0x100000000,actions=drop", "0x100000000: value too large for 4-byte field reg0"},
		{"in_port=1", "must specify an action"},
		{"tcp,tcp_flags=+bogus,actions=drop", "bogus: unknown TCP flag(s)"},
		{"ip,ip_frag=maybe,actions=drop", `maybe: unknown fragment type (valid types are "no", "yes", "first", "later", "not_later"`},
		{"actions=load:1->reg0[40]", "reg0[40]: starting bit 40 is not valid because field is only 32 bits wide"},
		{"actions=move:reg0[]->foo[]", "foo[]: unknown field `foo'"},
		{"actions=output:", ": output to unknown port"},
		{"eth_type=0x0800,actions=resubmit(a,b)", "a: resubmit to unknown port"},
		{"ipv6,ipv6_src=zz::1::2,actions=drop", "zz::1::2: invalid IPv6 address"},
		{"idle_timeout=x,actions=drop", `invalid idle_timeout "x"`},
		{"cookie=0x1/0x2,actions=drop", "flow additions cannot use a cookie mask"},
		{"in_port=1 actions=ct(zone=foo)", "foo: unknown field `foo'"},
		{"actions=ct(bogus)", "invalid argument to \"ct\" action: `bogus'"},
	} {
		_, err := ParseFlow(c.in, mf.OF10)
		if err == nil {
			t.Errorf("ParseFlow(%q) succeeded, want error %q", c.in, c.want)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("ParseFlow(%q) error\n got %q\nwant %q", c.in, err, c.want)
		}
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseFlow(%q) error %v does not wrap ErrSyntax", c.in, err)
		}
	}
}

// encap and decap are kept as wire bytes in ofp; the text syntax writes
// and reads those bytes (the expected bytes are what ovs-ofctl sends for
// the same text, recorded from Debian's ovs-ofctl 3.1).
func TestParseFlowEncapDecapRoundTripThroughWireBytes(t *testing.T) {
	for _, c := range []struct{ in, hex string }{
		{"encap(nsh(md_type=1))", "ffff001800002320002e00000001894f0004010501000000"},
		{"encap(nsh(md_type=2,tlv(0x1000,10,0x12345678)))", "ffff002800002320002e00000001894f00040105020000000004021010000a041234567800000000"},
		{"encap(ethernet)", "ffff001000002320002e000000000000"},
		{"encap(mpls_mc)", "ffff001000002320002e000000018848"},
		{"decap()", "ffff001000002320002f00000000fffe"},
		{"decap(packet_type(ns=1,type=0x894f))", "ffff001000002320002f00000001894f"},
	} {
		fl, err := ParseFlow("actions="+c.in, mf.OF15)
		if err != nil {
			t.Errorf("ParseFlow(%q): %v", c.in, err)
			continue
		}
		if len(fl.Actions) != 1 || hex.EncodeToString(fl.Actions[0].Data()) != c.hex {
			t.Errorf("ParseFlow(%q) actions %+v, want wire %s", c.in, fl.Actions, c.hex)
		}
		if got := FormatActions(fl.Actions, mf.OF15); got != c.in {
			t.Errorf("FormatActions(ParseFlow(%q)) = %q", c.in, got)
		}
	}
	if _, err := ParseFlow("actions=encap(bogus)", mf.OF15); err == nil || err.Error() != "Encap hdr not supported: " {
		t.Errorf("encap(bogus): error %v, want ovs-ofctl's \"Encap hdr not supported: \"", err)
	}
}

func TestParseFlowBuildsTypedFlowMod(t *testing.T) {
	fl, err := ParseFlow("table=14,priority=1,cookie=0xab,idle_timeout=3,hard_timeout=4,importance=7,send_flow_rem,check_overlap,"+
		"ip,reg0=0x1/0x1,metadata=0x1 actions=ct(commit,table=15,zone=NXM_NX_REG13[0..15]),load:0x1->reg10[3],resubmit(,20)", mf.OF10)
	if err != nil {
		t.Fatal(err)
	}
	if fl.Table != 14 || fl.Priority != 1 || fl.Cookie != 0xab || fl.IdleTimeout != 3 || fl.HardTimeout != 4 ||
		fl.Importance != 7 || fl.Flags != FlagSendFlowRem|FlagCheckOverlap {
		t.Errorf("header = %+v", fl)
	}
	if fl.Match.Flow.Regs[0] != 1 || fl.Match.Mask.Regs[0] != 1 || fl.Match.Flow.Metadata != 1 || fl.Match.Mask.Metadata != ^uint64(0) {
		t.Errorf("match regs/metadata = %#x/%#x %#x/%#x", fl.Match.Flow.Regs[0], fl.Match.Mask.Regs[0], fl.Match.Flow.Metadata, fl.Match.Mask.Metadata)
	}
	if len(fl.Actions) != 3 {
		t.Fatalf("actions = %+v", fl.Actions)
	}
	ct := fl.Actions[0]
	if ct.Type != ofp.ActCT || ct.CT().Flags != 1 || ct.CT().Table != 15 || ct.CT().ZoneSrc.Field != mf.ByID(mf.IDReg0+13) ||
		ct.CT().ZoneSrc.Ofs != 0 || ct.CT().ZoneSrc.NBits != 16 {
		t.Errorf("ct = %+v %+v", ct, ct.CT())
	}
	ld := fl.Actions[1]
	if ld.Type != ofp.ActLoad || ld.Dst.Field != mf.ByID(mf.IDReg0+10) || ld.Dst.Ofs != 3 || ld.Dst.NBits != 1 || getUint(ld.Value) != 1 {
		t.Errorf("load = %+v", ld)
	}
	if rs := fl.Actions[2]; rs.Type != ofp.ActResubmit || rs.Table != 20 || rs.Port != portInPort {
		t.Errorf("resubmit = %+v", rs)
	}
}

func TestLoadBecomesMaskedSetFieldInOpenFlow15(t *testing.T) {
	fl, err := ParseFlow("actions=load:0x5->NXM_NX_REG0[4..11]", mf.OF15)
	if err != nil {
		t.Fatal(err)
	}
	a := fl.Actions[0]
	if len(fl.Actions) != 1 || a.Type != ofp.ActSetField || a.Raw != ofp.RawActOFPAT15_SET_FIELD || a.Field.Name != "reg0" ||
		getUint(a.Value) != 0x50 || getUint(a.Mask) != 0xff0 {
		t.Fatalf("action = %+v", a)
	}
	if got, want := FormatActions(fl.Actions, mf.OF15), "set_field:0x50/0xff0->reg0"; got != want {
		t.Errorf("FormatActions = %q, want %q", got, want)
	}
}

func TestFormatFlowPrintsDumpFlowsNoStatsLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"priority=100,ip,ct_state=+trk+new,in_port=1 actions=ct(zone=5,table=1)",
			"priority=100,ct_state=+new+trk,ip,in_port=1 actions=ct(table=1,zone=5)"},
		{"table=3,cookie=0x5,priority=7,reg0=0x5/0xff actions=resubmit(,4)",
			"cookie=0x5, table=3, priority=7,reg0=0x5/0xff actions=resubmit(,4)"},
		{"actions=drop", "actions=drop"},
	} {
		fl, err := ParseFlow(c.in, mf.OF15)
		if err != nil {
			t.Fatal(err)
		}
		if got := FormatFlow(fl); got != c.want {
			t.Errorf("FormatFlow(%q)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

const ovnFlow = "table=44,priority=2002,ct_state=+new-est+trk,ct_label=0/0x1,udp,reg15=0x2,metadata=0x1,tp_dst=53 " +
	"actions=load:0x1->NXM_NX_XXREG0[97],ct(commit,zone=NXM_NX_REG13[0..15],exec(load:0->NXM_NX_CT_LABEL[0])),resubmit(,45)"

func BenchmarkParseFlowOVN(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseFlow(ovnFlow, mf.OF15); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFormatFlowOVN(b *testing.B) {
	fl, err := ParseFlow(ovnFlow, mf.OF15)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = FormatFlow(fl)
	}
}

func TestModTpResolvesToTheMatchTransport(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"udp,actions=mod_tp_dst:80,mod_dl_src:00:00:00:00:00:01", "udp actions=set_field:80->udp_dst,set_field:00:00:00:00:00:01->eth_src"},
		{"sctp,actions=mod_tp_src:9", "sctp actions=set_field:9->sctp_src"},
		{"tcp,actions=mod_tp_src:9", "tcp actions=set_field:9->tcp_src"},
	} {
		fl, err := ParseFlow(c.in, mf.OF15)
		if err != nil {
			t.Fatalf("ParseFlow(%q): %v", c.in, err)
		}
		if got := FormatFlowMod(fl); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}
