package ofptext

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// ErrInvalidTLVMapping is ovs-ofctl's one error for any malformed TLV map
// list; it names neither the mapping nor the token.
var ErrInvalidTLVMapping = errors.New("invalid tlv mapping")

// ParseTLVMaps parses the MAP argument of add-tlv-map and del-tlv-map:
// mappings "{class=C,type=T,len=L}->tun_metadataN" one after another, each
// optionally preceded by a comma, as ovs-ofctl 3.1 reads them.
//
// ovs-ofctl scans each mapping with ovs_scan's "%i" conversions, so the
// same input rules hold here: a number may follow blanks, carry a sign and
// a 0x (hexadecimal) or 0 (octal) prefix, and keeps only the low bits of
// its field's width (class and index 16, type and len 8) instead of
// failing when it is too large. Everything else must match the text
// literally. The empty string parses to no mappings; a trailing comma is an
// error. Option length and index limits are the switch's to check.
func ParseTLVMaps(s string) ([]ofp.TLVMap, error) {
	var maps []ofp.TLVMap
	for s != "" {
		s = strings.TrimPrefix(s, ",")
		var m ofp.TLVMap
		sc := tlvScanner{s: s, ok: true}
		sc.lit("{class=")
		m.OptClass = uint16(sc.num())
		sc.lit(",type=")
		m.OptType = uint8(sc.num())
		sc.lit(",len=")
		m.OptLen = uint8(sc.num())
		sc.lit("}->tun_metadata")
		m.Index = uint16(sc.num())
		if !sc.ok {
			return nil, ErrInvalidTLVMapping
		}
		maps = append(maps, m)
		s = sc.s
	}
	return maps, nil
}

// tlvScanner is the subset of ovs_scan the TLV map syntax uses, with a
// sticky failure.
type tlvScanner struct {
	s  string
	ok bool
}

func (sc *tlvScanner) lit(want string) {
	if !sc.ok || !strings.HasPrefix(sc.s, want) {
		sc.ok = false
		return
	}
	sc.s = sc.s[len(want):]
}

// num scans one "%i" integer: leading white space, an optional sign, a
// base prefix, then digits; the value wraps modulo 2^64 as C's uintmax_t.
func (sc *tlvScanner) num() uint64 {
	if !sc.ok {
		return 0
	}
	s := strings.TrimLeft(sc.s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		base, s = 16, s[2:]
	case s != "" && s[0] == '0':
		base = 8
	}
	var v uint64
	n := 0
	for n < len(s) {
		d := hexitValue(s[n])
		if d < 0 || uint64(d) >= base {
			break
		}
		v = v*base + uint64(d)
		n++
	}
	if n == 0 {
		sc.ok = false
		return 0
	}
	sc.s = s[n:]
	if neg {
		v = -v
	}
	return v
}

func hexitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// tlvCommandNames are the NXTTMC_* commands as ovs-ofctl prints them.
var tlvCommandNames = [...]string{ofp.TLVAdd: "ADD", ofp.TLVDelete: "DEL", ofp.TLVClear: "CLEAR"}

// FormatTLVTableMod returns the body ovs-ofctl prints after an
// NXT_TLV_TABLE_MOD's header line: the command, then (except for CLEAR)
// the mapping table.
func FormatTLVTableMod(m *ofp.TLVTableMod) string {
	var b strings.Builder
	b.WriteString("\n ")
	if int(m.Command) < len(tlvCommandNames) {
		b.WriteString(tlvCommandNames[m.Command])
	} else {
		fmt.Fprintf(&b, "cmd %d", m.Command)
	}
	if m.Command == ofp.TLVClear {
		b.WriteByte('\n')
		return b.String()
	}
	b.WriteByte(' ')
	appendTLVTable(&b, m.Mappings)
	return b.String()
}

// FormatTLVTableReply returns the body ovs-ofctl prints after an
// NXT_TLV_TABLE_REPLY's header line (what dump-tlv-map shows): the
// switch's limits, the option space the mappings take, and the table.
func FormatTLVTableReply(r *ofp.TLVTableReply) string {
	var b strings.Builder
	used := 0
	for _, m := range r.Mappings {
		used += int(m.OptLen)
	}
	fmt.Fprintf(&b, "\n max option space=%d max fields=%d\n allocated option space=%d\n\n ", r.MaxOptionSpace, r.MaxFields, used)
	appendTLVTable(&b, r.Mappings)
	return b.String()
}

// appendTLVTable writes "mapping table:" and its columns; the caller has
// written the line's indentation.
func appendTLVTable(b *strings.Builder, maps []ofp.TLVMap) {
	b.WriteString("mapping table:\n  class  type  length  match field\n ------  ----  ------  --------------\n")
	for _, m := range maps {
		fmt.Fprintf(b, " %6s %5s %7d  tun_metadata%d\n", cHex(uint64(m.OptClass)), cHex(uint64(m.OptType)), m.OptLen, m.Index)
	}
}

// cHex is C's "%#x": zero has no prefix.
func cHex(v uint64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%#x", v)
}
