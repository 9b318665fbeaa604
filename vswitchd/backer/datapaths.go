package backer

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/datapath/odp"
)

// datapathSet is the backer's datapaths, one per type, created on first
// use as Open vSwitch's dpif-backer keeps one datapath per type shared
// by every bridge of that type, with the switch-wide settings a datapath
// takes at creation (Open_vSwitch.other_config, restorewait.go).
type datapathSet struct {
	workers int
	log     *slog.Logger
	dpLog   func(module string) *slog.Logger
	created func(*dpnetdev.Datapath)

	mu  sync.Mutex
	dps map[string]*dpnetdev.Datapath // by datapath type ("netdev")

	// restoreWait, maxIdle, flowLimit and bundleIdle are
	// Open_vSwitch.other_config's flow-restore-wait, max-idle,
	// flow-limit and bundle-idle-timeout (restorewait.go); a datapath
	// created later takes them at creation.
	restoreWait atomic.Bool
	maxIdle     atomic.Int64 // time.Duration; 0: the datapath default
	flowLimit   atomic.Int64 // 0: the default
	bundleIdle  atomic.Int64 // time.Duration; 0: the default
	// dummyMACs counts the dummy devices created, which take the MACs
	// aa:55:aa:55:00:00, :01, ... in creation order as Open vSwitch's
	// netdev-dummy gives them (its test suite expects them).
	dummyMACs atomic.Uint32
	// pauseNew pauses datapaths as they are created, until the handed
	// state is applied (handover.go); resumes lets them go.
	pauseNew atomic.Bool
	resumes  []func()
	// dropCounters are the drop_action_* coverage counters every
	// datapath's explicit drops count in (nil without Config.Counter).
	dropCounters *[odp.NumDropReasons]odp.Counter
	// invalidPort is the datapath_drop_invalid_port coverage counter.
	invalidPort odp.Counter
	// pmd is the PMD placement and settings (pmd.go).
	pmd pmdConfig
}

// get returns the datapath of a type, creating and starting it on first
// use.
func (ds *datapathSet) get(typ string) *dpnetdev.Datapath {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if dp, ok := ds.dps[typ]; ok {
		return dp
	}
	cfg := dpif.DefaultConfig()
	if ds.workers > 0 {
		cfg.Workers = ds.workers
	}
	if mi := time.Duration(ds.maxIdle.Load()); mi > 0 {
		cfg.MaxIdle = mi
	}
	if fl := ds.flowLimit.Load(); fl > 0 {
		cfg.FlowLimit = int(fl)
	}
	cfg.DropCounters = ds.dropCounters
	cfg.InvalidPort = ds.invalidPort
	cfg.Log = ds.dpLog("dpif_netdev")
	cfg.PutLog = ds.dpLog("dpif")
	dp := dpnetdev.New("ovs-"+typ, cfg)
	logProbes(ds.dpLog("ofproto_dpif"), typ+"@ovs-"+typ, dpnetdev.Capabilities())
	dp.SetRestoreWait(ds.restoreWait.Load())
	ds.setupPMD(typ, dp) // pmd.go
	if ds.created != nil {
		ds.created(dp) // before any port forwards
	}
	if typ == "dummy" {
		// Open vSwitch's dummy datapath has its own internal port 0.
		if dev, err := dummy.New(dummy.Config{Name: "ovs-dummy", Internal: true}); err == nil {
			dp.AddPort(dev, 0)
		}
	}
	if err := dp.Start(); err != nil {
		ds.log.Error("starting datapath", "type", typ, "err", err)
	} else if ds.pauseNew.Load() {
		if resume, err := dp.Pause(time.Second); err == nil {
			ds.resumes = append(ds.resumes, resume)
		}
	}
	ds.dps[typ] = dp
	return dp
}

// datapaths returns the datapaths sorted by name.
func (ds *datapathSet) datapaths() []*dpnetdev.Datapath {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	out := make([]*dpnetdev.Datapath, 0, len(ds.dps))
	for _, t := range sortedKeys(ds.dps) {
		out = append(out, ds.dps[t])
	}
	return out
}

// nextDummyMAC returns the MAC of the next dummy device:
// aa:55 followed by a counter that starts at 0xaa550000.
func (ds *datapathSet) nextDummyMAC() [6]byte {
	n := 0xaa550000 + ds.dummyMACs.Add(1) - 1
	return [6]byte{0xaa, 0x55, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
}

// closeAll closes every datapath and its devices.
func (ds *datapathSet) closeAll() {
	for _, dp := range ds.datapaths() {
		CloseDatapath(dp)
	}
}

// CloseDatapath stops a datapath and closes the devices of its ports.
func CloseDatapath(dp *dpnetdev.Datapath) {
	dp.Close()
	for _, p := range dp.Ports() {
		p.Device.Close()
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// NextDummyMAC returns the MAC of the next dummy device, from the counter
// the bridges' dummy devices take theirs from (dpctl/add-if shares it).
func (s *Backer) NextDummyMAC() [6]byte { return s.dps.nextDummyMAC() }

// moduleWarnf logs a warning in one of Open vSwitch's log modules (a
// failed translation's, in ofproto_dpif_xlate and ofproto_dpif_upcall).
func (s *Backer) moduleWarnf(module, format string, args ...any) {
	s.cfg.Logger(module).Warn(fmt.Sprintf(format, args...))
}

// probeLines are the lines Open vSwitch's backer logs as it probes a new
// datapath (ofproto-dpif's check_support), in its order: the capability
// read, and the line for true and for false. Tools read them (OVN's
// system tests skip a test when "Datapath supports ct_zero_snat" is not
// in the log).
var probeLines = []struct{ key, yes, no string }{
	{"recirc", "Datapath supports recirculation", "Datapath does not support recirculation"},
	{"max_vlan_headers", "VLAN header stack length probed as %s", ""},
	{"max_mpls_depth", "MPLS label stack length probed as %s", ""},
	{"masked_set_action", "", "datapath does not support masked set action feature."},
	{"trunc", "Datapath supports truncate action", "Datapath does not support truncate action"},
	{"ufid", "Datapath supports unique flow ids", "Datapath does not support unique flow ids"},
	{"clone", "Datapath supports clone action", "Datapath does not support clone action"},
	{"sample_nesting", "Max sample nesting level probed as 10", "Max sample nesting level probed as 1"},
	{"ct_eventmask", "Datapath supports eventmask in conntrack action", "Datapath does not support eventmask in conntrack action"},
	{"ct_clear", "Datapath supports ct_clear action", "Datapath does not support ct_clear action"},
	{"max_hash_alg", "Max dp_hash algorithm probed to be %s", ""},
	{"check_pkt_len", "Datapath supports check_pkt_len action", "Datapath does not support check_pkt_len action"},
	{"ct_timeout", "Datapath supports timeout policy in conntrack action", "Datapath does not support timeout policy in conntrack action"},
	{"ct_zero_snat", "Datapath supports ct_zero_snat", "Datapath does not support ct_zero_snat"},
	{"add_mpls", "Datapath supports add_mpls action", "Datapath does not support add_mpls action"},
	{"ct_state", "Datapath supports ct_state", "Datapath does not support ct_state"},
	{"ct_zone", "Datapath supports ct_zone", "Datapath does not support ct_zone"},
	{"ct_mark", "Datapath supports ct_mark", "Datapath does not support ct_mark"},
	{"ct_label", "Datapath supports ct_label", "Datapath does not support ct_label"},
	{"ct_state_nat", "Datapath supports ct_state_nat", "Datapath does not support ct_state_nat"},
	{"ct_orig_tuple", "Datapath supports ct_orig_tuple", "Datapath does not support ct_orig_tuple"},
	{"ct_orig_tuple6", "Datapath supports ct_orig_tuple6", "Datapath does not support ct_orig_tuple6"},
	{"nd_ext", "Datapath supports IPv6 ND Extensions", "Datapath does not support IPv6 ND Extensions"},
}

// logProbes logs what datapath dpif (Open vSwitch's "TYPE@NAME") can
// do, from caps (dpnetdev.Capabilities), in Open vSwitch's words.
func logProbes(log *slog.Logger, dpif string, caps map[string]string) {
	for _, p := range probeLines {
		v, ok := caps[p.key]
		if !ok {
			continue
		}
		line := p.yes
		switch {
		case strings.Contains(p.yes, "%s"):
			line = fmt.Sprintf(p.yes, v)
		case v != "true":
			line = p.no
		}
		if line != "" {
			log.Info(dpif + ": " + line)
		}
	}
}
