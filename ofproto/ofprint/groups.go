package ofprint

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

func init() {
	printers[kindOf(&ofp.MeterStatsRequest{})] = func(w *bufio.Writer, m *ofp.Msg) error {
		header(w, "OFPST_METER request", m)
		fmt.Fprintf(w, " meter=%s\n", meterIDString(m.Body.(*ofp.MeterStatsRequest).MeterID))
		return nil
	}
	for body, p := range map[ofp.Message]msgPrinter{
		&ofp.GroupFeaturesReply{}: GroupFeatures, &ofp.GroupStatsReply{}: GroupStats,
		&ofp.MeterStatsReply{}: MeterStats, &ofp.MeterFeaturesReply{}: MeterFeatures,
	} {
		printers[kindOf(body)] = p
	}
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

// GroupFeatures prints a group features reply (OFPST_GROUP_FEATURES).
func GroupFeatures(w *bufio.Writer, m *ofp.Msg) error {
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

// GroupStats prints a group statistics reply.
func GroupStats(w *bufio.Writer, m *ofp.Msg) error {
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

// MeterStats prints a meter statistics reply.
func MeterStats(w *bufio.Writer, m *ofp.Msg) error {
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

// MeterFeatures prints a meter features reply.
func MeterFeatures(w *bufio.Writer, m *ofp.Msg) error {
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
		&ofp.GroupMod{}: printGroupMod, &ofp.GroupDescRequest{}: printGroupDescRequest, &ofp.GroupDescReply{}: GroupDesc,
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

// GroupDesc prints a group description reply.
func GroupDesc(w *bufio.Writer, m *ofp.Msg) error {
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
