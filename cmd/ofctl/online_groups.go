package ofctl

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofprint"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// Group and meter statistics and features, and the group commands that
// take the group syntax (ofptext.ParseGroupMod).

// dumpTransaction sends req and prints its replies with each; an
// OFPT_ERROR reply is printed to stdout and is no failure, as ovs-ofctl's
// dump_transaction.
func (e *env) dumpTransaction(c *vconn, req ofp.Message, each func(w *bufio.Writer, m *ofp.Msg) error) error {
	msgs, _, err := c.transact(req)
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	var re *replyError
	if errors.As(err, &re) {
		printErrorMsg(w, re.raw)
		return nil
	}
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := each(w, m); err != nil {
			return err
		}
	}
	return nil
}

func dumpGroupFeaturesCmd(e *env, args []string) error {
	c, err := e.open(args[0])
	if err != nil {
		return err
	}
	defer c.close()
	return e.dumpTransaction(c, &ofp.GroupFeaturesRequest{}, ofprint.GroupFeatures)
}

// parseGroupSelector parses the GROUP argument of dump-group-stats in
// the group syntax, as ovs-ofctl parses a del-groups argument.
func parseGroupSelector(s string) (uint32, error) {
	gm, _, err := ofptext.ParseGroupMod(s, ofp.GroupDelete)
	if err != nil {
		return 0, err
	}
	return gm.GroupID, nil
}

// selector returns the GROUP or METER argument after SWITCH parsed by
// parse, or all when there is none.
func selector(args []string, all uint32, parse func(string) (uint32, error)) (uint32, error) {
	if len(args) > 1 {
		return parse(args[1])
	}
	return all, nil
}

func dumpGroupStatsCmd(e *env, args []string) error {
	id, err := selector(args, ofp.GroupAll, parseGroupSelector)
	if err != nil {
		return err
	}
	if err := e.nameLookups(args[0]); err != nil {
		return err
	}
	c, err := e.open(args[0])
	if err != nil {
		return err
	}
	defer c.close()
	return e.dumpTransaction(c, &ofp.GroupStatsRequest{GroupID: id}, ofprint.GroupStats)
}

// parseMeterSelector parses the METER argument of meter-stats and
// dump-meters: the meter keyword of the meter syntax.
func parseMeterSelector(s string) (uint32, error) {
	mm, err := ofptext.ParseMeterMod(s, ofptext.MeterSelect)
	if err != nil {
		return 0, err
	}
	return mm.MeterID, nil
}

// openForMeters opens target for a meter request: OpenFlow 1.3 or later.
func (e *env) openForMeters(target string) (*vconn, error) {
	c, err := e.open(target)
	if err != nil {
		return nil, err
	}
	if _, err := c.setFlowModProtocol(protoOXM13 | protoOXM14 | protoOXM15); err != nil {
		c.close()
		return nil, e.reportReply(err)
	}
	return c, nil
}

func meterStatsCmd(e *env, args []string) error {
	id, err := selector(args, ofp.MeterAll, parseMeterSelector)
	if err != nil {
		return err
	}
	c, err := e.openForMeters(args[0])
	if err != nil {
		return err
	}
	defer c.close()
	return e.dumpTransaction(c, &ofp.MeterStatsRequest{MeterID: id}, ofprint.MeterStats)
}

func meterFeaturesCmd(e *env, args []string) error {
	c, err := e.openForMeters(args[0])
	if err != nil {
		return err
	}
	defer c.close()
	return e.dumpTransaction(c, &ofp.MeterFeaturesRequest{}, ofprint.MeterFeatures)
}

// dumpGroupsCmd prints the groups' descriptions. As in ovs-ofctl, GROUP
// is a bare decimal group ID; anything else dumps every group.
func dumpGroupsCmd(e *env, args []string) error {
	id := uint32(ofp.GroupAll)
	if len(args) > 1 {
		if n, err := strconv.ParseUint(args[1], 10, 32); err == nil {
			id = uint32(n)
		}
	}
	c, err := e.open(args[0])
	if err != nil {
		return err
	}
	defer c.close()
	return e.dumpTransaction(c, &ofp.GroupDescRequest{GroupID: id}, ofprint.GroupDesc)
}

// versionProtocols are the flow protocols of the OpenFlow versions vs.
func versionProtocols(vs ofptext.Versions) protocols {
	var list []uint8
	for v := mf.OF10; v <= mf.OF15; v++ {
		if vs.Has(v) {
			list = append(list, v)
		}
	}
	return allowedProtocols(list)
}

// setModProtocol picks the protocol for a group or meter mod as
// ovs-ofctl's open_vconn_for_flow_mod does; unlike flow mods, OpenFlow
// 1.1 is fine.
func (c *vconn) setModProtocol(usable protocols) error {
	if c.version == mf.OF11 && usable&allowedProtocols(c.e.allowedVersions())&protoOF11 != 0 {
		return nil
	}
	_, err := c.setFlowModProtocol(usable)
	return err
}

// groupCommandNames name the group commands in ovs-ofctl's complaint
// about a version that cannot carry them.
var groupCommandNames = map[uint16]string{ofp.GroupInsertBucket: "insert-bucket", ofp.GroupRemoveBucket: "remove-bucket"}

// checkGroupModVersion refuses, as ovs-ofctl's encoder, the OpenFlow 1.5
// bucket commands in OpenFlow 1.1 to 1.4 (OpenFlow 1.0 sends them as
// NXT_GROUP_MOD).
func checkGroupModVersion(gm *ofp.GroupMod, v uint8) error {
	if name, ok := groupCommandNames[gm.Command]; ok && v > mf.OF10 && v < mf.OF15 {
		return fmt.Errorf("%s needs OpenFlow 1.5 or later ('-O OpenFlow15')", name)
	}
	return nil
}

// groupModCmd parses texts (from the command line, or a file's lines
// with where naming them) as group mods for command and sends them to
// target, each followed by a barrier, or in one bundle with --bundle.
func groupModCmd(e *env, target string, texts []string, where func(int) string, command int) error {
	// Port names are looked up before parsing, as ovs-ofctl does.
	if err := e.nameLookups(target); err != nil {
		return err
	}
	vs := ofptext.AllVersions
	gms := make([]*ofp.GroupMod, 0, len(texts))
	for i, t := range texts {
		gm, v, err := ofptext.ParseGroupMod(e.withPortNumbers(t), command)
		if err != nil {
			if where != nil {
				return fmt.Errorf("%s%w", where(i), err)
			}
			return err
		}
		vs &= v
		gms = append(gms, gm)
	}
	usable := versionProtocols(vs)
	if e.bundle {
		usable &= protoOXM13 | protoOXM14 | protoOXM15
	}
	c, err := e.open(target)
	if err != nil {
		return err
	}
	defer c.close()
	if err := c.setModProtocol(usable); err != nil {
		return e.reportReply(err)
	}
	if e.bundle {
		msgs := make([]ofp.Message, len(gms))
		for i, gm := range gms {
			if err := checkGroupModVersion(gm, c.version); err != nil {
				return err
			}
			msgs[i] = gm
		}
		return c.bundle(msgs)
	}
	for _, gm := range gms {
		if err := checkGroupModVersion(gm, c.version); err != nil {
			return err
		}
		if err := c.transactNoReply(gm); err != nil {
			return e.reportReply(err)
		}
	}
	return nil
}

// groupFileCmd runs add-groups (and add-group or mod-group with "-"):
// each line of the file is a group, with its own leading command word
// when command is ofp.GroupAdd.
func groupFileCmd(e *env, target, file string, command int) error {
	if err := e.nameLookups(target); err != nil {
		return err
	}
	names := e.names
	e.names = 0 // looked up already
	defer func() { e.names = names }()
	texts, lines, err := readFlowFile(e, file)
	if err != nil {
		return err
	}
	if command == ofp.GroupAdd {
		command = ofptext.GroupFromText
	}
	return groupModCmd(e, target, texts, func(i int) string { return fmt.Sprintf("%s:%d: ", file, lines[i]) }, command)
}

// groupArgCmd runs a group command whose GROUP argument is optional
// (empty when absent) or "-" for a file.
func groupArgCmd(command int) func(e *env, args []string) error {
	return func(e *env, args []string) error {
		text := ""
		if len(args) > 1 {
			text = args[1]
		}
		if text == "-" {
			return groupFileCmd(e, args[0], text, command)
		}
		return groupModCmd(e, args[0], []string{text}, nil, command)
	}
}

func addGroupsCmd(e *env, args []string) error {
	return groupFileCmd(e, args[0], args[1], ofp.GroupAdd)
}

// modGroupCmd modifies a group, or with --may-create adds it if missing.
func modGroupCmd(e *env, args []string) error {
	cmd := ofp.GroupModify
	if e.mayCreate {
		cmd = ofp.GroupAddOrMod
	}
	return groupArgCmd(cmd)(e, args)
}

var (
	delGroupsCmd     = groupArgCmd(ofp.GroupDelete)
	insertBucketsCmd = groupArgCmd(ofp.GroupInsertBucket)
	removeBucketsCmd = groupArgCmd(ofp.GroupRemoveBucket)
	addGroupCmd      = groupArgCmd(ofp.GroupAdd)
)
