package ofp_test

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

func mustEncode(t testing.TB, v uint8, xid uint32, m ofp.Message) []byte {
	t.Helper()
	b, err := ofp.Encode(nil, v, xid, m)
	if err != nil {
		t.Fatalf("encode %T: %v", m, err)
	}
	return b
}

// fixLen sets the header length to the message's size.
func fixLen(b []byte) []byte {
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	return b
}

type malformedAsync struct {
	name string
	msg  []byte
	want ofp.ErrCode
	ovs  bool // Open vSwitch, receiving it, answers with the same error
}

// asyncMalformed builds bad messages (by corrupting good encodings) with
// the error Open vSwitch gives each.
func asyncMalformed(t testing.TB) []malformedAsync {
	pkt, _ := hex.DecodeString(asyncPacketHex)
	out2, _ := ofp.AppendActions(nil, []ofp.Action{{Type: ofp.ActOutput, Port: 2}}, 1)
	out2v6, _ := ofp.AppendActions(nil, []ofp.Action{{Type: ofp.ActOutput, Port: 2}}, 6)
	po10 := func() []byte {
		return mustEncode(t, 1, 9, &ofp.PacketOut{BufferID: ofp.BufferNone, InPort: 1, Actions: out2, Data: pkt})
	}
	set := func(b []byte, off int, v ...byte) []byte { copy(b[off:], v); return b }
	var m mf.Match
	m.SetMasked(mf.ByName("eth_type"), []byte{8, 0}, nil)
	m.SetMasked(mf.ByName("in_port"), []byte{0, 1}, nil)
	var noPort mf.Match
	noPort.SetMasked(mf.ByName("reg0"), []byte{0, 0, 0, 1}, nil)
	po15 := func(match mf.Match) []byte {
		b := mustEncode(t, 6, 9, &ofp.PacketOut{BufferID: ofp.BufferNone, InPort: 1, Actions: out2v6, Data: pkt})
		// Re-encode the match without the encoder's in_port.
		mb := ofp.AppendOXMMatch(nil, 6, &match)
		old := int(binary.BigEndian.Uint16(b[16+2:]))
		out := append(append(append([]byte(nil), b[:16]...), mb...), b[16+(old+7)/8*8:]...)
		return fixLen(out)
	}
	fm := mustEncode(t, 5, 9, &ofp.FlowMod{Format: ofp.FormatOXM, Command: ofp.FlowAdd, BufferID: ofp.BufferNone,
		OutPort: ofp.PortAny, OutGroup: ofp.GroupAny})
	badd := func(inner []byte) []byte {
		b := mustEncode(t, 5, 9, &ofp.BundleAdd{BundleID: 1, Flags: ofp.BundleAtomic, Msg: inner})
		return b
	}
	echo := mustEncode(t, 5, 9, &ofp.EchoRequest{})
	tlv := func(cmd uint16, maps ...ofp.TLVMap) []byte {
		return mustEncode(t, 1, 9, &ofp.TLVTableMod{Command: cmd, Mappings: maps})
	}
	async14 := func(props ...byte) []byte {
		return fixLen(append(mustEncode(t, 5, 9, &ofp.AsyncConfig{}), props...))
	}
	resume := mustEncode(t, 4, 9, &ofp.Resume{PacketIn: ofp.PacketIn{BufferID: ofp.BufferNone, TotalLen: 46, Cookie: ^uint64(0),
		Match: asyncMatch(t, "in_port", "0001"), Data: pkt}})
	return []malformedAsync{
		{"packet-out actions length not a multiple of 8", set(po10(), 14, 0, 12), ofp.OFPBRC_BAD_LEN, true},
		{"packet-out actions past the end", set(po10(), 14, 0x10, 0), ofp.OFPBRC_BAD_LEN, true},
		{"packet-out reserved input port", set(po10(), 12, 0xff, 0x05), ofp.OFPBRC_BAD_PORT, true},
		{"of13 packet-out input port in the gap", set(mustEncode(t, 4, 9, &ofp.PacketOut{BufferID: ofp.BufferNone, InPort: 1, Data: pkt}), 12, 0, 0, 0xff, 0x05),
			ofp.OFPBAC_BAD_OUT_PORT, true},
		{"of15 packet-out matching eth_type", po15(m), ofp.OFPBRC_PIPELINE_FIELDS_ONLY, true},
		{"of15 packet-out without in_port", po15(noPort), ofp.OFPBRC_BAD_PORT, true},
		{"of15 packet-out truncated match", fixLen(po15(noPort)[:20]), ofp.OFPBMC_BAD_LEN, true},
		{"bundle add with another xid", badd(withXID(fm, 10)), ofp.OFPBFC_MSG_BAD_XID, true},
		{"bundle add of another version", badd(set(withXID(fm, 9), 0, 4)), ofp.OFPBFC_BAD_VERSION, true},
		{"bundle add inner length past the end", badd(set(withXID(fm, 9), 2, 0x10, 0)), ofp.OFPBFC_MSG_BAD_LEN, true},
		{"bundle add inner shorter than a header", fixLen(badd(withXID(fm, 9))[:16+4]), ofp.OFPBFC_MSG_BAD_LEN, true},
		{"bundle add of an echo request", badd(echo), ofp.OFPBFC_MSG_UNSUP, true},
		{"bundle add of an unknown type", badd(set(append([]byte(nil), echo...), 1, 99)), ofp.OFPBFC_MSG_UNSUP, true},
		{"of13 role request with role 7", set(mustEncode(t, 4, 9, &ofp.RoleRequest{Role: ofp.RoleEqual}), 11, 7), ofp.OFPRRFC_BAD_ROLE, true},
		{"nx role request with role 3", set(mustEncode(t, 1, 9, &ofp.RoleRequest{Nicira: true}), 19, 3), ofp.OFPRRFC_BAD_ROLE, true},
		{"packet-in format 3", set(mustEncode(t, 1, 9, &ofp.SetPacketInFormat{}), 19, 3), ofp.OFPBRC_EPERM, true},
		{"flow format 1", set(mustEncode(t, 1, 9, &ofp.SetFlowFormat{}), 19, 1), ofp.OFPBRC_EPERM, true},
		{"controller id with nonzero padding", set(mustEncode(t, 1, 9, &ofp.SetControllerID{ID: 1}), 16, 1), ofp.NXBRC_MUST_BE_ZERO, true},
		{"ct flush zone with nonzero padding", set(mustEncode(t, 1, 9, &ofp.CTFlushZone{Zone: 1}), 17, 1), ofp.NXBRC_MUST_BE_ZERO, true},
		{"ct flush with nonzero padding", set(mustEncode(t, 1, 9, &ofp.CTFlush{}), 20, 1), ofp.NXBRC_MUST_BE_ZERO, true},
		{"ct flush with a truncated property", fixLen(append(mustEncode(t, 1, 9, &ofp.CTFlush{}), 0, 2, 0, 8, 0, 1, 0, 0)[:28]),
			ofp.OFPBRC_BAD_LEN, false},
		{"ct flush property longer than the message", fixLen(append(mustEncode(t, 1, 9, &ofp.CTFlush{}), 0, 2, 0, 16, 0, 1, 0, 0)),
			ofp.OFPBPC_BAD_LEN, true},
		{"tlv mod command 3", tlv(3), ofp.NXTTMFC_BAD_COMMAND, true},
		{"tlv mod option length 5", tlv(ofp.TLVAdd, ofp.TLVMap{OptClass: 1, OptLen: 5}), ofp.NXTTMFC_BAD_OPT_LEN, true},
		{"tlv mod option length 128", tlv(ofp.TLVAdd, ofp.TLVMap{OptClass: 1, OptLen: 128}), ofp.NXTTMFC_BAD_OPT_LEN, true},
		{"tlv mod index 64", tlv(ofp.TLVAdd, ofp.TLVMap{OptClass: 1, OptLen: 4, Index: 64}), ofp.NXTTMFC_BAD_FIELD_IDX, true},
		{"tlv mod partial map", fixLen(tlv(ofp.TLVAdd, ofp.TLVMap{OptClass: 1, OptLen: 4})[:28]), ofp.OFPBRC_BAD_LEN, true},
		{"of14 set async invalid packet-in reason", async14(0, 1, 0, 8, 0, 0, 0, 0x40), ofp.OFPACFC_INVALID, true},
		{"of14 set async invalid table status reason", async14(0, 8, 0, 8, 0, 0, 0, 1), ofp.OFPACFC_INVALID, true},
		{"of14 set async unknown property", async14(0, 20, 0, 8, 0, 0, 0, 1), ofp.OFPACFC_UNSUPPORTED, true},
		{"of14 set async property of 12 bytes", async14(0, 1, 0, 12, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0), ofp.OFPBPC_BAD_LEN, true},
		{"of14 set async property shorter than its header", async14(0, 1, 0, 2, 0, 0, 0, 1), ofp.OFPBPC_BAD_LEN, true},
		{"of14 set async experimenter 0", async14(0xff, 0xff, 0, 16, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1), ofp.OFPBPC_BAD_EXPERIMENTER, true},
		{"of14 set async unknown experimenter property", async14(0xff, 0xff, 0, 16, 0, 0, 0x23, 0x20, 0, 0, 0, 1, 0, 0, 0, 1),
			ofp.OFPBPC_BAD_EXP_TYPE, true},
		{"resume with an unknown property", fixLen(append(append([]byte(nil), resume...), 0, 99, 0, 4, 0, 0, 0, 0)), ofp.OFPBPC_BAD_TYPE, true},
		{"resume without a packet", fixLen(append(append([]byte(nil), resume[:16]...), resume[16+56:]...)),
			ofp.OFPBRC_BAD_LEN, true},
		{"resume full length below the packet's", fixLen(append(append([]byte(nil), resume...), 0, 1, 0, 8, 0, 0, 0, 1)), ofp.OFPBRC_BAD_LEN, true},
		{"resume with a metadata prerequisite missing", resumeWithMetadata(t, resume, "00000e04 0a000001"), ofp.OFPBMC_BAD_PREREQ, true},
		{"packet-in2 without padding", fixLen(mustEncode(t, 4, 9, &ofp.PacketIn{Format: ofp.PacketIn2, Data: pkt, TotalLen: 46, Cookie: ^uint64(0)})[:16+52]),
			ofp.OFPBRC_BAD_LEN, false},
		{"nxt flow removed with trailing bytes", fixLen(append(mustEncode(t, 1, 9, &ofp.FlowRemoved{Format: ofp.FormatNXM}), 0, 0, 0, 0, 0, 0, 0, 0)),
			ofp.OFPBRC_BAD_LEN, false},
		{"of15 flow removed without stats", fixLen(mustEncode(t, 6, 9, &ofp.FlowRemoved{Format: ofp.FormatOXM})[:8+16+8]), ofp.OFPBMC_BAD_LEN, false},
		{"of11 packet-in input port in the gap", set(mustEncode(t, 2, 9, &ofp.PacketIn{BufferID: ofp.BufferNone, Data: pkt}), 12, 0, 1, 0, 0),
			ofp.OFPBAC_BAD_OUT_PORT, false},
		{"of13 packet-in missing the pad after the match", fixLen(mustEncode(t, 4, 9, &ofp.PacketIn{BufferID: ofp.BufferNone})[:8+16+8]),
			ofp.OFPBRC_BAD_LEN, false},
	}
}

// resumeWithMetadata replaces the resume's metadata property (the fourth)
// by one holding the given OXM bytes.
func resumeWithMetadata(t testing.TB, resume []byte, oxm string) []byte {
	h, err := hex.DecodeString(stripSpaces(oxm))
	if err != nil {
		t.Fatal(err)
	}
	b := append([]byte(nil), resume[:16]...)
	for off := 16; off < len(resume); {
		typ, n := binary.BigEndian.Uint16(resume[off:]), int(binary.BigEndian.Uint16(resume[off+2:]))
		p := (n + 7) / 8 * 8
		if typ == 6 {
			prop := append([]byte{0, 6, 0, byte(4 + len(h))}, h...)
			for len(prop)%8 != 0 {
				prop = append(prop, 0)
			}
			b = append(b, prop...)
		} else {
			b = append(b, resume[off:off+p]...)
		}
		off += p
	}
	return fixLen(b)
}

func stripSpaces(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			out = append(out, s[i])
		}
	}
	return string(out)
}

func TestMalformedAsyncMessagesDecodeToOVSErrors(t *testing.T) {
	for _, tc := range asyncMalformed(t) {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ofp.Decode(tc.msg)
			if got := ofp.CodeOf(err); got != tc.want {
				t.Fatalf("%x: error %v (code %s), want %s", tc.msg, err, got, tc.want)
			}
			var oe *ofp.Error
			if !errors.As(err, &oe) || oe.Unwrap() == nil {
				t.Errorf("error %v does not wrap a cause", err)
			}
		})
	}
}

// Open vSwitch answers each malformed message it can receive with the
// error gvs's decoder returns.
func TestMalformedAsyncMessagesGetTheSameErrorFromOVS(t *testing.T) {
	e := startOVSForeground(t)
	for _, tc := range asyncMalformed(t) {
		if !tc.ovs {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			v := tc.msg[0]
			codes := sendToOVS(t, e.mgmt, v, tc.msg)
			want := ofp.NewErrorMsg(v, tc.want, nil).ErrCode(v)
			if len(codes) != 1 || codes[0] != want {
				t.Errorf("Open vSwitch answered %v, want [%s]", codes, want)
			}
		})
	}
}
