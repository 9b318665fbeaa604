package ofp_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// addActionSeeds adds the actions (or instructions) of every flow mod in
// the action corpus and the message captures.
func addActionSeeds(f *testing.F, add func(v uint8, inst bool, p []byte)) {
	var msgs [][]byte
	for _, c := range loadActionGolden(f) {
		for _, m := range c.Msg {
			msgs = append(msgs, m)
		}
	}
	for _, c := range readCaptures(f) {
		msgs = append(msgs, c.data)
	}
	for _, b := range msgs {
		m, err := ofp.Decode(b)
		if err != nil {
			continue
		}
		if fm, ok := m.Body.(*ofp.FlowMod); ok {
			add(m.Version, fm.Format == ofp.FormatOXM, fm.Instructions)
		}
	}
}

// FuzzDecodeOfpacts: no input panics; every failure carries an OpenFlow
// error code; what decodes re-encodes (same version) to bytes that decode
// to equal actions and re-encode identically; and it encodes for every
// other version into bytes that decode there.
func FuzzDecodeOfpacts(f *testing.F) {
	addActionSeeds(f, func(v uint8, inst bool, p []byte) { f.Add(v, inst, p) })
	f.Fuzz(func(t *testing.T, v uint8, inst bool, p []byte) {
		v = v%6 + 1
		acts, err := ofp.DecodeOfpacts(p, v, inst)
		if err != nil {
			if ofp.CodeOf(err) == 0 {
				t.Fatalf("error without code: %v", err)
			}
			return
		}
		out, err := ofp.AppendOfpacts(nil, acts, v, inst)
		if err != nil {
			if ofp.CodeOf(err) == 0 {
				t.Fatalf("encode error without code: %v", err)
			}
			return
		}
		acts2, err := ofp.DecodeOfpacts(out, v, inst)
		if err != nil {
			t.Fatalf("re-encoded actions do not decode: %v\nin  %x\nout %x", err, p, out)
		}
		// One round may change form (an OF1.0 set action received in
		// OF1.3 goes out as set_field, as in Open vSwitch); after that,
		// decode and encode are a fixed point.
		out2, err := ofp.AppendOfpacts(nil, acts2, v, inst)
		if err != nil {
			t.Fatalf("decoded actions do not re-encode: %v\nout %x", err, out)
		}
		acts3, err := ofp.DecodeOfpacts(out2, v, inst)
		if err != nil || !reflect.DeepEqual(acts2, acts3) {
			t.Fatalf("actions not stable (%v)\nin   %x\nout  %x\nout2 %x\n2 %+v\n3 %+v", err, p, out, out2, acts2, acts3)
		}
		if out3, err := ofp.AppendOfpacts(nil, acts3, v, inst); err != nil || !bytes.Equal(out2, out3) {
			t.Fatalf("encoding not stable: %v\n2 %x\n3 %x", err, out2, out3)
		}
		if sameForm(acts) && !reflect.DeepEqual(acts, acts2) {
			t.Fatalf("actions changed through encode+decode\nin  %x\nout %x\n1 %+v\n2 %+v", p, out, acts, acts2)
		}
		for w := mf.OF10; w <= mf.OF15; w++ {
			winst := w > mf.OF10
			b, err := ofp.AppendOfpacts(nil, acts, w, winst)
			if err != nil {
				continue // not expressible in w
			}
			// As in Open vSwitch, two encodings do not decode back: OF1.0's
			// resubmit for goto_table after write_metadata (order), and a
			// load into bits the field's OXM value may not hold (nw_tos's
			// ECN bits) sent as set_field.
			if _, err := ofp.DecodeOfpacts(b, w, winst); err != nil && ofp.CodeOf(err) != ofp.OFPBAC_UNSUPPORTED_ORDER &&
				ofp.CodeOf(err) != ofp.OFPBAC_BAD_SET_ARGUMENT {
				t.Fatalf("encoding for version %d does not decode: %v\nin  %x (v%d)\nout %x", w, err, p, v, b)
			}
		}
	})
}

// sameForm reports whether acts keep their kinds through encoding in the
// version they came in: no OpenFlow 1.0 set actions (which OF1.2+ sends as
// set_field) and no enqueue (set_queue,output,pop_queue after OF1.0).
func sameForm(acts []ofp.Action) bool {
	for i := range acts {
		switch acts[i].Type {
		case ofp.ActSetVLANVID, ofp.ActSetVLANPCP, ofp.ActSetDLSrc, ofp.ActSetDLDst, ofp.ActSetNWSrc,
			ofp.ActSetNWDst, ofp.ActSetNWTos, ofp.ActSetNWECN, ofp.ActSetTPSrc, ofp.ActSetTPDst,
			ofp.ActSetMPLSLabel, ofp.ActSetMPLSTC, ofp.ActSetTunnel, ofp.ActEnqueue, ofp.ActSetNWTTL:
			return false
		case ofp.ActClone, ofp.ActWriteActions:
			if !sameForm(acts[i].Nested) {
				return false
			}
		}
	}
	return true
}

// FuzzEncodeActionKinds builds actions of every kind with arbitrary
// scalar arguments and no bodies: encoding never panics, and what encodes
// decodes.
func FuzzEncodeActionKinds(f *testing.F) {
	f.Add(uint8(1), uint8(1), uint64(1), uint32(1))
	f.Add(uint8(40), uint8(6), uint64(0xffff), uint32(0xfff8))
	f.Fuzz(func(t *testing.T, kind, v uint8, arg uint64, port uint32) {
		v = v%6 + 1
		a := ofp.Action{Type: ofp.ActionType(kind % 60), Arg: arg, Port: port, Table: uint8(arg)}
		inst := v > mf.OF10
		b, err := ofp.AppendOfpacts(nil, []ofp.Action{a}, v, inst)
		if err != nil {
			if ofp.CodeOf(err) == 0 {
				t.Fatalf("%s: error without code: %v", a.Type, err)
			}
			return
		}
		if _, err := ofp.DecodeOfpacts(b, v, inst); err != nil && ofp.CodeOf(err) == 0 {
			t.Fatalf("%s: %x: error without code: %v", a.Type, b, err)
		}
	})
}

// BenchmarkOfpactsOVN decodes and re-encodes an OVN-shaped OF1.5 action
// list from the action corpus (ct with zone, nat and exec).
func BenchmarkOfpactsOVN(b *testing.B) {
	var ins []byte
	for _, c := range loadActionGolden(b) {
		if strings.HasPrefix(c.In, "ip,actions=ct(commit,zone=NXM_NX_REG13[0..15],nat(src),exec(") {
			m, err := ofp.Decode(c.Msg["15"])
			if err != nil {
				b.Fatal(err)
			}
			ins = m.Body.(*ofp.FlowMod).Instructions
		}
	}
	if ins == nil {
		b.Fatal("no OVN ct flow in the action corpus")
	}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		acts, err := ofp.DecodeOfpacts(ins, mf.OF15, true)
		if err != nil {
			b.Fatal(err)
		}
		if buf, err = ofp.AppendOfpacts(buf[:0], acts, mf.OF15, true); err != nil {
			b.Fatal(err)
		}
	}
	if !bytes.Equal(buf, ins) {
		b.Fatalf("round trip differs\n got %x\nwant %x", buf, ins)
	}
}
