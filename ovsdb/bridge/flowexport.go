package bridge

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"

	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/model"
)

// Open vSwitch's flow export defaults (vswitchd/vswitch.xml).
const (
	// NetFlowActiveTimeout is the NetFlow active timeout when
	// NetFlow.active_timeout is 0 or -1, in seconds.
	NetFlowActiveTimeout = 600
	// SFlowSampling, SFlowPolling and SFlowHeader are sFlow's sampling
	// rate (1-in-N), counter polling interval (seconds) and sampled
	// header size (bytes) when the columns are unset.
	SFlowSampling = 400
	SFlowPolling  = 30
	SFlowHeader   = 128
	// IPFIXTemplateInterval and IPFIXStatsInterval are the IPFIX template
	// and statistics re-send intervals in seconds (other_config
	// template-interval and stats-interval, Open vSwitch 3.2).
	IPFIXTemplateInterval = 600
	IPFIXStatsInterval    = 600
)

// FlowExportConfig is a bridge's flow export configuration: the Bridge
// row's netflow, sflow and ipfix columns and the Flow_Sample_Collector_Set
// rows that name the bridge, with Open vSwitch's defaults filled in.
// nil members are off.
type FlowExportConfig struct {
	NetFlow *NetFlowConfig
	SFlow   *SFlowConfig
	// IPFIX is the per-bridge sampling exporter; it is on only when the
	// IPFIX row has targets and a sampling rate (as Open vSwitch).
	IPFIX *IPFIXConfig
	// CollectorSets are the per-flow sampling exporters (for OpenFlow
	// sample actions) by collector set id, sorted by id; a set whose
	// IPFIX row has no targets is left out.
	CollectorSets []CollectorSetConfig
	// Warnings are the problems found, worded as Open vSwitch logs them;
	// the switch logs them when it applies the configuration.
	Warnings []string
}

// NetFlowConfig is a NetFlow row.
type NetFlowConfig struct {
	// Targets are "IP:PORT" collectors (the port is mandatory).
	Targets []string
	// EngineType and EngineID are nil when unset: the datapath's
	// defaults apply.
	EngineType, EngineID *uint8
	// ActiveTimeout is in seconds (0 and -1 in the row mean the default).
	ActiveTimeout    int64
	AddIDToInterface bool
}

// SFlowConfig is an sFlow row.
type SFlowConfig struct {
	// Targets are "IP[:PORT]" collectors (default port 6343).
	Targets []string
	// Agent names the interface or address whose IP address identifies
	// the agent ("" picks the address that routes to the collector).
	Agent string
	// Sampling is 1-in-N packets; Polling the counter interval in seconds
	// (0: no counter samples); Header the sampled header size.
	Sampling, Polling, Header uint32
	// SubID is the bridge's sFlow sub-agent id: its index among the
	// bridges with sFlow, in name order.
	SubID uint32
}

// IPFIXConfig is an IPFIX row.
type IPFIXConfig struct {
	// Targets are "IP[:PORT]" collectors (default port 4739).
	Targets []string
	// Sampling is 1-in-N packets (per-bridge sampling only).
	Sampling                uint32
	ObsDomainID, ObsPointID uint32
	CacheActiveTimeout      uint32 // seconds; 0: no flow caching
	CacheMaxFlows           uint32 // 0: no flow caching
	TemplateInterval        uint32 // seconds
	StatsInterval           uint32 // seconds
	EnableTunnelSampling    bool
	EnableInputSampling     bool
	EnableOutputSampling    bool
	VirtualObsID            string
}

// CollectorSetConfig is a Flow_Sample_Collector_Set row with its IPFIX
// row.
type CollectorSetConfig struct {
	ID    uint32
	IPFIX IPFIXConfig
}

// FlowExportConfigurer is implemented by switches that export flows. The
// reconciler calls it after a bridge's ports are applied whenever the
// bridge's parsed FlowExportConfig differs from what it last applied
// (cfg is nil when flow export is off); problems with targets are the
// switch's to log, as Open vSwitch logs them.
type FlowExportConfigurer interface {
	ConfigureFlowExport(bridge string, cfg *FlowExportConfig)
}

// parseFlowExport reads a Bridge row's flow export columns; nil when
// none is configured.
func parseFlowExport(s *client.Snapshot, name string, bu model.UUID, br *client.Row, nPorts int) *FlowExportConfig {
	fe := &FlowExportConfig{}
	if u := uuids(br.Get("netflow")); len(u) == 1 {
		if r := s.Row("NetFlow", u[0]); r != nil {
			fe.NetFlow = parseNetFlow(r, name, nPorts, &fe.Warnings)
		}
	}
	if u := uuids(br.Get("sflow")); len(u) == 1 {
		if r := s.Row("sFlow", u[0]); r != nil {
			fe.SFlow = parseSFlow(r)
		}
	}
	if u := uuids(br.Get("ipfix")); len(u) == 1 {
		if r := s.Row("IPFIX", u[0]); r != nil {
			if c := parseIPFIX(r); len(c.Targets) > 0 && c.Sampling > 0 {
				fe.IPFIX = &c
			}
		}
	}
	for _, r := range s.Rows("Flow_Sample_Collector_Set") {
		if b := uuids(r.Get("bridge")); len(b) != 1 || b[0] != bu {
			continue
		}
		iu := uuids(r.Get("ipfix"))
		if len(iu) != 1 {
			continue
		}
		ir := s.Row("IPFIX", iu[0])
		if ir == nil {
			continue
		}
		c := parseIPFIX(ir)
		if len(c.Targets) == 0 {
			continue
		}
		fe.CollectorSets = append(fe.CollectorSets, CollectorSetConfig{ID: uint32(integer(r.Get("id"), 0)), IPFIX: c})
	}
	slices.SortStableFunc(fe.CollectorSets, func(a, b CollectorSetConfig) int { return cmp.Compare(a.ID, b.ID) })
	// Two rows with one id: the first wins.
	fe.CollectorSets = slices.CompactFunc(fe.CollectorSets, func(a, b CollectorSetConfig) bool { return a.ID == b.ID })
	if fe.NetFlow == nil && fe.SFlow == nil && fe.IPFIX == nil && len(fe.CollectorSets) == 0 {
		return nil
	}
	return fe
}

func optUint8(d model.Datum) *uint8 {
	n := optInt64(d)
	if n == nil || *n < 0 || *n > 255 {
		return nil
	}
	v := uint8(*n)
	return &v
}

func parseNetFlow(r *client.Row, bridge string, nPorts int, warn *[]string) *NetFlowConfig {
	c := &NetFlowConfig{
		Targets:    strs(r.Get("targets")),
		EngineType: optUint8(r.Get("engine_type")),
		EngineID:   optUint8(r.Get("engine_id")),
	}
	c.AddIDToInterface, _ = boolean(r.Get("add_id_to_interface"))
	switch t := integer(r.Get("active_timeout"), 0); {
	case t > 0:
		c.ActiveTimeout = t
	case t < 0:
		*warn = append(*warn, fmt.Sprintf("bridge %s: active timeout interval set to negative value, using default instead (%d seconds)", bridge, NetFlowActiveTimeout))
		fallthrough
	default:
		c.ActiveTimeout = NetFlowActiveTimeout
	}
	if c.AddIDToInterface {
		if c.EngineID != nil && *c.EngineID > 0x7f {
			*warn = append(*warn, fmt.Sprintf("bridge %s: NetFlow port mangling may conflict with another vswitch, choose an engine id less than 128", bridge))
		}
		if nPorts > 508 {
			*warn = append(*warn, fmt.Sprintf("bridge %s: NetFlow port mangling will conflict with another port when more than 508 ports are used", bridge))
		}
	}
	return c
}

// optPositive returns an optional integer column as a uint32, def when
// unset or out of range.
func optUint32(d model.Datum, def uint32) uint32 {
	n := optInt64(d)
	if n == nil || *n < 0 || *n > 0xffffffff {
		return def
	}
	return uint32(*n)
}

func parseSFlow(r *client.Row) *SFlowConfig {
	c := &SFlowConfig{
		Targets:  strs(r.Get("targets")),
		Agent:    str(r.Get("agent")),
		Sampling: optUint32(r.Get("sampling"), SFlowSampling),
		Polling:  optUint32(r.Get("polling"), SFlowPolling),
		Header:   optUint32(r.Get("header"), SFlowHeader),
	}
	// A rate of 0 would sample nothing at an infinite rate; Open vSwitch
	// treats it as "sample every packet" through its MAX(1, ...).
	if c.Sampling == 0 {
		c.Sampling = 1
	}
	return c
}

// boolOption reads an other_config boolean the way Open vSwitch's
// smap_get_bool does: "true" is true, "false" false, anything else def.
func boolOption(m map[string]string, key string, def bool) bool {
	switch m[key] {
	case "true":
		return true
	case "false":
		return false
	}
	return def
}

// uintOption reads an other_config unsigned integer, def when absent or
// malformed.
func uintOption(m map[string]string, key string, def uint32) uint32 {
	var v uint32
	if s, ok := m[key]; ok {
		if _, err := fmt.Sscanf(s, "%d", &v); err == nil {
			return v
		}
	}
	return def
}

func parseIPFIX(r *client.Row) IPFIXConfig {
	oc := strMap(r.Get("other_config"))
	return IPFIXConfig{
		Targets:              strs(r.Get("targets")),
		Sampling:             optUint32(r.Get("sampling"), 0),
		ObsDomainID:          optUint32(r.Get("obs_domain_id"), 0),
		ObsPointID:           optUint32(r.Get("obs_point_id"), 0),
		CacheActiveTimeout:   optUint32(r.Get("cache_active_timeout"), 0),
		CacheMaxFlows:        optUint32(r.Get("cache_max_flows"), 0),
		TemplateInterval:     uintOption(oc, "template-interval", IPFIXTemplateInterval),
		StatsInterval:        uintOption(oc, "stats-interval", IPFIXStatsInterval),
		EnableTunnelSampling: boolOption(oc, "enable-tunnel-sampling", true),
		EnableInputSampling:  boolOption(oc, "enable-input-sampling", true),
		EnableOutputSampling: boolOption(oc, "enable-output-sampling", true),
		VirtualObsID:         oc["virtual_obs_id"],
	}
}

// assignSFlowSubIDs numbers the bridges with sFlow in name order.
func assignSFlowSubIDs(bridges []BridgeConfig) {
	var n uint32
	for i := range bridges {
		if fe := bridges[i].FlowExport; fe != nil && fe.SFlow != nil {
			fe.SFlow.SubID = n
			n++
		}
	}
}

// applyFlowExport hands a bridge's flow export configuration to the
// switch when it changed.
func (r *Reconciler) applyFlowExport(ab *appliedBridge, bc *BridgeConfig) {
	fc, ok := r.sw.(FlowExportConfigurer)
	if !ok || reflect.DeepEqual(ab.flowExport, bc.FlowExport) {
		return
	}
	fc.ConfigureFlowExport(bc.Name, bc.FlowExport)
	ab.flowExport = bc.FlowExport
}
