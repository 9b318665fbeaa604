package odp

import (
	"encoding/binary"
	"strconv"
)

// CookieType says what a sampling userspace action's cookie is for. The
// values are Open vSwitch's user_action_cookie types, so that
// `dpctl/dump-flows` prints sFlow(...), ipfix(...) and flow_sample(...)
// where Open vSwitch does.
type CookieType uint16

// Cookie types.
const (
	CookieSFlow CookieType = 1
	// CookieSlowPath sends every packet of a megaflow to the switch for
	// a reason such as BFD (SlowPathReason), as Open vSwitch's
	// slow_path(...) megaflows.
	CookieSlowPath   CookieType = 2
	CookieFlowSample CookieType = 3
	CookieIPFIX      CookieType = 4
	// CookieController sends the packet to the OpenFlow controllers.
	CookieController CookieType = 5
)

// CookieLen is the size of a sampling cookie's userdata: Open vSwitch's
// user_action_cookie (type, OpenFlow in_port, bridge UUID, then a union
// of the per-type fields), fixed-size so a formatter can tell it from an
// arbitrary userdata.
const CookieLen = 44

// Sample directions of a flow_sample cookie (NXAST_SAMPLE4's direction).
const (
	SampleDirDefault uint8 = 0
	SampleDirIngress uint8 = 1
	SampleDirEgress  uint8 = 2
)

// PortNone is the datapath port number that means "no port" (ODPP_NONE).
const PortNone = ^uint32(0)

// Cookie is the decoded userdata of a sampling userspace action. Fields
// that do not belong to Type are zero.
type Cookie struct {
	Type CookieType
	// InPort is the OpenFlow in_port of the translated flow (0xffff when
	// unknown); Bridge identifies the bridge that translated it.
	InPort uint16
	Bridge [16]byte

	// sFlow: the flow's VLAN TCI after the actions and the sFlow
	// "output" value (an ifindex, 0x80000000|n for n outputs, or
	// 0x40000000|reason for a discard).
	VLANTCI     uint16
	SFlowOutput uint32

	// flow_sample: the OpenFlow sample action's arguments.
	Probability    uint16
	CollectorSetID uint32
	ObsDomainID    uint32
	ObsPointID     uint32
	Direction      uint8

	// OutputPort is the datapath output port (ipfix and flow_sample;
	// PortNone for input sampling).
	OutputPort uint32

	// controller: the packet-in's reason, controller id and length, the
	// rule's cookie, and the frozen pipeline state (RecircID) the
	// packet-in's metadata (and, with Continuation, its continuation)
	// comes from; DontSend marks a translation without side effects
	// (ofproto/trace).
	DontSend, Continuation bool
	Reason                 uint16
	RecircID               uint32
	RuleCookie             uint64
	ControllerID, MaxLen   uint16

	// slow_path: Open vSwitch's slow_path_reason bits (SlowBFD).
	SlowPathReason uint32
}

// Slow path reasons (Open vSwitch's enum slow_path_reason), by bit.
const (
	SlowCFM  uint32 = 1 << 0
	SlowBFD  uint32 = 1 << 1
	SlowLACP uint32 = 1 << 2
	SlowSTP  uint32 = 1 << 3
	SlowLLDP uint32 = 1 << 4
	// SlowAction: translation itself must see every packet (IGMP and
	// MLD under multicast snooping).
	SlowAction uint32 = 1 << 5
)

var slowPathNames = []string{"cfm", "bfd", "lacp", "stp", "lldp", "action", "match"}

// Field offsets within the cookie; the union starts at 20.
const (
	ckType      = 0
	ckInPort    = 2
	ckBridge    = 4
	ckUnion     = 20
	ckSFVLAN    = ckUnion
	ckSFOutput  = ckUnion + 4
	ckFSProb    = ckUnion
	ckFSSet     = ckUnion + 4
	ckFSDomain  = ckUnion + 8
	ckFSPoint   = ckUnion + 12
	ckFSOutput  = ckUnion + 16
	ckFSDir     = ckUnion + 20
	ckIPFIXOut  = ckUnion
	ckSlowWhy   = ckUnion + 4
	ckCtlDont   = ckUnion
	ckCtlCont   = ckUnion + 1
	ckCtlWhy    = ckUnion + 2
	ckCtlRecir  = ckUnion + 4
	ckCtlCookie = ckUnion + 8
	ckCtlID     = ckUnion + 16
	ckCtlLen    = ckUnion + 18
)

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Marshal returns the cookie as userspace userdata (host fields in
// little-endian order as Open vSwitch's in-memory layout on x86; the VLAN
// TCI in network order).
func (c *Cookie) Marshal() []byte {
	b := make([]byte, CookieLen)
	le := binary.LittleEndian
	le.PutUint16(b[ckType:], uint16(c.Type))
	le.PutUint16(b[ckInPort:], c.InPort)
	copy(b[ckBridge:ckUnion], c.Bridge[:])
	switch c.Type {
	case CookieSFlow:
		binary.BigEndian.PutUint16(b[ckSFVLAN:], c.VLANTCI)
		le.PutUint32(b[ckSFOutput:], c.SFlowOutput)
	case CookieFlowSample:
		le.PutUint16(b[ckFSProb:], c.Probability)
		le.PutUint32(b[ckFSSet:], c.CollectorSetID)
		le.PutUint32(b[ckFSDomain:], c.ObsDomainID)
		le.PutUint32(b[ckFSPoint:], c.ObsPointID)
		le.PutUint32(b[ckFSOutput:], c.OutputPort)
		le.PutUint32(b[ckFSDir:], uint32(c.Direction))
	case CookieIPFIX:
		le.PutUint32(b[ckIPFIXOut:], c.OutputPort)
	case CookieSlowPath:
		le.PutUint32(b[ckSlowWhy:], c.SlowPathReason)
	case CookieController:
		b[ckCtlDont], b[ckCtlCont] = b2u(c.DontSend), b2u(c.Continuation)
		le.PutUint16(b[ckCtlWhy:], c.Reason)
		le.PutUint32(b[ckCtlRecir:], c.RecircID)
		binary.BigEndian.PutUint64(b[ckCtlCookie:], c.RuleCookie)
		le.PutUint16(b[ckCtlID:], c.ControllerID)
		le.PutUint16(b[ckCtlLen:], c.MaxLen)
	}
	return b
}

// ParseCookie decodes userspace userdata as a sampling cookie. It
// reports false for anything else (a controller cookie, arbitrary bytes).
func ParseCookie(b []byte) (Cookie, bool) {
	if len(b) != CookieLen {
		return Cookie{}, false
	}
	le := binary.LittleEndian
	c := Cookie{Type: CookieType(le.Uint16(b[ckType:])), InPort: le.Uint16(b[ckInPort:])}
	copy(c.Bridge[:], b[ckBridge:ckUnion])
	switch c.Type {
	case CookieSFlow:
		c.VLANTCI = binary.BigEndian.Uint16(b[ckSFVLAN:])
		c.SFlowOutput = le.Uint32(b[ckSFOutput:])
	case CookieFlowSample:
		dir := le.Uint32(b[ckFSDir:])
		if dir > uint32(SampleDirEgress) {
			return Cookie{}, false
		}
		c.Probability = le.Uint16(b[ckFSProb:])
		c.CollectorSetID = le.Uint32(b[ckFSSet:])
		c.ObsDomainID = le.Uint32(b[ckFSDomain:])
		c.ObsPointID = le.Uint32(b[ckFSPoint:])
		c.OutputPort = le.Uint32(b[ckFSOutput:])
		c.Direction = uint8(dir)
	case CookieIPFIX:
		c.OutputPort = le.Uint32(b[ckIPFIXOut:])
	case CookieSlowPath:
		c.SlowPathReason = le.Uint32(b[ckSlowWhy:])
		if c.SlowPathReason == 0 || c.SlowPathReason >= 1<<len(slowPathNames) {
			return Cookie{}, false
		}
	case CookieController:
		if b[ckCtlDont] > 1 || b[ckCtlCont] > 1 {
			return Cookie{}, false
		}
		c.DontSend, c.Continuation = b[ckCtlDont] == 1, b[ckCtlCont] == 1
		c.Reason = le.Uint16(b[ckCtlWhy:])
		c.RecircID = le.Uint32(b[ckCtlRecir:])
		c.RuleCookie = binary.BigEndian.Uint64(b[ckCtlCookie:])
		c.ControllerID = le.Uint16(b[ckCtlID:])
		c.MaxLen = le.Uint16(b[ckCtlLen:])
	default:
		return Cookie{}, false
	}
	return c, true
}

// SetSFlowOutput rewrites the output value of an sFlow cookie's userdata
// in place (translation learns the outputs only after composing the
// sample action). It reports false if b is not an sFlow cookie.
func SetSFlowOutput(b []byte, vlanTCI uint16, output uint32) bool {
	if c, ok := ParseCookie(b); !ok || c.Type != CookieSFlow {
		return false
	}
	binary.BigEndian.PutUint16(b[ckSFVLAN:], vlanTCI)
	binary.LittleEndian.PutUint32(b[ckSFOutput:], output)
	return true
}

// appendText appends the cookie as Open vSwitch prints it inside
// userspace(), without the leading comma.
func (c *Cookie) appendText(dst []byte) []byte {
	switch c.Type {
	case CookieSFlow:
		dst = append(dst, "sFlow(vid="...)
		dst = strconv.AppendUint(dst, uint64(c.VLANTCI&0x0fff), 10)
		dst = append(dst, ",pcp="...)
		dst = strconv.AppendUint(dst, uint64(c.VLANTCI>>13), 10)
		dst = append(dst, ",output="...)
		dst = strconv.AppendUint(dst, uint64(c.SFlowOutput), 10)
	case CookieFlowSample:
		dst = append(dst, "flow_sample(probability="...)
		dst = strconv.AppendUint(dst, uint64(c.Probability), 10)
		dst = append(dst, ",collector_set_id="...)
		dst = strconv.AppendUint(dst, uint64(c.CollectorSetID), 10)
		dst = append(dst, ",obs_domain_id="...)
		dst = strconv.AppendUint(dst, uint64(c.ObsDomainID), 10)
		dst = append(dst, ",obs_point_id="...)
		dst = strconv.AppendUint(dst, uint64(c.ObsPointID), 10)
		dst = append(dst, ",output_port="...)
		dst = strconv.AppendUint(dst, uint64(c.OutputPort), 10)
		switch c.Direction {
		case SampleDirIngress:
			dst = append(dst, ",ingress"...)
		case SampleDirEgress:
			dst = append(dst, ",egress"...)
		}
	case CookieIPFIX:
		dst = append(dst, "ipfix(output_port="...)
		dst = strconv.AppendUint(dst, uint64(c.OutputPort), 10)
	case CookieSlowPath:
		dst = append(dst, "slow_path("...)
		first := true
		for i, n := range slowPathNames {
			if c.SlowPathReason&(1<<i) != 0 {
				if !first {
					dst = append(dst, ',')
				}
				dst, first = append(dst, n...), false
			}
		}
	case CookieController:
		dst = append(dst, "controller(reason="...)
		dst = strconv.AppendUint(dst, uint64(c.Reason), 10)
		dst = append(dst, ",dont_send="...)
		dst = strconv.AppendUint(dst, uint64(b2u(c.DontSend)), 10)
		dst = append(dst, ",continuation="...)
		dst = strconv.AppendUint(dst, uint64(b2u(c.Continuation)), 10)
		dst = append(dst, ",recirc_id="...)
		dst = strconv.AppendUint(dst, uint64(c.RecircID), 10)
		dst = append(dst, ",rule_cookie="...)
		if c.RuleCookie != 0 { // "%#x": 0 prints as 0
			dst = append(dst, "0x"...)
		}
		dst = strconv.AppendUint(dst, c.RuleCookie, 16)
		dst = append(dst, ",controller_id="...)
		dst = strconv.AppendUint(dst, uint64(c.ControllerID), 10)
		dst = append(dst, ",max_len="...)
		dst = strconv.AppendUint(dst, uint64(c.MaxLen), 10)
	}
	return append(dst, ')')
}

// cookieField is one "name=number" member of a cookie's text form.
type cookieField struct {
	name string
	bits int
	set  func(c *Cookie, v uint64)
}

// cookieTexts are the cookie forms userspace() accepts, by name, with
// their members in the order Open vSwitch prints them.
var cookieTexts = map[string]struct {
	typ    CookieType
	fields []cookieField
}{
	"sFlow": {CookieSFlow, []cookieField{
		{"vid", 12, func(c *Cookie, v uint64) { c.VLANTCI |= uint16(v) }},
		{"pcp", 3, func(c *Cookie, v uint64) { c.VLANTCI |= uint16(v) << 13 }},
		{"output", 32, func(c *Cookie, v uint64) { c.SFlowOutput = uint32(v) }},
	}},
	"ipfix": {CookieIPFIX, []cookieField{
		{"output_port", 32, func(c *Cookie, v uint64) { c.OutputPort = uint32(v) }},
	}},
	"controller": {CookieController, []cookieField{
		{"reason", 16, func(c *Cookie, v uint64) { c.Reason = uint16(v) }},
		{"dont_send", 1, func(c *Cookie, v uint64) { c.DontSend = v == 1 }},
		{"continuation", 1, func(c *Cookie, v uint64) { c.Continuation = v == 1 }},
		{"recirc_id", 32, func(c *Cookie, v uint64) { c.RecircID = uint32(v) }},
		{"rule_cookie", 64, func(c *Cookie, v uint64) { c.RuleCookie = v }},
		{"controller_id", 16, func(c *Cookie, v uint64) { c.ControllerID = uint16(v) }},
		{"max_len", 16, func(c *Cookie, v uint64) { c.MaxLen = uint16(v) }},
	}},
	"flow_sample": {CookieFlowSample, []cookieField{
		{"probability", 16, func(c *Cookie, v uint64) { c.Probability = uint16(v) }},
		{"collector_set_id", 32, func(c *Cookie, v uint64) { c.CollectorSetID = uint32(v) }},
		{"obs_domain_id", 32, func(c *Cookie, v uint64) { c.ObsDomainID = uint32(v) }},
		{"obs_point_id", 32, func(c *Cookie, v uint64) { c.ObsPointID = uint32(v) }},
		{"output_port", 32, func(c *Cookie, v uint64) { c.OutputPort = uint32(v) }},
	}},
}

// cookie parses the "(member=value,...)" after a cookie name in
// userspace(); the in_port is unknown in text (0xffff, as Open vSwitch).
func (p *parser) cookie(name string) ([]byte, error) {
	ct := cookieTexts[name]
	c := Cookie{Type: ct.typ, InPort: 0xffff}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	for i, f := range ct.fields {
		if i > 0 {
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
		if err := p.expect(f.name + "="); err != nil {
			return nil, err
		}
		v, err := p.uint(f.bits)
		if err != nil {
			return nil, err
		}
		f.set(&c, v)
	}
	if ct.typ == CookieFlowSample && p.peek() == ',' {
		p.pos++
		switch start := p.pos; p.name() {
		case "ingress":
			c.Direction = SampleDirIngress
		case "egress":
			c.Direction = SampleDirEgress
		default:
			return nil, p.errAt(start, "expected ingress or egress")
		}
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	return c.Marshal(), nil
}
