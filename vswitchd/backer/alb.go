package backer

import (
	"fmt"
	"strings"
	"time"

	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/datapath/pmd"
)

// The PMD auto load balance (pmd-auto-lb): each datapath's pmd.ALB runs
// once a second and after each time/warp step, on the clock time/warp
// moves (clock.go), with the threads' measured loads; when its dry run
// says so the datapath assigns its queues again.

// albInterval is how often the auto load balance runs in real time.
const albInterval = time.Second

// albOnce is one auto load balance pass over every datapath.
func (s *Backer) albOnce() {
	now := s.bnd.clock.Now()
	for _, dp := range s.dps.datapaths() {
		s.albDatapath(dp, now)
	}
}

func (s *Backer) albDatapath(dp *dpnetdev.Datapath, now int64) {
	typ := strings.TrimPrefix(dp.Name(), "ovs-")
	pc := &s.dps.pmd
	pc.mu.Lock()
	st := pc.settings[typ]
	if st == nil || !dp.PMDPlacement() {
		pc.mu.Unlock()
		return
	}
	if pc.alb == nil {
		pc.alb = map[string]*pmd.ALB{}
	}
	a := pc.alb[typ]
	if a == nil {
		a = &pmd.ALB{}
		pc.alb[typ] = a
	}
	settings := *st
	pc.mu.Unlock()
	if !settings.ALB {
		a.Disable()
		return
	}
	log := s.cfg.Logger("dpif_netdev")
	cur, _, _ := dp.PMDAssignment()
	cores, rxqs := dp.PMDRxQueues()
	if a.Run(now, &settings, dp.ThreadLoads, dp.PMDGeneration(), cur, cores, rxqs, func(l pmd.Level, f string, args ...any) {
		msg := fmt.Sprintf(f, args...)
		switch l {
		case pmd.Debug:
			log.Debug(msg)
		case pmd.Warn:
			log.Warn(msg)
		default:
			log.Info(msg)
		}
	}) {
		dp.Rebalance()
	}
}
