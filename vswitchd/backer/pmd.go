package backer

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/datapath/pmd"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// PMD threads: the datapaths' PMD placement from the NUMA layout
// (Config.NUMA), Open_vSwitch.other_config (pmd-cpu-mask,
// pmd-rxq-assign, pmd-rxq-isolate, the auto load balance keys,
// pmd-maxsleep, ...: pmd.Settings, one per datapath as Open vSwitch's
// dpif-netdev keeps them) and Interface.other_config:pmd-rxq-affinity;
// dummy-pmd ports' options n_rxq, n_txq and numa_id.

// maxDummyQueues bounds a dummy-pmd port's queues as netdev-dummy does.
const maxDummyQueues = 1024

// pmdDummyConfig applies a dummy-pmd interface's queue and node options.
func (d *devices) pmdDummyConfig(cfg *dummy.Config, opts map[string]string) {
	optInt := func(k string, def int) int {
		if n, err := strconv.Atoi(opts[k]); err == nil {
			return n
		}
		return def
	}
	cfg.PMD = true
	rxq, txq := max(optInt("n_rxq", 1), 1), max(optInt("n_txq", 1), 1)
	if rxq > maxDummyQueues || txq > maxDummyQueues {
		d.logger("netdev_dummy").Warn(fmt.Sprintf("The one or both of interface %s queues(rxq: %d, txq: %d) exceed %d. Sets it %d.\n",
			cfg.Name, rxq, txq, maxDummyQueues, maxDummyQueues))
		rxq, txq = min(rxq, maxDummyQueues), min(txq, maxDummyQueues)
	}
	cfg.RxQueues, cfg.TxQueues = rxq, txq
	cfg.NUMA = optInt("numa_id", 0)
}

// pmdConfig is the datapath set's PMD side.
type pmdConfig struct {
	mu       sync.Mutex
	layout   pmd.Layout
	pin      bool
	logged   bool                     // the layout's discovery lines
	oc       map[string]string        // the last Open_vSwitch.other_config
	settings map[string]*pmd.Settings // by datapath type
	alb      map[string]*pmd.ALB      // by datapath type (alb.go)
	albRuns  bool                     // runALB started
}

// setupPMD gives a new datapath its PMD placement and settings (called
// by datapathSet.get before the datapath has ports).
func (ds *datapathSet) setupPMD(typ string, dp *dpnetdev.Datapath) {
	pc := &ds.pmd
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if len(pc.layout.Cores()) == 0 {
		return // no layout given: the datapath's own placement
	}
	if !pc.logged {
		pc.logged = true
		for _, l := range pc.layout.DiscoveryLog() {
			ds.dpLog("ovs_numa").Info(l)
		}
	}
	dp.SetPMDLayout(pc.layout, pc.pin, ds.workers)
	if pc.settings == nil {
		pc.settings = map[string]*pmd.Settings{}
	}
	st := &pmd.Settings{}
	pc.settings[typ] = st
	if pc.oc != nil {
		ds.applyPMDLocked(dp, st, pc.oc)
	}
}

// applyPMDLocked feeds other_config to one datapath's settings.
func (ds *datapathSet) applyPMDLocked(dp *dpnetdev.Datapath, st *pmd.Settings, oc map[string]string) {
	log := ds.dpLog("dpif_netdev")
	ch := st.Update(oc, func(l pmd.Level, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		switch l {
		case pmd.Warn:
			log.Warn(msg)
		case pmd.Debug:
			log.Debug(msg)
		default:
			log.Info(msg)
		}
	})
	if ch.Reconfigure {
		dp.ConfigurePMD(st.CPUMask, st.Mode, st.Isolate)
	}
}

// configurePMD applies Open_vSwitch.other_config to every datapath's PMD
// settings (ConfigureGlobal).
func (s *Backer) configurePMD(oc map[string]string) {
	ds := s.dps
	pc := &ds.pmd
	pc.mu.Lock()
	pc.oc = oc
	if !pc.albRuns && len(pc.layout.Cores()) > 0 {
		pc.albRuns = true
		s.every(albInterval, s.albOnce) // alb.go
	}
	pc.mu.Unlock()
	// Not under pc.mu: datapathSet.get takes ds.mu, then pc.mu.
	for _, dp := range ds.datapaths() {
		typ := strings.TrimPrefix(dp.Name(), "ovs-")
		pc.mu.Lock()
		if st := pc.settings[typ]; st != nil {
			ds.applyPMDLocked(dp, st, oc)
		}
		pc.mu.Unlock()
	}
}

// PMDSettings returns a datapath's PMD settings (nil before its first
// configuration), for the auto load balance and the commands.
func (s *Backer) PMDSettings(dpName string) *pmd.Settings {
	pc := &s.dps.pmd
	pc.mu.Lock()
	defer pc.mu.Unlock()
	st := pc.settings[strings.TrimPrefix(dpName, "ovs-")]
	if st == nil {
		return nil
	}
	c := *st
	return &c
}

// ParseRxqAffinity parses pmd-rxq-affinity ("QUEUE:CORE,..."): a list
// Open vSwitch would refuse gives ok false.
func ParseRxqAffinity(s string) (map[int]int, bool) {
	out := map[int]int{}
	for _, kv := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		k, v, found := strings.Cut(kv, ":")
		if !found {
			k, v, found = strings.Cut(kv, "=")
		}
		q, err1 := strconv.Atoi(k)
		c, err2 := strconv.Atoi(v)
		if !found || err1 != nil || err2 != nil || q < 0 || c < 0 {
			return nil, false
		}
		out[q] = c
	}
	return out, true
}

// existing returns the datapath of a type if it exists.
func (ds *datapathSet) existing(typ string) *dpnetdev.Datapath {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.dps[typ]
}

// configureAffinity applies the interfaces' pmd-rxq-affinity to their
// datapath (ConfigurePorts; callers hold s.mu).
func (s *Backer) configureAffinity(b *dpBridge, ports []bridge.PortConfig) {
	dp := s.dps.existing(b.dpTyp)
	if dp == nil {
		return
	}
	for _, pc := range ports {
		for _, ic := range pc.Interfaces {
			p := b.ports[ic.Name]
			if p == nil || p.dev == nil {
				continue
			}
			aff, ok := ParseRxqAffinity(ic.OtherConfig["pmd-rxq-affinity"])
			if !ok {
				s.cfg.Logger("dpif_netdev").Error(fmt.Sprintf("%s: Invalid rxq affinity '%s'", ic.Name, ic.OtherConfig["pmd-rxq-affinity"]))
				aff = nil
			}
			dp.SetRxqAffinity(ic.Name, aff)
		}
	}
}

// DeviceConfigText is what dpif/show and dpctl/show print after a
// datapath port's type: a tunnel vport's settings, a dummy-pmd port's
// queue counts ("" for other devices).
func DeviceConfigText(dev netdev.Device) string {
	if c, ok := dev.(interface{ ConfigText() string }); ok {
		if t := c.ConfigText(); t != "" {
			return ": " + t
		}
	}
	return TunnelVportConfig(dev)
}

// PlacePMDs gives a datapath made outside the backer (dpctl/add-dp) the
// PMD placement and the current pmd-cpu-mask, pmd-rxq-assign and
// pmd-rxq-isolate, before it has ports.
func (s *Backer) PlacePMDs(dp *dpnetdev.Datapath) {
	pc := &s.dps.pmd
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if len(pc.layout.Cores()) == 0 {
		return
	}
	dp.SetPMDLayout(pc.layout, pc.pin, s.dps.workers)
	var st pmd.Settings
	st.Update(pc.oc, nil)
	dp.ConfigurePMD(st.CPUMask, st.Mode, st.Isolate)
}

// ModuleLogger returns the logger of a vlog module (nil without one).
func (s *Backer) ModuleLogger(module string) *slog.Logger {
	if s.cfg.Logger == nil {
		return nil
	}
	return s.cfg.Logger(module)
}

// maxSystemQueues bounds a system port's n_rxq (sockets in its fanout
// group).
const maxSystemQueues = 64

// systemRxQueues is a system interface's options:n_rxq (default 1).
func systemRxQueues(opts map[string]string) int {
	n, err := strconv.Atoi(opts["n_rxq"])
	if err != nil || n < 1 {
		return 1
	}
	return min(n, maxSystemQueues)
}
