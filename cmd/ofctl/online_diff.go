package ofctl

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// flowVersion is one source's version of a flow (ovs-ofctl's
// fte_version): what replace-flows and diff-flows compare.
type flowVersion struct {
	table                    uint8
	cookie                   uint64
	idleTimeout, hardTimeout uint16
	importance               uint16
	flags                    uint16
	match                    mf.Match
	priority                 uint16
	actions                  string // formatted, compared as text
	acts                     []ofp.Action
}

// key identifies a flow across sources: table, priority and match.
func (fv *flowVersion) key() string {
	return fmt.Sprintf("%d|%s", fv.table, ofptext.FormatMatch(&fv.match, fv.priority))
}

func (fv *flowVersion) same(o *flowVersion) bool {
	return fv.cookie == o.cookie && fv.idleTimeout == o.idleTimeout && fv.hardTimeout == o.hardTimeout &&
		fv.importance == o.importance && fv.actions == o.actions
}

// format prints the version as ovs-ofctl's diff-flows does.
func (fv *flowVersion) format() string {
	var sb strings.Builder
	if fv.table != 0 {
		fmt.Fprintf(&sb, "table=%d ", fv.table)
	}
	sb.WriteString(ofptext.FormatMatch(&fv.match, fv.priority))
	if fv.cookie != 0 {
		fmt.Fprintf(&sb, " cookie=%#x", fv.cookie)
	}
	if fv.idleTimeout != 0 {
		fmt.Fprintf(&sb, " idle_timeout=%d", fv.idleTimeout)
	}
	if fv.hardTimeout != 0 {
		fmt.Fprintf(&sb, " hard_timeout=%d", fv.hardTimeout)
	}
	if fv.importance != 0 {
		fmt.Fprintf(&sb, " importance=%d", fv.importance)
	}
	sb.WriteString(" actions=" + fv.actions)
	return sb.String()
}

// flowSet is one source's flows in the order first seen.
type flowSet struct {
	keys   []string
	byKey  map[string]*flowVersion
	usable protocols
}

func (fs *flowSet) add(fv *flowVersion) {
	k := fv.key()
	if _, ok := fs.byKey[k]; !ok {
		fs.keys = append(fs.keys, k)
	}
	fs.byKey[k] = fv
}

// isFlowFile reports whether source names a regular file rather than a
// switch.
func isFlowFile(source string) bool {
	if source == "-" {
		return true
	}
	st, err := os.Stat(source)
	return err == nil && st.Mode().IsRegular()
}

func readFlowsFromFile(e *env, name string) (*flowSet, error) {
	texts, lines, err := readFlowFile(e, name)
	if err != nil {
		return nil, err
	}
	v := slices.Min(e.allowedVersions())
	fs := &flowSet{byKey: map[string]*flowVersion{}, usable: protoAny}
	for i, t := range texts {
		r, err := parseFlowReq(e.withPortNumbers(t), fcAdd, v)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, lines[i], err)
		}
		fs.usable &= r.usable(fcAdd)
		fl := r.fl
		table := fl.Table
		if table == ofptext.TableUnset {
			table = 0
		}
		fs.add(&flowVersion{table: table, cookie: r.newCookie, idleTimeout: fl.IdleTimeout, hardTimeout: fl.HardTimeout,
			importance: fl.Importance, flags: fl.Flags, match: fl.Match, priority: fl.Priority,
			actions: ofptext.FormatActions(fl.Actions, v), acts: fl.Actions})
	}
	return fs, nil
}

func readFlowsFromSwitch(e *env, target string, usable protocols) (*flowSet, error) {
	if err := e.nameLookups(target); err != nil {
		return nil, err
	}
	c, req, err := dumpRequest(e, []string{target}, false, usable)
	if err != nil {
		return nil, err
	}
	defer c.close()
	msgs, _, err := c.transact(req)
	if err != nil {
		return nil, e.reportReply(err)
	}
	fs := &flowSet{byKey: map[string]*flowVersion{}, usable: protoAny}
	for _, m := range msgs {
		rep, ok := m.Body.(*ofp.FlowStatsReply)
		if !ok {
			return nil, fmt.Errorf("unexpected reply %s", m.Raw)
		}
		for i := range rep.Stats {
			s := &rep.Stats[i]
			acts, err := ofp.DecodeOfpacts(s.Actions, m.Version, rep.Format == ofp.FormatOXM)
			if err != nil {
				return nil, fmt.Errorf("decoding flow stats reply: %w", err)
			}
			fs.add(&flowVersion{table: s.TableID, cookie: s.Cookie, idleTimeout: s.IdleTimeout, hardTimeout: s.HardTimeout,
				importance: s.Importance, match: s.Match, priority: s.Priority,
				actions: ofptext.FormatActions(acts, m.Version), acts: acts})
		}
	}
	return fs, nil
}

func readFlowsFrom(e *env, source string) (*flowSet, error) {
	if isFlowFile(source) {
		// diff-flows looks up no names for files.
		saved := e.portByName
		e.portByName = nil
		defer func() { e.portByName = saved }()
		return readFlowsFromFile(e, source)
	}
	return readFlowsFromSwitch(e, source, protoAny)
}

// errDiffer makes diff-flows exit with status 2 when the sources differ.
var errDiffer = errors.New("flows differ")

func diffFlowsCmd(e *env, args []string) error {
	a, err := readFlowsFrom(e, args[0])
	if err != nil {
		return err
	}
	b, err := readFlowsFrom(e, args[1])
	if err != nil {
		return err
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	differ := false
	keys := slices.Clone(a.keys)
	for _, k := range b.keys {
		if _, ok := a.byKey[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		va, vb := a.byKey[k], b.byKey[k]
		if va != nil && vb != nil && va.same(vb) {
			continue
		}
		differ = true
		if va != nil {
			w.WriteString("-" + va.format() + "\n")
		}
		if vb != nil {
			w.WriteString("+" + vb.format() + "\n")
		}
	}
	if differ {
		return errDiffer
	}
	return nil
}

func replaceFlowsCmd(e *env, args []string) error {
	if err := e.nameLookups(args[0]); err != nil {
		return err
	}
	names := e.names
	e.names = 0 // looked up already
	defer func() { e.names = names }()
	file, err := readFlowsFromFile(e, args[1])
	if err != nil {
		return err
	}
	sw, err := readFlowsFromSwitch(e, args[0], file.usable)
	if err != nil {
		return err
	}
	c, err := e.open(args[0])
	if err != nil {
		return err
	}
	defer c.close()
	type change struct {
		fv  *flowVersion
		cmd uint8
	}
	var changes []change
	usable := file.usable
	for _, k := range sw.keys {
		if _, ok := file.byKey[k]; !ok {
			changes = append(changes, change{sw.byKey[k], fcDeleteStrict})
		}
	}
	for _, k := range file.keys {
		if old, ok := sw.byKey[k]; ok && old.same(file.byKey[k]) {
			continue
		}
		changes = append(changes, change{file.byKey[k], fcAdd})
	}
	for _, ch := range changes {
		fl := &ofptext.Flow{Table: ch.fv.table, Match: ch.fv.match, Flags: ch.fv.flags}
		if fl.Table == 0 {
			fl.Table = ofptext.TableUnset
		}
		usable &= usableProtocols(fl, "")
	}
	p, err := c.setFlowModProtocol(usable)
	if err != nil {
		return e.reportReply(err)
	}
	var fms []ofp.Message
	for _, ch := range changes {
		fv := ch.fv
		fl := &ofptext.Flow{Version: c.version, Table: fv.table, Priority: fv.priority, IdleTimeout: fv.idleTimeout,
			HardTimeout: fv.hardTimeout, Importance: fv.importance, Flags: fv.flags, Match: fv.match}
		if ch.cmd == fcAdd {
			fl.Actions = fv.acts
		}
		r := &flowReq{fl: fl, newCookie: fv.cookie, outPort: ofp.PortAny, outGroup: ofp.GroupAny}
		fm, err := r.flowMod(ch.cmd, p, c.version)
		if err != nil {
			return err
		}
		fms = append(fms, fm)
	}
	if len(fms) == 0 {
		return nil
	}
	if e.bundle {
		return e.reportReply(c.bundle(fms))
	}
	return e.reportReply(c.transactNoReplyProgress(e.newProgress("sent", "flow changes", len(fms)), fms...))
}
