package ofswitch

import (
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/gvs-project/gvs/datapath/meter"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// meterTable is a bridge's OpenFlow meters, each enforced by a datapath
// meter where it can be.
type meterTable struct {
	// mu is the bridge's gmu, shared with the group table: meter and
	// group changes (and bundle commits) are serialized.
	mu *sync.Mutex
	m  map[uint32]*meterEntry
	// dp is the datapath's meter table (Config.Meters); nil: meters
	// are accepted and reported but not enforced.
	dp *meter.Table
	// What meters need of the bridge: translation (which meters exist),
	// the flow tables (flows that use a meter), a way to revalidate
	// megaflows and to send flow_removed for the flows a meter delete
	// removes.
	xl           *xlate.Xlator
	tables       *oftable.Tables
	changed      func()
	flowsRemoved func([]oftable.Removal)
}

// meterEntry is a configured meter: its OpenFlow form and the datapath
// meter that enforces it (xlate.NoDPMeter without bands or when the
// datapath has no meter table). The slowpath and controller meters have
// one too: translation puts it before the userspace actions of sampling
// and of packet-ins, as Open vSwitch's provider meters.
type meterEntry struct {
	flags   uint16
	bands   []ofp.MeterBand
	created time.Time
	dp      uint32
}

// dpMeterConfig converts OpenFlow bands to the datapath's (drop bands
// only: meterMod refuses the others, as Open vSwitch's userspace
// datapath). The burst size counts only with the burst flag.
func dpMeterConfig(flags uint16, bands []ofp.MeterBand) meter.Config {
	cfg := meter.Config{Pktps: flags&ofp.MeterFlagPktps != 0}
	for _, b := range bands {
		db := meter.Band{Rate: b.Rate}
		if flags&ofp.MeterFlagBurst != 0 {
			db.Burst = b.BurstSize
		}
		cfg.Bands = append(cfg.Bands, db)
	}
	return cfg
}

// enforced reports whether OpenFlow meter id gets a datapath meter.
func (mt *meterTable) enforced(id uint32) bool {
	return mt.dp != nil && (id <= ofp.MeterMax || id == ofp.MeterSlowpath || id == ofp.MeterController)
}

// meterMod applies a meter_mod with Open vSwitch's errors.
func (mt *meterTable) meterMod(mm *ofp.MeterMod) error {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	var deleted []uint32
	switch mm.Command {
	case ofp.MeterAdd, ofp.MeterModify:
		if mm.MeterID == 0 || (mm.MeterID > ofp.MeterMax && mm.MeterID != ofp.MeterSlowpath && mm.MeterID != ofp.MeterController) {
			return &ofp.Error{Code: ofp.OFPMMFC_INVALID_METER}
		}
		old := mt.m[mm.MeterID]
		if mm.Command == ofp.MeterAdd && old != nil {
			return &ofp.Error{Code: ofp.OFPMMFC_METER_EXISTS}
		}
		if mm.Command == ofp.MeterModify && old == nil {
			return &ofp.Error{Code: ofp.OFPMMFC_UNKNOWN_METER}
		}
		// The datapath refuses other band types after the existence
		// checks, as Open vSwitch's meter_set.
		for _, band := range mm.Bands {
			if band.Type != ofp.MeterBandDrop {
				return &ofp.Error{Code: ofp.OFPMMFC_BAD_BAND}
			}
		}
		e := &meterEntry{flags: mm.Flags, bands: mm.Bands, created: time.Now(), dp: xlate.NoDPMeter}
		if old != nil {
			e.created, e.dp = old.created, old.dp
		}
		if mt.enforced(mm.MeterID) && len(mm.Bands) > 0 {
			if e.dp == xlate.NoDPMeter {
				id, err := mt.dp.Alloc()
				if err != nil {
					return &ofp.Error{Code: ofp.OFPMMFC_OUT_OF_METERS, Err: err}
				}
				e.dp = id
			}
			if err := mt.dp.Set(e.dp, dpMeterConfig(mm.Flags, mm.Bands)); err != nil {
				if old == nil {
					mt.dp.Free(e.dp)
				}
				return &ofp.Error{Code: ofp.OFPMMFC_INVALID_METER, Err: err}
			}
		}
		mt.m[mm.MeterID] = e
	case ofp.MeterDelete:
		for id := range mt.m {
			if mm.MeterID == ofp.MeterAll || mm.MeterID == id {
				deleted = append(deleted, id)
			}
		}
		for _, id := range deleted {
			mt.releaseMeter(mt.m[id])
			delete(mt.m, id)
		}
	default:
		return &ofp.Error{Code: ofp.OFPMMFC_BAD_COMMAND}
	}
	mt.publishMeters()
	if len(deleted) > 0 {
		mt.deleteMeterFlows(deleted)
	}
	mt.changed()
	return nil
}

// releaseMeter frees a meter's datapath meter.
func (mt *meterTable) releaseMeter(e *meterEntry) {
	if e == nil || e.dp == xlate.NoDPMeter || mt.dp == nil {
		return
	}
	mt.dp.Delete(e.dp) //nolint:errcheck // gone either way
	mt.dp.Free(e.dp)
}

// releaseMeters frees every datapath meter of the bridge (bridge close).
func (mt *meterTable) releaseMeters() {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	for id, e := range mt.m {
		mt.releaseMeter(e)
		delete(mt.m, id)
	}
	mt.publishMeters()
}

// deleteMeterFlows removes the flows that use deleted meters, with
// flow_removed reason meter_delete, as Open vSwitch.
func (mt *meterTable) deleteMeterFlows(ids []uint32) {
	gone := make(map[uint32]bool, len(ids))
	for _, id := range ids {
		gone[id] = true
	}
	var victims []*oftable.Rule
	for r := range mt.tables.Rules(0xff, nil) {
		if usesMeter(r.Actions, gone) {
			victims = append(victims, r)
		}
	}
	if len(victims) == 0 {
		return
	}
	x := mt.tables.Begin()
	for _, r := range victims {
		x.Apply(&oftable.FlowMod{Command: ofp.FlowDeleteStrict, Table: r.Table, Match: r.Match(), Priority: r.Priority,
			OutPort: oftable.PortAny, OutGroup: oftable.GroupAny, NewCookie: oftable.CookieUnchanged,
			RemoveReason: oftable.RemovedMeterDelete})
	}
	mt.flowsRemoved(x.Commit())
}

// usesMeter reports whether actions (or nested ones) use a meter in ids.
func usesMeter(acts []ofp.Action, ids map[uint32]bool) bool {
	for i := range acts {
		if acts[i].Type == ofp.ActMeter && ids[uint32(acts[i].Arg)] {
			return true
		}
		if usesMeter(acts[i].Nested, ids) {
			return true
		}
	}
	return false
}

// publishMeters gives translation the current meters (mt.mu held).
func (mt *meterTable) publishMeters() {
	m := make(map[uint32]uint32, len(mt.m))
	for id, e := range mt.m {
		m[id] = e.dp
	}
	mt.xl.SetMeters(m)
}

// checkMeterRef refuses a flow whose meter does not exist
// (OFPMMFC_INVALID_METER), as Open vSwitch.
func (mt *meterTable) checkMeterRef(a *ofp.Action) error {
	if a.Type != ofp.ActMeter {
		return nil
	}
	if _, ok := mt.xl.Meters()[uint32(a.Arg)]; !ok {
		return &ofp.Error{Code: ofp.OFPMMFC_INVALID_METER, Err: errors.New("no such meter")}
	}
	return nil
}

// sortedMeters returns the meters id selects (MeterAll: every meter) in
// ID order; a single meter that does not exist is OFPMMFC_UNKNOWN_METER,
// as Open vSwitch answers meter configuration and statistics requests.
func (mt *meterTable) sortedMeters(id uint32) ([]uint32, []*meterEntry, error) {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	if id != ofp.MeterAll && mt.m[id] == nil {
		return nil, nil, &ofp.Error{Code: ofp.OFPMMFC_UNKNOWN_METER}
	}
	var ids []uint32
	for mid := range mt.m {
		if id == ofp.MeterAll || id == mid {
			ids = append(ids, mid)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	es := make([]*meterEntry, len(ids))
	for i, mid := range ids {
		es[i] = mt.m[mid]
	}
	return ids, es, nil
}

func (mt *meterTable) meterConfig(s ofconn.Sender, m *ofp.Msg, req *ofp.MeterConfigRequest) error {
	rep := &ofp.MeterConfigReply{}
	ids, es, err := mt.sortedMeters(req.MeterID)
	if err != nil {
		return err
	}
	for i, e := range es {
		rep.Configs = append(rep.Configs, ofp.MeterConfig{Flags: e.flags, MeterID: ids[i], Bands: e.bands})
	}
	return replyMultipart(s, m, rep)
}

// meterStats reports each meter's datapath counters and the number of
// flows that use it.
func (mt *meterTable) meterStats(s ofconn.Sender, m *ofp.Msg, req *ofp.MeterStatsRequest) error {
	rep := &ofp.MeterStatsReply{}
	ids, es, err := mt.sortedMeters(req.MeterID)
	if err != nil {
		return err
	}
	flows := mt.meterFlowCounts()
	now := time.Now()
	for i, e := range es {
		d := now.Sub(e.created).Truncate(time.Millisecond)
		ms := ofp.MeterStats{MeterID: ids[i], FlowCount: flows[ids[i]],
			DurationSec: uint32(d / time.Second), DurationNsec: uint32(d % time.Second)}
		var dst meter.Stats
		if e.dp != xlate.NoDPMeter {
			if dm := mt.dp.Get(e.dp); dm != nil {
				dst = dm.Stats()
			}
		}
		ms.PacketInCount, ms.ByteInCount = dst.Packets, dst.Bytes
		for j := range e.bands {
			var bs ofp.BandStats
			if j < len(dst.Bands) {
				bs = ofp.BandStats{PacketCount: dst.Bands[j].Packets, ByteCount: dst.Bands[j].Bytes}
			}
			ms.Bands = append(ms.Bands, bs)
		}
		rep.Stats = append(rep.Stats, ms)
	}
	return replyMultipart(s, m, rep)
}

// meterFlowCounts counts the flows that use each meter.
func (mt *meterTable) meterFlowCounts() map[uint32]uint32 {
	n := map[uint32]uint32{}
	var walk func([]ofp.Action, map[uint32]bool)
	walk = func(acts []ofp.Action, seen map[uint32]bool) {
		for i := range acts {
			if acts[i].Type == ofp.ActMeter && !seen[uint32(acts[i].Arg)] {
				seen[uint32(acts[i].Arg)] = true
				n[uint32(acts[i].Arg)]++
			}
			walk(acts[i].Nested, seen)
		}
	}
	for r := range mt.tables.Rules(0xff, nil) {
		walk(r.Actions, map[uint32]bool{})
	}
	return n
}
