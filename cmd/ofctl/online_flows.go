package ofctl

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofprint"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// Flow mod commands (OFPFC_*).
const (
	fcAdd uint8 = iota
	fcModify
	fcModifyStrict
	fcDelete
	fcDeleteStrict
	fcDump = 0xff // not a flow mod: a flow stats request's match
)

// flowReq is one flow of an online command: the parsed flow plus the
// parts ofptext.ParseFlow does not model for modifications, deletions
// and dumps (cookie match, new cookie, out_port, out_group).
type flowReq struct {
	fl                 *ofptext.Flow
	text               string
	cookie, cookieMask uint64
	newCookie          uint64
	outPort            uint32 // OpenFlow 1.1+ form, ofp.PortAny for none
	outGroup           uint32
}

// reservedPorts are the OpenFlow 1.0 reserved port names.
var reservedPorts = map[string]uint16{
	"IN_PORT": 0xfff8, "TABLE": 0xfff9, "NORMAL": 0xfffa, "FLOOD": 0xfffb, "ALL": 0xfffc,
	"CONTROLLER": 0xfffd, "LOCAL": 0xfffe, "NONE": 0xffff, "ANY": 0xffff,
}

func parseOutPort(s string) (uint32, error) {
	if p, ok := reservedPorts[strings.ToUpper(s)]; ok {
		return ofp.PortToOF11(p), nil
	}
	n, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		return 0, fmt.Errorf("%s: unknown port", s)
	}
	if n < 0xff00 {
		return uint32(n), nil
	}
	if n >= 0xfff8 && n <= 0xffff {
		return ofp.PortToOF11(uint16(n)), nil
	}
	if n >= 0xffffff00 {
		return uint32(n), nil
	}
	return 0, fmt.Errorf("%s: port value out of range", s)
}

// splitFlowText splits s at its "actions" keyword as ovs-ofctl does.
func splitFlowText(s string) (match, acts string, ok bool) {
	for i := 0; ; {
		j := strings.Index(s[i:], "actions")
		if j < 0 {
			return s, "", false
		}
		j += i
		k := j + len("actions")
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		if (j == 0 || strings.IndexByte(", \t", s[j-1]) >= 0) && k < len(s) && (s[k] == '=' || s[k] == ':') {
			return s[:j], s[k+1:], true
		}
		i = j + 1
	}
}

// parseFlowReq parses s for command cmd in version v.
func parseFlowReq(s string, cmd uint8, v uint8) (*flowReq, error) {
	r := &flowReq{text: s, outPort: ofp.PortAny, outGroup: ofp.GroupAny}
	if cmd == fcModify || cmd == fcModifyStrict {
		r.newCookie = ^uint64(0)
	}
	matchPart, actPart, hasActs := splitFlowText(s)
	table := uint8(ofptext.TableUnset)
	var kept []string
	for _, tok := range strings.FieldsFunc(matchPart, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' || r == '\n' }) {
		k, val, _ := strings.Cut(tok, "=")
		if i := strings.IndexAny(tok, "=:"); i >= 0 {
			k, val = tok[:i], tok[i+1:]
		}
		switch k {
		case "cookie":
			vs, ms, masked := strings.Cut(val, "/")
			c, err := strconv.ParseUint(vs, 0, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: invalid cookie", val)
			}
			if masked {
				if cmd == fcAdd {
					return nil, errors.New("flow additions cannot use a cookie mask")
				}
				m, err := parseMask64(ms)
				if err != nil {
					return nil, fmt.Errorf("%s: invalid cookie mask", ms)
				}
				r.cookie, r.cookieMask = c, m
			} else {
				if cmd != fcAdd && cmd != fcModify && cmd != fcModifyStrict {
					return nil, fmt.Errorf("cannot set cookie (to match on a cookie, specify a mask, e.g. cookie=%s/-1)", val)
				}
				r.newCookie = c
			}
			continue
		case "out_port":
			if cmd == fcAdd || cmd == fcModify || cmd == fcModifyStrict {
				break
			}
			p, err := parseOutPort(val)
			if err != nil {
				return nil, err
			}
			r.outPort = p
			continue
		case "out_group":
			if cmd == fcAdd || cmd == fcModify || cmd == fcModifyStrict {
				break
			}
			g, err := strconv.ParseUint(val, 0, 32)
			if err != nil {
				return nil, fmt.Errorf("invalid group %q", val)
			}
			r.outGroup = uint32(g)
			continue
		case "priority":
			if cmd == fcDump || cmd == fcDelete {
				return nil, fmt.Errorf("unknown keyword %s", k)
			}
		case "idle_timeout", "hard_timeout", "send_flow_rem", "check_overlap", "reset_counts", "no_packet_counts", "no_byte_counts":
			if cmd == fcDump || cmd == fcDelete || cmd == fcDeleteStrict {
				return nil, fmt.Errorf("unknown keyword %s", k)
			}
		case "importance":
			if cmd != fcAdd {
				return nil, fmt.Errorf("unknown keyword %s", k)
			}
		case "table":
			if n, err := strconv.ParseUint(val, 0, 8); err == nil {
				table = uint8(n)
				continue
			}
		}
		kept = append(kept, tok)
	}
	text := strings.Join(kept, ",")
	switch {
	case hasActs:
		text += ",actions=" + actPart
	case cmd == fcDelete || cmd == fcDeleteStrict || cmd == fcDump:
		text += ",actions=drop"
	}
	fl, err := ofptext.ParseFlow(text, v)
	if err != nil {
		return nil, err
	}
	fl.Table = table
	if cmd == fcDelete || cmd == fcDeleteStrict || cmd == fcDump {
		fl.Actions = nil
	}
	r.fl = fl
	return r, nil
}

func parseMask64(s string) (uint64, error) {
	if s == "-1" {
		return ^uint64(0), nil
	}
	return strconv.ParseUint(s, 0, 64)
}

// usable is the set of protocols that can carry the request.
func (r *flowReq) usable(cmd uint8) protocols {
	fl := *r.fl
	if cmd == fcDump {
		fl.Table = ofptext.TableUnset // flow stats requests always carry a table
	}
	p := usableProtocols(&fl, r.text)
	if r.cookieMask != 0 {
		p &= protoNXM | protoNXMTID | protoOF11 | protoOXM
	}
	return p
}

// flowMod encodes the request as a flow mod for protocol p in version v.
func (r *flowReq) flowMod(cmd uint8, p protocols, v uint8) (*ofp.FlowMod, error) {
	fl := r.fl
	fm := &ofp.FlowMod{Command: cmd, IdleTimeout: fl.IdleTimeout, HardTimeout: fl.HardTimeout,
		Priority: fl.Priority, BufferID: ofp.BufferNone, Flags: fl.Flags, Importance: fl.Importance,
		Match: fl.Match, OutGroup: r.outGroup}
	oxm := p&(protoOF11|protoOXM) != 0
	switch {
	case oxm:
		fm.Format = ofp.FormatOXM
		fm.Cookie, fm.CookieMask = r.cookie, r.cookieMask
		of11 := p&protoOF11 != 0
		if cmd == fcAdd || of11 && (cmd == fcModify || cmd == fcModifyStrict) && r.cookieMask == 0 {
			fm.Cookie = r.newCookie
		}
		fm.TableID = fl.Table
		if fl.Table == ofptext.TableUnset && (of11 || cmd != fcDelete && cmd != fcDeleteStrict) {
			// OpenFlow 1.1+ has no "any table" for adds and modifies,
			// OpenFlow 1.1 not even for deletes.
			fm.TableID = 0
		}
		fm.OutPort = r.outPort
	default:
		fm.Format = ofp.FormatOF10
		if p&(protoNXM|protoNXMTID) != 0 {
			fm.Format = ofp.FormatNXM
			fm.CookieMatch, fm.CookieMask = r.cookie, r.cookieMask
		}
		fm.Cookie = r.newCookie
		if p&(protoOF10TID|protoNXMTID) != 0 {
			fm.TableID = fl.Table
		}
		op, err := ofp.PortFromOF11(r.outPort)
		if err != nil {
			return nil, err
		}
		fm.OutPort = uint32(op)
	}
	acts, err := ofp.AppendOfpacts(nil, fl.Actions, v, oxm)
	if err != nil {
		return nil, fmt.Errorf("encoding actions: %w", err)
	}
	fm.Instructions = acts
	return fm, nil
}

// setFlowModProtocol picks the flow mod protocol as ovs-ofctl does: the
// connection's own protocol if usable, else the first usable one it can
// switch to (OpenFlow 1.0 only: table id extension, NXM, or both), sending
// the switch requests (each followed by a barrier).
func (c *vconn) setFlowModProtocol(usable protocols) (protocols, error) {
	allowed := allowedProtocols(c.e.allowedVersions())
	cur := protoOF10
	if c.version != mf.OF10 {
		cur = protoOXM12 << (c.version - mf.OF12)
		if c.version == mf.OF11 {
			cur = protoOF11
		}
	}
	if usable&allowed&cur != 0 {
		return cur, nil
	}
	if c.version == mf.OF10 {
		for _, p := range []protocols{protoOF10TID, protoNXM, protoNXMTID} {
			if p&usable&allowed == 0 {
				continue
			}
			return p, c.switchProtocol(p)
		}
	}
	return 0, fmt.Errorf("none of the usable flow formats (%s) is among the allowed flow formats (%s)", usable, allowed)
}

// switchProtocol moves an OpenFlow 1.0 connection from plain OpenFlow 1.0
// to p: NXM flow format first, then the table id extension.
func (c *vconn) switchProtocol(p protocols) error {
	if p&(protoNXM|protoNXMTID) != 0 {
		if err := c.transactNoReply(&ofp.SetFlowFormat{Format: ofp.NXFFNXM}); err != nil {
			return err
		}
	}
	if p&(protoOF10TID|protoNXMTID) != 0 {
		if err := c.transactNoReply(&ofp.FlowModTableID{Enable: true}); err != nil {
			return err
		}
	}
	return nil
}

// nameLookups accounts for the connections ovs-ofctl opens to learn
// port and table names before it parses flows (unless --no-names): each
// uses two transaction IDs (hello and request), which dumps print.
func (e *env) nameLookups(target string) error {
	if e.names == 0 {
		return nil
	}
	ports, err := e.portNames(target)
	if err != nil {
		return err
	}
	e.portByName = map[string]uint32{}
	for n, name := range ports {
		e.portByName[name] = n
	}
	return nil
}

// portNameRefRE finds port names where a flow's or group's text may use
// them: the in_port match, output actions and a bucket's watch_port.
var portNameRefRE = regexp.MustCompile(`\b(in_port[=:]|output[:(]|watch_port[:=])([A-Za-z_][A-Za-z0-9_.-]*)`)

// withPortNumbers replaces the switch's port names in a flow's text by
// their numbers, as ovs-ofctl accepts names after looking them up.
func (e *env) withPortNumbers(text string) string {
	if len(e.portByName) == 0 {
		return text
	}
	return portNameRefRE.ReplaceAllStringFunc(text, func(m string) string {
		sub := portNameRefRE.FindStringSubmatch(m)
		if n, ok := e.portByName[sub[2]]; ok {
			return sub[1] + strconv.FormatUint(uint64(n), 10)
		}
		return m
	})
}

func readFlowFile(e *env, name string) ([]string, []int, error) {
	var r io.Reader = e.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: open failed (%w)", name, unwrapPathErr(err))
		}
		defer f.Close()
		r = f
	}
	var flows []string
	var lines []int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		flows = append(flows, l)
		lines = append(lines, n)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: read failed: %w", name, err)
	}
	return flows, lines, nil
}

// flowModCmd runs add-flow(s), mod-flows and del-flows.
func flowModCmd(e *env, target string, texts []string, where func(int) string, cmd uint8) error {
	if e.strict && cmd == fcModify {
		cmd = fcModifyStrict
	}
	if e.strict && cmd == fcDelete {
		cmd = fcDeleteStrict
	}
	// ovs-ofctl looks up names before it parses, so a bad target is
	// reported before a bad flow. Then it parses for the lowest allowed
	// version, before connecting for the flow mods.
	if err := e.nameLookups(target); err != nil {
		return err
	}
	for i := range texts {
		texts[i] = e.withPortNumbers(texts[i])
	}
	lowest := slices.Min(e.allowedVersions())
	usable := protoAny
	for i, t := range texts {
		r, err := parseFlowReq(t, cmd, lowest)
		if err != nil {
			if where != nil {
				return fmt.Errorf("%s%w", where(i), err)
			}
			return err
		}
		usable &= r.usable(cmd)
	}
	c, err := e.open(target)
	if err != nil {
		return err
	}
	defer c.close()
	p, err := c.setFlowModProtocol(usable)
	if err != nil {
		return e.reportReply(err)
	}
	var fms []ofp.Message
	for _, t := range texts {
		r, err := parseFlowReq(t, cmd, c.version)
		if err != nil {
			return err
		}
		fm, err := r.flowMod(cmd, p, c.version)
		if err != nil {
			return err
		}
		fms = append(fms, fm)
	}
	if e.bundle {
		return e.reportReply(c.bundle(fms))
	}
	var prog *progress
	if where != nil { // flows from a file
		prog = e.newProgress(flowModVerbs[cmd], "flows", len(fms))
	}
	return e.reportReply(c.transactNoReplyProgress(prog, fms...))
}

// flowModVerbs word progress lines by flow_mod command.
var flowModVerbs = map[uint8]string{fcAdd: "added", fcModify: "modified", fcModifyStrict: "modified",
	fcDelete: "deleted", fcDeleteStrict: "deleted"}

// bundle sends fms in one atomic, ordered bundle as ovs-ofctl --bundle:
// errors the switch reports are printed as "Error CODE for: REQUEST" and
// a failed bundle ends with "talking to TARGET (Protocol error)".
func (c *vconn) bundle(fms []ofp.Message) error {
	const id = 0
	flags := uint16(ofp.BundleAtomic | ofp.BundleOrdered)
	// The messages are numbered before the bundle is opened, as
	// ovs-ofctl does.
	sent := map[uint32][]byte{}
	var adds []*ofp.BundleAdd
	var xids []uint32
	for _, fm := range fms {
		xid := c.e.nextXID()
		inner, err := ofp.Encode(nil, c.version, xid, fm)
		if err != nil {
			return err
		}
		sent[xid] = inner
		adds = append(adds, &ofp.BundleAdd{BundleID: id, Flags: flags, Msg: inner})
		xids = append(xids, xid)
	}
	w := bufio.NewWriter(c.e.stderr)
	defer w.Flush()
	failed := false
	// wait reads until the reply to xid, printing errors for requests
	// in sent.
	wait := func(xid uint32) error {
		for {
			m, _, err := c.recvRaw()
			if err != nil {
				return err
			}
			if m.Raw == ofp.RawOFPT_ERROR {
				if req, ok := sent[m.XID]; ok {
					em := m.Body.(*ofp.ErrorMsg)
					fmt.Fprintf(w, "Error %s for: ", em.ErrCode(m.Version))
					if err := ofprint.Message(w, req); err != nil {
						ofprint.HexDump(w, req)
					}
					failed = true
					if m.XID == xid {
						return nil
					}
					continue
				}
			}
			if m.XID == xid {
				return nil
			}
		}
	}
	ctrl := func(typ uint16) error {
		xid := c.e.nextXID()
		bc := &ofp.BundleCtrl{BundleID: id, Type: typ, Flags: flags}
		b, err := ofp.Encode(nil, c.version, xid, bc)
		if err != nil {
			return err
		}
		sent[xid] = b
		if err := c.sendRaw(b); err != nil {
			return err
		}
		return wait(xid)
	}
	if err := ctrl(ofp.BundleOpenRequest); err != nil {
		return err
	}
	if !failed {
		for i, a := range adds {
			if err := c.send(c.version, xids[i], a); err != nil {
				return err
			}
		}
		xid := c.e.nextXID()
		if err := c.send(c.version, xid, &ofp.BarrierRequest{}); err != nil {
			return err
		}
		if err := wait(xid); err != nil {
			return err
		}
		// A message the switch refused already: discard the bundle
		// rather than commit the rest.
		typ := uint16(ofp.BundleCommitRequest)
		if failed {
			typ = ofp.BundleDiscardRequest
		}
		if err := ctrl(typ); err != nil {
			return err
		}
	}
	if failed {
		return fmt.Errorf("talking to %s (Protocol error)", c.name)
	}
	return nil
}

// reportReply prints an OFPT_ERROR reply as ovs-ofctl does (to stderr,
// exit status 1) and passes other errors on.
func (e *env) reportReply(err error) error {
	var re *replyError
	if !errors.As(err, &re) {
		return err
	}
	w := bufio.NewWriter(e.stderr)
	printErrorMsg(w, re.raw)
	w.Flush()
	return errSilent
}

// errSilent makes Run exit 1 without printing anything more.
var errSilent = errors.New("")

func printErrorMsg(w *bufio.Writer, b []byte) {
	m, err := ofp.Decode(b)
	if err != nil {
		fmt.Fprintf(w, "OFPT_ERROR: %v\n", err)
		return
	}
	ofprint.ErrorMsgBody(w, m)
}

func addFlowCmd(e *env, args []string) error {
	return flowModCmd(e, args[0], args[1:2], nil, fcAdd)
}

func addFlowsCmd(e *env, args []string) error {
	if err := e.nameLookups(args[0]); err != nil {
		return err
	}
	names := e.names
	e.names = 0 // looked up already
	defer func() { e.names = names }()
	flows, lines, err := readFlowFile(e, args[1])
	if err != nil {
		return err
	}
	return flowModCmd(e, args[0], flows, func(i int) string { return fmt.Sprintf("%s:%d: ", args[1], lines[i]) }, fcAdd)
}

func modFlowsCmd(e *env, args []string) error {
	return flowModCmd(e, args[0], args[1:2], nil, fcModify)
}

func delFlowsCmd(e *env, args []string) error {
	text := ""
	if len(args) > 1 {
		text = args[1]
	}
	return flowModCmd(e, args[0], []string{text}, nil, fcDelete)
}

// dumpRequest opens the connection for a flow or aggregate dump: parses
// the match, switches an OpenFlow 1.0 connection to NXM (ovs-ofctl
// prefers it for dumps) and builds the request.
func dumpRequest(e *env, args []string, aggregate bool, usableMask protocols) (*vconn, *ofp.FlowStatsRequest, error) {
	text := ""
	if len(args) > 1 {
		text = args[1]
		if err := e.nameLookups(args[0]); err != nil {
			return nil, nil, err
		}
		text = e.withPortNumbers(text)
	}
	lowest := slices.Min(e.allowedVersions())
	r, err := parseFlowReq(text, fcDump, lowest)
	if err != nil {
		return nil, nil, err
	}
	usable := r.usable(fcDump) & usableMask
	c, err := e.open(args[0])
	if err != nil {
		return nil, nil, err
	}
	if r, err = parseFlowReq(text, fcDump, c.version); err != nil {
		c.close()
		return nil, nil, err
	}
	req := &ofp.FlowStatsRequest{Aggregate: aggregate, TableID: r.fl.Table, Match: r.fl.Match,
		Cookie: r.cookie, CookieMask: r.cookieMask, OutPort: r.outPort, OutGroup: r.outGroup, Format: ofp.FormatOXM}
	if c.version == mf.OF10 {
		allowed := allowedProtocols(c.e.allowedVersions())
		op, err := ofp.PortFromOF11(r.outPort)
		if err != nil {
			c.close()
			return nil, nil, err
		}
		req.OutPort = uint32(op)
		switch {
		case usable&allowed&protoNXM != 0:
			req.Format = ofp.FormatNXM
			if err := c.switchProtocol(protoNXM); err != nil {
				c.close()
				return nil, nil, e.reportReply(err)
			}
		case usable&allowed&protoOF10 != 0:
			req.Format = ofp.FormatOF10
		default:
			c.close()
			return nil, nil, fmt.Errorf("switch does not support any of the usable flow formats (%s)", usable)
		}
	} else if c.version == mf.OF11 {
		if usable&protoOF11 == 0 {
			c.close()
			return nil, nil, fmt.Errorf("none of the usable flow formats (%s) is among the allowed flow formats (%s)", usable, allowedProtocols(c.e.allowedVersions()))
		}
	} else if usable&(protoOF11|protoOXM12<<(c.version-mf.OF12)) == 0 {
		c.close()
		return nil, nil, fmt.Errorf("switch does not support any of the usable flow formats (%s)", usable)
	}
	return c, req, nil
}

func dumpFlowsCmd(e *env, args []string) error {
	c, req, err := dumpRequest(e, args, false, protoAny)
	if err != nil {
		return err
	}
	defer c.close()
	msgs, _, err := c.transact(req)
	if err != nil {
		return e.reportReply(err)
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	var all []ofprint.FlowEntry
	for _, m := range msgs {
		rep, ok := m.Body.(*ofp.FlowStatsReply)
		if !ok {
			return fmt.Errorf("unexpected reply %s", m.Raw)
		}
		entries, err := ofprint.FlowStatsEntries(m, rep)
		if err != nil {
			return err
		}
		if len(e.sort) > 0 || e.noStats || e.names == 1 {
			all = append(all, entries...)
			continue
		}
		ofprint.FlowStatsEntriesTo(w, m, rep, entries)
	}
	if len(e.sort) > 0 {
		sortFlows(all, e.sort)
	}
	var ports map[uint32]string
	if e.names == 1 {
		if ports, err = e.portNames(args[0]); err != nil {
			return err
		}
	}
	for _, fe := range all {
		// This path decodes without the flow age extension, as
		// ovs-ofctl's vconn_dump_flows.
		s := *fe.Stats
		s.IdleAge, s.HardAge = -1, -1
		fe.Stats = &s
		line := fe.Format(!e.noStats)
		if ports != nil {
			line = withTableNames(withPortNames(line, ports), e.tableNames)
		}
		w.WriteString(" " + line + "\n")
	}
	return nil
}

// sortKey is one --sort/--rsort criterion: a field (nil: priority).
type sortKey struct {
	field *mf.Field
	desc  bool
}

func sortFlows(fs []ofprint.FlowEntry, keys []sortKey) {
	slices.SortStableFunc(fs, func(a, b ofprint.FlowEntry) int {
		for _, k := range keys {
			var r int
			if k.field == nil {
				r = cmp.Compare(a.Stats.Priority, b.Stats.Priority)
			} else {
				f := k.field
				ina := !a.Stats.Match.IsWild(f) && a.Stats.Match.PrereqsOK(f)
				inb := !b.Stats.Match.IsWild(f) && b.Stats.Match.PrereqsOK(f)
				switch {
				case ina != inb:
					// Flows without the field sort after those with it,
					// whatever the direction.
					if ina {
						return -1
					}
					return 1
				case ina:
					va, _ := fieldUint(&a.Stats.Match, f)
					vb, _ := fieldUint(&b.Stats.Match, f)
					r = cmp.Compare(va, vb)
				}
			}
			if k.desc {
				r = -r
			}
			if r != 0 {
				return r
			}
		}
		// ovs-ofctl breaks ties by priority, highest first, whatever
		// the criteria.
		return cmp.Compare(b.Stats.Priority, a.Stats.Priority)
	})
}

func dumpAggregateCmd(e *env, args []string) error {
	c, req, err := dumpRequest(e, args, true, protoAny)
	if err != nil {
		return err
	}
	defer c.close()
	msgs, _, err := c.transact(req)
	if err != nil {
		return e.reportReply(err)
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	for _, m := range msgs {
		if _, ok := m.Body.(*ofp.AggregateStatsReply); !ok {
			return fmt.Errorf("unexpected reply %s", m.Raw)
		}
		ofprint.AggregateReply(w, m)
	}
	return nil
}
