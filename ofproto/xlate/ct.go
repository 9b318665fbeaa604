package xlate

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/mf"
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
func (c *ctx) conntrack(ct *ofp.CT) {
	if ct == nil {
		return
	}
	zone := ct.ZoneImm
	if ct.ZoneSrc.Field != nil {
		v := fieldBytes(ct.ZoneSrc.Field, &c.flow)
		z := make([]byte, 2)
		copyBits(z, 0, v, ct.ZoneSrc.Ofs, min(ct.ZoneSrc.NBits, 16))
		zone = uint16(z[0])<<8 | uint16(z[1])
		orField(ct.ZoneSrc.Field, &c.wc, subfieldMask(ct.ZoneSrc.Field.Bytes, ct.ZoneSrc.Ofs, ct.ZoneSrc.NBits))
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
	var nat string
	for i := range ct.Actions {
		a := &ct.Actions[i]
		switch {
		case a.Type == ofp.ActSetField && a.Field != nil && a.Field.Name == "ct_mark":
			args = append(args, "mark="+maskedHex(a.Value, a.Mask))
		case a.Type == ofp.ActSetField && a.Field != nil && a.Field.Name == "ct_label":
			args = append(args, "label="+maskedHex(a.Value, a.Mask))
		case a.Type == ofp.ActLoad && a.Dst.Field != nil && (a.Dst.Field.Name == "ct_mark" || a.Dst.Field.Name == "ct_label"):
			f := a.Dst.Field
			v := make([]byte, f.Bytes)
			copyBits(v, a.Dst.Ofs, a.Value, 0, a.Dst.NBits)
			key := strings.TrimPrefix(f.Name, "ct_")
			args = append(args, key+"="+maskedHex(v, subfieldMask(f.Bytes, a.Dst.Ofs, a.Dst.NBits)))
		default:
			if s, ok := natText(a, c); ok {
				nat = s
			}
		}
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
	c.conntracked = true
	// The connection's state is known only after the datapath runs ct:
	// the rest of this pass must not rely on the old ct fields.
	if ct.Table != ctNoRecirc {
		fz := freeze(c.snap.Bridge, ct.Table, &c.flow)
		fz.Conntracked = true
		id := c.x.Recirc.ID(fz)
		c.trace("recirc(%#x): resume at table %d", id, ct.Table)
		c.emit(odp.Recirc(id))
	}
}

// maskedHex formats a value and its mask as the datapath's ct action
// prints mark= and label=: always 0xV/0xM, without leading zeros.
func maskedHex(v, m []byte) string {
	if m == nil {
		m = allOnes(len(v))
	}
	return "0x" + trimHex(hex.EncodeToString(v)) + "/0x" + trimHex(hex.EncodeToString(m))
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
func (c *ctx) ctClear() {
	if !c.conntracked {
		return // as Open vSwitch: nothing to forget
	}
	c.commit()
	c.emit(odp.CtClear())
	k := &c.flow.Key
	k.CtState, k.CtZone, k.CtMark, k.CtLabel = 0, 0, 0, [16]byte{}
	k.CtNwProto, k.CtNwSrc, k.CtNwDst, k.CtTpSrc, k.CtTpDst = 0, 0, 0, 0, 0
	k.CtIPv6Src, k.CtIPv6Dst = [16]byte{}, [16]byte{}
	c.base.CtState = 0
	_ = flow.CsTracked
	_ = mf.NumRegs
}
