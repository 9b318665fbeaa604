package vswitchd

import (
	"os"

	"github.com/gvs-project/gvs/vswitchd/heapgoal"
)

// startHeapGoal keeps the collector's headroom to --gc-headroom of the
// live heap (vswitchd/heapgoal) unless GOGC in the environment chose it,
// and returns the free heap to the system after --gc-trim-after of quiet
// whatever chose the headroom.
func (d *Daemon) startHeapGoal() {
	heapgoal.StartTrim(d.ctx, d.cfg.GCTrimAfter, uint64(d.cfg.GCTrimMin)<<20)
	if g, ok := os.LookupEnv("GOGC"); ok {
		d.log.Info("GOGC set in the environment: --gc-headroom ignored", "GOGC", g)
		return
	}
	if d.cfg.GCHeadroom <= 0 || d.cfg.GCHeadroom >= heapgoal.DefaultPercent {
		return // unset (a Config built in code) or Go's default
	}
	heapgoal.Start(d.ctx, heapgoal.Policy{Percent: d.cfg.GCHeadroom, Min: uint64(d.cfg.GCHeadroomMin) << 20})
}
