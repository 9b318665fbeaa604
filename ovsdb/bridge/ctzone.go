package bridge

import (
	"maps"

	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/model"
)

// DatapathConfig is one Datapath row of Open_vSwitch.datapaths: the
// connection tracking settings of the datapath of that type.
type DatapathConfig struct {
	// Zones are the CT_Zone rows of Datapath.ct_zones by zone number.
	Zones map[uint16]ZoneConfig
	// DefaultZoneLimit is Datapath.ct_zone_default_limit, a column that
	// Open vSwitch 3.2 added (3.1's schema has none): nil when unset or
	// absent; 0 means unlimited.
	DefaultZoneLimit *int64
}

// ZoneConfig is one CT_Zone row.
type ZoneConfig struct {
	// TimeoutPolicy is the referenced CT_Timeout_Policy's timeouts, in
	// seconds by key (tcp_established, udp_single, ...); nil when the zone
	// has no policy. Keys a datapath does not use (the kernel-only
	// tcp_close_wait, tcp_unack, ...) are kept; the switch ignores them.
	TimeoutPolicy map[string]int64
	// Limit is CT_Zone.limit, a column that Open vSwitch 3.2 added (3.1's
	// schema has none): nil when unset or absent; 0 means unlimited.
	Limit *int64
}

// ConntrackConfigurer is implemented by switches whose datapaths track
// connections. The reconciler calls it after the bridges are applied,
// whenever the parsed Open_vSwitch.datapaths differ from what it last
// applied or the bridges' datapath types changed: prev is what it last
// applied (nil at first) and next the desired state, both keyed by
// datapath type. The switch applies next in full to the datapaths it has
// (as Open vSwitch, it need not create one for a type no bridge uses) and
// puts zones configured in prev but not in next back to the datapath's
// defaults. After an error the reconciler keeps prev and calls again on
// the next reconciliation, so applying must be idempotent.
type ConntrackConfigurer interface {
	ConfigureConntrack(prev, next map[string]DatapathConfig) error
}

// optInt64 returns an optional integer column's value, nil when unset.
func optInt64(d model.Datum) *int64 {
	if len(d.Keys) == 0 {
		return nil
	}
	n, ok := d.Keys[0].(int64)
	if !ok {
		return nil
	}
	return &n
}

func intMap(d model.Datum) map[string]int64 {
	m := make(map[string]int64, len(d.Keys))
	for i, k := range d.Keys {
		ks, _ := k.(string)
		if i < len(d.Values) {
			if v, ok := d.Values[i].(int64); ok {
				m[ks] = v
			}
		}
	}
	return m
}

// parseDatapaths reads Open_vSwitch.datapaths and the rows it references.
// Missing rows are skipped: a Datapath row that is gone configures
// nothing, a zone whose policy is gone has no policy.
func parseDatapaths(s *client.Snapshot, root *client.Row) map[string]DatapathConfig {
	d := root.Get("datapaths")
	if len(d.Keys) == 0 {
		return nil
	}
	out := make(map[string]DatapathConfig, len(d.Keys))
	for i, k := range d.Keys {
		typ, _ := k.(string)
		if i >= len(d.Values) {
			break
		}
		u, ok := d.Values[i].(model.UUID)
		if !ok {
			continue
		}
		dp := s.Row("Datapath", u)
		if dp == nil {
			continue
		}
		dc := DatapathConfig{DefaultZoneLimit: optInt64(dp.Get("ct_zone_default_limit"))}
		zd := dp.Get("ct_zones")
		for j, zk := range zd.Keys {
			zone, ok := zk.(int64)
			if !ok || zone < 0 || zone > 65535 || j >= len(zd.Values) {
				continue
			}
			zu, ok := zd.Values[j].(model.UUID)
			if !ok {
				continue
			}
			zr := s.Row("CT_Zone", zu)
			if zr == nil {
				continue
			}
			zc := ZoneConfig{Limit: optInt64(zr.Get("limit"))}
			if tps := uuids(zr.Get("timeout_policy")); len(tps) == 1 {
				if tp := s.Row("CT_Timeout_Policy", tps[0]); tp != nil {
					zc.TimeoutPolicy = intMap(tp.Get("timeouts"))
				}
			}
			if dc.Zones == nil {
				dc.Zones = map[uint16]ZoneConfig{}
			}
			dc.Zones[uint16(zone)] = zc
		}
		out[typ] = dc
	}
	return out
}

func optEqual(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Equal reports whether two zone configurations are the same (a nil and
// an empty timeout map are: both mean the defaults).
func (z ZoneConfig) Equal(o ZoneConfig) bool {
	return optEqual(z.Limit, o.Limit) && maps.Equal(z.TimeoutPolicy, o.TimeoutPolicy)
}

// datapathsEqual reports whether two parsed Open_vSwitch.datapaths are
// the same; nil equals empty.
func datapathsEqual(a, b map[string]DatapathConfig) bool {
	if len(a) != len(b) {
		return false
	}
	for typ, da := range a {
		db, ok := b[typ]
		if !ok || !optEqual(da.DefaultZoneLimit, db.DefaultZoneLimit) ||
			!maps.EqualFunc(da.Zones, db.Zones, ZoneConfig.Equal) {
			return false
		}
	}
	return true
}
