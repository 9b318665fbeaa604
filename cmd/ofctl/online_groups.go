package ofctl

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Group and meter statistics and features. The group and meter text
// syntax (add-group, dump-groups, add-meter, dump-meters) is not here:
// ofptext has no parser or formatter for it yet.

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

// parseGroupSelector parses the GROUP argument of dump-group-stats: the
// group_id keyword of the group syntax (a number, "all" or "any").
func parseGroupSelector(s string) (uint32, error) {
	id := uint32(ofp.GroupAll)
	for _, kv := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		k, v, _ := strings.Cut(kv, "=")
		if k != "group_id" {
			return 0, fmt.Errorf("unknown keyword %s", k)
		}
		switch v {
		case "all":
			id = ofp.GroupAll
		case "any":
			id = ofp.GroupAny
		default:
			n, err := strconv.ParseUint(v, 0, 32)
			if err != nil {
				return 0, fmt.Errorf("invalid numeric format %s", v)
			}
			id = uint32(n)
		}
	}
	return id, nil
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
			fmt.Fprintf(w, ",duration=%s", ofpDuration(g.DurationSec, g.DurationNsec))
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
func meterIDString(id uint32) string {
	switch id {
	case ofp.MeterAll:
		return "all"
	case 0xfffffffe:
		return "controller"
	case 0xfffffffd:
		return "slowpath"
	}
	return strconv.FormatUint(uint64(id), 10)
}

// parseMeterSelector parses the METER argument of meter-stats: the
// meter keyword of the meter syntax.
func parseMeterSelector(s string) (uint32, error) {
	id := uint32(ofp.MeterAll)
	for _, kv := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		k, v, _ := strings.Cut(kv, "=")
		if k != "meter" {
			return 0, fmt.Errorf("unknown keyword %s", k)
		}
		switch v {
		case "all":
			id = ofp.MeterAll
		case "controller":
			id = 0xfffffffe
		case "slowpath":
			id = 0xfffffffd
		default:
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				return 0, fmt.Errorf("invalid numeric format %s", v)
			}
			id = uint32(n)
		}
	}
	return id, nil
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
			meterIDString(s.MeterID), s.FlowCount, s.PacketInCount, s.ByteInCount, ofpDuration(s.DurationSec, s.DurationNsec))
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

// delGroupsCmd deletes the group GROUP selects (default all), in a
// bundle with --bundle.
func delGroupsCmd(e *env, args []string) error {
	id, err := selector(args, ofp.GroupAll, parseGroupSelector)
	if err != nil {
		return err
	}
	c, err := e.open(args[0])
	if err != nil {
		return err
	}
	defer c.close()
	gm := &ofp.GroupMod{Command: ofp.GroupDelete, Type: ofp.GroupTypeAll, GroupID: id, CommandBucketID: ofp.BucketAll}
	if e.bundle {
		return c.bundle([]ofp.Message{gm})
	}
	return e.reportReply(c.transactNoReply(gm))
}

// delMetersCmd deletes the meter METER selects (default all).
func delMetersCmd(e *env, args []string) error {
	id, err := selector(args, ofp.MeterAll, parseMeterSelector)
	if err != nil {
		return err
	}
	c, err := e.openForMeters(args[0])
	if err != nil {
		return err
	}
	defer c.close()
	return e.reportReply(c.transactNoReply(&ofp.MeterMod{Command: ofp.MeterDelete, MeterID: id}))
}

// ofpDuration formats a duration as Open vSwitch: whole seconds alone,
// milliseconds when exact, else nanoseconds.
func ofpDuration(sec, nsec uint32) string {
	switch {
	case nsec == 0:
		return fmt.Sprintf("%ds", sec)
	case nsec%1e6 == 0:
		return fmt.Sprintf("%d.%03ds", sec, nsec/1e6)
	}
	return fmt.Sprintf("%d.%09ds", sec, nsec)
}
