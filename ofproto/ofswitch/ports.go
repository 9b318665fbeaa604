package ofswitch

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/upcall"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// portTable is the bridge's ports as OpenFlow sees them, with what
// OpenFlow configured of them (port_mod, portmod.go) and the tunnel
// metadata TLV table: it publishes them to translation as one snapshot
// (xlate.Snapshot), announces changes with port-status, and answers
// port_mod, port desc, port stats, queue and TLV table requests.
type portTable struct {
	name     string
	fdbTable uint32
	xl       *xlate.Xlator
	// up is told of changes, forgets the statistics of ports no longer
	// patch ports and counts patch ports' traffic.
	up     *upcall.Handler
	notify *notifier
	// setAdmin and counters are Config.SetPortAdmin and
	// Config.PortStats.
	setAdmin func(no uint16, up bool) (linkDown bool, err error)
	counters PortCounters
	logf     func(format string, args ...any)

	mu    sync.Mutex
	ports map[uint16]*Port
	tlv   []ofp.TLVMap
	// deleted are the ports deleted lately, by number: a port added
	// again soon after with the same name is a re-add (portEvent.readd).
	deleted map[uint16]deletedPort
}

// deletedPort is a port's name and when it was deleted.
type deletedPort struct {
	name string
	at   time.Time
}

// readdWindow is how soon after its deletion an added port counts as
// re-added (the bridge layer deletes and adds it in one reconciliation).
const readdWindow = time.Second

// set replaces the port set. Ports that appear, disappear or change are
// announced to controllers with port-status.
func (pt *portTable) set(ports []Port) {
	pt.mu.Lock()
	old := pt.ports
	pt.ports = make(map[uint16]*Port, len(ports))
	for i := range ports {
		p := ports[i]
		if o := old[p.OFPort]; o != nil && !o.Created.IsZero() {
			p.Created = o.Created
		} else if p.Created.IsZero() {
			p.Created = time.Now()
		}
		if o := old[p.OFPort]; o != nil && o.Name == p.Name {
			p.OFConfig = o.OFConfig // port_mod's settings stay with the port
		}
		pt.ports[p.OFPort] = &p
	}
	pt.publishLocked()
	var events []portEvent
	for no, p := range pt.ports {
		if o := old[no]; o == nil {
			d, ok := pt.deleted[no]
			readd := ok && d.name == p.Name && time.Since(d.at) < readdWindow
			events = append(events, portEvent{reason: reasonAdd, port: *p, readd: readd})
		} else if portChanged(o, p) {
			events = append(events, portEvent{reason: reasonModify, port: *p})
		}
	}
	for no, o := range old {
		if pt.ports[no] == nil {
			if pt.deleted == nil {
				pt.deleted = map[uint16]deletedPort{}
			}
			pt.deleted[no] = deletedPort{name: o.Name, at: time.Now()}
			events = append(events, portEvent{reason: reasonDelete, port: *o})
		}
	}
	patches := map[uint16]bool{}
	for no, p := range pt.ports {
		if p.PeerBridge != "" {
			patches[no] = true
		}
	}
	pt.mu.Unlock()
	pt.up.ForgetPatches(func(no uint16) bool { return patches[no] })
	pt.notify.sendPortStatus(events)
	pt.up.Changed()
}

// publishLocked gives translation a snapshot of the ports. Called with
// pt.mu held.
func (pt *portTable) publishLocked() {
	xs := make([]*xlate.Port, 0, len(pt.ports))
	for _, p := range pt.ports {
		xp := p.Port
		xp.MAC = p.HWAddr
		xp.NoRecv = p.OFConfig&ofp.PCNoRecv != 0
		xp.NoFwd = p.OFConfig&ofp.PCNoFwd != 0
		xp.NoPacketIn = p.OFConfig&ofp.PCNoPacketIn != 0
		xp.NoFlood = xp.NoFlood || p.OFConfig&ofp.PCNoFlood != 0
		xp.Down = p.LinkDown || p.NoForward
		xs = append(xs, &xp)
	}
	snap := xlate.NewSnapshot(pt.name, pt.fdbTable, xs)
	// The TLV table was accepted only if it fits, so this cannot fail.
	_ = snap.SetTLVs(tunTLVs(pt.tlv))
	pt.xl.SetSnapshot(snap)
}

func portChanged(a, b *Port) bool {
	return a.Name != b.Name || a.HWAddr != b.HWAddr || a.LinkDown != b.LinkDown || a.AdminDown != b.AdminDown || a.NoForward != b.NoForward || a.STPBits != b.STPBits ||
		a.ODP != b.ODP || a.CurrSpeed != b.CurrSpeed || a.OFConfig != b.OFConfig
}

// list returns the ports sorted by number.
func (pt *portTable) list() []Port {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	out := make([]Port, 0, len(pt.ports))
	for _, p := range pt.ports {
		out = append(out, *p)
	}
	sortPorts(out)
	return out
}

// tunTLVs converts TLV table mappings for translation.
func tunTLVs(ms []ofp.TLVMap) []mf.TunTLV {
	out := make([]mf.TunTLV, len(ms))
	for i, m := range ms {
		out[i] = mf.TunTLV{Class: m.OptClass, Type: m.OptType, Len: m.OptLen, Index: m.Index}
	}
	return out
}

// setTLVsLocked installs a new TLV table in the translation snapshot.
// Called with pt.mu held.
func (pt *portTable) setTLVsLocked(ms []ofp.TLVMap) error {
	old := pt.xl.Snapshot()
	next := *old
	if err := next.SetTLVs(tunTLVs(ms)); err != nil {
		return &ofp.Error{Code: ofp.NXTTMFC_TABLE_FULL, Err: err}
	}
	pt.tlv = ms
	pt.xl.SetSnapshot(&next)
	pt.up.Changed()
	return nil
}

// tlvOptionSpace is the Geneve option space Open vSwitch's TLV table
// allots and reports.
const tlvOptionSpace = 256

// tlvMod applies a TLV table change with Open vSwitch's checks.
func (pt *portTable) tlvMod(tm *ofp.TLVTableMod) error {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	switch tm.Command {
	case ofp.TLVClear:
		return pt.setTLVsLocked(nil)
	case ofp.TLVAdd:
		// As Open vSwitch, one mapping after another: the field must be
		// free, then the option unmapped, then the 256 bytes of option
		// space (gvs's flow key holds fewer; setTLVs refuses more).
		next := append([]ofp.TLVMap(nil), pt.tlv...)
		space := 0
		for _, o := range next {
			space += int(o.OptLen)
		}
		for _, nm := range tm.Mappings {
			if nm.Index >= 64 {
				return &ofp.Error{Code: ofp.NXTTMFC_BAD_FIELD_IDX}
			}
			if nm.OptLen%4 != 0 || nm.OptLen > 124 {
				return &ofp.Error{Code: ofp.NXTTMFC_BAD_OPT_LEN}
			}
			if slices.ContainsFunc(next, func(o ofp.TLVMap) bool { return o.Index == nm.Index }) {
				return &ofp.Error{Code: ofp.NXTTMFC_ALREADY_MAPPED}
			}
			if slices.ContainsFunc(next, func(o ofp.TLVMap) bool { return o.OptClass == nm.OptClass && o.OptType == nm.OptType }) {
				return &ofp.Error{Code: ofp.NXTTMFC_DUP_ENTRY}
			}
			if space += int(nm.OptLen); space > tlvOptionSpace {
				return &ofp.Error{Code: ofp.NXTTMFC_TABLE_FULL}
			}
			next = append(next, nm)
		}
		return pt.setTLVsLocked(next)
	case ofp.TLVDelete:
		next := pt.tlv[:0:0]
		for _, o := range pt.tlv {
			del := false
			for _, dm := range tm.Mappings {
				del = del || dm.Index == o.Index
			}
			if !del {
				next = append(next, o)
			}
		}
		return pt.setTLVsLocked(next)
	}
	return &ofp.Error{Code: ofp.OFPBRC_BAD_SUBTYPE}
}
func (pt *portTable) portDesc(s ofconn.Sender, m *ofp.Msg, req *ofp.PortDescRequest) error {
	rep := &ofp.PortDescReply{}
	for _, p := range pt.list() {
		op := ofpPort(&p, m.Version)
		op.PortNo = ofp.PortToOF11(p.OFPort)
		if req.PortNo != ofp.PortAny && req.PortNo != op.PortNo {
			continue
		}
		rep.Ports = append(rep.Ports, op)
	}
	return replyMultipart(s, m, rep)
}

// PortCounters returns a port's counters; the daemon provides it.
type PortCounters func(odp uint32) (ofp.PortStats, bool)

func (pt *portTable) portStats(s ofconn.Sender, m *ofp.Msg, req *ofp.PortStatsRequest) error {
	rep := &ofp.PortStatsReply{}
	now := time.Now()
	for _, p := range pt.list() {
		no := ofp.PortToOF11(p.OFPort)
		if req.PortNo != ofp.PortAny && req.PortNo != no {
			continue
		}
		var ps ofp.PortStats
		switch {
		case pt.counters != nil && p.ODP != xlate.NoODP:
			ps, _ = pt.counters(p.ODP)
		case p.PeerBridge != "":
			ps = pt.up.PatchPortStats(p.OFPort)
		}
		ps.PortNo = no
		d := now.Sub(p.Created).Truncate(time.Millisecond)
		ps.DurationSec, ps.DurationNsec = uint32(d/time.Second), uint32(d%time.Second)
		rep.Stats = append(rep.Stats, ps)
	}
	return replyMultipart(s, m, rep)
}

// tlvTable answers a TLV table request; Open vSwitch lists the mappings
// by field.
func (pt *portTable) tlvTable() *ofp.TLVTableReply {
	pt.mu.Lock()
	rep := &ofp.TLVTableReply{MaxOptionSpace: tlvOptionSpace, MaxFields: 64, Mappings: append([]ofp.TLVMap(nil), pt.tlv...)}
	pt.mu.Unlock()
	slices.SortFunc(rep.Mappings, func(x, y ofp.TLVMap) int { return cmp.Compare(x.Index, y.Index) })
	return rep
}
