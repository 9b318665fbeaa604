package ofswitch

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Table features are described as Open vSwitch describes its tables:
// every table matches every field, masks the maskable ones, sets the
// writable ones and runs the same actions; the last table has no
// goto_table.

// OpenFlow 1.1+ action types a table supports (OFPAT_*), in wire order:
// output, set_mpls_ttl, dec_mpls_ttl, push_vlan, pop_vlan, push_mpls,
// pop_mpls, set_queue, group, set_nw_ttl, dec_nw_ttl, set_field.
var tableActionTypes = []uint16{0, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}

// Instruction types: goto_table, write_metadata, write_actions,
// apply_actions, clear_actions, and meter before OpenFlow 1.5.
var tableInstructions = []uint16{ofp.InstGotoTable, ofp.InstWriteMetadata, ofp.InstWriteActions, ofp.InstApplyActions, ofp.InstClearActions}

func appendTypeList(types []uint16) []byte {
	var b []byte
	for _, t := range types {
		b = binary.BigEndian.AppendUint16(b, t)
		b = binary.BigEndian.AppendUint16(b, 4)
	}
	return b
}

// appendOXMHeaders lists the fields (with their headers for version v)
// that keep(f) selects; with masked, maskable fields get the has-mask
// header (that is how a match property says "arbitrary mask").
func appendOXMHeaders(v uint8, masked bool, keep func(f *mf.Field) bool) []byte {
	var b []byte
	fields := mf.Std.Fields()
	for i := range fields {
		f := &fields[i]
		if !keep(f) {
			continue
		}
		h, ok := f.HeaderFor(v)
		if !ok {
			continue
		}
		n := f.Bytes
		hm := uint32(0)
		if masked && f.Maskable {
			n, hm = 2*n, 1<<8
		}
		if h.IsExperimenter() {
			n += 4
		}
		b = binary.BigEndian.AppendUint32(b, uint32(h.Class)<<16|uint32(h.Field)<<9|hm|uint32(n))
		if h.IsExperimenter() {
			b = binary.BigEndian.AppendUint32(b, h.Experimenter)
		}
	}
	return b
}

// tableFeatures describes every table for version v.
func tableFeatures(v uint8) []ofp.TableFeatures {
	match := appendOXMHeaders(v, true, func(*mf.Field) bool { return true })
	wild := appendOXMHeaders(v, false, func(f *mf.Field) bool { return true })
	set := appendOXMHeaders(v, false, func(f *mf.Field) bool { return f.Writable })
	acts := appendTypeList(tableActionTypes)
	out := make([]ofp.TableFeatures, 0, 254)
	for t := 0; t < 254; t++ {
		ins := tableInstructions
		if t == 253 {
			ins = ins[1:]
		}
		if v < mf.OF15 {
			ins = append(ins[:len(ins):len(ins)], ofp.InstMeter)
		}
		insb := appendTypeList(ins)
		var next []byte
		for n := t + 1; n < 254; n++ {
			next = append(next, byte(n))
		}
		tf := ofp.TableFeatures{TableID: uint8(t), MetadataMatch: ^uint64(0), MetadataWrite: ^uint64(0), MaxEntries: 1000000}
		tf.Props = []ofp.TableFeatureProp{
			{Type: ofp.TFPInstructions, Data: insb}, {Type: ofp.TFPInstructions + 1, Data: insb},
			{Type: ofp.TFPNextTables, Data: next}, {Type: ofp.TFPNextTables + 1, Data: next},
			{Type: ofp.TFPWriteActions, Data: acts}, {Type: ofp.TFPWriteActions + 1, Data: acts},
			{Type: ofp.TFPApplyActions, Data: acts}, {Type: ofp.TFPApplyActions + 1, Data: acts},
			{Type: ofp.TFPMatch, Data: match}, {Type: ofp.TFPWildcards, Data: wild},
			{Type: ofp.TFPWriteSetfield, Data: set}, {Type: ofp.TFPWriteSetfield + 1, Data: set},
			{Type: ofp.TFPApplySetfield, Data: set}, {Type: ofp.TFPApplySetfield + 1, Data: set},
		}
		out = append(out, tf)
	}
	return out
}

func (b *Bridge) tableFeaturesReply(s ofconn.Sender, m *ofp.Msg, req *ofp.TableFeaturesRequest) error {
	if len(req.Tables) > 0 {
		// Changing table features is not supported, as in Open vSwitch
		// 3.1 for anything but names and eviction.
		return &ofp.Error{Code: ofp.OFPTFFC_EPERM}
	}
	return replyMultipart(s, m, &ofp.TableFeaturesReply{Tables: tableFeatures(m.Version)})
}
