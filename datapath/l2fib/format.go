package l2fib

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
)

// sortEntries orders entries as fdb/show prints them: dynamic entries
// least recently refreshed first, then static ones; ties by VLAN, MAC.
func sortEntries(es []Entry) {
	slices.SortFunc(es, func(a, b Entry) int {
		if a.Static != b.Static {
			if a.Static {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(b.Age, a.Age); c != 0 {
			return c
		}
		if c := cmp.Compare(a.VLAN, b.VLAN); c != 0 {
			return c
		}
		return slices.Compare(a.MAC[:], b.MAC[:])
	})
}

// AppendShow appends the fdb/show text for entries (as Dump returns
// them) in Open vSwitch's format: the header " port  VLAN  MAC
// Age" (aligned as Open vSwitch prints it), then per entry the port
// right-aligned in 5 columns, the VLAN in 4, the MAC, and the age in 3
// columns or "static" (TestShowAndStatsTextMatchOpenVSwitch holds a
// capture). portName maps a datapath port to the name printed (the
// OpenFlow port number or LOCAL); nil prints the datapath port number.
func AppendShow(dst []byte, entries []Entry, portName func(uint32) string) []byte {
	dst = append(dst, " port  VLAN  MAC                Age\n"...)
	for _, e := range entries {
		name := ""
		if portName != nil {
			name = portName(e.Port)
		} else {
			name = strconv.FormatUint(uint64(e.Port), 10)
		}
		dst = fmt.Appendf(dst, "%5s  %4d  %s  ", name, e.VLAN, e.MAC)
		if e.Static {
			dst = append(dst, "static\n"...)
		} else {
			dst = fmt.Appendf(dst, "%3d\n", e.Age)
		}
	}
	return dst
}

// AppendStats appends the fdb/stats-show text for bridge, Open vSwitch's
// format (gvs's extra counters are in Stats for coverage and metrics).
func AppendStats(dst []byte, bridge string, s Stats) []byte {
	dst = fmt.Appendf(dst, "Statistics for bridge \"%s\":\n", bridge)
	dst = fmt.Appendf(dst, "  Current/maximum MAC entries in the table: %d/%d\n", s.Current, s.Max)
	dst = fmt.Appendf(dst, "  Current static MAC entries in the table : %d\n", s.Static)
	dst = fmt.Appendf(dst, "  Total number of learned MAC entries     : %d\n", s.Learned)
	dst = fmt.Appendf(dst, "  Total number of expired MAC entries     : %d\n", s.Expired)
	dst = fmt.Appendf(dst, "  Total number of evicted MAC entries     : %d\n", s.Evicted)
	dst = fmt.Appendf(dst, "  Total number of port moved MAC entries  : %d\n", s.Moved)
	return dst
}
