package ofswitch

import (
	"errors"
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// groupTable is a bridge's OpenFlow groups. Bundles stage changes to it
// under mu (bundle.go).
type groupTable struct {
	// mu is the bridge's gmu, shared with the meter table.
	mu *sync.Mutex
	m  map[uint32]*groupEntry
	// What groups need of the bridge: translation (which groups
	// exist), the flow tables (flows that output to a group), the meters
	// (buckets' meter actions), a way to revalidate megaflows and to send
	// flow_removed for the flows a group delete removes.
	xl           *xlate.Xlator
	tables       *oftable.Tables
	meters       *meterTable
	changed      func()
	flowsRemoved func([]oftable.Removal)
}

// groupEntry is a group as the switch keeps it: the translation form and
// what group desc replies need.
type groupEntry struct {
	g          *xlate.Group
	param      uint64
	fields     mf.Match
	fieldOrder []mf.ID
	created    time.Time
}

// groupMod applies a group_mod with Open vSwitch's errors.
func (gt *groupTable) groupMod(gm *ofp.GroupMod) error {
	gt.mu.Lock()
	defer gt.mu.Unlock()
	next := maps.Clone(gt.m)
	if next == nil {
		next = map[uint32]*groupEntry{}
	}
	deleted, err := stageGroupMod(next, gm)
	if err != nil {
		return err
	}
	gt.m = next
	gt.publishGroups()
	if len(deleted) > 0 {
		x := gt.tables.Begin()
		for _, id := range deleted {
			x.Apply(groupDeleteFlows(id))
		}
		gt.flowsRemoved(x.Commit())
	}
	gt.changed()
	return nil
}

// groupDeleteFlows is the deletion of the flows that output to a deleted
// group: they go with it, as in Open vSwitch (flow_removed reason
// group_delete).
func groupDeleteFlows(id uint32) *oftable.FlowMod {
	return &oftable.FlowMod{Command: ofp.FlowDelete, Table: 0xff, OutPort: oftable.PortAny, OutGroup: id,
		NewCookie: oftable.CookieUnchanged, RemoveReason: oftable.RemovedGroupDelete}
}

// stageGroupMod applies gm to the group table next (a copy the caller
// owns) and returns the groups it deleted.
func stageGroupMod(next map[uint32]*groupEntry, gm *ofp.GroupMod) ([]uint32, error) {
	var deleted []uint32
	cmd := gm.Command
	if cmd == ofp.GroupAddOrMod {
		cmd = ofp.GroupAdd
		if next[gm.GroupID] != nil {
			cmd = ofp.GroupModify
		}
	}
	switch cmd {
	case ofp.GroupAdd, ofp.GroupModify:
		if gm.GroupID > ofp.GroupMax {
			return nil, &ofp.Error{Code: ofp.OFPGMFC_INVALID_GROUP}
		}
		old := next[gm.GroupID]
		if cmd == ofp.GroupAdd && old != nil {
			return nil, &ofp.Error{Code: ofp.OFPGMFC_GROUP_EXISTS}
		}
		if cmd == ofp.GroupModify && old == nil {
			return nil, &ofp.Error{Code: ofp.OFPGMFC_UNKNOWN_GROUP}
		}
		e := &groupEntry{param: gm.SelectionParam, fields: gm.Fields, fieldOrder: gm.FieldOrder, created: time.Now()}
		if old != nil {
			e.created = old.created
		}
		e.g = xlate.NewGroup(gm.GroupID, gm.Type, gm.Buckets, gm.SelectionMethod, gm.SelectionParam, gm.FieldOrder, nil)
		next[gm.GroupID] = e
	case ofp.GroupDelete:
		if gm.GroupID == ofp.GroupAll {
			for id := range next {
				deleted = append(deleted, id)
			}
			clear(next)
		} else if next[gm.GroupID] != nil {
			delete(next, gm.GroupID)
			deleted = append(deleted, gm.GroupID)
		}
	case ofp.GroupInsertBucket, ofp.GroupRemoveBucket:
		old := next[gm.GroupID]
		if old == nil {
			return nil, &ofp.Error{Code: ofp.OFPGMFC_UNKNOWN_GROUP}
		}
		buckets, err := editBuckets(old.g.Buckets, gm)
		if err != nil {
			return nil, err
		}
		e := *old
		e.g = xlate.NewGroup(gm.GroupID, old.g.Type, buckets, old.g.Method, old.g.Param, old.g.Fields, nil)
		next[gm.GroupID] = &e
	default:
		return nil, &ofp.Error{Code: ofp.OFPGMFC_BAD_COMMAND}
	}
	return deleted, nil
}

// Buckets may chain to groups that do not exist yet, as in Open vSwitch
// (translation skips a missing group and bounds chains by its depth
// limit).

// editBuckets implements OpenFlow 1.5 insert_bucket and remove_bucket.
func editBuckets(cur []ofp.Bucket, gm *ofp.GroupMod) ([]ofp.Bucket, error) {
	out := append([]ofp.Bucket(nil), cur...)
	pos := func(id uint32) int {
		for i, bk := range out {
			if bk.ID == id {
				return i
			}
		}
		return -1
	}
	if gm.Command == ofp.GroupRemoveBucket {
		switch gm.CommandBucketID {
		case ofp.BucketAll:
			return nil, nil
		case ofp.BucketFirst:
			if len(out) > 0 {
				out = out[1:]
			}
		case ofp.BucketLast:
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			i := pos(gm.CommandBucketID)
			if i < 0 {
				return nil, &ofp.Error{Code: ofp.OFPGMFC_UNKNOWN_BUCKET}
			}
			out = append(out[:i], out[i+1:]...)
		}
		return out, nil
	}
	// The bucket to insert after must exist before duplicates count.
	if id := gm.CommandBucketID; id <= ofp.BucketMax && pos(id) < 0 {
		return nil, &ofp.Error{Code: ofp.OFPGMFC_UNKNOWN_BUCKET}
	}
	for _, nb := range gm.Buckets {
		if pos(nb.ID) >= 0 {
			return nil, &ofp.Error{Code: ofp.OFPGMFC_BUCKET_EXISTS}
		}
	}
	switch gm.CommandBucketID {
	case ofp.BucketFirst:
		return append(append([]ofp.Bucket(nil), gm.Buckets...), out...), nil
	case ofp.BucketLast, ofp.BucketAll:
		return append(out, gm.Buckets...), nil
	default:
		i := pos(gm.CommandBucketID)
		if i < 0 {
			return nil, &ofp.Error{Code: ofp.OFPGMFC_UNKNOWN_BUCKET}
		}
		rest := append([]ofp.Bucket(nil), out[i+1:]...)
		return append(append(out[:i+1], gm.Buckets...), rest...), nil
	}
}

// publishGroups gives translation the current groups (gt.mu held).
func (gt *groupTable) publishGroups() { gt.xl.SetGroups(xlateGroups(gt.m)) }

// xlateGroups is a group table in translation's form.
func xlateGroups(groups map[uint32]*groupEntry) map[uint32]*xlate.Group {
	m := make(map[uint32]*xlate.Group, len(groups))
	for id, e := range groups {
		m[id] = e.g
	}
	return m
}

// checkGroupRefs refuses a flow that outputs to a group that does not
// exist (OFPBAC_BAD_OUT_GROUP) or uses a meter that does not exist
// (OFPMMFC_INVALID_METER), as Open vSwitch.
func (gt *groupTable) checkGroupRefs(acts []ofp.Action) error {
	return gt.checkGroupRefsIn(acts, gt.xl.Groups())
}

// checkGroupRefsIn is checkGroupRefs against the group table groups (a
// bundle's staged one).
func (gt *groupTable) checkGroupRefsIn(acts []ofp.Action, groups map[uint32]*xlate.Group) error {
	var walk func([]ofp.Action) error
	walk = func(acts []ofp.Action) error {
		for i := range acts {
			a := &acts[i]
			if a.Type == ofp.ActGroup && groups[uint32(a.Arg)] == nil {
				return &ofp.Error{Code: ofp.OFPBAC_BAD_OUT_GROUP, Err: errors.New("no such group")}
			}
			if err := gt.meters.checkMeterRef(a); err != nil {
				return err
			}
			if err := walk(a.Nested); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(acts)
}

func (gt *groupTable) sortedGroups(id uint32) []*groupEntry {
	gt.mu.Lock()
	defer gt.mu.Unlock()
	var out []*groupEntry
	for gid, e := range gt.m {
		if id == ofp.GroupAll || id == gid {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].g.ID < out[j].g.ID })
	return out
}

func (gt *groupTable) groupDesc(s ofconn.Sender, m *ofp.Msg, req *ofp.GroupDescRequest) error {
	rep := &ofp.GroupDescReply{}
	for _, e := range gt.sortedGroups(req.GroupID) {
		rep.Groups = append(rep.Groups, ofp.GroupDesc{Type: e.g.Type, GroupID: e.g.ID, Buckets: e.g.Buckets,
			SelectionMethod: e.g.Method, SelectionParam: e.param, Fields: e.fields, FieldOrder: e.fieldOrder})
	}
	return replyMultipart(s, m, rep)
}

func (gt *groupTable) groupStats(s ofconn.Sender, m *ofp.Msg, req *ofp.GroupStatsRequest) error {
	rep := &ofp.GroupStatsReply{}
	now := time.Now()
	for _, e := range gt.sortedGroups(req.GroupID) {
		d := now.Sub(e.created).Truncate(time.Millisecond)
		gs := ofp.GroupStats{GroupID: e.g.ID, PacketCount: e.g.Stats.Packets.Load(), ByteCount: e.g.Stats.Bytes.Load(),
			DurationSec: uint32(d / time.Second), DurationNsec: uint32(d % time.Second)}
		for i := range e.g.Stats.Buckets {
			bc := &e.g.Stats.Buckets[i]
			gs.Buckets = append(gs.Buckets, ofp.BucketStats{PacketCount: bc.Packets.Load(), ByteCount: bc.Bytes.Load()})
		}
		gs.RefCount = uint32(gt.groupRefCount(e.g.ID))
		rep.Stats = append(rep.Stats, gs)
	}
	return replyMultipart(s, m, rep)
}

// groupRefCount counts the flows that output to a group.
func (gt *groupTable) groupRefCount(id uint32) int {
	n := 0
	for r := range gt.tables.Rules(0xff, nil) {
		if outputsTo(r.Actions, oftable.PortAny, id) {
			n++
		}
	}
	return n
}

// buckets returns group id's buckets, nil if there is no such group.
func (gt *groupTable) buckets(id uint32) []ofp.Bucket {
	gt.mu.Lock()
	defer gt.mu.Unlock()
	if e := gt.m[id]; e != nil {
		return e.g.Buckets
	}
	return nil
}
