package backer

import (
	"strconv"
	"strings"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/ofproto/ofswitch"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// Open_vSwitch.other_config settings that apply to the whole switch.
//
// flow-restore-wait (Open vSwitch's hot-upgrade aid): while it is "true"
// the datapaths make no upcalls (misses are dropped and counted as lost)
// and expire no megaflow, the bridges run no revalidation round and hold
// their controllers (neither connected nor listened for; Controller rows
// report is_connected false), while <bridge>.mgmt serves ovs-ofctl so the
// flow tables can be restored. Clearing it revalidates every megaflow
// against the restored tables, resumes upcalls and expiry and connects
// the controllers. Unlike Open vSwitch, which reads the key only until it
// first sees it false, gvs also honours it when it is set at run time.
//
// max-idle: milliseconds an unused megaflow stays (default 10000).
//
// flow-limit: the most megaflows a datapath keeps (default 200000), the
// ceiling of the dynamic limit the revalidators adjust.
//
// bundle-idle-timeout: seconds an OpenFlow bundle may go without a
// message before it is discarded (default 10).

var _ bridge.GlobalConfigurer = (*Backer)(nil)

// globalConfig is the part of Open_vSwitch.other_config gvs uses.
type globalConfig struct {
	restoreWait bool
	maxIdle     time.Duration // 0: the datapath default
	flowLimit   int           // 0: the datapath default
	bundleIdle  time.Duration // 0: Open vSwitch's default
}

// parseGlobalConfig reads other_config as Open vSwitch does: booleans
// are true only when "true"; a max-idle that is not a positive number of
// milliseconds means the default.
func parseGlobalConfig(oc map[string]string) globalConfig {
	g := globalConfig{restoreWait: strings.EqualFold(oc["flow-restore-wait"], "true")}
	if ms, err := strconv.ParseUint(oc["max-idle"], 10, 32); err == nil && ms > 0 {
		g.maxIdle = time.Duration(ms) * time.Millisecond
	}
	if n, err := strconv.ParseUint(oc["flow-limit"], 10, 31); err == nil && n > 0 {
		g.flowLimit = int(n)
	}
	if n, err := strconv.ParseUint(oc["bundle-idle-timeout"], 10, 31); err == nil && n > 0 {
		g.bundleIdle = time.Duration(n) * time.Second
	}
	return g
}

// ConfigureGlobal applies Open_vSwitch.other_config (bridge.GlobalConfigurer).
func (s *Backer) ConfigureGlobal(oc map[string]string) {
	s.configurePMD(oc) // pmd.go
	g := parseGlobalConfig(oc)
	d := s.dps
	d.bundleIdle.Store(int64(g.bundleIdle))
	if old := time.Duration(d.maxIdle.Swap(int64(g.maxIdle))); old != g.maxIdle {
		idle := g.maxIdle
		if idle == 0 {
			idle = dpif.DefaultConfig().MaxIdle
		}
		for _, dp := range d.datapaths() {
			dp.SetMaxIdle(idle)
		}
	}
	if old := d.flowLimit.Swap(int64(g.flowLimit)); old != int64(g.flowLimit) {
		limit := g.flowLimit
		if limit == 0 {
			limit = dpif.DefaultConfig().FlowLimit
		}
		for _, dp := range d.datapaths() {
			dp.SetFlowLimit(limit)
		}
		s.mu.Lock()
		for _, n := range sortedKeys(s.bridges) {
			if b := s.bridges[n]; b.of != nil {
				b.of.Upcalls().FlowLimit().SetCeiling(limit)
			}
		}
		s.mu.Unlock()
	}
	if d.restoreWait.Swap(g.restoreWait) == g.restoreWait {
		return
	}
	if g.restoreWait {
		s.log.Info("flow-restore-wait: holding upcalls, megaflow expiry and controller connections")
	} else {
		s.log.Info("flow-restore-wait cleared: resuming upcalls and connecting to controllers")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// On: the datapaths first, so no miss installs a megaflow from tables
	// being restored. Off: revalidate first, then let misses in.
	if g.restoreWait {
		for _, dp := range d.datapaths() {
			dp.SetRestoreWait(true)
		}
	}
	for _, n := range sortedKeys(s.bridges) {
		if b := s.bridges[n]; b.of != nil {
			b.of.Upcalls().SetFlowRestoreWait(g.restoreWait)
			b.of.SetConfig(s.ofSettings(b.settings))
		}
	}
	if !g.restoreWait {
		for _, dp := range d.datapaths() {
			dp.SetRestoreWait(false)
		}
	}
}

// ofSettings is a bridge's settings with its controllers held while
// flow-restore-wait is on.
func (s *Backer) ofSettings(st ofswitch.Settings) ofswitch.Settings {
	st.HoldControllers = s.dps.restoreWait.Load()
	return st
}
