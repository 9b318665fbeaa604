package ofp

import (
	"encoding/binary"
	"encoding/hex"
	"os/exec"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// flowModWithInstructions is an OF1.1+ flow mod with an empty match and
// the given instruction bytes.
func flowModWithInstructions(v uint8, insts []byte) []byte {
	var b []byte
	b = append(b, v, 14, 0, 0, 0, 0, 0, 1)
	b = appendZeros(b, 16+1+1+2+2)
	b = append(b, 0x80, 0)
	b = append(b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0)
	b = append(b, 0, 1, 0, 4, 0, 0, 0, 0)
	b = append(b, insts...)
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	return b
}

func hx(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// badActions are malformed action lists (inst: instruction lists) with
// the error Open vSwitch decodes them to.
var badActions = []struct {
	name string
	v    uint8
	inst bool
	hex  string
	want ErrCode
}{
	{"of10 output to a port between max and in_port", 1, false, "0000 0008 ff00 0000", OFPBAC_BAD_OUT_PORT},
	{"of13 output to a 32-bit port outside the ranges", 4, false, "0000 0010 0000ff00 0000 000000000000", OFPBAC_BAD_OUT_PORT},
	{"of10 vlan vid beyond 12 bits", 1, false, "0001 0008 1000 0000", OFPBAC_BAD_ARGUMENT},
	{"of10 vlan pcp beyond 3 bits", 1, false, "0002 0008 08 000000", OFPBAC_BAD_ARGUMENT},
	{"of10 nw_tos with ECN bits", 1, false, "0008 0008 03 000000", OFPBAC_BAD_ARGUMENT},
	{"of13 push_vlan of IPv4", 4, false, "0011 0008 0800 0000", OFPBAC_BAD_ARGUMENT},
	{"of13 push_mpls of IPv4", 4, false, "0013 0008 0800 0000", OFPBAC_BAD_ARGUMENT},
	{"conjunction of one clause", 1, false, "ffff 0010 00002320 0022 00 01 00000001", NXBAC_BAD_CONJUNCTION},
	{"conjunction clause out of range", 1, false, "ffff 0010 00002320 0022 02 02 00000001", NXBAC_BAD_CONJUNCTION},
	{"conjunction with output", 1, false, "ffff 0010 00002320 0022 00 02 00000001 0000 0008 0001 0000", NXBAC_BAD_CONJUNCTION},
	{"learn into table 255", 1, false, "ffff 0020 00002320 0010 0000 0000 8000 0000000000000000 0000 ff 00 0000 0000", OFPBAC_BAD_ARGUMENT},
	{"learn with unknown flags", 1, false, "ffff 0020 00002320 0010 0000 0000 8000 0000000000000000 0008 01 00 0000 0000", OFPBAC_BAD_ARGUMENT},
	{"learn spec with reserved destination", 1, false, "ffff 0028 00002320 0010 0000 0000 8000 0000000000000000 0000 01 00 0000 0000 1820 00010004 0000", OFPBAC_BAD_ARGUMENT},
	{"learn with trailing garbage", 1, false, "ffff 0028 00002320 0010 0000 0000 8000 0000000000000000 0000 01 00 0000 0000 0000 0000 0000 0001", OFPBAC_BAD_ARGUMENT},
	{"reg_load value wider than the subfield", 1, false, "ffff 0018 00002320 0007 0000 00010004 0000000000000002", OFPBAC_BAD_ARGUMENT},
	{"reg_load beyond the field", 1, false, "ffff 0018 00002320 0007 0787 00010004 0000000000000001", OFPBAC_BAD_SET_LEN},
	{"multipath with unknown algorithm", 1, false, "ffff 0020 00002320 000a 0000 0032 0000 0009 0000 00000000 0000 0001 00010004", OFPBAC_BAD_ARGUMENT},
	{"sample of probability 0", 1, false, "ffff 0018 00002320 001d 0000 00000001 00000002 00000003", OFPBAC_BAD_ARGUMENT},
	{"of13 set_field with a mask", 4, false, "0019 0010 80001908 0a000000 ffffff00", OFPBAC_BAD_SET_MASK},
	{"of13 set_field with value bits outside its mask", 6, false, "0019 0010 80001908 0a000001 ffffff00", OFPBMC_BAD_WILDCARDS},
	{"of13 set_field of a read-only field", 4, false, "0019 0010 80000a02 0800 000000000000", OFPBAC_BAD_SET_ARGUMENT},
	{"of13 set_field of an unknown field", 4, false, "0019 0010 80006404 00000000 00000000", OFPBAC_BAD_SET_LEN},
	{"of13 set_field vlan_vid without present bit", 4, false, "0019 0010 80000c02 000a 000000000000", OFPBAC_BAD_SET_ARGUMENT},
	{"of13 set_field of ct_mark outside ct", 4, false, "0019 0010 0001d604 00000001 00000000", OFPBAC_BAD_SET_ARGUMENT},
	{"dec_ttl_cnt_ids with more ids than bytes", 1, false, "ffff 0010 00002320 0015 0004 00000000", OFPBAC_BAD_LEN},
	{"ct with nat of both src and dst", 1, false, "ffff 0028 00002320 0023 0000 00000000 0000 ff 000000 0000 ffff 0010 00002320 0024 0000 0003 0000", OFPBAC_BAD_ARGUMENT},
	{"ct with output inside", 1, false, "ffff 0020 00002320 0023 0000 00000000 0000 ff 000000 0000 0000 0008 0001 0000", OFPBAC_BAD_ARGUMENT},
	{"bundle with a member type other than in_port", 1, false, "ffff 0028 00002320 000c 0001 0000 0000 00000003 0001 0000 00000000 00000000 0001 000000000000", OFPBAC_BAD_ARGUMENT},
	{"of13 duplicate apply_actions", 4, true, "0004 0008 00000000 0004 0008 00000000", OFPBIC_DUP_INST},
	{"of13 unknown instruction", 4, true, "0007 0008 00000000", OFPBIC_UNKNOWN_INST},
	{"of13 experimenter instruction", 4, true, "ffff 0008 00002320", OFPBIC_BAD_EXPERIMENTER},
	{"of13 goto_table of 16 bytes", 4, true, "0001 0010 01000000 0000000000000000", OFPBIC_BAD_LEN},
	{"of13 write_metadata of 16 bytes", 4, true, "0002 0010 00000000 0000000000000001", OFPBIC_BAD_LEN},
	{"of13 write_actions with an action that is an instruction", 4, true, "0003 0028 00000000 ffff 0020 00002320 0016 000000000000 0000000000000001 ffffffffffffffff", OFPBAC_BAD_TYPE},
	{"of13 write_actions with note", 4, true, "0003 0018 00000000 ffff 0010 00002320 0008 0102 00000000", OFPBAC_BAD_TYPE},
	{"of13 write_actions with learn", 4, true, "0003 0028 00000000 ffff 0020 00002320 0010 0000 0000 8000 0000000000000000 0000 01 00 0000 0000", OFPBAC_BAD_TYPE},
}

func TestMalformedActionsDecodeToOVSErrors(t *testing.T) {
	for _, c := range badActions {
		_, err := DecodeOfpacts(hx(c.hex), c.v, c.inst)
		if got := CodeOf(err); got != c.want {
			t.Errorf("%s: error %v (%s), want %s", c.name, err, got, c.want)
		}
	}
}

// The expected errors are what ovs-ofctl ofp-print reports for the same
// actions in a flow mod.
func TestMalformedActionErrorsAreOVSOfctls(t *testing.T) {
	ofctl := nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	for _, c := range badActions {
		msg := flowModWithActions(c.v, hx(c.hex))
		if c.inst {
			msg = flowModWithInstructions(c.v, hx(c.hex))
		}
		out, _ := exec.Command(ofctl, "ofp-print", hex.EncodeToString(msg)).CombinedOutput()
		if !strings.Contains(string(out), "decode error: "+c.want.String()+"***") {
			t.Errorf("%s: ovs-ofctl says %s", c.name, strings.TrimSpace(string(out)))
		}
	}
}
