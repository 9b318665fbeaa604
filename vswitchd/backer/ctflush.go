package backer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/gvs-project/gvs/datapath/conntrack"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// ctFlush runs NXT_CT_FLUSH_ZONE (m nil) and NXT_CT_FLUSH for bridge br:
// Open vSwitch's ct flush rules (conntrack.Tracker.Flush). As in Open
// vSwitch, nothing goes back to the controller; a full original tuple
// that names no connection is warned about in its words.
// dpif names the datapath in Open vSwitch's ct_dpif log line.
func (s *Backer) ctFlush(br, dpif string, t *conntrack.Tracker, zone *uint16, m *ofp.CTFlush) {
	start := time.Now()
	var match *conntrack.Match
	if m != nil {
		match = ctMatchOf(m)
	}
	if log := s.cfg.Logger("ct_dpif"); log.Enabled(context.Background(), slog.LevelDebug) {
		log.Debug(fmt.Sprintf("%s: ct_flush: %s", dpif, conntrack.FormatFlush(zone, match)))
	}
	n, err := t.Flush(zone, match)
	if errors.Is(err, conntrack.ErrNoSuchTuple) {
		s.moduleWarnf("conntrack", "Must flush tuple using the original pre-NATed tuple")
		return
	}
	if zone != nil && match == nil {
		// The cost of a zone flush is that zone's connections only; the
		// log says how many and how long (OVN router failover).
		s.log.Info(fmt.Sprintf("%s: flushed conntrack zone %d (%d connections) in %v", br, *zone, n, time.Since(start)))
	}
}

// ctMatchOf converts NXT_CT_FLUSH's tuples (IPv4 as mapped IPv6) to the
// tracker's layout.
func ctMatchOf(m *ofp.CTFlush) *conntrack.Match {
	out := &conntrack.Match{Proto: m.IPProto}
	tuples := []struct {
		in  *ofp.CTTuple
		out *conntrack.TupleMatch
	}{{&m.Orig, &out.Orig}, {&m.Reply, &out.Reply}}
	for _, tp := range tuples {
		for _, a := range []struct{ in, out *[16]byte }{{&tp.in.Src, &tp.out.Src}, {&tp.in.Dst, &tp.out.Dst}} {
			if *a.in == ([16]byte{}) {
				continue
			}
			ip := netip.AddrFrom16(*a.in)
			if ip.Is4In6() {
				v4 := ip.Unmap().As4()
				copy(a.out[:], v4[:])
				out.Family = 4
			} else {
				*a.out = *a.in
				out.Family = 6
			}
		}
		tp.out.SrcPort, tp.out.DstPort = tp.in.SrcPort, tp.in.DstPort
		tp.out.ICMPID, tp.out.ICMPType, tp.out.ICMPCode = tp.in.ICMPID, tp.in.ICMPType, tp.in.ICMPCode
	}
	return out
}
