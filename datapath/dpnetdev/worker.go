package dpnetdev

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/datapath/conntrack"
	"github.com/gvs-project/gvs/datapath/dpcls"
	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/l2fib"
	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// MaxRecircDepth bounds recirculation passes per packet (Open vSwitch's
// limit for the userspace datapath is of the same order); deeper packets
// are dropped and counted.
const MaxRecircDepth = 8

// emcGate turns exact-match cache lookups off while they mostly miss
// (more active flows than EMC entries, as with a million 5-tuples): a
// missing lookup costs a whole-key hash and two cache misses and saves
// nothing. While off, one packet in emcSampleEvery is still looked up (and
// inserts continue at their usual probability), so the cache turns back
// on when the traffic becomes cacheable again.
type emcGate struct {
	lookups, hits uint32
	off           bool
	skip          uint32
}

const (
	emcWindow      = 1024 // lookups per decision
	emcOffBelow    = 40   // percent hit rate under which lookups stop
	emcOnAbove     = 60   // percent hit rate (sampled) at which they resume
	emcSampleEvery = 32
)

func (g *emcGate) want() bool {
	if !g.off {
		return true
	}
	g.skip++
	return g.skip%emcSampleEvery == 0
}

func (g *emcGate) record(hit bool) {
	g.lookups++
	if hit {
		g.hits++
	}
	if g.lookups < emcWindow {
		return
	}
	pct := g.hits * 100 / g.lookups
	if g.off {
		g.off = pct < emcOnAbove
	} else {
		g.off = pct < emcOffBelow
	}
	g.lookups, g.hits = 0, 0
}

// rxq is one receive queue assigned to a worker.
type rxq struct {
	port *port
	q    int
}

// workerStats are one worker's counters: written by the worker only,
// read by anyone (atomics, no contention).
type workerStats struct {
	emcHit, megaflowHit, missed, lost     atomic.Uint64
	recirc, upcallOK, upcallFail, lookups atomic.Uint64
	flowLimitHit, putFail, recircTooDeep  atomic.Uint64
	outputNoPort, unsupported, rxPackets  atomic.Uint64
	fragDropped                           atomic.Uint64
	tnlPushDropped, tnlPopError           atomic.Uint64
	tnlInvalidPort                        atomic.Uint64
	_                                     [64]byte
}

func (s *workerStats) load() dpif.Stats {
	e, m := s.emcHit.Load(), s.megaflowHit.Load()
	return dpif.Stats{
		Hit: e + m, EMCHit: e, MegaflowHit: m,
		Missed: s.missed.Load(), Lost: s.lost.Load(), Recirc: s.recirc.Load(),
		UpcallOK: s.upcallOK.Load(), UpcallFail: s.upcallFail.Load(), Lookups: s.lookups.Load(),
	}
}

// frame is the per-recirculation-depth scratch space of a worker: keys,
// hashes, the flow each packet matched, and per-flow sub-batches.
type frame struct {
	keys    [packet.BatchSize]flow.Key
	hashes  [packet.BatchSize]uint64
	hashed  [packet.BatchSize]bool
	flows   [packet.BatchSize]*dpFlow
	keyPtrs [packet.BatchSize]*flow.Key
	found   [packet.BatchSize]bool
	matched [packet.BatchSize]*dpFlow
	missIdx [packet.BatchSize]int
	groups  [packet.BatchSize]group
	ngroups int
	// missed are the packets upcalls answered, with the reply's
	// actions: executeGroups runs each on its own (not counted in any
	// megaflow), first, once the batch is drained (an action may
	// re-enter the pipeline with a batch it owns, as mac_learn's flood
	// does into a patch peer).
	missed  [packet.BatchSize]missedPacket
	nmissed int
}

type missedPacket struct {
	p    *packet.Packet
	acts odp.Actions
}

type group struct {
	f     *dpFlow
	b     packet.Batch
	bytes uint64
	flags uint16
}

// worker is a poll-mode worker: it owns rx queues, a pool, an EMC and a
// classifier. All its methods run on its own goroutine except where noted.
type worker struct {
	id int
	dp *Datapath
	// thread is the PMD thread the worker is (core and node; pmds.go).
	thread threadID
	// isolated is pmd-rxq-show's "isolated" (written on reassignment).
	isolated atomic.Bool
	// quit stops this worker alone; exited is closed when it has.
	quit, exited chan struct{}
	running      bool
	pinCore      int // the core the loop pins itself to; -1: none
	// busyNs and idleNs are the loop's time in rounds that received
	// something and in rounds that did not (the PMD load, pmds.go);
	// sampledBusy and sampledIdle are their last sample.
	busyNs, idleNs           atomic.Int64
	sampledBusy, sampledIdle int64
	// statsBase is what pmd-stats-clear zeroed (pmds.go).
	statsBase atomic.Pointer[dpif.Stats]
	cls       *dpcls.Classifier[*dpFlow]
	emc       *dpcls.EMC[*dpFlow]
	pool      *packet.Pool
	ctx       odp.Context

	l2fwd *l2fib.Forwarder

	emcGate   emcGate
	emcActive bool // the EMC is in use for the batch being processed

	tx        []txBuf  // pending output, indexed by port number
	txPending []uint32 // ports with pending output

	parkedOn *pause // the last Pause this worker parked for (pause.go)

	rxqs        atomic.Pointer[[]rxq] // written by the datapath, read here
	seenRxqs    *[]rxq
	poller      *netdev.Poller
	flowLimit   atomic.Int64
	nflows      atomic.Int64
	rankRequest atomic.Bool

	frames  [MaxRecircDepth + 1]frame
	depth   int
	gen     uint64
	nowNano int64
	// ctr is the poll goroutine's conntrack reader (nil for the
	// execute worker, which many goroutines share under a lock): ct()
	// through it costs no shared write, and the loop quiesces it
	// between batches so that removed connections' memory is reused.
	ctr *conntrack.Reader

	// upcall rate bound (token bucket, refilled per poll iteration)
	tokens     float64
	lastRefill int64

	budget   missBudget  // missbudget.go
	missShed shedCounter // misses dropped by the budget

	stats workerStats
}

func newWorker(dp *Datapath, id int) *worker {
	w := &worker{
		id:      id,
		dp:      dp,
		thread:  threadID{core: id, numa: 0},
		quit:    make(chan struct{}),
		exited:  make(chan struct{}),
		pinCore: -1,
		cls:     newClassifier(),
		pool:    packet.NewPool(16 * packet.BatchSize),
	}
	if dp.cfg.EMCInsertInvProb > 0 {
		cfg := dpcls.DefaultEMCConfig()
		cfg.InsertInvProb = dp.cfg.EMCInsertInvProb
		w.emc = dpcls.NewEMC[*dpFlow](cfg)
	}
	w.flowLimit.Store(int64(dp.cfg.FlowLimit))
	w.l2fwd = l2fib.NewForwarder(&dp.macTables)
	w.ctx = odp.Context{Pool: w.pool, DP: w, DropCounters: dp.cfg.DropCounters}
	empty := []rxq{}
	w.rxqs.Store(&empty)
	w.tokens = float64(dp.cfg.UpcallRate)
	return w
}

// ProcessBatch runs a received batch through the datapath on worker i:
// extract, EMC, megaflow lookup, upcalls, actions. Every packet must have
// Md.InPort set. The packets are consumed. It is how workers process rx
// batches and how benchmarks drive a worker without goroutines; it must
// not be called concurrently for the same worker.
func (dp *Datapath) ProcessBatch(i int, b *packet.Batch) {
	w := dp.workerList()[i]
	w.nowNano = dp.clock().UnixNano()
	w.process(b)
	w.flushTx()
}

// WorkerPool returns worker i's packet pool, for benchmarks that feed
// ProcessBatch with pooled packets. Not safe while the workers run.
func (dp *Datapath) WorkerPool(i int) *packet.Pool { return dp.workerList()[i].pool }

func (w *worker) process(b *packet.Batch) {
	if w.depth > MaxRecircDepth {
		w.stats.recircTooDeep.Add(uint64(b.N))
		w.stats.lost.Add(uint64(b.N))
		netdev.FreeBatch(b, w.pool)
		return
	}
	fr := &w.frames[w.depth]
	fr.nmissed = 0
	n := b.N
	nmiss := 0
	var emcHits uint64
	// With a single megaflow mask the classifier answers with one probe on
	// a hash of the mask's few words, which the EMC (a hash of the whole
	// key, then a whole-key compare) can never beat: skip it.
	useEMC := w.emc != nil && w.cls.Subtables() > 1
	w.emcActive = useEMC
	for i := 0; i < n; i++ {
		p := b.Pkts[i]
		k := &fr.keys[i]
		flow.Extract(p, k)
		fr.hashed[i] = false
		if useEMC && w.emcGate.want() {
			h := k.Hash(0)
			fr.hashes[i], fr.hashed[i] = h, true
			f, ok := w.emc.Lookup(k, h)
			hit := ok && !f.dead.Load()
			w.emcGate.record(hit)
			if hit {
				fr.flows[i] = f
				emcHits++
				continue
			}
		}
		fr.flows[i] = nil
		fr.missIdx[nmiss] = i
		fr.keyPtrs[nmiss] = k
		nmiss++
	}
	if emcHits != 0 {
		w.stats.emcHit.Add(emcHits)
	}
	if nmiss > 0 {
		w.lookupMisses(b, fr, nmiss)
	}
	w.executeGroups(b, fr)
}

// lookupMisses looks the EMC misses up in the classifier as a batch and
// sends what is still missing to the upcall handler.
func (w *worker) lookupMisses(b *packet.Batch, fr *frame, nmiss int) {
	w.cls.LookupBatch(fr.keyPtrs[:nmiss], fr.matched[:nmiss], fr.found[:nmiss])
	var hits uint64
	nup := 0
	for j := 0; j < nmiss; j++ {
		i := fr.missIdx[j]
		if f := fr.matched[j]; fr.found[j] && !f.dead.Load() {
			fr.flows[i] = f
			hits++
			if w.emcActive && w.emc.Chance() {
				if !fr.hashed[i] {
					fr.hashes[i] = fr.keys[i].Hash(0)
				}
				w.emc.Put(&fr.keys[i], fr.hashes[i], f)
			}
			continue
		}
		fr.missIdx[nup] = i
		nup++
	}
	if hits != 0 {
		w.stats.megaflowHit.Add(hits)
		w.stats.lookups.Add(hits)
	}
	for j := 0; j < nup; j++ {
		i := fr.missIdx[j]
		// A megaflow installed by an earlier upcall of this batch may
		// cover this packet: look again before upcalling.
		if j > 0 {
			if f, ok := w.cls.Lookup(&fr.keys[i]); ok && !f.dead.Load() {
				fr.flows[i] = f
				w.stats.megaflowHit.Add(1)
				continue
			}
		}
		w.upcall(b, fr, i)
	}
}

// upcall handles one miss: the packet is queued to run on its own
// (executeGroups) or dropped, and b.Pkts[i] set to nil.
func (w *worker) upcall(b *packet.Batch, fr *frame, i int) {
	w.stats.missed.Add(1)
	hb := w.dp.handler.Load()
	t0 := time.Now().UnixNano()
	if hb == nil || w.dp.restoreWait.Load() || !w.takeToken() || !w.budget.admit(w, t0) {
		if w.budget.limited {
			w.missShed.Add(1)
		}
		w.stats.lost.Add(1)
		w.pool.Put(b.Pkts[i])
		b.Pkts[i] = nil
		return
	}
	w.dp.logMissUpcall(&fr.keys[i]) // pmds.go
	u := dpif.Upcall{Kind: dpif.UpcallMiss, Packet: b.Pkts[i], Key: &fr.keys[i], Worker: w.id}
	var r dpif.MissReply
	err := hb.h.Miss(&u, &r)
	w.budget.upcallNs += time.Now().UnixNano() - t0
	if err != nil {
		w.stats.upcallFail.Add(1)
		w.stats.lost.Add(1)
		w.pool.Put(b.Pkts[i])
		b.Pkts[i] = nil
		return
	}
	w.stats.upcallOK.Add(1)
	if r.Install {
		m := &flow.Match{Key: fr.keys[i], Mask: r.Mask}
		m.Mask.MatchVLANPresence()
		m.Normalize()
		uf := r.UFID
		if uf == (dpif.UFID{}) {
			uf = dpif.UFIDFromMatch(m)
		}
		w.dp.flows.installFromUpcall(w, uf, m, r.Actions, &fr.keys[i], w.dp.clock)
	}
	// The packet that missed is executed on its own with the reply's
	// actions and is not counted in the megaflow's statistics, as in
	// Open vSwitch's datapaths (the handler credits it to the rules):
	// a megaflow's packets are those it matched. Later packets of this
	// batch find the megaflow (lookupMisses looks again).
	fr.missed[fr.nmissed] = missedPacket{b.Pkts[i], r.Actions}
	fr.nmissed++
	b.Pkts[i] = nil
}

// takeToken applies the optional upcall rate bound.
func (w *worker) takeToken() bool {
	rate := w.dp.cfg.UpcallRate
	if rate <= 0 {
		return true
	}
	now := w.nowNano
	if w.lastRefill == 0 {
		w.lastRefill = now
	}
	if el := now - w.lastRefill; el > 0 {
		w.tokens += float64(el) * float64(rate) / 1e9
		if w.tokens > float64(rate) {
			w.tokens = float64(rate)
		}
		w.lastRefill = now
	}
	if w.tokens < 1 {
		return false
	}
	w.tokens--
	return true
}

// executeGroups groups the batch's packets by flow, preserving order
// within a flow, updates each flow's counters once, and runs its actions.
func (w *worker) executeGroups(b *packet.Batch, fr *frame) {
	w.gen++
	gen := w.gen
	fr.ngroups = 0
	for i := 0; i < b.N; i++ {
		p := b.Pkts[i]
		f := fr.flows[i]
		if p == nil || f == nil {
			continue
		}
		var g *group
		if f.grpGen == gen {
			g = &fr.groups[f.grpIdx]
		} else {
			f.grpGen, f.grpIdx = gen, fr.ngroups
			g = &fr.groups[fr.ngroups]
			fr.ngroups++
			g.f, g.bytes, g.flags = f, 0, 0
			g.b.N = 0
		}
		g.b.Add(p)
		g.bytes += uint64(p.Len())
		g.flags |= fr.keys[i].TCPFlags
	}
	b.N = 0
	// The packets that missed go first, as Open vSwitch executes them
	// in its upcall handling before the batch's flows.
	for mi := 0; mi < fr.nmissed; mi++ {
		m := &fr.missed[mi]
		var one packet.Batch
		one.Add(m.p)
		acts := m.acts
		*m = missedPacket{}
		w.execute(&one, acts)
	}
	fr.nmissed = 0
	for gi := 0; gi < fr.ngroups; gi++ {
		g := &fr.groups[gi]
		f := g.f
		f.addStats(uint64(g.b.N), g.bytes, w.nowNano, g.flags)
		acts := *f.actions.Load()
		if len(acts) == 1 && acts[0].Kind == odp.KindOutput {
			// The most common megaflow: straight to the port's tx batch.
			w.Output(&w.ctx, acts[0].Arg, &g.b)
		} else {
			w.execute(&g.b, acts)
		}
		g.f = nil
	}
}

// execute runs datapath actions over a batch; the packets are consumed.
func (w *worker) execute(b *packet.Batch, acts odp.Actions) {
	odp.Execute(&w.ctx, b, acts)
}

// --- odp.Datapath callbacks (run on the worker goroutine) ---

// Output queues the batch for a port; the packets are consumed. Packets
// for the same port from different megaflows are sent together when the
// rx batch is done (output batching, as dpif-netdev does), so a batch
// spread over many megaflows still costs one device send per port.
func (w *worker) Output(_ *odp.Context, no uint32, b *packet.Batch) {
	p := w.dp.ports.load().get(no)
	if p == nil || isTunnelPort(p.dev) {
		// A tunnel vport has no transmit queues: without tnl_push the
		// packet has nowhere to go (dpif-netdev's send port cache
		// leaves such ports out).
		w.stats.outputNoPort.Add(uint64(b.N))
		if c := w.dp.cfg.InvalidPort; c != nil {
			c.Add(uint64(b.N))
		}
		netdev.FreeBatch(b, w.pool)
		return
	}
	for int(no) >= len(w.tx) {
		w.tx = append(w.tx, txBuf{})
	}
	t := &w.tx[no]
	if t.p != p && t.b.N > 0 {
		w.sendTx(t) // the port was replaced since these were queued
	}
	t.p = p
	for i := 0; i < b.N; i++ {
		if t.b.N == packet.BatchSize {
			w.sendTx(t)
		}
		if t.b.N == 0 {
			w.txPending = append(w.txPending, no)
		}
		t.b.Add(b.Pkts[i])
		b.Pkts[i] = nil
	}
	b.N = 0
}

// txBuf is a worker's pending output for one port.
type txBuf struct {
	p *port
	b packet.Batch
}

func (w *worker) sendTx(t *txBuf) {
	if t.b.N == 0 {
		return
	}
	q := w.id
	if q < 0 {
		q = 0
	}
	_ = t.p.dev.Send(q, &t.b, w.pool) // Send counts its own drops and errors
	t.b.N = 0
}

// flushTx sends every pending output batch.
func (w *worker) flushTx() {
	for _, no := range w.txPending {
		if int(no) < len(w.tx) {
			w.sendTx(&w.tx[no])
		}
	}
	w.txPending = w.txPending[:0]
}

// Recirc re-enters the pipeline with a new recirc_id.
func (w *worker) Recirc(_ *odp.Context, id uint32, b *packet.Batch) {
	w.stats.recirc.Add(uint64(b.N))
	w.depth++
	w.process(b)
	w.depth--
}

// Userspace hands each packet to the handler; the packets stay owned by
// the executor.
func (w *worker) Userspace(_ *odp.Context, a *odp.Action, b *packet.Batch) {
	hb := w.dp.handler.Load()
	if hb == nil {
		w.stats.lost.Add(uint64(b.N))
		return
	}
	var k flow.Key
	for _, p := range b.Slice() {
		flow.Extract(p, &k)
		hb.h.Userspace(&dpif.Upcall{Kind: dpif.UpcallUserspace, Packet: p, Key: &k, Action: a, Worker: w.id})
	}
}

// unsupported drops a batch for an action whose datapath module is not
// configured (conntrack, MAC learning and tunnels are their own
// modules), counting the drops so they are never silent.
func (w *worker) unsupported(b *packet.Batch) {
	w.stats.unsupported.Add(uint64(b.N))
	netdev.FreeBatch(b, w.pool)
}

// Conntrack runs the ct() action: it tracks each packet in its zone's
// table and writes ct_state, ct_zone, ct_mark, ct_label and the original
// tuple back into the packet's metadata (recirculation, if any, is the
// next action). IP fragments are first held by the reassembler; when a
// datagram is complete, conntrack runs on the whole datagram and its
// verdict is copied to the fragments, which continue in place of it (as
// Open vSwitch's ipf does).
func (w *worker) Conntrack(_ *odp.Context, a *odp.Action, b *packet.Batch) {
	if a.Ct == nil {
		w.unsupported(b)
		return
	}
	ct := w.dp.ct
	kept := 0
	var done [packet.BatchSize]*packet.Packet // completed fragments to add back
	ndone := 0
	for i := 0; i < b.N; i++ {
		p := b.Pkts[i]
		b.Pkts[i] = nil
		if !mayBeFragment(p) {
			b.Pkts[kept] = p
			kept++
			continue
		}
		whole := w.pool.Get()
		verdict, frags := w.dp.frag.Add(p, a.Ct.Zone, ct.Now(), whole)
		switch verdict {
		case conntrack.NotFragment:
			w.pool.Put(whole)
			b.Pkts[kept] = p
			kept++
		case conntrack.FragHeld:
			w.pool.Put(whole)
		case conntrack.FragDropped:
			w.pool.Put(whole)
			for _, f := range frags {
				w.pool.Put(f)
			}
			w.stats.fragDropped.Add(uint64(len(frags)))
		case conntrack.FragComplete:
			var one packet.Batch
			one.Add(whole)
			w.ctExecute(&one, a.Ct)
			for _, f := range frags {
				conntrack.CopyCtState(f, whole)
				if ndone == len(done) {
					w.pool.Put(f) // more fragments than a batch holds
					w.stats.fragDropped.Add(1)
					continue
				}
				done[ndone] = f
				ndone++
			}
			w.pool.Put(whole)
		}
	}
	b.N = kept
	w.ctExecute(b, a.Ct)
	for i := 0; i < ndone; i++ {
		if !b.Add(done[i]) {
			w.pool.Put(done[i])
			w.stats.fragDropped.Add(1)
		}
	}
}

// ctExecute runs ct() on b, through the worker's reader if it has one.
func (w *worker) ctExecute(b *packet.Batch, a *odp.CtParams) {
	if w.ctr != nil {
		w.ctr.Execute(b, a)
		return
	}
	w.dp.ct.Execute(b, a)
}

// MACLearn runs the MAC learn-and-forward action: learn the sources,
// look the destinations up in the bridge's table, output or flood.
func (w *worker) MACLearn(ctx *odp.Context, a *odp.Action, b *packet.Batch) {
	w.l2fwd.Forward(ctx, a, b)
}

// mayBeFragment is a cheap test that lets the common, unfragmented packet
// skip the reassembler: an IPv4 header with MF or an offset, or any IPv6
// packet with extension headers (the reassembler looks for the fragment
// header).
func mayBeFragment(p *packet.Packet) bool {
	l3 := p.L3Data()
	if len(l3) < 8 {
		return false
	}
	switch l3[0] >> 4 {
	case 4:
		return (uint16(l3[6])<<8|uint16(l3[7]))&0x3fff != 0
	case 6:
		nh := l3[6]
		return nh != 6 && nh != 17 && nh != 58 && nh != 132
	}
	return false
}

// Meter runs the batch through datapath meter id and drops the packets
// that exceed a band. Packets pass a meter that does not exist, as in
// Open vSwitch.
func (w *worker) Meter(_ *odp.Context, id uint32, b *packet.Batch) {
	m := w.dp.meters.Get(id)
	if m == nil {
		return
	}
	var drop [packet.BatchSize]bool
	if m.Apply(w.dp.meters.Now(), b, &drop) == 0 {
		return
	}
	n := 0
	for i, p := range b.Slice() {
		if drop[i] {
			w.pool.Put(p)
			continue
		}
		b.Pkts[n] = p
		n++
	}
	b.Truncate(n)
}

// --- the poll loop ---

func (w *worker) openPoller() error {
	p, err := netdev.NewPoller()
	if err != nil {
		return err
	}
	w.poller = p
	return nil
}

func (w *worker) closePoller() {
	if w.poller != nil {
		w.poller.Close()
		w.poller = nil
	}
}

// syncPoller reconciles the poller with the current rx queue assignment.
func (w *worker) syncPoller() []rxq {
	cur := w.rxqs.Load()
	if cur == w.seenRxqs {
		return *cur
	}
	if w.seenRxqs != nil {
		for _, r := range *w.seenRxqs {
			_ = w.poller.Remove(r.port.dev, r.q)
		}
	}
	for _, r := range *cur {
		_ = w.poller.Add(r.port.dev, r.q)
	}
	w.seenRxqs = cur
	return *cur
}

// runPoll is the worker goroutine: receive from every assigned queue,
// process, and sleep in epoll when a whole round found nothing.
func (w *worker) runPoll() {
	defer close(w.exited)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w.pin() // pmds.go
	var b packet.Batch
	w.ctr = w.dp.ct.NewReader()
	defer w.ctr.Close()
	idleRounds := 0
	lastTop, lastGot := time.Now().UnixNano(), 0
	for {
		select {
		case <-w.dp.stop:
			return
		case <-w.quit:
			return
		default:
		}
		w.parkIfPaused()
		qs := w.syncPoller()
		got := 0
		w.nowNano = time.Now().UnixNano()
		if lastGot > 0 {
			w.busyNs.Add(w.nowNano - lastTop)
		} else {
			w.idleNs.Add(w.nowNano - lastTop)
		}
		lastTop = w.nowNano
		for _, r := range qs {
			n, _ := r.port.dev.Recv(r.q, &b, w.pool)
			if n == 0 {
				continue
			}
			for i := 0; i < b.N; i++ {
				b.Pkts[i].Md.InPort = r.port.no
			}
			got += n
			w.stats.rxPackets.Add(uint64(n))
			w.process(&b)
			w.flushTx()
			b.Clear()
		}
		// Nothing from conntrack is held between rounds.
		w.ctr.Quiesce()
		lastGot = got
		w.budget.roll(w, w.nowNano, got)
		if w.rankRequest.Load() {
			w.rankRequest.Store(false)
			w.cls.Rank()
		}
		if got > 0 {
			idleRounds = 0
			continue
		}
		idleRounds++
		if idleRounds < 64 {
			continue
		}
		// Idle: block until a queue is readable or a short timeout, so
		// that stop and reassignment are noticed.
		w.ctr.Offline()
		_, _ = w.poller.Wait(50 * time.Millisecond)
	}
}
