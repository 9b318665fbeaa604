package ofctl

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// Group and meter statistics and features, and the group commands that
// take the group syntax (ofptext.ParseGroupMod).

func init() {
	printers[kindOf(&ofp.MeterStatsRequest{})] = func(w *bufio.Writer, m *ofp.Msg) error {
		header(w, "OFPST_METER request", m)
		fmt.Fprintf(w, " meter=%s\n", meterIDString(m.Body.(*ofp.MeterStatsRequest).MeterID))
		return nil
	}
	for body, p := range map[ofp.Message]msgPrinter{
		&ofp.GroupFeaturesReply{}: printGroupFeatures, &ofp.GroupStatsReply{}: printGroupStats,
		&ofp.MeterStatsReply{}: printMeterStats, &ofp.MeterFeaturesReply{}: printMeterFeatures,
	} {
		printers[kindOf(body)] = p
	}
}

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

// groupActionNames are the action kinds group features name, in Open
// vSwitch's printing order, with their OFPAT_* types in OpenFlow 1.0,
// 1.1 and 1.2+ (-1: none).
var groupActionNames = []struct {
	name            string
	t10, t11, t12up int
}{
	{"output", 0, 0, 0}, {"group", -1, 22, 22}, {"enqueue", 11, -1, -1}, {"set_field", -1, -1, 25},
	{"set_vlan_vid", 1, 1, -1}, {"set_vlan_pcp", 2, 2, -1}, {"strip_vlan", 3, 18, 18}, {"push_vlan", -1, 17, 17},
	{"mod_dl_src", 4, 3, -1}, {"mod_dl_dst", 5, 4, -1}, {"mod_nw_src", 6, 5, -1}, {"mod_nw_dst", 7, 6, -1},
	{"mod_nw_tos", 8, 7, -1}, {"mod_nw_ecn", -1, 8, -1}, {"mod_nw_ttl", -1, 23, 23}, {"mod_tp_src", 9, 9, -1},
	{"mod_tp_dst", 10, 10, -1}, {"dec_ttl", -1, 24, 24}, {"set_mpls_label", -1, 13, -1}, {"set_mpls_tc", -1, 14, -1},
	{"set_mpls_ttl", -1, 15, 15}, {"dec_mpls_ttl", -1, 16, 16}, {"push_mpls", -1, 19, 19}, {"pop_mpls", -1, 20, 20},
	{"set_queue", -1, 21, 21},
}

var groupTypeNames = [4]string{"all", "select", "indirect", "fast failover"}

func printGroupFeatures(w *bufio.Writer, m *ofp.Msg) error {
	f, ok := m.Body.(*ofp.GroupFeaturesReply)
	if !ok {
		return fmt.Errorf("unexpected reply %s", m.Raw)
	}
	name := "OFPST_GROUP_FEATURES reply"
	if m.Version < mf.OF12 {
		name = "NXST_GROUP_FEATURES reply"
	}
	header(w, name, m)
	fmt.Fprintf(w, "\n Group table:\n    Types:  0x%x\n    Capabilities:  0x%x\n", f.Types, f.Capabilities)
	for i, tn := range groupTypeNames {
		if f.Types&(1<<i) == 0 {
			continue
		}
		fmt.Fprintf(w, "    %s group:\n       max_groups=%#x\n", tn, f.MaxGroups[i])
		var names []string
		for _, a := range groupActionNames {
			t := a.t12up
			switch m.Version {
			case mf.OF10:
				t = a.t10
			case mf.OF11:
				t = a.t11
			}
			if t >= 0 && f.Actions[i]&(1<<t) != 0 {
				names = append(names, a.name)
			}
		}
		if len(names) > 0 {
			fmt.Fprintf(w, "       actions: %s\n", strings.Join(names, " "))
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
	return e.dumpTransaction(c, &ofp.GroupFeaturesRequest{}, printGroupFeatures)
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
	return e.dumpTransaction(c, &ofp.GroupStatsRequest{GroupID: id}, printGroupStats)
}

func printGroupStats(w *bufio.Writer, m *ofp.Msg) error {
	r, ok := m.Body.(*ofp.GroupStatsReply)
	if !ok {
		return fmt.Errorf("unexpected reply %s", m.Raw)
	}
	name := "OFPST_GROUP reply"
	if m.Version == mf.OF10 {
		name = "NXST_GROUP reply"
	}
	header(w, name, m)
	w.WriteByte('\n')
	for _, g := range r.Stats {
		fmt.Fprintf(w, " group_id=%d", g.GroupID)
		if g.DurationSec != 0xffffffff {
			fmt.Fprintf(w, ",duration=%s", exactDuration(g.DurationSec, g.DurationNsec))
		}
		fmt.Fprintf(w, ",ref_count=%d,packet_count=%d,byte_count=%d", g.RefCount, g.PacketCount, g.ByteCount)
		for i, b := range g.Buckets {
			if b.PacketCount != ^uint64(0) {
				fmt.Fprintf(w, ",bucket%d:packet_count=%d,byte_count=%d", i, b.PacketCount, b.ByteCount)
			}
		}
		w.WriteByte('\n')
	}
	return nil
}

// meterIDString names a meter as ovs-ofctl prints it.
func meterIDString(id uint32) string { return ofptext.FormatMeterID(id) }

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
	return e.dumpTransaction(c, &ofp.MeterStatsRequest{MeterID: id}, printMeterStats)
}

func printMeterStats(w *bufio.Writer, m *ofp.Msg) error {
	r, ok := m.Body.(*ofp.MeterStatsReply)
	if !ok {
		return fmt.Errorf("unexpected reply %s", m.Raw)
	}
	header(w, "OFPST_METER reply", m)
	w.WriteByte('\n')
	for i, s := range r.Stats {
		if i > 0 {
			w.WriteByte('\n')
		}
		fmt.Fprintf(w, "meter:%s flow_count:%d packet_in_count:%d byte_in_count:%d duration:%s bands:\n",
			meterIDString(s.MeterID), s.FlowCount, s.PacketInCount, s.ByteInCount, exactDuration(s.DurationSec, s.DurationNsec))
		for j, b := range s.Bands {
			fmt.Fprintf(w, "%d: packet_count:%d byte_count:%d\n", j, b.PacketCount, b.ByteCount)
		}
	}
	return nil
}

// meterBandTypeNames and meterFlagNames name the bits of meter features.
var (
	meterBandTypeNames = map[int]string{1: "drop", 2: "dscp_remark"}
	meterFlagNames     = []string{"kbps", "pktps", "burst", "stats"}
)

func meterFeaturesCmd(e *env, args []string) error {
	c, err := e.openForMeters(args[0])
	if err != nil {
		return err
	}
	defer c.close()
	return e.dumpTransaction(c, &ofp.MeterFeaturesRequest{}, printMeterFeatures)
}

func printMeterFeatures(w *bufio.Writer, m *ofp.Msg) error {
	f, ok := m.Body.(*ofp.MeterFeaturesReply)
	if !ok {
		return fmt.Errorf("unexpected reply %s", m.Raw)
	}
	header(w, "OFPST_METER_FEATURES reply", m)
	fmt.Fprintf(w, "\nmax_meter:%d max_bands:%d max_color:%d\n", f.MaxMeter, f.MaxBands, f.MaxColor)
	w.WriteString("band_types:")
	if f.BandTypes == 0 {
		w.WriteString(" 0\n")
	} else {
		for i := 0; i < 32; i++ {
			if f.BandTypes&(1<<i) == 0 {
				continue
			}
			if n, ok := meterBandTypeNames[i]; ok {
				w.WriteString(" " + n)
			} else {
				fmt.Fprintf(w, " unknown_%d", i)
			}
		}
		w.WriteByte('\n')
	}
	w.WriteString("capabilities:")
	if f.Capabilities == 0 {
		w.WriteString(" 0\n")
	} else {
		for i := 0; i < 32; i++ {
			if f.Capabilities&(1<<i) == 0 {
				continue
			}
			if i < len(meterFlagNames) {
				w.WriteString(" " + meterFlagNames[i])
			} else {
				fmt.Fprintf(w, " 0x%x", uint32(1)<<i)
			}
		}
		w.WriteByte('\n')
	}
	return nil
}

func init() {
	for body, p := range map[ofp.Message]msgPrinter{
		&ofp.GroupMod{}: printGroupMod, &ofp.GroupDescRequest{}: printGroupDescRequest, &ofp.GroupDescReply{}: printGroupDesc,
	} {
		printers[kindOf(body)] = p
	}
}

// groupIDString names a group in requests as ovs-ofctl prints it.
func groupIDString(id uint32) string {
	switch id {
	case ofp.GroupAll:
		return "ALL"
	case ofp.GroupAny:
		return "ANY"
	}
	return strconv.FormatUint(uint64(id), 10)
}

// statsName is a statistics message's name: NXST_ in OpenFlow 1.0,
// OFPST_ after.
func statsName(m *ofp.Msg, name string) string {
	if m.Version == mf.OF10 {
		return "NXST_" + name
	}
	return "OFPST_" + name
}

// moreFlag is the " flags=[more]" ovs-ofctl prints after the header of a
// reply part that has more following.
func moreFlag(flags uint16) string {
	if flags&ofp.StatsReplyMore != 0 {
		return " flags=[more]"
	}
	return ""
}

func printGroupMod(w *bufio.Writer, m *ofp.Msg) error {
	name := "OFPT_GROUP_MOD"
	if m.Version == mf.OF10 {
		name = "NXT_GROUP_MOD"
	}
	header(w, name, m)
	fmt.Fprintf(w, "\n %s\n", ofptext.FormatGroupMod(m.Body.(*ofp.GroupMod), m.Version))
	return nil
}

func printGroupDescRequest(w *bufio.Writer, m *ofp.Msg) error {
	header(w, statsName(m, "GROUP_DESC request"), m)
	fmt.Fprintf(w, " group_id=%s\n", groupIDString(m.Body.(*ofp.GroupDescRequest).GroupID))
	return nil
}

func printGroupDesc(w *bufio.Writer, m *ofp.Msg) error {
	r, ok := m.Body.(*ofp.GroupDescReply)
	if !ok {
		return fmt.Errorf("unexpected reply %s", m.Raw)
	}
	header(w, statsName(m, "GROUP_DESC reply"), m)
	w.WriteString(moreFlag(r.Flags) + "\n")
	for i := range r.Groups {
		fmt.Fprintf(w, " %s\n", ofptext.FormatGroupDesc(&r.Groups[i], m.Version))
	}
	return nil
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
	return e.dumpTransaction(c, &ofp.GroupDescRequest{GroupID: id}, printGroupDesc)
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
