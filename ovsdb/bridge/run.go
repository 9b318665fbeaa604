package bridge

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/gvs-project/gvs/internal/logrl"
	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/model"
)

// Info is what the switch reports about itself in the Open_vSwitch row
// and in Datapath.capabilities.
type Info struct {
	OVSVersion    string
	DatapathTypes []string
	IfaceTypes    []string
	Capabilities  map[string]string
}

// StatsInterval is how often interface statistics and link state are
// refreshed when nothing else changes (Open vSwitch: stats-update-interval,
// default 5 s).
const StatsInterval = 5 * time.Second

// Runner keeps a Switch in step with the database: it monitors the
// tables, reconciles on every change, and writes status back.
type Runner struct {
	c    *client.Client
	rec  *Reconciler
	info Info
	log  *slog.Logger
	rep  *client.Replica
	// badNames limits the warnings about bridges with invalid names
	// (Open vSwitch's VLOG_RATE_LIMIT_INIT(1, 5)).
	badNames *logrl.Limit
}

// NewRunner returns a runner over a connected client.
func NewRunner(c *client.Client, sw Switch, info Info, log *slog.Logger) *Runner {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{c: c, rec: NewReconciler(sw), info: info, log: log, badNames: logrl.New(1, 5)}
}

// Run monitors and reconciles until ctx ends.
func (r *Runner) Run(ctx context.Context) error {
	rep, err := r.c.Monitor(ctx, "Open_vSwitch", MonitoredTables)
	if err != nil {
		return fmt.Errorf("bridge: monitoring Open_vSwitch: %w", err)
	}
	r.rep = rep
	tick := time.NewTicker(StatsInterval)
	defer tick.Stop()
	lastSeq := ^uint64(0)
	var kick <-chan struct{}
	if n, ok := r.rec.sw.(StatusNotifier); ok {
		kick = n.StatusChanged()
	}
	for {
		snap := rep.Snapshot()
		if snap.Seq != lastSeq {
			lastSeq = snap.Seq
			r.reconcile(ctx, snap)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-rep.Changed():
		case <-kick:
			// A BFD session's status changed: write it back now, as
			// Open vSwitch does when its connectivity sequence moves.
			r.reconcile(ctx, rep.Snapshot())
		case <-tick.C:
			r.reconcile(ctx, rep.Snapshot())
		}
	}
}

// reconcile applies the snapshot and writes back what changed.
func (r *Runner) reconcile(ctx context.Context, snap *client.Snapshot) {
	if ss, ok := r.rec.sw.(StatusSyncer); ok {
		seq := ss.StatusSeq()
		defer ss.StatusWritten(seq)
	}
	cfg := Parse(snap)
	st := r.rec.Apply(&cfg)
	for _, name := range st.Ignored {
		if r.badNames.Allow(r.log, slog.LevelWarn, time.Now().UnixMilli()) {
			r.log.Warn(fmt.Sprintf("ignoring bridge with invalid name %q", name))
		}
	}
	if st.ConntrackErr != nil {
		r.log.Warn("conntrack zone configuration failed", "err", st.ConntrackErr)
	}
	txn := r.c.Txn("Open_vSwitch")
	r.writeBack(txn, snap, &st)
	if txn.Len() == 0 {
		return
	}
	if _, err := txn.Commit(ctx); err != nil && ctx.Err() == nil {
		r.log.Warn("status write-back failed", "err", err)
	}
}

// StatusNotifier is implemented by switches whose interface status
// changes by itself (BFD): a value on the channel makes the runner write
// the status back at once rather than at the next StatsInterval.
type StatusNotifier interface {
	StatusChanged() <-chan struct{}
}

// StatusSyncer is implemented by switches that wait for the status
// they asked to have written (time/warp returns once CFM's status is in
// the database, as Open vSwitch's main loop writes it before a warp step
// ends): StatusSeq numbers the requests, StatusWritten says that the
// write-back that started at seq is done.
type StatusSyncer interface {
	StatusSeq() uint64
	StatusWritten(seq uint64)
}

// noDPDK is Open_vSwitch.dpdk_version when DPDK is not in use.
const noDPDK = "none"

func datumStrings(d model.Datum) []string { return strs(d) }

// writeBack adds to txn the updates that make the database show st.
func (r *Runner) writeBack(txn *client.Txn, snap *client.Snapshot, st *Status) {
	if root := RootRow(snap); root != nil {
		row := map[string]any{}
		if cur := integer(root.Get("cur_cfg"), 0); cur != st.CurCfg {
			row["cur_cfg"] = st.CurCfg
		}
		if str(root.Get("ovs_version")) != r.info.OVSVersion {
			row["ovs_version"] = r.info.OVSVersion
		}
		// gvs has no DPDK; Open vSwitch without DPDK writes "none".
		if str(root.Get("dpdk_version")) != noDPDK {
			row["dpdk_version"] = noDPDK
		}
		if !slices.Equal(datumStrings(root.Get("datapath_types")), sortedCopy(r.info.DatapathTypes)) {
			row["datapath_types"] = r.info.DatapathTypes
		}
		if !slices.Equal(datumStrings(root.Get("iface_types")), sortedCopy(r.info.IfaceTypes)) {
			row["iface_types"] = r.info.IfaceTypes
		}
		if len(row) > 0 {
			txn.SetColumns("Open_vSwitch", root.UUID, row)
		}
		r.writeCapabilities(txn, snap, root)
	}
	writeMirrorStats(txn, snap, st)
	writeBondStatus(txn, snap, st)
	r.writeSTPStatus(txn, snap) // stp.go
	for id, bs := range st.Bridges {
		u, err := model.ParseUUID(id)
		if err != nil {
			continue
		}
		row := snap.Row("Bridge", u)
		if row == nil {
			continue
		}
		upd := map[string]any{}
		if bs.DatapathID != "" && str(row.Get("datapath_id")) != bs.DatapathID {
			upd["datapath_id"] = bs.DatapathID
		}
		if str(row.Get("datapath_version")) != bs.DatapathVersion {
			upd["datapath_version"] = bs.DatapathVersion
		}
		if len(upd) > 0 {
			txn.SetColumns("Bridge", u, upd)
		}
	}
	for id, cs := range st.Controllers {
		u, err := model.ParseUUID(id)
		if err != nil {
			continue
		}
		row := snap.Row("Controller", u)
		if row == nil {
			continue
		}
		upd := map[string]any{}
		if b, ok := boolean(row.Get("is_connected")); !ok || b != cs.IsConnected {
			upd["is_connected"] = cs.IsConnected
		}
		if str(row.Get("role")) != cs.Role {
			upd["role"] = optStr(cs.Role)
		}
		if !maps.Equal(strMap(row.Get("status")), cs.Status) {
			st := cs.Status
			if st == nil {
				st = map[string]string{}
			}
			upd["status"] = st
		}
		if len(upd) > 0 {
			txn.SetColumns("Controller", u, upd)
		}
	}
	for id, is := range st.Interfaces {
		u, err := model.ParseUUID(id)
		if err != nil {
			continue
		}
		row := snap.Row("Interface", u)
		if row == nil {
			continue
		}
		if upd := ifaceUpdate(row, &is); len(upd) > 0 {
			txn.SetColumns("Interface", u, upd)
		}
	}
}

// boolean returns a boolean column's value.
func boolean(d model.Datum) (bool, bool) {
	if len(d.Keys) == 0 {
		return false, false
	}
	b, ok := d.Keys[0].(bool)
	return b, ok
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// optInt and optStr give the value of an optional column: empty when unset.
func optInt(v int64, set bool) any {
	if !set {
		return nil
	}
	return []int64{v}
}

func optStr(v string) any {
	if v == "" {
		return nil
	}
	return []string{v}
}

// ifaceUpdate returns the Interface columns whose values differ from is.
func ifaceUpdate(row *client.Row, is *IfaceStatus) map[string]any {
	upd := map[string]any{}
	setInt := func(col string, v int64, set bool) {
		cur := ints(row.Get(col))
		if set && (len(cur) != 1 || cur[0] != v) || !set && len(cur) != 0 {
			upd[col] = optInt(v, set)
		}
	}
	setStr := func(col, v string) {
		if str(row.Get(col)) != v {
			upd[col] = optStr(v)
		}
	}
	setInt("ofport", is.Ofport, true)
	// An interface that has a port number exists, even with an error
	// (a patch port whose peer is missing).
	ok := is.Ofport > 0
	setInt("ifindex", is.Ifindex, ok)
	setInt("link_resets", is.LinkResets, ok)
	setInt("mtu", is.MTU, ok && is.MTU > 0)
	setStr("mac_in_use", is.MACInUse)
	setStr("admin_state", is.AdminState)
	setStr("link_state", is.LinkState)
	setStr("error", is.Error)
	setInt("link_speed", is.LinkSpeed, ok && is.LinkSpeed > 0)
	setStr("duplex", is.Duplex)
	if !maps.Equal(strMap(row.Get("status")), is.Status) {
		st := is.Status
		if st == nil {
			st = map[string]string{}
		}
		upd["status"] = st
	}
	if !maps.Equal(strMap(row.Get("bfd_status")), is.BFDStatus) {
		bs := is.BFDStatus
		if bs == nil {
			bs = map[string]string{}
		}
		upd["bfd_status"] = bs
	}
	cfmUpdate(row, is.CFM, upd) // cfm.go
	cur := row.Get("statistics")
	want := is.Statistics
	if want == nil {
		want = map[string]int64{}
	}
	if !statsEqual(cur, want) {
		upd["statistics"] = want
	}
	return upd
}

func statsEqual(d model.Datum, m map[string]int64) bool {
	if len(d.Keys) != len(m) {
		return false
	}
	for i, k := range d.Keys {
		ks, _ := k.(string)
		v, _ := d.Values[i].(int64)
		if w, ok := m[ks]; !ok || w != v {
			return false
		}
	}
	return true
}

// writeCapabilities fills Datapath.capabilities (ovn-controller creates
// the rows empty and reads them) as Open vSwitch's dp_capability_reconfigure:
// only for the datapath types a bridge has brought up, key by key
// (other keys a client wrote stay).
func (r *Runner) writeCapabilities(txn *client.Txn, snap *client.Snapshot, root *client.Row) {
	if len(r.info.Capabilities) == 0 {
		return
	}
	up := r.rec.DatapathTypes()
	d := root.Get("datapaths")
	for i, k := range d.Keys {
		typ, _ := k.(string)
		if i >= len(d.Values) {
			break
		}
		u, ok := d.Values[i].(model.UUID)
		if !ok || !slices.Contains(up, normDPType(typ)) {
			continue
		}
		row := snap.Row("Datapath", u)
		if row == nil {
			continue
		}
		have := strMap(row.Get("capabilities"))
		want := maps.Clone(have)
		if want == nil {
			want = map[string]string{}
		}
		maps.Copy(want, r.info.Capabilities)
		if !maps.Equal(have, want) {
			txn.SetColumns("Datapath", u, map[string]any{"capabilities": want})
		}
	}
}

// normDPType is a Bridge.datapath_type as Open vSwitch names its
// datapath: empty is "system".
func normDPType(t string) string {
	if t == "" {
		return "system"
	}
	return t
}
