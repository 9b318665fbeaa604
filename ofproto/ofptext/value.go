package ofptext

import (
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// OpenFlow 1.0 reserved port numbers (ofp_port_t, 16-bit form).
const (
	portMax        = 0xff00
	portInPort     = 0xfff8
	portTable      = 0xfff9
	portNormal     = 0xfffa
	portFlood      = 0xfffb
	portAll        = 0xfffc
	portController = 0xfffd
	portLocal      = 0xfffe
	portNone       = 0xffff
)

// portNames are the reserved port names, as ovs-ofctl prints them.
var portNames = []struct {
	name string
	port uint16
}{
	{"IN_PORT", portInPort}, {"TABLE", portTable}, {"NORMAL", portNormal},
	{"FLOOD", portFlood}, {"ALL", portAll}, {"CONTROLLER", portController},
	{"LOCAL", portLocal}, {"ANY", portNone}, {"NONE", portNone},
}

// parsePort parses a port number or reserved name (case-insensitive) into
// its 16-bit form. 32-bit reserved numbers (0xfffffff8...) are folded.
func parsePort(s string) (uint16, bool) {
	for _, p := range portNames {
		if strings.EqualFold(s, p.name) {
			return p.port, true
		}
	}
	// Decimal only, as ovs-ofctl: 16-bit numbers as they are, 32-bit
	// OpenFlow 1.1+ reserved numbers folded to their 16-bit form.
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, false
	}
	switch {
	case n <= 0xffff:
		return uint16(n), true
	case n >= 0xffffff00:
		return uint16(n), true
	}
	return 0, false
}

func formatPort(p uint16) string {
	if p >= portMax {
		for _, n := range portNames {
			if n.port == p {
				return n.name
			}
		}
	}
	return strconv.Itoa(int(p))
}

// Flag names of the flag-valued formats, lowest bit first (ovs-ofctl prints
// them in this order).
var (
	ctStateFlags = []flagName{{"new", 0x01}, {"est", 0x02}, {"rel", 0x04}, {"rpl", 0x08},
		{"inv", 0x10}, {"trk", 0x20}, {"snat", 0x40}, {"dnat", 0x80}}
	tcpFlags = []flagName{{"fin", 0x001}, {"syn", 0x002}, {"rst", 0x004}, {"psh", 0x008},
		{"ack", 0x010}, {"urg", 0x020}, {"ece", 0x040}, {"cwr", 0x080}, {"ns", 0x100}}
	tunFlags = []flagName{{"oam", 0x1}}
	// megaflowTunFlags are every tunnel flag of the datapath key, in
	// Open vSwitch's bit order (FLOW_TNL_F_*), for megaflow text.
	megaflowTunFlags = []flagName{{"oam", 0x1}, {"df", 0x2}, {"csum", 0x4}, {"key", 0x8}}
)

type flagName struct {
	name string
	bit  uint64
}

// fragValues are ip_frag's keywords with (value, mask).
var fragValues = []struct {
	name        string
	value, mask uint64
}{
	{"no", 0, 1}, {"yes", 1, 1}, {"first", 1, 3}, {"later", 3, 3}, {"not_later", 0, 2},
}

// fieldWidth is the number of value bytes a field's text value has.
func fieldWidth(f *mf.Field) int { return f.Bytes }

// parseFieldValue parses "value[/mask]" for f into network-order value and
// mask (mask all-ones when absent).
func parseFieldValue(f *mf.Field, s string) (val, mask []byte, err error) {
	w := fieldWidth(f)
	switch f.Format {
	case mf.FormatCtState, mf.FormatTCPFlags, mf.FormatTunFlags:
		if s != "" && (s[0] == '+' || s[0] == '-') {
			return parseFlags(f, s, w)
		}
		if v, ok := parseFlagWords(f, s); ok {
			val, mask = make([]byte, w), ones(w)
			putUint(val, v)
			return val, mask, nil
		}
	case mf.FormatFrag:
		for _, fv := range fragValues {
			if s == fv.name {
				val, mask = make([]byte, w), make([]byte, w)
				putUint(val, fv.value)
				putUint(mask, fv.mask)
				return val, mask, nil
			}
		}
		return nil, nil, fmt.Errorf(`%s: unknown fragment type (valid types are "no", "yes", "first", "later", "not_later"`, s)
	case mf.FormatPacketType:
		pt, err := parsePacketType(s)
		if err != nil {
			return nil, nil, err
		}
		val, mask = make([]byte, w), ones(w)
		putUint(val, uint64(pt))
		return val, mask, nil
	case mf.FormatOFPPort, mf.FormatOFPPortOXM:
		p, ok := parsePort(s)
		if !ok {
			if f.Format == mf.FormatOFPPortOXM {
				return nil, nil, fmt.Errorf("%s: port value out of range for %s", s, f.Name)
			}
			return nil, nil, fmt.Errorf("%s: invalid or unknown port for %s", s, f.Name)
		}
		val, mask = make([]byte, w), ones(w)
		v := uint64(p)
		if f.Format == mf.FormatOFPPortOXM && p >= portMax {
			v |= 0xffff0000
		}
		putUint(val, v)
		return val, mask, nil
	}
	vs, ms, hasMask := strings.Cut(s, "/")
	if hasMask && strings.Contains(ms, "/") {
		return nil, nil, fmt.Errorf("%s: bad syntax for %s mask", s, f.Name)
	}
	switch f.Format {
	case mf.FormatEthernet:
		// Errors name the whole value, mask included.
		if val, err = parseMAC(vs); err != nil {
			return nil, nil, fmt.Errorf("%s: invalid Ethernet address", s)
		}
		mask = ones(6)
		if hasMask {
			if mask, err = parseMAC(ms); err != nil {
				return nil, nil, fmt.Errorf("%s: invalid Ethernet address", s)
			}
		}
	case mf.FormatIPv4:
		v4, ok := parseIPv4Octets(vs)
		if !ok {
			if hasMask {
				return nil, nil, fmt.Errorf("%s: invalid IP address", s)
			}
			return nil, nil, fmt.Errorf("%s: invalid IP address", vs)
		}
		val, mask = v4[:], ones(4)
		if hasMask {
			if mask, err = parseIPMask(ms, 4); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", s, err)
			}
		}
	case mf.FormatIPv6:
		a, err := netip.ParseAddr(vs)
		if err != nil || !a.Is6() {
			return nil, nil, fmt.Errorf("%s: invalid IPv6 address", s)
		}
		v6 := a.As16()
		val, mask = v6[:], ones(16)
		if hasMask {
			if mask, err = parseIPMask(ms, 16); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", s, err)
			}
		}
	default:
		if val, err = parseInt(vs, w); err != nil {
			if err == errIntSyntax {
				return nil, nil, fmt.Errorf("%s: bad syntax for %s value", vs, f.Name)
			}
			return nil, nil, fmt.Errorf("%s: %w %s", vs, err, f.Name)
		}
		mask = ones(w)
		if hasMask {
			if mask, err = parseInt(ms, w); err != nil {
				if err == errIntSyntax {
					return nil, nil, fmt.Errorf("%s: bad syntax for %s mask", s, f.Name)
				}
				return nil, nil, fmt.Errorf("%s: %w %s", ms, err, f.Name)
			}
		}
	}
	if hasMask && !f.Maskable && !isAllOnes(mask) && !isZero(mask) {
		return nil, nil, fmt.Errorf("%s: invalid mask for field %s", s, f.Name)
	}
	return val, mask, nil
}

// parsePacketType parses "(ns,type)", each number decimal or 0x-hex.
func parsePacketType(s string) (uint32, error) {
	in, ok := strings.CutPrefix(s, "(")
	if !ok {
		return 0, fmt.Errorf("%s: bad syntax for packet type missing '('", s)
	}
	in, ok = strings.CutSuffix(in, ")")
	if !ok {
		return 0, fmt.Errorf("%s: bad syntax for packet type missing ')'", s)
	}
	nss, ts, ok := strings.Cut(in, ",")
	if !ok {
		return 0, fmt.Errorf("%s: bad syntax for packet type missing ','", s)
	}
	ns, err1 := strconv.ParseUint(strings.TrimSpace(nss), 0, 16)
	t, err2 := strconv.ParseUint(strings.TrimSpace(ts), 0, 16)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("%s: bad syntax for packet type", s)
	}
	return uint32(ns)<<16 | uint32(t), nil
}

// errIntSyntax is parseInt's error for text that is not a number.
var errIntSyntax = intError("bad syntax for")

// parseIPv4Octets reads a dotted quad as ovs-ofctl does: four decimal
// numbers, each kept modulo 256 (ovs-ofctl scans them as 8-bit values,
// so 300.1.1.1 is 44.1.1.1).
func parseIPv4Octets(s string) ([4]byte, bool) {
	var out [4]byte
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return out, false
	}
	for i, p := range parts {
		if p == "" || len(p) > 10 {
			return out, false
		}
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return out, false
		}
		out[i] = byte(n)
	}
	return out, true
}

// intError completes a message of the form "VALUE: <err> FIELD", as
// ovs-ofctl words them.
type intError string

func (e intError) Error() string { return string(e) }

// parseInt parses a decimal or 0x-hexadecimal unsigned integer into w
// network-order bytes.
func parseInt(s string, w int) ([]byte, error) {
	out := make([]byte, w)
	tooLarge := intError(fmt.Sprintf("value too large for %d-byte field", w))
	if h, ok := strings.CutPrefix(s, "0x"); ok || strings.HasPrefix(s, "0X") {
		if !ok {
			h = s[2:]
		}
		h = strings.TrimLeft(h, "0")
		if h == "" && len(s) > 2 {
			return out, nil
		}
		if h == "" || len(h) > 2*w {
			if h == "" {
				return out, nil // "0x" alone is 0, as for ovs-ofctl
			}
			return nil, tooLarge
		}
		for i := 0; i < len(h); i++ {
			d, ok := hexDigit(h[len(h)-1-i])
			if !ok {
				return nil, errIntSyntax
			}
			out[w-1-i/2] |= d << (4 * (i % 2))
		}
		return out, nil
	}
	if w <= 8 {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return nil, tooLarge
			}
			return nil, errIntSyntax
		}
		if w < 8 && n>>(8*w) != 0 {
			return nil, tooLarge
		}
		putUint(out, n)
		return out, nil
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || n.Sign() < 0 {
		return nil, errIntSyntax
	}
	if n.BitLen() > 8*w {
		return nil, tooLarge
	}
	n.FillBytes(out)
	return out, nil
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func parseMAC(s string) ([]byte, error) {
	out := make([]byte, 6)
	parts := strings.Split(s, ":")
	if len(parts) != 6 {
		return nil, fmt.Errorf("%s: invalid Ethernet address", s)
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 16, 8)
		if err != nil || len(p) == 0 || len(p) > 2 {
			return nil, fmt.Errorf("%s: invalid Ethernet address", s)
		}
		out[i] = byte(n)
	}
	return out, nil
}

// parseIPMask parses a prefix length or a dotted/colon mask of n bytes.
func parseIPMask(s string, n int) ([]byte, error) {
	if l, err := strconv.Atoi(s); err == nil {
		if l < 0 || l > 8*n {
			if n == 4 {
				return nil, errors.New("IPv4 network prefix bits not between 0 and 32, inclusive")
			}
			return nil, errors.New("IPv6 network prefix bits not between 0 and 128, inclusive")
		}
		m := make([]byte, n)
		for i := 0; i < l; i++ {
			m[i/8] |= 0x80 >> (i % 8)
		}
		return m, nil
	}
	if n == 4 {
		if v4, ok := parseIPv4Octets(s); ok {
			return v4[:], nil
		}
		return nil, errors.New("invalid IP address")
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return nil, errors.New("invalid IPv6 address")
	}
	return a.AsSlice(), nil
}

func parseFlags(f *mf.Field, s string, w int) (val, mask []byte, err error) {
	names := flagsOf(f)
	var v, m uint64
	for s != "" {
		sign := s[0]
		if sign != '+' && sign != '-' {
			return nil, nil, flagErr(f, s)
		}
		s = s[1:]
		end := strings.IndexAny(s, "+-")
		if end < 0 {
			end = len(s)
		}
		name, rest := s[:end], s
		s = s[end:]
		bit, ok := lookupFlag(names, name)
		if !ok {
			return nil, nil, flagErr(f, rest) // ovs-ofctl names the rest of the text
		}
		if m&bit != 0 {
			return nil, nil, fmt.Errorf("%s: flag specified more than once in %s", name, f.Name)
		}
		m |= bit
		if sign == '+' {
			v |= bit
		}
	}
	val, mask = make([]byte, w), make([]byte, w)
	putUint(val, v)
	putUint(mask, m)
	return val, mask, nil
}

// parseFlagWords accepts "trk|est" style (all bits matched).
func parseFlagWords(f *mf.Field, s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	var v uint64
	for _, w := range strings.Split(s, "|") {
		b, ok := lookupFlag(flagsOf(f), w)
		if !ok {
			return 0, false
		}
		v |= b
	}
	return v, true
}

func flagErr(f *mf.Field, s string) error {
	switch f.Format {
	case mf.FormatCtState:
		return fmt.Errorf("%s: unknown ct_state flag(s)", s)
	case mf.FormatTCPFlags:
		return fmt.Errorf("%s: unknown TCP flag(s)", s)
	}
	return fmt.Errorf("%s: unknown tunnel flag(s)", s)
}

func flagsOf(f *mf.Field) []flagName {
	switch f.Format {
	case mf.FormatCtState:
		return ctStateFlags
	case mf.FormatTCPFlags:
		return tcpFlags
	}
	return tunFlags
}

func lookupFlag(names []flagName, s string) (uint64, bool) {
	for _, n := range names {
		if n.name == s {
			return n.bit, true
		}
	}
	return 0, false
}

func ones(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 0xff
	}
	return b
}

func putUint(dst []byte, v uint64) {
	for i := len(dst) - 1; i >= 0 && v != 0; i-- {
		dst[i] = byte(v)
		v >>= 8
	}
}

func getUint(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

func isAllOnes(b []byte) bool {
	for _, c := range b {
		if c != 0xff {
			return false
		}
	}
	return true
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// formatHex prints b as 0x-hexadecimal without leading zeros ("0" for 0).
func formatHex(b []byte) string {
	if isZero(b) {
		return "0"
	}
	var sb strings.Builder
	sb.WriteString("0x")
	started := false
	for _, c := range b {
		switch {
		case started:
			fmt.Fprintf(&sb, "%02x", c)
		case c != 0:
			fmt.Fprintf(&sb, "%x", c)
			started = true
		}
	}
	return sb.String()
}

// prefixLen returns the CIDR prefix length of mask, or -1.
func prefixLen(mask []byte) int {
	n, i := 0, 0
	for ; i < len(mask) && mask[i] == 0xff; i++ {
		n += 8
	}
	if i < len(mask) {
		l := bits.LeadingZeros8(^mask[i])
		if mask[i] != ^byte(0xff>>l) {
			return -1
		}
		n += l
		for i++; i < len(mask); i++ {
			if mask[i] != 0 {
				return -1
			}
		}
	}
	return n
}

// formatValue prints a field value and mask in f's text format; a full
// mask is omitted.
func formatValue(f *mf.Field, val, mask []byte) string {
	full := isAllOnes(mask)
	switch f.Format {
	case mf.FormatEthernet:
		s := formatMAC(val)
		if !full {
			s += "/" + formatMAC(mask)
		}
		return s
	case mf.FormatIPv4, mf.FormatIPv6:
		a, _ := netip.AddrFromSlice(val)
		s := a.String()
		if !full {
			if l := prefixLen(mask); l >= 0 {
				s += "/" + strconv.Itoa(l)
			} else {
				m, _ := netip.AddrFromSlice(mask)
				s += "/" + m.String()
			}
		}
		return s
	case mf.FormatOFPPort:
		return formatPort(uint16(getUint(val)))
	case mf.FormatOFPPortOXM:
		return formatPort(uint16(getUint(val)))
	case mf.FormatCtState, mf.FormatTCPFlags, mf.FormatTunFlags:
		m := getUint(mask)
		if f.Bits < 64 {
			m &= 1<<f.Bits - 1
		}
		switch f.Format {
		case mf.FormatCtState:
			full = m&0xff == 0xff
		case mf.FormatTCPFlags:
			full = m&0xfff == 0xfff
		default:
			full = false // ovs-ofctl always prints tun_flags as +/-.
		}
		return formatFlags(flagsOf(f), getUint(val), m, full)
	case mf.FormatFrag:
		// As match_format: by which of the two fragment bits are matched.
		v, m := getUint(val), getUint(mask)
		switch m & 3 {
		case 3:
			switch v & 3 {
			case 0:
				return "no"
			case 1:
				return "first"
			case 3:
				return "later"
			}
		case 1:
			if v&1 != 0 {
				return "yes"
			}
			return "no"
		case 2:
			if v&2 != 0 {
				return "later"
			}
			return "not_later"
		}
		return fmt.Sprintf("%#x/%#x", v, m)
	case mf.FormatDecimal:
		if full && len(val) <= 8 {
			return strconv.FormatUint(getUint(val), 10)
		}
	}
	s := formatHex(val)
	if !full {
		s += "/" + formatHex(mask)
	}
	return s
}

func formatMAC(b []byte) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5])
}

// formatFlags prints "+a-b" for the matched bits, or "a|b" when every bit
// is matched (the form ovs-ofctl uses for an unmasked value).
func formatFlags(names []flagName, v, m uint64, full bool) string {
	var sb strings.Builder
	if full {
		var known uint64
		for _, n := range names {
			known |= n.bit
		}
		if v == 0 {
			return "0" // C's "%#x" of zero
		}
		if v&^known != 0 {
			return fmt.Sprintf("%#x", v)
		}
		for _, n := range names {
			if v&n.bit != 0 {
				if sb.Len() > 0 {
					sb.WriteByte('|')
				}
				sb.WriteString(n.name)
				v &^= n.bit
			}
		}
		if v != 0 || sb.Len() == 0 {
			if sb.Len() > 0 {
				sb.WriteByte('|')
			}
			fmt.Fprintf(&sb, "%#x", v)
		}
		return sb.String()
	}
	var known uint64
	for _, n := range names {
		known |= n.bit
	}
	if m&^known != 0 {
		return fmt.Sprintf("%#x/%#x", v, m) // unnamed bits: numeric form
	}
	for _, n := range names {
		if m&n.bit != 0 {
			if v&n.bit != 0 {
				sb.WriteByte('+')
			} else {
				sb.WriteByte('-')
			}
			sb.WriteString(n.name)
		}
	}
	return sb.String()
}
