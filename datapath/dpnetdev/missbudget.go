package dpnetdev

import (
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/datapath/packet"
)

// Misses are handled synchronously by the worker that received them (as
// dpif-netdev's PMD threads do), so an upcall storm spends the worker's
// time translating new flows while packets of established megaflows wait
// behind them in the same poll loop. The miss budget bounds that: while a
// worker is saturated (in the last window no poll round was idle and at
// least half of them received a full batch or more: its queues are
// backing up) and megaflow hits are waiting (it had hits), upcalls may
// use at most a share of its time; the other misses are dropped and
// counted as lost (and in MissesShed) at the cost of a lookup. A worker
// with idle rounds, or with only misses to handle, upcalls without
// limit, so flow setup is not slowed when there is time for it.

// DefaultMissShare is the share of a saturated worker's time, in
// permille, that upcalls may use while megaflow hits wait.
const DefaultMissShare = 100

// missWindow is how often a worker re-decides whether its misses are
// budgeted.
const missWindow = int64(10 * time.Millisecond)

// missBudget is one worker's budget; only its worker touches it.
type missBudget struct {
	winStart int64 // unix nanoseconds
	upcallNs int64 // time spent in upcalls in this window
	idle     bool  // an idle poll round happened in this window
	rounds   int   // poll rounds in this window
	full     int   // rounds that received at least a full batch
	limited  bool  // the budget applies in this window
	lastHits uint64
}

// roll ends the poll round that started at now and received got
// packets, and starts a new window when the current one is over.
func (b *missBudget) roll(w *worker, now int64, got int) {
	b.rounds++
	if got == 0 {
		b.idle = true
	} else if got >= packet.BatchSize {
		b.full++
	}
	if now-b.winStart < missWindow {
		return
	}
	hits := w.stats.emcHit.Load() + w.stats.megaflowHit.Load()
	saturated := !b.idle && 2*b.full >= b.rounds
	b.limited = saturated && hits != b.lastHits && w.dp.missShare.Load() > 0
	b.lastHits, b.idle, b.upcallNs, b.winStart = hits, false, 0, now
	b.rounds, b.full = 0, 0
}

// admit reports whether a miss at now may be upcalled.
func (b *missBudget) admit(w *worker, now int64) bool {
	if !b.limited {
		return true
	}
	return b.upcallNs*1000 <= w.dp.missShare.Load()*(now-b.winStart)
}

// SetMissShare sets the share of a saturated worker's time, in permille,
// that upcalls may use while megaflow hits wait (0: no budget).
func (dp *Datapath) SetMissShare(permille int) {
	dp.missShare.Store(int64(max(permille, 0)))
}

// MissesShed returns the misses dropped by the workers' miss budgets.
func (dp *Datapath) MissesShed() uint64 {
	n := uint64(0)
	for _, w := range dp.workerList() {
		n += w.missShed.Load()
	}
	return n
}

// shedCounter counts one worker's shed misses.
type shedCounter = atomic.Uint64
