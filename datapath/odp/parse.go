package odp

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/datapath/packet"
)

// MaxDepth bounds how deeply clone, sample and check_pkt_len may nest.
// The executor keeps scratch batches per level, so the parser refuses
// deeper lists rather than letting the executor drop them at run time.
const MaxDepth = 16

// ParseError reports where and why ParseActions failed.
type ParseError struct {
	Offset int    // byte offset of Token in the input
	Token  string // the offending token (up to the next delimiter)
	Msg    string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("odp: parse actions: %s at %q (offset %d)", e.Msg, e.Token, e.Offset)
}

// ParseActions parses the datapath action text that `ovs-appctl
// dpctl/dump-flows` prints after "actions:" (the prefix itself is
// accepted too). "drop" parses to an explicit drop action and the empty
// string to the empty list; both print as "drop".
func ParseActions(s string) (Actions, error) {
	p := &parser{s: s}
	if strings.HasPrefix(s, "actions:") {
		p.pos = len("actions:")
	}
	acts, err := p.list(0)
	if err != nil {
		return nil, err
	}
	return acts, nil
}

type parser struct {
	s     string
	pos   int
	depth int
}

func (p *parser) errAt(pos int, format string, args ...any) error {
	end := pos
	for end < len(p.s) && !strings.ContainsRune(",()= \t\r\n", rune(p.s[end])) {
		end++
	}
	if end == pos && end < len(p.s) {
		end++
	}
	return &ParseError{Offset: pos, Token: p.s[pos:end], Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func (p *parser) expect(lit string) error {
	if !strings.HasPrefix(p.s[p.pos:], lit) {
		return p.errAt(p.pos, "expected %q", lit)
	}
	p.pos += len(lit)
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// list parses actions up to the end of input (term 0) or up to, not
// including, a ')' (term ')').
func (p *parser) list(term byte) (Actions, error) {
	if p.depth >= MaxDepth {
		return nil, p.errAt(p.pos, "actions nested deeper than %d", MaxDepth)
	}
	p.depth++
	defer func() { p.depth-- }()
	var acts Actions
	for {
		for p.pos < len(p.s) && (isSpace(p.s[p.pos]) || p.s[p.pos] == ',') {
			p.pos++
		}
		c := p.peek()
		if c == 0 {
			if term != 0 {
				return nil, p.errAt(p.pos, "missing %q", string(term))
			}
			return acts, nil
		}
		if c == ')' {
			if term != ')' {
				return nil, p.errAt(p.pos, "unbalanced %q", ")")
			}
			return acts, nil
		}
		a, err := p.action()
		if err != nil {
			return nil, err
		}
		acts = append(acts, a)
		if c := p.peek(); c != 0 && c != ',' && c != ')' && !isSpace(c) {
			return nil, p.errAt(p.pos, "expected ',' after action")
		}
	}
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func (p *parser) name() string {
	start := p.pos
	for p.pos < len(p.s) && isNameByte(p.s[p.pos]) {
		p.pos++
	}
	return p.s[start:p.pos]
}

// actionParsers maps an action name to the parser of what follows it.
var actionParsers map[string]func(*parser, int) (Action, error)

func init() {
	actionParsers = map[string]func(*parser, int) (Action, error){
		"drop":          func(*parser, int) (Action, error) { return Drop(), nil },
		"pop_vlan":      func(*parser, int) (Action, error) { return PopVLAN(), nil },
		"ct_clear":      func(*parser, int) (Action, error) { return CtClear(), nil },
		"recirc":        numAction(KindRecirc),
		"trunc":         numAction(KindTrunc),
		"meter":         numAction(KindMeter),
		"tnl_pop":       numAction(KindTunnelPop),
		"push_vlan":     (*parser).pushVLAN,
		"hash":          (*parser).hash,
		"userspace":     (*parser).userspace,
		"clone":         (*parser).clone,
		"sample":        (*parser).sample,
		"check_pkt_len": (*parser).checkPktLen,
		"set":           (*parser).set,
		"ct":            (*parser).ct,
		"mac_learn":     (*parser).macLearn,
		"tnl_push":      (*parser).tnlPush,
		"push_mpls":     (*parser).pushMPLS,
		"pop_mpls":      (*parser).popMPLS,
	}
}

func (p *parser) action() (Action, error) {
	start := p.pos
	if c := p.peek(); c >= '0' && c <= '9' {
		v, err := p.uint(32)
		if err != nil {
			return Action{}, err
		}
		return Output(uint32(v)), nil
	}
	name := p.name()
	parse, ok := actionParsers[name]
	if !ok {
		if name == "" {
			return Action{}, p.errAt(start, "expected an action")
		}
		return Action{}, p.errAt(start, "unknown action %q", name)
	}
	return parse(p, start)
}

// uint parses a decimal or 0x-prefixed hexadecimal number of at most bits.
func (p *parser) uint(bits int) (uint64, error) {
	start := p.pos
	base := 10
	if strings.HasPrefix(p.s[p.pos:], "0x") || strings.HasPrefix(p.s[p.pos:], "0X") {
		base = 16
		p.pos += 2
	}
	digits := p.pos
	for p.pos < len(p.s) && (p.s[p.pos] >= '0' && p.s[p.pos] <= '9' ||
		base == 16 && (p.s[p.pos]|0x20 >= 'a' && p.s[p.pos]|0x20 <= 'f')) {
		p.pos++
	}
	if p.pos == digits {
		return 0, p.errAt(start, "expected a number")
	}
	v, err := strconv.ParseUint(p.s[digits:p.pos], base, bits)
	if err != nil {
		return 0, p.errAt(start, "number out of range (%d bits)", bits)
	}
	return v, nil
}

func numAction(k Kind) func(*parser, int) (Action, error) {
	return func(p *parser, _ int) (Action, error) {
		if err := p.expect("("); err != nil {
			return Action{}, err
		}
		v, err := p.uint(32)
		if err != nil {
			return Action{}, err
		}
		if err := p.expect(")"); err != nil {
			return Action{}, err
		}
		return Action{Kind: k, Arg: uint32(v)}, nil
	}
}

// nested parses "(" actions ")".
func (p *parser) nested() (Actions, error) {
	if err := p.expect("("); err != nil {
		return nil, err
	}
	acts, err := p.list(')')
	if err != nil {
		return nil, err
	}
	return acts, p.expect(")")
}

// raw returns the text inside balanced parentheses starting at p.pos,
// which must be '('.
func (p *parser) raw() (string, error) {
	start := p.pos
	if err := p.expect("("); err != nil {
		return "", err
	}
	depth := 1
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				p.pos++
				return p.s[start+1 : p.pos-1], nil
			}
		}
		p.pos++
	}
	return "", p.errAt(start, "unbalanced %q", "(")
}

func (p *parser) pushVLAN(int) (Action, error) {
	if err := p.expect("("); err != nil {
		return Action{}, err
	}
	tpid, tci := uint16(0x8100), uint16(VLANCFI)
	for i := 0; p.peek() != ')'; i++ {
		if i > 0 {
			if err := p.expect(","); err != nil {
				return Action{}, err
			}
		}
		kstart := p.pos
		key := p.name()
		if err := p.expect("="); err != nil {
			return Action{}, err
		}
		bits := map[string]int{"tpid": 16, "vid": 12, "pcp": 3, "cfi": 1}[key]
		if bits == 0 {
			return Action{}, p.errAt(kstart, "unknown push_vlan member %q", key)
		}
		v, err := p.uint(bits)
		if err != nil {
			return Action{}, err
		}
		switch key {
		case "tpid":
			tpid = uint16(v)
		case "vid":
			tci = tci&^0xfff | uint16(v)
		case "pcp":
			tci = tci&^0xe000 | uint16(v)<<13
		case "cfi":
			tci = tci&^VLANCFI | uint16(v)<<12
		}
	}
	p.pos++
	return PushVLAN(tpid, tci), nil
}

func (p *parser) hash(int) (Action, error) {
	if err := p.expect("("); err != nil {
		return Action{}, err
	}
	astart := p.pos
	var alg HashAlg
	switch p.name() {
	case "l4":
		alg = HashL4
	case "sym_l4":
		alg = HashSymL4
	default:
		return Action{}, p.errAt(astart, "unknown hash algorithm")
	}
	if err := p.expect("("); err != nil {
		return Action{}, err
	}
	basis, err := p.uint(32)
	if err != nil {
		return Action{}, err
	}
	if err := p.expect("))"); err != nil {
		return Action{}, err
	}
	return Hash(alg, uint32(basis)), nil
}

func (p *parser) userspace(int) (Action, error) {
	if err := p.expect("(pid="); err != nil {
		return Action{}, err
	}
	pid, err := p.uint(32)
	if err != nil {
		return Action{}, err
	}
	var u UserspaceParams
	for p.peek() == ',' {
		p.pos++
		kstart := p.pos
		switch key := p.name(); key {
		case "userdata":
			if err := p.expect("("); err != nil {
				return Action{}, err
			}
			hstart := p.pos
			for p.pos < len(p.s) && p.s[p.pos] != ')' {
				p.pos++
			}
			ud, err := hex.DecodeString(p.s[hstart:p.pos])
			if err != nil {
				return Action{}, p.errAt(hstart, "bad userdata hex")
			}
			u.Userdata = ud
			if err := p.expect(")"); err != nil {
				return Action{}, err
			}
		case "sFlow", "ipfix", "flow_sample", "controller":
			ud, err := p.cookie(key)
			if err != nil {
				return Action{}, err
			}
			u.Userdata = ud
		case "slow_path":
			// slow_path(REASON,...): the reasons' names, as Format prints them.
			if err := p.expect("("); err != nil {
				return Action{}, err
			}
			c := Cookie{Type: CookieSlowPath}
			for p.peek() != ')' {
				nstart := p.pos
				i := slices.Index(slowPathNames, p.name())
				if i < 0 {
					return Action{}, p.errAt(nstart, "unknown slow_path reason")
				}
				c.SlowPathReason |= 1 << i
				if p.peek() == ',' {
					p.pos++
				}
			}
			if err := p.expect(")"); err != nil {
				return Action{}, err
			}
			u.Userdata = c.Marshal()
		case "actions":
			u.WithActions = true
		case "tunnel_out_port":
			if err := p.expect("="); err != nil {
				return Action{}, err
			}
			v, err := p.uint(32)
			if err != nil {
				return Action{}, err
			}
			u.TunnelOutPort = uint32(v)
		default:
			return Action{}, p.errAt(kstart, "unknown userspace member %q", key)
		}
	}
	if err := p.expect(")"); err != nil {
		return Action{}, err
	}
	return Userspace(uint32(pid), u), nil
}

func (p *parser) clone(int) (Action, error) {
	acts, err := p.nested()
	if err != nil {
		return Action{}, err
	}
	return Clone(acts), nil
}

func (p *parser) sample(int) (Action, error) {
	if err := p.expect("(sample="); err != nil {
		return Action{}, err
	}
	nstart := p.pos
	for p.pos < len(p.s) && (p.s[p.pos] >= '0' && p.s[p.pos] <= '9' || p.s[p.pos] == '.') {
		p.pos++
	}
	pct, err := strconv.ParseFloat(p.s[nstart:p.pos], 64)
	if err != nil || pct < 0 || pct > 100 || math.IsNaN(pct) {
		return Action{}, p.errAt(nstart, "bad sample percentage")
	}
	if err := p.expect("%,actions"); err != nil {
		return Action{}, err
	}
	acts, err := p.nested()
	if err != nil {
		return Action{}, err
	}
	if err := p.expect(")"); err != nil {
		return Action{}, err
	}
	return Sample(SampleProbability(pct), acts), nil
}

func (p *parser) checkPktLen(int) (Action, error) {
	if err := p.expect("(size="); err != nil {
		return Action{}, err
	}
	size, err := p.uint(16)
	if err != nil {
		return Action{}, err
	}
	if err := p.expect(",gt"); err != nil {
		return Action{}, err
	}
	gt, err := p.nested()
	if err != nil {
		return Action{}, err
	}
	if err := p.expect(",le"); err != nil {
		return Action{}, err
	}
	le, err := p.nested()
	if err != nil {
		return Action{}, err
	}
	if err := p.expect(")"); err != nil {
		return Action{}, err
	}
	return CheckPktLen(uint32(size), gt, le), nil
}

func (p *parser) ct(int) (Action, error) {
	c := &CtParams{}
	if p.peek() == '(' {
		rstart := p.pos + 1
		raw, err := p.raw()
		if err != nil {
			return Action{}, err
		}
		c.Raw = raw
		if off, msg := parseCtArgs(raw, c); msg != "" {
			return Action{}, p.errAt(rstart+off, "%s", msg)
		}
	}
	return Action{Kind: KindCt, Ct: c}, nil
}

// splitTop splits s at commas outside parentheses.
func splitTop(s string, fn func(opt string, off int) string) (int, string) {
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '(':
				depth++
				continue
			case ')':
				depth--
				continue
			case ',':
				if depth != 0 {
					continue
				}
			default:
				continue
			}
		}
		if msg := fn(s[start:i], start); msg != "" {
			return start, msg
		}
		start = i + 1
	}
	return 0, ""
}

// parseCtArgs fills c from ct()'s argument text. It returns the offset
// and text of the first error, or "" . Unknown options are kept in Raw
// only, so that text printed by newer datapaths still parses.
func parseCtArgs(raw string, c *CtParams) (int, string) {
	return splitTop(raw, func(opt string, _ int) string {
		name, val, hasVal := strings.Cut(opt, "=")
		switch {
		case opt == "commit":
			c.Commit = true
		case opt == "force_commit":
			c.ForceCommit = true
		case name == "zone" && hasVal:
			z, err := strconv.ParseUint(val, 0, 16)
			if err != nil {
				return "bad ct zone"
			}
			c.Zone = uint16(z)
		case name == "mark" && hasVal:
			v, m, ok := parseMasked32(val)
			if !ok {
				return "bad ct mark"
			}
			c.Mark, c.MarkMask = v&m, m
		case name == "label" && hasVal:
			v, m, ok := parseMasked128(val)
			if !ok {
				return "bad ct label"
			}
			for i := range v {
				v[i] &= m[i]
			}
			c.Label, c.LabelMask = v, m
		case name == "helper" && hasVal:
			c.Helper = val
		case name == "timeout" && hasVal:
			c.Timeout = val
		case opt == "nat" || strings.HasPrefix(opt, "nat("):
			n, ok := parseCtNAT(strings.TrimPrefix(opt, "nat"))
			if !ok {
				return "bad ct nat"
			}
			c.NAT = n
		}
		return ""
	})
}

func parseMasked32(s string) (v, m uint32, ok bool) {
	vs, ms, hasMask := strings.Cut(s, "/")
	x, err := strconv.ParseUint(vs, 0, 32)
	if err != nil {
		return 0, 0, false
	}
	m = math.MaxUint32
	if hasMask {
		y, err := strconv.ParseUint(ms, 0, 32)
		if err != nil {
			return 0, 0, false
		}
		m = uint32(y)
	}
	return uint32(x), m, true
}

func parseMasked128(s string) (v, m [16]byte, ok bool) {
	vs, ms, hasMask := strings.Cut(s, "/")
	if v, ok = parseU128(vs); !ok {
		return v, m, false
	}
	for i := range m {
		m[i] = 0xff
	}
	if hasMask {
		if m, ok = parseU128(ms); !ok {
			return v, m, false
		}
	}
	return v, m, true
}

// parseU128 parses a 0x-prefixed hexadecimal or a decimal (up to 64 bits)
// number into 16 big-endian bytes.
func parseU128(s string) (out [16]byte, ok bool) {
	h, isHex := strings.CutPrefix(s, "0x")
	if !isHex {
		x, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return out, false
		}
		for i := 0; i < 8; i++ {
			out[15-i] = byte(x >> (8 * i))
		}
		return out, true
	}
	if len(h) == 0 || len(h) > 32 {
		return out, false
	}
	for i := 0; i < len(h); i++ {
		c := h[len(h)-1-i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return out, false
		}
		out[15-i/2] |= d << (4 * (i % 2))
	}
	return out, true
}

// parseCtNAT parses nat's argument: "" or "(src=A[-B][:P[-Q]],flags)".
func parseCtNAT(s string) (*CtNAT, bool) {
	n := &CtNAT{}
	if s == "" {
		return n, true
	}
	if len(s) < 2 || s[0] != '(' || s[len(s)-1] != ')' {
		return nil, false
	}
	ok := true
	splitTop(s[1:len(s)-1], func(opt string, _ int) string {
		name, val, hasVal := strings.Cut(opt, "=")
		switch {
		case opt == "src" || opt == "dst":
			n.Src, n.Dst = name == "src", name == "dst"
		case (name == "src" || name == "dst") && hasVal:
			n.Src, n.Dst = name == "src", name == "dst"
			if !parseNATRange(val, n) {
				ok = false
			}
		case opt == "persistent":
			n.Persistent = true
		case opt == "hash":
			n.Hash = true
		case opt == "random":
			n.Random = true
		case opt == "":
		default:
			ok = false
		}
		if !ok {
			return "bad"
		}
		return ""
	})
	return n, ok
}

// parseNATRange parses A[-B][:P[-Q]], IPv6 addresses in brackets.
func parseNATRange(s string, n *CtNAT) bool {
	var addrs, ports string
	if strings.HasPrefix(s, "[") {
		// [a]-[b]:p-q
		i := strings.LastIndex(s, "]")
		if i < 0 {
			return false
		}
		addrs, ports = s[:i+1], ""
		if rest := s[i+1:]; rest != "" {
			if rest[0] != ':' {
				return false
			}
			ports = rest[1:]
		}
		addrs = strings.NewReplacer("[", "", "]", "").Replace(addrs)
	} else {
		var hasPorts bool
		addrs, ports, hasPorts = strings.Cut(s, ":")
		if hasPorts && ports == "" {
			return false
		}
	}
	lo, hi, isRange := strings.Cut(addrs, "-")
	a, err := netip.ParseAddr(lo)
	if err != nil {
		return false
	}
	b := a
	if isRange {
		if b, err = netip.ParseAddr(hi); err != nil || b.Is4() != a.Is4() || b.Less(a) {
			return false
		}
	}
	n.HasAddr, n.IPv6 = true, !a.Is4()
	if a.Is4() {
		a4, b4 := a.As4(), b.As4()
		copy(n.MinAddr[:], a4[:])
		copy(n.MaxAddr[:], b4[:])
	} else {
		n.MinAddr, n.MaxAddr = a.As16(), b.As16()
	}
	if ports != "" {
		plo, phi, isPRange := strings.Cut(ports, "-")
		x, err := strconv.ParseUint(plo, 10, 16)
		if err != nil {
			return false
		}
		y := x
		if isPRange {
			if y, err = strconv.ParseUint(phi, 10, 16); err != nil || y < x {
				return false
			}
		}
		n.MinPort, n.MaxPort = uint16(x), uint16(y)
	}
	return true
}

func (p *parser) macLearn(int) (Action, error) {
	rstart := p.pos + 1
	raw, err := p.raw()
	if err != nil {
		return Action{}, err
	}
	m := MACLearnParams{Raw: raw}
	off := rstart
	for len(raw) > 0 {
		opt := raw
		if strings.HasPrefix(raw, "ports(") {
			end := strings.IndexByte(raw, ')')
			if end < 0 {
				return Action{}, p.errAt(off, "bad mac_learn ports")
			}
			opt = raw[:end+1]
		} else if k := strings.IndexByte(raw, ','); k >= 0 {
			opt = raw[:k]
		}
		if err := m.parseOpt(opt); err != nil {
			return Action{}, p.errAt(off, "%v", err)
		}
		raw = raw[len(opt):]
		off += len(opt)
		if len(raw) > 0 {
			if raw[0] != ',' {
				return Action{}, p.errAt(off, "expected ',' in mac_learn")
			}
			raw = raw[1:]
			off++
		}
	}
	a, err := MACLearn(m)
	if err != nil {
		return Action{}, p.errAt(rstart, "%v", err)
	}
	a.MACLearn.Raw = m.Raw
	return a, nil
}

// parseOpt parses one mac_learn option: table=N, vlan=N, in_tagged,
// learn_port=N, drop_if_moved or ports(P[:tagged][:recirc=R|:out=O],...).
func (m *MACLearnParams) parseOpt(opt string) error {
	switch {
	case opt == "in_tagged":
		m.InTagged = true
	case opt == "drop_if_moved":
		m.DropIfMoved = true
	case strings.HasPrefix(opt, "table="):
		v, err := strconv.ParseUint(opt[len("table="):], 0, 32)
		if err != nil {
			return errors.New("bad mac_learn table")
		}
		m.Table = uint32(v)
	case strings.HasPrefix(opt, "vlan="):
		v, err := strconv.ParseUint(opt[len("vlan="):], 0, 12)
		if err != nil {
			return errors.New("bad mac_learn vlan")
		}
		m.VLAN = uint16(v)
	case strings.HasPrefix(opt, "learn_port="):
		v, err := strconv.ParseUint(opt[len("learn_port="):], 0, 32)
		if err != nil {
			return errors.New("bad mac_learn learn_port")
		}
		m.LearnPort = uint32(v)
	case strings.HasPrefix(opt, "ports(") && strings.HasSuffix(opt, ")"):
		list := opt[len("ports(") : len(opt)-1]
		if list == "" {
			return nil
		}
		for _, item := range strings.Split(list, ",") {
			parts := strings.Split(item, ":")
			v, err := strconv.ParseUint(parts[0], 0, 32)
			if err != nil {
				return errors.New("bad mac_learn port")
			}
			mp := MACLearnPort{Port: uint32(v)}
			for i, mod := range parts[1:] {
				switch {
				case mod == "tagged" && i == 0 && !mp.Tagged:
					mp.Tagged = true
				case strings.HasPrefix(mod, "recirc=") && mp.Recirc == 0:
					r, err := strconv.ParseUint(mod[len("recirc="):], 0, 32)
					if err != nil || r == 0 {
						return errors.New("bad mac_learn port recirc")
					}
					mp.Recirc = uint32(r)
				case strings.HasPrefix(mod, "out=") && mp.Out == 0 && mp.Recirc == 0:
					o, err := strconv.ParseUint(mod[len("out="):], 0, 32)
					if err != nil || o == 0 {
						return errors.New("bad mac_learn port out")
					}
					mp.Out = uint32(o)
				default:
					return errors.New("bad mac_learn port mode")
				}
			}
			m.Ports = append(m.Ports, mp)
		}
	default:
		return errors.New("unknown mac_learn option")
	}
	return nil
}

func (p *parser) set(int) (Action, error) {
	if err := p.expect("("); err != nil {
		return Action{}, err
	}
	fstart := p.pos
	f := fieldByName(p.name())
	if f == FieldInvalid {
		return Action{}, p.errAt(fstart, "unknown set field")
	}
	if err := p.expect("("); err != nil {
		return Action{}, err
	}
	d := &fields[f]
	s := &SetField{Field: f}
	if d.bare {
		if err := p.subValue(d, &d.subs[0], s); err != nil {
			return Action{}, err
		}
	} else {
		var seen uint32
		for i := 0; p.peek() != ')'; i++ {
			if i > 0 {
				if err := p.expect(","); err != nil {
					return Action{}, err
				}
			}
			kstart := p.pos
			key := p.name()
			idx := -1
			for j := range d.subs {
				if d.subs[j].name == key {
					idx = j
				}
			}
			if idx < 0 {
				return Action{}, p.errAt(kstart, "unknown %s member %q", d.name, key)
			}
			if seen&(1<<idx) != 0 {
				return Action{}, p.errAt(kstart, "duplicate %s member %q", d.name, key)
			}
			seen |= 1 << idx
			sf := &d.subs[idx]
			if sf.fmt == fmtTunFlag {
				if err := p.tunFlags(sf, s); err != nil {
					return Action{}, err
				}
				continue
			}
			if err := p.expect("="); err != nil {
				return Action{}, err
			}
			if err := p.subValue(d, sf, s); err != nil {
				return Action{}, err
			}
		}
	}
	if err := p.expect("))"); err != nil {
		return Action{}, err
	}
	if f == FieldTunnel && !subMaskZero(&tunnelSubs[0], &s.Mask) {
		// The key flag follows the presence of tun_id, as in OVS.
		sf := &tunnelSubs[len(tunnelSubs)-1]
		sf.put(&s.Val, sf.get(&s.Val)|packet.TunFlagKey)
		sf.put(&s.Mask, sf.get(&s.Mask)|packet.TunFlagKey)
	}
	return setAction(s), nil
}

// tunFlags parses "flags(df|key)" (every flag given) or "flags(+key-df)"
// (only the named flags given).
func (p *parser) tunFlags(sf *subfield, s *SetField) error {
	if err := p.expect("("); err != nil {
		return err
	}
	var flags, mask uint64
	masked := p.peek() == '+' || p.peek() == '-'
	if !masked {
		mask = sf.fullMask()
	}
	for i := 0; p.peek() != ')'; i++ {
		set := true
		if masked {
			if c := p.peek(); c == '+' || c == '-' {
				set = c == '+'
				p.pos++
			} else {
				return p.errAt(p.pos, "expected '+' or '-' before tunnel flag")
			}
		} else if i > 0 {
			if err := p.expect("|"); err != nil {
				return err
			}
		}
		nstart := p.pos
		var bit uint64
		if c := p.peek(); !masked && c >= '0' && c <= '9' {
			v, err := p.uint(16)
			if err != nil {
				return err
			}
			bit = v
		} else {
			name := p.name()
			for _, f := range tunFlagNames {
				if f.name == name {
					bit = uint64(f.bit)
				}
			}
			if bit == 0 {
				return p.errAt(nstart, "unknown tunnel flag")
			}
		}
		if set {
			flags |= bit
		}
		if masked {
			mask |= bit
		}
	}
	p.pos++
	sf.put(&s.Val, flags)
	sf.put(&s.Mask, mask)
	return nil
}

// subValue parses "value[/mask]" for one subfield into s.
func (p *parser) subValue(d *fieldDesc, sf *subfield, s *SetField) error {
	if err := p.oneValue(sf, &s.Val, false); err != nil {
		return err
	}
	if p.peek() == '/' {
		if !d.maskable {
			return p.errAt(p.pos, "%s cannot be masked", d.name)
		}
		p.pos++
		return p.oneValue(sf, &s.Mask, true)
	}
	if sf.isBytes() {
		fillOnes(s.Mask[sf.off : sf.off+sf.size])
	} else {
		sf.put(&s.Mask, sf.fullMask())
	}
	return nil
}

func (p *parser) oneValue(sf *subfield, img *[ImageSize]byte, isMask bool) error {
	start := p.pos
	for p.pos < len(p.s) && !strings.ContainsRune(",)/(", rune(p.s[p.pos])) {
		p.pos++
	}
	tok := p.s[start:p.pos]
	switch sf.fmt {
	case fmtIPv4:
		a, err := netip.ParseAddr(tok)
		if err != nil || !a.Is4() {
			return p.errAt(start, "bad IPv4 address")
		}
		b := a.As4()
		copy(img[sf.off:], b[:])
		return nil
	case fmtIPv6:
		a, err := netip.ParseAddr(tok)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return p.errAt(start, "bad IPv6 address")
		}
		b := a.As16()
		copy(img[sf.off:], b[:])
		return nil
	case fmtMAC:
		b, ok := parseMAC(tok)
		if !ok {
			return p.errAt(start, "bad MAC address")
		}
		copy(img[sf.off:], b[:])
		return nil
	case fmtFrag:
		if !isMask {
			for i, n := range fragNames {
				if tok == n {
					sf.put(img, uint64(i))
					return nil
				}
			}
		}
	}
	p.pos = start
	v, err := p.uint(int(sf.bits))
	if err != nil {
		return err
	}
	if p.pos != start+len(tok) {
		return p.errAt(start, "bad number")
	}
	sf.put(img, v)
	return nil
}

func parseMAC(s string) ([6]byte, bool) {
	var m [6]byte
	if len(s) != 17 {
		return m, false
	}
	for i := range m {
		if i > 0 && s[3*i-1] != ':' {
			return m, false
		}
		b, err := hex.DecodeString(s[3*i : 3*i+2])
		if err != nil {
			return m, false
		}
		m[i] = b[0]
	}
	return m, true
}
