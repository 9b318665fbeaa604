package ofp

import (
	"encoding/binary"
	"encoding/hex"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// For every raw type and version in the table, ovs-ofctl's message-header
// check accepts a message of the table's minimum length (and one variable
// unit more) as that type, and rejects one 8 bytes shorter as of incorrect
// length: the table's numbers and length rules are Open vSwitch's.
func TestRawTableAgreesWithOVSOfctl(t *testing.T) {
	ofctl := nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	var batch []string
	type probe struct {
		raw     Raw
		v       uint8
		n       int
		wantBad bool
	}
	var probes []probe
	for r := Raw(1); r < numRaws; r++ {
		ri := &rawTable[r]
		hi := min(ri.maxVer, 6)
		for v := ri.minVer; v <= hi; v++ {
			hl := headersLen(ri.kind, v)
			sizes := []int{hl + ri.minBody}
			if ri.multiple > 0 {
				sizes = append(sizes, hl+ri.minBody+ri.multiple)
			}
			for _, n := range sizes {
				probes = append(probes, probe{r, v, n, false})
			}
			if ri.minBody >= 8 {
				probes = append(probes, probe{r, v, hl + ri.minBody - 8, true})
			}
		}
	}
	for _, p := range probes {
		b := appendHeaders(nil, p.raw, p.v, 1, 0)
		b = appendZeros(b, p.n-len(b))
		binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
		batch = append(batch, hex.EncodeToString(b))
	}
	// ofp-print takes one message per invocation; run them all.
	for i, p := range probes {
		out, _ := exec.Command(ofctl, "ofp-print", batch[i]).CombinedOutput()
		s := string(out)
		name := rawTable[p.raw].name
		for _, bad := range []string{"OFPBRC_BAD_TYPE", "OFPBRC_BAD_STAT", "OFPBRC_BAD_VENDOR", "OFPBRC_BAD_SUBTYPE", "OFPBRC_BAD_VERSION"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s v%d: ovs-ofctl does not know it: %s", name, p.v, firstLine(s))
			}
		}
		// Only the header-level length check counts: body decoders reject
		// all-zero bodies for their own reasons.
		if gotBad := strings.Contains(s, "with incorrect length"); gotBad != p.wantBad {
			t.Errorf("%s v%d, %d bytes: BAD_LEN=%v, want %v: %s", name, p.v, p.n, gotBad, p.wantBad, firstLine(s))
		}
		// gvs agrees with itself: the same bytes identify as the same raw.
		if raw, _, _, err := identify(mustDecodeHex(batch[i])); (err != nil) != p.wantBad || (err == nil && raw != p.raw) {
			t.Errorf("%s v%d, %d bytes: gvs identifies %s, %v", name, p.v, p.n, raw, err)
		}
	}
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "***") || strings.Contains(l, "WARN") {
			return l
		}
	}
	return strings.SplitN(s, "\n", 2)[0]
}

func mustDecodeHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// Every error in the table, encoded for every version, is printed by
// ovs-ofctl as an error with the same wire encoding (Open vSwitch prints
// the first of several errors that share one), and errors with no
// encoding in a version become NXBRC_UNENCODABLE_ERROR.
func TestErrorTableAgreesWithOVSOfctl(t *testing.T) {
	ofctl := nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	for c := ErrCode(1); c < numErrCodes; c++ {
		for v := uint8(1); v <= 6; v++ {
			msg, err := Encode(nil, v, 1, NewErrorMsg(v, c, nil))
			if err != nil {
				t.Fatal(err)
			}
			out, _ := exec.Command(ofctl, "ofp-print", hex.EncodeToString(msg)).CombinedOutput()
			s := string(out)
			i := strings.Index(s, "): ")
			if i < 0 {
				t.Errorf("%s v%d: %q", c, v, s)
				continue
			}
			name := strings.Fields(s[i+3:])[0]
			want := c
			if _, _, _, ok := c.Encode(v); !ok {
				want = NXBRC_UNENCODABLE_ERROR
			}
			got := ErrCodeByName(name)
			gv, gt, gc, _ := got.Encode(v)
			wv, wt, wc, _ := want.Encode(v)
			if got == 0 || gv != wv || gt != wt || gc != wc {
				t.Errorf("%s v%d: ovs-ofctl prints %s", c, v, name)
			}
		}
	}
}

// flowModWithActions builds an add-all flow mod for version v (not OF1.1)
// carrying the given action list.
func flowModWithActions(v uint8, acts []byte) []byte {
	var b []byte
	if v == 1 {
		b = append(b, 1, 14, 0, 0, 0, 0, 0, 1)
		b = binary.BigEndian.AppendUint32(b, ofpfw10All)
		b = appendZeros(b, 36)
		b = appendZeros(b, 8+2+2+2)                                      // cookie, command, idle, hard
		b = append(b, 0x80, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0) // priority, buffer, out_port, flags
		b = append(b, acts...)
	} else {
		b = append(b, v, 14, 0, 0, 0, 0, 0, 1)
		b = appendZeros(b, 16+1+1+2+2)
		b = append(b, 0x80, 0)
		b = append(b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0)
		b = append(b, 0, 1, 0, 4, 0, 0, 0, 0) // empty OXM match
		b = binary.BigEndian.AppendUint16(b, InstApplyActions)
		b = binary.BigEndian.AppendUint16(b, uint16(8+len(acts)))
		b = append(b, 0, 0, 0, 0)
		b = append(b, acts...)
	}
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	return b
}

// For every action encoding in the table and every version it exists in
// (OF1.1 aside), ovs-ofctl knows the action and accepts its minimum length
// (and 8 bytes more for variable actions) and rejects 8 bytes less; gvs's
// decoder agrees on the length verdicts.
func TestActionTableAgreesWithOVSOfctl(t *testing.T) {
	ofctl := nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	// Open vSwitch's log names an action without the version digits.
	ovsName := regexp.MustCompile(`^(OFPAT|NXAST|ONFACT)\d*_`)
	rangeMsg := regexp.MustCompile(`OpenFlow action (\S+) length \d+ not in valid range`)
	for i := range actionInstances {
		in := &actionInstances[i]
		if in.raw == RawActNXAST_SAMPLE4 {
			continue // newer than the Open vSwitch 3.1 this test runs against
		}
		name := ovsName.ReplaceAllString(in.raw.String(), "${1}_")
		for v := in.minVer; v <= in.maxVer; v++ {
			if v == 2 {
				continue // OF1.1 needs the fixed ofp11_match; not built here
			}
			lens := []int{in.minLen}
			if in.maxLen > in.minLen {
				lens = append(lens, in.minLen+8)
			}
			hdr := actHeaderLen
			if in.vendor != 0 {
				hdr = extHeaderLen
			}
			if in.minLen-8 >= hdr {
				lens = append(lens, in.minLen-8)
			}
			for _, n := range lens {
				act := make([]byte, n)
				binary.BigEndian.PutUint16(act[2:], uint16(n))
				if in.vendor == 0 {
					binary.BigEndian.PutUint16(act, in.code)
				} else {
					binary.BigEndian.PutUint16(act, ofpatVendor)
					binary.BigEndian.PutUint32(act[4:], in.vendor)
					binary.BigEndian.PutUint16(act[8:], in.code)
				}
				out, _ := exec.Command(ofctl, "ofp-print", hex.EncodeToString(flowModWithActions(v, act))).CombinedOutput()
				s := string(out)
				if strings.Contains(s, "unknown OpenFlow") || strings.Contains(s, "action for vendor") {
					t.Errorf("%s v%d: ovs-ofctl does not know it: %s", in.raw, v, firstLine(s))
				}
				wantBad := n < in.minLen
				// Only this action's own length verdict counts (zero bytes
				// after ct or clone parse as a nested action).
				m := rangeMsg.FindStringSubmatch(s)
				if gotBad := m != nil && m[1] == name; gotBad != wantBad {
					t.Errorf("%s v%d, %d bytes: length rejected=%v, want %v: %s", in.raw, v, n, gotBad, wantBad, firstLine(s))
				}
				_, err := DecodeActions(act, v)
				var own bool
				if wantBad {
					own = CodeOf(err) == OFPBAC_BAD_LEN
				} else {
					own = err == nil || !strings.HasPrefix(err.Error(), "action at offset 0:")
				}
				if !own {
					t.Errorf("%s v%d, %d bytes: gvs says %v", in.raw, v, n, err)
				}
			}
		}
	}
}
