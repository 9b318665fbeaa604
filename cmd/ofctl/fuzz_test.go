package ofctl

import (
	"bufio"
	"io"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/ofprint"
)

var fuzzProtocols = []string{"OpenFlow10", "OpenFlow13", "OpenFlow14", "OpenFlow15", "OpenFlow10,OpenFlow15"}

// FuzzRunParseFlow feeds Run arbitrary parse-flow arguments: it must never
// panic, and must exit 0 or 1 with output on exactly one stream's error
// path.
func FuzzRunParseFlow(f *testing.F) {
	for _, fl := range loadFlows(f) {
		f.Add(fl, uint8(0))
		f.Add(fl, uint8(2))
	}
	f.Add("in_port=1,actions=drop", uint8(4))
	f.Add("table=3,reg0=1/0x,actions=set_field:1->", uint8(1))
	f.Add("", uint8(3))
	f.Fuzz(func(t *testing.T, flow string, proto uint8) {
		var out, errb strings.Builder
		code := run([]string{"-O", fuzzProtocols[int(proto)%len(fuzzProtocols)], "parse-flow", flow},
			strings.NewReader(""), &out, &errb)
		switch code {
		case 0:
			if errb.Len() != 0 {
				t.Fatalf("exit 0 with stderr %q", errb.String())
			}
		case 1:
			if !strings.HasPrefix(errb.String(), progName+": ") {
				t.Fatalf("exit 1 with stderr %q", errb.String())
			}
		default:
			t.Fatalf("exit %d", code)
		}
	})
}

// FuzzRunOfpPrint feeds Run arbitrary ofp-print hex: no panic, exit 0 or 1.
func FuzzRunOfpPrint(f *testing.F) {
	for _, c := range loadCaptures(f) {
		f.Add(c.hex)
	}
	for _, c := range loadLiveCaptures(f) {
		f.Add(c.hex)
	}
	f.Fuzz(func(t *testing.T, hex string) {
		if code := run([]string{"ofp-print", hex}, strings.NewReader(""), io.Discard, io.Discard); code != 0 && code != 1 {
			t.Fatalf("exit %d", code)
		}
	})
}

// FuzzPrintMessage feeds the printers arbitrary message bytes (seeded
// with every captured message): no panic.
func FuzzPrintMessage(f *testing.F) {
	for _, c := range loadCaptures(f) {
		if b, err := parseHex(c.hex); err == nil {
			f.Add(b)
		}
	}
	for _, c := range loadLiveCaptures(f) {
		if b, err := parseHex(c.hex); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		w := bufio.NewWriter(io.Discard)
		_ = ofprint.MessageV(w, b, 1)
	})
}
