package xlate

import (
	"fmt"
	"sync/atomic"

	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Group is an OpenFlow group as translation uses it. Groups are immutable
// once published (a group_mod publishes a new map); their counters are
// shared by the versions of a group.
type Group struct {
	ID      uint32
	Type    uint8
	Buckets []ofp.Bucket
	// Method is the select group's selection method: "hash" hashes
	// Fields in translation; anything else (the default, "dp_hash")
	// hashes in the datapath and recirculates, as Open vSwitch does.
	Method string
	// Param is the selection method parameter: for "dp_hash" the hash
	// algorithm in the high 32 bits and the basis in the low ones.
	Param  uint64
	Fields []mf.ID
	// hashMap maps dp_hash & hashMask to a bucket index, buckets
	// taking slots in proportion to their weights.
	hashMap  []int
	hashMask uint32
	Stats    *GroupCounters
}

// GroupCounters are a group's packet and byte counts, per bucket too.
type GroupCounters struct {
	Packets, Bytes atomic.Uint64
	Buckets        []BucketCounter
}

// BucketCounter counts a bucket's packets.
type BucketCounter struct{ Packets, Bytes atomic.Uint64 }

// GroupUse is a group a translation ran, with the bucket it ran (-1:
// every bucket, an all group), whose counters its packets go to (Open
// vSwitch's xlate cache group entries).
type GroupUse struct {
	Stats  *GroupCounters
	Bucket int
}

// Credit counts n packets of b bytes to the group and its bucket(s).
func (u GroupUse) Credit(n, b uint64) {
	if n == 0 {
		return
	}
	u.Stats.Packets.Add(n)
	u.Stats.Bytes.Add(b)
	for i := range u.Stats.Buckets {
		if u.Bucket < 0 || u.Bucket == i {
			u.Stats.Buckets[i].Packets.Add(n)
			u.Stats.Buckets[i].Bytes.Add(b)
		}
	}
}

// groupXlate is a translation's groups: which table of groups it sees,
// running a group's buckets (all, indirect, fast failover, select by
// hash or by dp_hash after a recirculation), and where in a group the
// translation is, for the packet-in reason of an output to the
// controller. c is the translation it belongs to.
type groupXlate struct {
	c *ctx
	// nest is how many group buckets are running, one inside another.
	nest int
	// frames is len(ctx.frames) while a group bucket's own action list
	// runs.
	frames int
}

// use records that the translation ran bucket of g.
func (gx *groupXlate) use(g *Group, bucket int) {
	c := gx.c
	if g.Stats != nil {
		c.out.Groups = append(c.out.Groups, GroupUse{Stats: g.Stats, Bucket: bucket})
	}
}

// NewGroup prepares a group for translation.
func NewGroup(id uint32, typ uint8, buckets []ofp.Bucket, method string, param uint64, fields []mf.ID, stats *GroupCounters) *Group {
	g := &Group{ID: id, Type: typ, Buckets: buckets, Method: method, Param: param, Fields: fields, Stats: stats}
	if g.Stats == nil || len(g.Stats.Buckets) != len(buckets) {
		g.Stats = &GroupCounters{Buckets: make([]BucketCounter, len(buckets))}
	}
	if typ == ofp.GroupTypeSelect && len(buckets) > 0 {
		g.buildHashMap()
	}
	return g
}

// maxSelectHash bounds a dp_hash select group's hash table, as Open
// vSwitch's MAX_SELECT_GROUP_HASH_VALUES.
const maxSelectHash = 256

// buildHashMap lays out the dp_hash table as Open vSwitch does, so that
// the same dp_hash picks the same bucket: max(16, the power of two at or
// above total weight / smallest weight) slots, handed out by Webster's
// method (each slot to the bucket with the largest weight/divisor,
// divisors 1, 3, 5, ...). Beyond 256 slots the table is capped; Open
// vSwitch then falls back to hashing in the slow path.
func (g *Group) buildHashMap() {
	var total uint64
	minWeight := uint64(0xffff)
	for _, b := range g.Buckets {
		if b.Weight > 0 && uint64(b.Weight) < minWeight {
			minWeight = uint64(b.Weight)
		}
		total += uint64(b.Weight)
	}
	if total == 0 {
		g.hashMap, g.hashMask = nil, 0
		return
	}
	slots := (total + minWeight - 1) / minWeight
	n := uint64(16)
	for n < slots && n < maxSelectHash {
		n <<= 1
	}
	g.hashMap = make([]int, n)
	g.hashMask = uint32(n - 1)
	div := make([]uint64, len(g.Buckets))
	for i := range div {
		div[i] = 1
	}
	for h := range g.hashMap {
		win := 0
		for i := 1; i < len(g.Buckets); i++ {
			// weight_i/div_i > weight_win/div_win, in integers.
			if uint64(g.Buckets[i].Weight)*div[win] > uint64(g.Buckets[win].Weight)*div[i] {
				win = i
			}
		}
		div[win] += 2
		g.hashMap[h] = win
	}
}

// dpHashAlg returns the datapath hash a dp_hash select group uses: Open
// vSwitch's default (no selection method) is the symmetric L4 hash with
// basis 0; "dp_hash" takes the algorithm and basis from the parameter
// (an unknown algorithm is the L4 hash).
func (g *Group) dpHashAlg() (odp.HashAlg, uint32) {
	if g.Method == "" {
		return odp.HashSymL4, 0
	}
	alg := odp.HashAlg(g.Param >> 32)
	if alg != odp.HashL4 && alg != odp.HashSymL4 {
		alg = odp.HashL4
	}
	return alg, uint32(g.Param)
}

// SetGroups publishes the bridge's groups.
func (x *Xlator) SetGroups(m map[uint32]*Group) { x.groups.Store(&m) }

// Groups returns the published groups.
func (x *Xlator) Groups() map[uint32]*Group {
	if p := x.groups.Load(); p != nil {
		return *p
	}
	return nil
}

// table is the group table of the bridge translating now: the
// caller's staged groups (In.Groups) for their bridge, else the
// published ones.
func (gx *groupXlate) table() map[uint32]*Group {
	c := gx.c
	if c.in.Groups != nil && c.x == c.in.GroupsOf {
		return c.in.Groups
	}
	return c.x.Groups()
}

// run translates group:ID.
func (gx *groupXlate) run(id uint32) {
	c := gx.c
	if c.depth >= MaxDepth {
		// Groups may chain to groups (themselves too): the same bound
		// as resubmit.
		c.tr.errorf("over max translation depth %d", MaxDepth)
		c.fail(ErrTooDeep)
		return
	}
	g := gx.table()[id]
	if g == nil {
		c.tr.notef("group %d does not exist", id)
		return
	}
	switch g.Type {
	case ofp.GroupTypeAll:
		gx.use(g, -1)
		for i := range g.Buckets {
			gx.bucket(g, i, true)
		}
	case ofp.GroupTypeIndirect:
		if len(g.Buckets) > 0 {
			gx.bucket(g, 0, false)
		}
	case ofp.GroupTypeFF:
		for i := range g.Buckets {
			b := &g.Buckets[i]
			if gx.live(b) {
				c.tr.notef("using bucket %d", b.ID)
				gx.bucket(g, i, false)
				return
			}
			gx.traceNotLive(b)
		}
		c.tr.notef("no live bucket")
	case ofp.GroupTypeSelect:
		gx.selectBucket(g)
	}
}

// traceNotLive says why a fast-failover bucket was passed over, in Open
// vSwitch's words (xlate_report_bucket_not_live, which calls a watched
// group a port too).
func (gx *groupXlate) traceNotLive(b *ofp.Bucket) {
	c := gx.c
	if c.in.Trace == nil {
		return
	}
	why := ""
	if b.WatchPort != ofp.PortAny {
		why = "port " + reservedPortName(Port16(b.WatchPort))
	}
	if b.WatchGroup != ofp.GroupAny {
		if why != "" {
			why += " and "
		}
		why += fmt.Sprintf("port %d", b.WatchGroup)
	}
	c.tr.notef("bucket %d: not live due to %s", b.ID, why)
}

// reservedPortName prints an OpenFlow port as ofputil_format_port does
// without port names: reserved ports by name, others as numbers.
func reservedPortName(p uint16) string {
	names := map[uint16]string{0xfff8: "IN_PORT", 0xfff9: "TABLE", 0xfffa: "NORMAL", 0xfffb: "FLOOD", 0xfffc: "ALL",
		0xfffd: "CONTROLLER", 0xfffe: "LOCAL", 0xffff: "ANY"}
	if n, ok := names[p]; ok {
		return n
	}
	return fmt.Sprint(p)
}

// live reports whether a fast-failover bucket's watched port
// exists and may forward (Port.Down) and its watched group exists.
func (gx *groupXlate) live(b *ofp.Bucket) bool {
	c := gx.c
	if b.WatchPort != ofp.PortAny {
		if p := c.snap.Ports[Port16(b.WatchPort)]; p == nil || p.Down {
			return false
		}
	}
	if b.WatchGroup != ofp.GroupAny && gx.table()[b.WatchGroup] == nil {
		return false
	}
	return true
}

// bucket runs one bucket's actions. In an all group each bucket starts
// from the pipeline state before the group, as Open vSwitch's
// xlate_group_bucket: the state is restored after it, and header changes
// a bucket committed are undone by the next commit (no datapath clone).
func (gx *groupXlate) bucket(g *Group, i int, restore bool) {
	c := gx.c
	// A bucket's actions are an action set (Open vSwitch's
	// xlate_group_bucket), and the pipeline state before the group comes
	// back after it whatever the group type.
	if !restore {
		gx.use(g, i) // an all group counts once, in group
	}
	acts := actionSetList(g.Buckets[i].Actions)
	saveFlow, saveStack, saveExit, saveInd := c.flow, len(c.stack), c.exit, c.tr.ind
	if c.in.Trace != nil {
		c.in.Trace(&TraceEvent{Kind: TraceBucket, Indent: c.tr.ind, Bucket: g.Buckets[i].ID})
	}
	c.tr.ind += 8
	c.depth++
	gx.nest++
	saveFrames := gx.frames
	gx.frames = len(c.frames) + 1 // the frame doActions pushes
	c.doActions(acts)
	gx.frames = saveFrames
	gx.nest--
	c.depth--
	c.tr.ind = saveInd
	c.flow = saveFlow
	c.stack = c.stack[:min(saveStack, len(c.stack))]
	if c.err == nil {
		c.exit = saveExit
	}
}

// selectBucket picks a bucket: by a hash of the configured fields in
// translation ("hash"), or by the datapath's dp_hash after a
// recirculation (the default, as Open vSwitch's dp_hash method).
func (gx *groupXlate) selectBucket(g *Group) {
	c := gx.c
	if len(g.hashMap) == 0 {
		return
	}
	if c.mpls.was {
		// The selection may read the L3 header a pop_mpls exposed
		// (Open vSwitch's pick_select_group): the group action runs
		// again in the next pass.
		if f := &c.frames[len(c.frames)-1]; f.i < len(f.acts) && f.acts[f.i].Type == ofp.ActGroup && uint32(f.acts[f.i].Arg) == g.ID {
			c.mpls.recirc(f.i)
			return
		}
	}
	if g.Method == "hash" {
		var h uint64 = 0xcbf29ce484222325
		for _, id := range g.Fields {
			f := mf.ByID(id)
			if f == nil || !c.prereqsOK(f) {
				continue
			}
			v := c.snap.fieldBytes(f, &c.flow)
			c.snap.orField(f, &c.wc, allOnes(f.Bytes))
			for _, x := range v {
				h = (h ^ uint64(x)) * 0x100000001b3
			}
		}
		gx.bucket(g, g.hashMap[uint32(h)&g.hashMask], false)
		return
	}
	c.commit()
	c.emit(odp.Hash(g.dpHashAlg()))
	fz, ok := c.freezeRest()
	if !ok {
		return
	}
	fz.Group, fz.HasGroup = g.ID, true
	id := c.x.Recirc.ID(fz)
	c.tr.notef("selection method dp_hash: recirc(%#x)", id)
	c.emit(odp.Recirc(id))
	c.exit = true
}

// freezeRest freezes the pipeline to go on after a recirculation: the
// rest of the current action list and the action set (which then runs
// in the next pass, not this one). It fails the translation if they
// cannot be encoded.
func (c *ctx) freezeRest() (Frozen, bool) {
	return c.freezeFrom(c.frames[len(c.frames)-1].i + 1)
}

// freezeFrom is freezeRest with the rest starting at action i of the
// current list.
func (c *ctx) freezeFrom(i int) (Frozen, bool) {
	rest := c.frames[len(c.frames)-1]
	tail, err := encodeRest(rest.acts[i:])
	if err != nil {
		c.fail(err)
		return Frozen{}, false
	}
	fz := freeze(c.snap.Bridge, c.table, &c.flow)
	fz.Rest, fz.Conntracked = string(tail), c.conntracked
	if fz.ActionSet, err = c.aset.encode(); err != nil {
		c.fail(err)
		return Frozen{}, false
	}
	c.aset.acts, c.aset.hasGroup = nil, false
	return fz, true
}

// resume continues a dp_hash select group after its recirculation:
// the bucket dp_hash selects, then the rest of the action list.
func (gx *groupXlate) resume(fz *Frozen) {
	c := gx.c
	g := gx.table()[fz.Group]
	if g == nil || len(g.hashMap) == 0 {
		c.tr.notef("group %d changed since the recirculation", fz.Group)
		return
	}
	c.wc.DPHash |= g.hashMask
	gx.bucket(g, g.hashMap[c.flow.DPHash&g.hashMask], false)
	if fz.Rest != "" && !c.exit {
		acts, err := decodeRest(fz.Rest) // checked when the flow was added
		if err != nil {
			c.fail(err)
			return
		}
		c.doActions(acts)
	}
}
