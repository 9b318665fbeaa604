package xlate

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Conntrack flags of ofp.CT.Flags (NX_CT_F_*).
const (
	ctCommit = 1 << 0
	ctForce  = 1 << 1
)

// ctNoRecirc is ct()'s table for "no recirculation".
const ctNoRecirc = 255

// Well-known ALG ports, as ct(alg=...) names them.
var algNames = map[uint16]string{21: "ftp", 69: "tftp"}

// conntrack translates ct(): commit pending header changes, emit the
// datapath ct action and, with table=N, freeze the pipeline and
// recirculate so that the next pass resumes at table N with the
// connection's state in the flow.
func conntrack(c *ctx, a *ofp.Action) {
	ct := a.CT()
	if ct == nil {
		return
	}
	zone := ct.ZoneImm
	if ct.ZoneSrc.Field != nil {
		v := c.snap.fieldBytes(ct.ZoneSrc.Field, &c.flow)
		z := make([]byte, 2)
		copyBits(z, 0, v, ct.ZoneSrc.Ofs, min(ct.ZoneSrc.NBits, 16))
		zone = uint16(z[0])<<8 | uint16(z[1])
		c.snap.orField(ct.ZoneSrc.Field, &c.wc, subfieldMask(ct.ZoneSrc.Field.Bytes, ct.ZoneSrc.Ofs, ct.ZoneSrc.NBits))
	}
	c.commit()
	var args []string
	switch {
	case ct.Flags&ctForce != 0:
		args = append(args, "force_commit")
	case ct.Flags&ctCommit != 0:
		args = append(args, "commit")
	}
	if zone != 0 {
		args = append(args, fmt.Sprintf("zone=%d", zone))
	}
	// Every write to ct_mark or ct_label in exec() lands in one value
	// and mask per field, as Open vSwitch composes one mark= and one
	// label= from the flow it ran them on: ovs-ofctl sends a 128-bit
	// set_field:V->ct_label to an OpenFlow 1.0 switch as two 64-bit
	// loads, and a datapath ct action takes one label.
	var mark, label ctWrite
	var nat string
	for i := range ct.Actions {
		a := &ct.Actions[i]
		// Open vSwitch runs the nested actions through its translator,
		// so its trace lists each at the ct action's indent.
		if c.in.Trace != nil {
			c.in.Trace(&TraceEvent{Kind: TraceAction, Indent: c.tr.ind, Action: a})
		}
		switch {
		case a.Type == ofp.ActSetField && a.Field != nil && a.Field.Name == "ct_mark":
			mark.add(a.Value, a.Mask)
		case a.Type == ofp.ActSetField && a.Field != nil && a.Field.Name == "ct_label":
			label.add(a.Value, a.Mask)
		case (a.Type == ofp.ActLoad || a.Type == ofp.ActMove && a.Src.Field != nil) &&
			a.Dst.Field != nil && (a.Dst.Field.Name == "ct_mark" || a.Dst.Field.Name == "ct_label"):
			f := a.Dst.Field
			v := make([]byte, f.Bytes)
			if a.Type == ofp.ActLoad {
				copyBits(v, a.Dst.Ofs, a.Value, 0, a.Dst.NBits)
			} else {
				// move: the source (a register, say) is known now; the
				// megaflow depends on the bits read.
				sf := a.Src.Field
				c.snap.orField(sf, &c.wc, subfieldMask(sf.Bytes, a.Src.Ofs, a.Src.NBits))
				copyBits(v, a.Dst.Ofs, c.snap.fieldBytes(sf, &c.flow), a.Src.Ofs, a.Src.NBits)
			}
			w := &mark
			if f.Name == "ct_label" {
				w = &label
			}
			w.add(v, subfieldMask(f.Bytes, a.Dst.Ofs, a.Dst.NBits))
		default:
			if s, ok := natText(a, c); ok {
				nat = s
			}
		}
	}
	if mark.v != nil {
		args = append(args, "mark="+maskedHex(mark.v, mark.m))
	}
	if label.v != nil {
		// Open vSwitch prints a label's mask only when it is partial
		// (format_u128), a mark's always.
		text := maskedHex(label.v, label.m)
		if isAllOnes(label.m) {
			text = hexOrZero(label.v)
		}
		args = append(args, "label="+text)
	}
	if name := algNames[ct.Alg]; name != "" {
		args = append(args, "helper="+name)
	}
	if nat != "" {
		args = append(args, nat)
	}
	text := "ct"
	if len(args) > 0 {
		text += "(" + strings.Join(args, ",") + ")"
	}
	acts, err := odp.ParseActions(text)
	if err != nil || len(acts) != 1 {
		c.fail(fmt.Errorf("xlate: composing %s: %v", text, err))
		return
	}
	c.emit(acts[0])
	if ct.Table != ctNoRecirc {
		// The pass that resumes at the table sees the connection (and
		// may ct_clear it); this one forks it off and goes on untracked.
		fz := freeze(c.snap.Bridge, ct.Table, &c.flow)
		fz.Conntracked = true
		var err error
		if fz.ActionSet, err = c.aset.encode(); err != nil {
			c.fail(err)
			return
		}
		id := c.x.Recirc.ID(fz)
		c.tr.notef("A clone of the packet is forked to recirculate. The forked pipeline will be resumed at table %d.", ct.Table)
		c.emit(odp.Recirc(id))
		if c.in.Trace != nil {
			// The traced resumption sees the mark and label the nested
			// actions set, as Open vSwitch's, which ran them on the flow.
			fl := c.flow
			if mark.v != nil {
				m, v := binary.BigEndian.Uint32(mark.m), binary.BigEndian.Uint32(mark.v)
				fl.Key.CtMark = fl.Key.CtMark&^m | v&m
			}
			for i := range min(len(label.v), len(fl.Key.CtLabel)) {
				fl.Key.CtLabel[i] = fl.Key.CtLabel[i]&^label.m[i] | label.v[i]&label.m[i]
			}
			c.in.Trace(&TraceEvent{Kind: TraceRecirc, Indent: c.tr.ind, Flow: &fl, RecircID: id, Ct: acts[0].Ct})
		}
	}
	// The connection's state is known only in the recirculated pass: the
	// rest of this one sees an untracked packet (Open vSwitch clears the
	// ct fields and its conntracked flag here, recirculation or not).
	clearCt(&c.flow.Key)
	c.tr.notef("Sets the packet to an untracked state, and clears all the conntrack fields.")
	c.conntracked = false
}

// ctWrite accumulates the writes of exec() to one conntrack field: later
// writes replace the bits they cover.
type ctWrite struct{ v, m []byte }

func (w *ctWrite) add(v, m []byte) {
	if m == nil {
		m = allOnes(len(v))
	}
	if w.v == nil {
		w.v, w.m = make([]byte, len(v)), make([]byte, len(v))
	}
	for i := range min(len(v), len(w.v)) {
		w.v[i] = w.v[i]&^m[i] | v[i]&m[i]
		w.m[i] |= m[i]
	}
}

// clearCt zeroes a flow's conntrack fields.
func clearCt(k *flow.Key) {
	k.CtState, k.CtZone, k.CtMark, k.CtLabel = 0, 0, 0, [16]byte{}
	k.CtNwProto, k.CtNwSrc, k.CtNwDst, k.CtTpSrc, k.CtTpDst = 0, 0, 0, 0, 0
	k.CtIPv6Src, k.CtIPv6Dst = [16]byte{}, [16]byte{}
}

// maskedHex formats a value and its mask as the datapath's ct action
// prints mark= and label=: 0xV/0xM without leading zeros, 0 for zero.
func maskedHex(v, m []byte) string {
	if m == nil {
		m = allOnes(len(v))
	}
	return hexOrZero(v) + "/" + hexOrZero(m)
}

// hexOrZero prints bytes as Open vSwitch's ds_put_hex: 0x and the digits
// without leading zeros, or a bare 0.
func hexOrZero(b []byte) string {
	s := trimHex(hex.EncodeToString(b))
	if s == "0" {
		return s
	}
	return "0x" + s
}

func trimHex(s string) string {
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return "0"
	}
	return s
}

func isAllOnes(b []byte) bool {
	for _, x := range b {
		if x != 0xff {
			return false
		}
	}
	return true
}

// ctClear translates ct_clear: the datapath forgets the connection and the
// pipeline's ct fields become zero.
func ctClear(c *ctx, _ *ofp.Action) {
	if !c.conntracked {
		return // as Open vSwitch: nothing to forget
	}
	// Not committed first: Open vSwitch emits ct_clear where it stands.
	c.emit(odp.CtClear())
	clearCt(&c.flow.Key)
	c.base.CtState = 0
	c.conntracked = false
}
