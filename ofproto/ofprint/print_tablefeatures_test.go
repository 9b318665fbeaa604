package ofprint

import (
	"bufio"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

func TestAbbreviateNamesFoldsPrefixesAndNumberedRuns(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"eth_src", "eth_dst", "eth_type"}, "eth_{src,dst,type}"},
		{[]string{"reg0", "reg1", "reg2", "reg3"}, "reg0...reg3"},
		{[]string{"reg0", "reg1"}, "reg0 reg1"},
		{[]string{"reg9", "reg10", "reg11", "xreg0"}, "reg9...reg11 xreg0"},
		{[]string{"tun_id", "tun_src", "tun_ipv6_src", "tun_ipv6_dst", "tun_flags"}, "tun_{id,src,ipv6_{src,dst},flags}"},
		{[]string{"nsh_flags", "nsh_c1", "nsh_c2", "nsh_c3", "nsh_c4", "nsh_ttl"}, "nsh_{flags,c1...c4,ttl}"},
		{[]string{"metadata", "in_port", "in_port_oxm", "pkt_mark"}, "metadata in_{port,port_oxm} pkt_mark"},
		{[]string{"dp_hash"}, "dp_hash"},
	} {
		var sb strings.Builder
		abbreviateNames(&sb, c.names, 0)
		if sb.String() != c.want {
			t.Errorf("%v: got %q, want %q", c.names, sb.String(), c.want)
		}
	}
}

// tfTestReply is an OpenFlow 1.3 table features reply for tables 0-3
// that differ only in their next tables and table 3's lack of
// goto_table, with table 2 named.
func tfTestReply(t testing.TB) []byte {
	t.Helper()
	ids := func(types ...uint16) []byte {
		var b []byte
		for _, ty := range types {
			b = binary.BigEndian.AppendUint16(b, ty)
			b = binary.BigEndian.AppendUint16(b, 4)
		}
		return b
	}
	oxm := func(masked bool, names ...string) []byte {
		var b []byte
		for _, n := range names {
			f := mf.ByName(n)
			h, _ := f.HeaderFor(mf.OF13)
			l, m := uint32(f.Bytes), uint32(0)
			if masked && f.Maskable {
				l, m = 2*l, 1<<8
			}
			b = binary.BigEndian.AppendUint32(b, uint32(h.Class)<<16|uint32(h.Field)<<9|m|l)
		}
		return b
	}
	r := &ofp.TableFeaturesReply{}
	for id := 0; id < 4; id++ {
		insts := ids(ofp.InstGotoTable, ofp.InstApplyActions)
		if id == 3 {
			insts = ids(ofp.InstApplyActions)
		}
		var next []byte
		for n := id + 1; n < 4; n++ {
			next = append(next, byte(n))
		}
		acts := ids(0, 25) // output, set_field
		set := oxm(false, "eth_dst", "reg0", "reg1", "reg2")
		tf := ofp.TableFeatures{TableID: uint8(id), MaxEntries: 100, MetadataMatch: 0xff, Props: []ofp.TableFeatureProp{
			{Type: ofp.TFPInstructions, Data: insts}, {Type: ofp.TFPNextTables, Data: next},
			{Type: ofp.TFPWriteActions, Data: acts}, {Type: ofp.TFPApplyActions, Data: acts},
			{Type: ofp.TFPMatch, Data: append(oxm(true, "eth_src", "eth_dst"), oxm(false, "eth_type", "in_port_oxm")...)},
			{Type: ofp.TFPWildcards, Data: oxm(false, "eth_src", "eth_type")},
			{Type: ofp.TFPWriteSetfield, Data: set}, {Type: ofp.TFPApplySetfield, Data: set},
		}}
		if id == 2 {
			tf.Name = "named"
		}
		r.Tables = append(r.Tables, tf)
	}
	b, err := ofp.Encode(nil, mf.OF13, 7, r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The expected text is what ovs-ofctl 3.1's ofp-print prints for
// tfTestReply.
const tfTestReplyText = `OFPST_TABLE_FEATURES reply (OF1.3) (xid=0x7):
  table 0:
    metadata: match=0xff write=0
    max_entries=100
    instructions (table miss and others):
      next tables: 1-3
      instructions: apply_actions goto_table
      Write-Actions and Apply-Actions features:
        actions: output set_field
        supported on Set-Field: reg0...reg2 eth_dst
    matching:
      arbitrary mask: eth_{src,dst}
      exact match or wildcard: eth_type
      must exact match: in_port_oxm

  table 1: ditto

  table 2 ("named"): ditto
  table 3:
    metadata: match=0xff write=0
    max_entries=100
    instructions (table miss and others):
      instructions: apply_actions
      (same actions)
    (same matching)
`

func TestOfpPrintTableFeaturesFoldsEqualTables(t *testing.T) {
	b := tfTestReply(t)
	var out strings.Builder
	w := bufio.NewWriter(&out)
	if err := MessageV(w, b, 1); err != nil { // ofp-print's verbosity
		t.Fatal(err)
	}
	w.Flush()
	if testing.Verbose() {
		t.Logf("hex: %x", b)
	}
	if out.String() != tfTestReplyText {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), tfTestReplyText)
	}
}

func TestOfpPrintTableFeaturesReportsTheFirstBadTable(t *testing.T) {
	b := tfTestReply(t)
	// Table 1's first property claims more bytes than the entry has:
	// table 0 is printed, then the error and the message in hex.
	off := 16
	off += int(binary.BigEndian.Uint16(b[off:]))
	binary.BigEndian.PutUint16(b[off+64+2:], 0x4000)
	var out strings.Builder
	w := bufio.NewWriter(&out)
	if err := MessageV(w, b, 1); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	lines := strings.Split(out.String(), "\n")
	if lines[1] != "  table 0:" || !slices.Contains(lines, "***decode error: OFPBPC_BAD_LEN***") || strings.Contains(out.String(), "table 1") {
		t.Errorf("got:\n%s", out.String())
	}
}

// FuzzOfpPrintTableFeatures prints damaged table features messages: no
// panics (an error is fine).
func FuzzOfpPrintTableFeatures(f *testing.F) {
	b := tfTestReply(f)
	f.Add(b)
	for _, v := range []uint8{mf.OF14, mf.OF15} {
		c := append([]byte(nil), b...)
		c[0] = v
		f.Add(c)
	}
	f.Add(b[:16+64])
	f.Fuzz(func(t *testing.T, msg []byte) {
		msg = append([]byte(nil), msg...)
		if len(msg) >= 4 {
			binary.BigEndian.PutUint16(msg[2:], uint16(len(msg)))
		}
		var out strings.Builder
		w := bufio.NewWriter(&out)
		_ = MessageV(w, msg, 1)
		w.Flush()
	})
}
