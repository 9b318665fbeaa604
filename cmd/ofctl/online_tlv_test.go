package ofctl

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// runTLVCommand runs one of tlvCommands' rows as Run would (argument
// counts, -O, error printing and exit status), so the handlers are tested
// whether or not the command table lists them yet.
func runTLVCommand(args ...string) result {
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, names: -1, packetInFormat: -1, timeout: 10 * time.Second}
	fail := func(format string, a ...any) result {
		fmt.Fprintf(&errb, progName+": "+format+"\n", a...)
		return result{out.String(), errb.String(), 1}
	}
	if len(args) > 1 && args[0] == "-O" {
		vs, err := parseProtocols(args[1])
		if err != nil {
			return fail("%v", err)
		}
		e.versions, args = vs, args[2:]
	}
	for _, c := range tlvCommands() {
		if c.name != args[0] {
			continue
		}
		switch n := len(args) - 1; {
		case n < c.min:
			return fail("'%s' command requires at least %d arguments", c.name, c.min)
		case n > c.max:
			return fail("'%s' command takes at most %d arguments", c.name, c.max)
		}
		if err := c.run(e, args[1:]); err != nil {
			if err == errSilent {
				return result{out.String(), errb.String(), 1}
			}
			return fail("%v", err)
		}
		return result{out.String(), errb.String(), 0}
	}
	return fail("unknown command '%s'; use --help for help", args[0])
}

// TestTLVMapCommandsSendWhatOVSOfctlSends runs add-tlv-map and
// del-tlv-map with ovs-ofctl and with gvs-ofctl against a recording
// switch: the same messages on the wire (flow format switch on OpenFlow
// 1.0, transaction ids, the mod, the barrier), the same output, errors
// and exit status.
func TestTLVMapCommandsSendWhatOVSOfctlSends(t *testing.T) {
	bin := ovsOfctl(t)
	sw := startRecordingSwitch(t)
	for _, args := range [][]string{
		{"add-tlv-map", "SW", "{class=0xffff,type=0,len=4}->tun_metadata0,{class=0x0102,type=0x80,len=8}->tun_metadata5"},
		{"-O", "OpenFlow13", "add-tlv-map", "SW", "{class=1,type=2,len=124}->tun_metadata63"},
		{"-O", "OpenFlow15", "add-tlv-map", "SW", ""},
		{"-O", "OpenFlow10,OpenFlow14", "add-tlv-map", "SW", "{class= 010,type=-1,len=5}->tun_metadata70000"},
		{"del-tlv-map", "SW", "{class=0xffff,type=0,len=4}->tun_metadata0"},
		{"del-tlv-map", "SW"},
		{"-O", "OpenFlow12", "del-tlv-map", "SW"},
		{"-O", "OpenFlow11", "add-tlv-map", "SW", "{class=0xffff,type=0,len=4}->tun_metadata0"},
		{"add-tlv-map", "SW", "{class=0xffff,type=0,len=4}->tun_metadata0,"},
		{"add-tlv-map", "SW", "bogus"},
		{"del-tlv-map", "SW", "{class=1}"},
		{"add-tlv-map", "SW"},
		{"del-tlv-map", "SW", "", "x"},
		{"add-tlv-map", "/nonexistent/sock", "bogus"},
	} {
		for i, a := range args {
			if a == "SW" {
				args[i] = sw.path
			}
		}
		want := runOVS(t, bin, "", append([]string{"--timeout=10"}, args...)...)
		wantWire := sw.take(t)
		got := runTLVCommand(args...)
		gotWire := sw.take(t)
		if got != want || gotWire != wantWire {
			t.Errorf("%q:\n gvs-ofctl %+v\n%s\novs-ofctl %+v\n%s", args, got, gotWire, want, wantWire)
		}
	}
}

// TestTLVCommandRowsAreOVSOfctls checks the rows the lead appends to the
// command table: names, synopses, help and argument counts of ovs-ofctl
// 3.1's --help and all_commands.
func TestTLVCommandRowsAreOVSOfctls(t *testing.T) {
	var got []string
	for _, c := range tlvCommands() {
		got = append(got, fmt.Sprintf("%s %s|%s|%d-%d|%v", c.name, c.args, c.help, c.min, c.max, c.online))
	}
	want := []string{
		"add-tlv-map SWITCH MAP|add TLV option MAPpings|2-2|true",
		"del-tlv-map SWITCH [MAP]|delete TLV option MAPpings|1-2|true",
		"dump-tlv-map SWITCH|print TLV option mappings|1-1|true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOfpPrintTLVMessagesMatchesOVSOfctl prints TLV table mods (each
// command, and ones a switch refuses to decode, quoted in an error
// reply), requests and replies with gvs-ofctl and ovs-ofctl ofp-print.
func TestOfpPrintTLVMessagesMatchesOVSOfctl(t *testing.T) {
	bin := ovsOfctl(t)
	const maps = "ffff000400000000 0102800800050000"
	for _, h := range []string{
		"01040028000000040000232000000018 0000000000000000 " + maps,
		"04040028000000040000232000000018 0001000000000000 " + maps,
		"01040028000000040000232000000018 0002000000000000 " + maps,
		"01040018000000040000232000000018 0000000000000000",
		"01040010000000040000232000000019",
		"04040010000000040000232000000019",
		"0104003000000004000023200000001a 00000100 0040 00000000000000000000 " + maps,
		"0604002000000004000023200000001a 00000100 0040 00000000000000000000",
		errorReply(t, 1, ofp.NXTTMFC_BAD_OPT_LEN, "01040020000000040000232000000018 0000000000000000 fffe000500020000"),
		errorReply(t, 4, ofp.NXTTMFC_BAD_FIELD_IDX, "04040020000000040000232000000018 0000000000000000 fffe000400400000"),
		errorReply(t, 1, ofp.NXTTMFC_ALREADY_MAPPED, "01040020000000040000232000000018 0000000000000000 ffff000400000000"),
		errorReply(t, 6, ofp.NXTTMFC_TABLE_FULL, "06040020000000040000232000000018 0000000000000000 ffff007c00000000"),
	} {
		h = strings.ReplaceAll(h, " ", "")
		want := runOVS(t, bin, "", "ofp-print", h)
		if got := runGvs("", "ofp-print", h); got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", h, got, want)
		}
	}
}

// errorReply is the hex of the OFPT_ERROR reporting code in version v
// for the message quoted in hex.
func errorReply(t *testing.T, v uint8, code ofp.ErrCode, quoted string) string {
	t.Helper()
	data, err := hex.DecodeString(strings.ReplaceAll(quoted, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ofp.Encode(nil, v, 4, ofp.NewErrorMsg(v, code, data))
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
