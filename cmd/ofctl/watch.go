package ofctl

// monitor's watch:[SPEC] arguments: flow monitor requests, parsed and
// sent as ovs-ofctl's parse_flow_monitor_request and ofctl_monitor do.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/internal/syserr"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofprint"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// watchFlagKeywords clear one flag of the default set each.
var watchFlagKeywords = map[string]uint16{
	"!initial": ofp.FMFInitial, "!add": ofp.FMFAdd, "!delete": ofp.FMFRemoved,
	"!modify": ofp.FMFModify, "!actions": ofp.FMFInstructions, "!own": ofp.FMFOnlyOwn,
}

// watchProtocols are the protocol keywords a SPEC may match on.
var watchProtocols = map[string]bool{
	"ip": true, "ipv6": true, "icmp": true, "icmp6": true, "tcp": true, "tcp6": true, "udp": true,
	"udp6": true, "sctp": true, "sctp6": true, "arp": true, "rarp": true, "mpls": true, "mplsm": true,
}

// parseWatch parses a watch: SPEC into monitor id. Port names in match
// fields are the switch's (e.portByName); table names e.tableNames.
func (e *env) parseWatch(spec string, id uint32, v uint8) (ofp.FlowMonitor, error) {
	fm := ofp.FlowMonitor{
		ID:       id,
		Flags:    ofp.FMFInitial | ofp.FMFAdd | ofp.FMFRemoved | ofp.FMFModify | ofp.FMFInstructions | ofp.FMFOnlyOwn,
		OutPort:  ofp.PortAny16,
		OutGroup: ofp.GroupAny,
		TableID:  0xff,
	}
	var match []string
	for _, tok := range strings.FieldsFunc(spec, func(r rune) bool { return strings.ContainsRune(", \t\r\n", r) }) {
		name, value := tok, ""
		if i := strings.IndexAny(tok, "=:"); i >= 0 {
			name, value = tok[:i], tok[i+1:]
		}
		if f, ok := watchFlagKeywords[name]; ok {
			fm.Flags &^= f
			continue
		}
		if watchProtocols[name] || mf.ByName(name) != nil {
			if p := matchFieldProtocols(tok); p&(protoOF10|protoOF10TID|protoNXM|protoNXMTID) == 0 {
				return fm, fmt.Errorf("%s: match field is not supported for flow monitor", name)
			}
			match = append(match, e.withPortNumbers(tok))
			continue
		}
		if value == "" {
			return fm, fmt.Errorf("%s: field %s missing value", spec, name)
		}
		switch name {
		case "table":
			t, ok := e.tableFromString(value)
			if !ok {
				return fm, fmt.Errorf("unknown table \"%s\"", value)
			}
			fm.TableID = t
		case "out_port":
			fm.OutPort = uint16(atoi(value))
		case "out_group":
			fm.OutGroup = uint32(atoi(value))
		default:
			return fm, fmt.Errorf("%s: unknown keyword %s", spec, name)
		}
	}
	if len(match) > 0 {
		fl, err := ofptext.ParseFlow(strings.Join(match, ",")+",actions=drop", v)
		if err != nil {
			return fm, err
		}
		fm.Match = fl.Match
	}
	return fm, nil
}

// tableFromString accepts a table number (255: all) or a name the
// switch reported.
func (e *env) tableFromString(s string) (uint8, bool) {
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return uint8(n), n <= 255
	}
	for id, name := range e.tableNames {
		if name == s {
			return id, true
		}
	}
	return 0, false
}

// atoi is C's atoi: leading blanks, a sign, then digits; 0 if none.
func atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<40; i++ {
		n = n*10 + int64(s[i]-'0')
	}
	if neg {
		n = -n
	}
	return n
}

// watch sends one flow monitor request and prints its replies to stdout
// (at verbosity 1), as ovs-ofctl's dump_transaction: replies to other
// requests are dropped, an OFPT_ERROR reply ends the wait.
func (c *vconn) watch(fm ofp.FlowMonitor) error {
	xid := c.e.nextXID()
	if err := c.send(c.version, xid, &ofp.FlowMonitorRequest{Monitors: []ofp.FlowMonitor{fm}}); err != nil {
		return fmt.Errorf("talking to %s (%s)", c.name, syserr.ClientText(err))
	}
	out := bufio.NewWriter(c.e.stdout)
	defer out.Flush()
	for {
		m, b, err := c.recvRaw()
		if err != nil {
			return fmt.Errorf("OpenFlow packet receive failed (%s)", err)
		}
		if m.XID != xid {
			continue
		}
		ofprint.Any(out, b, c.e.verbosity+1)
		if m.Raw == ofp.RawOFPT_ERROR {
			return nil
		}
		if _, ok := m.Body.(*ofp.FlowMonitorReply); !ok {
			var sb strings.Builder
			w := bufio.NewWriter(&sb)
			ofprint.Any(w, b, c.e.verbosity+1)
			w.Flush()
			return fmt.Errorf("received bad reply: %s", sb.String())
		}
		if !isMultipart(b) || binary.BigEndian.Uint16(b[10:])&ofp.StatsReplyMore == 0 {
			return nil
		}
	}
}
