package backer

import (
	"math"
	"slices"
	"strings"

	"github.com/gvs-project/gvs/datapath/conntrack"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

var _ bridge.ConntrackConfigurer = (*Backer)(nil)

// ConfigureConntrack applies Open_vSwitch.datapaths' conntrack zones
// (CT_Zone timeout policies and, with Open vSwitch 3.2's schema, limits)
// to the trackers of the datapaths that exist; like Open vSwitch, it
// brings up no datapath for a type no bridge uses (the reconciler calls
// again when a bridge brings one up). Zones no longer configured go back
// to the defaults: Open vSwitch's userspace timeouts and the default zone
// limit. Limits set with dpctl/ct-set-limits on zones the database does
// not configure are left alone.
func (s *Backer) ConfigureConntrack(prev, next map[string]bridge.DatapathConfig) error {
	old, want := byDatapath(prev), byDatapath(next)
	for _, dp := range s.Datapaths() {
		t := strings.TrimPrefix(dp.Name(), "ovs-")
		applyZones(dp.Conntrack(), old[t], want[t])
	}
	return nil
}

// byDatapath maps database datapath types onto gvs's datapaths. Several
// types can share one ("system" and "netdev" are both gvs's userspace
// datapath): a zone configured under the datapath's own type name wins,
// then the other types in name order.
func byDatapath(cfg map[string]bridge.DatapathConfig) map[string]bridge.DatapathConfig {
	if len(cfg) == 0 {
		return nil
	}
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		ea, eb := dpType(a) == a, dpType(b) == b
		switch {
		case ea && !eb:
			return -1
		case eb && !ea:
			return 1
		}
		return strings.Compare(a, b)
	})
	out := map[string]bridge.DatapathConfig{}
	for _, k := range keys {
		src := cfg[k]
		t := dpType(k)
		dst := out[t]
		if dst.DefaultZoneLimit == nil {
			dst.DefaultZoneLimit = src.DefaultZoneLimit
		}
		for z, zc := range src.Zones {
			if _, taken := dst.Zones[z]; taken {
				continue
			}
			if dst.Zones == nil {
				dst.Zones = map[uint16]bridge.ZoneConfig{}
			}
			dst.Zones[z] = zc
		}
		out[t] = dst
	}
	return out
}

// timeoutPolicy builds a zone's policy as Open vSwitch's userspace
// datapath does: its defaults, overridden by the keys the policy sets.
// Keys the userspace tracker has no timer for (the kernel's
// tcp_close_wait, tcp_last_ack, tcp_syn_sent2, tcp_retransmit, tcp_unack)
// are ignored, as Open vSwitch's userspace datapath ignores them.
func timeoutPolicy(m map[string]int64) conntrack.TimeoutPolicy {
	p := conntrack.DefaultTimeoutPolicy()
	for k, v := range m {
		if c, ok := conntrack.TimeoutClassByName(k); ok {
			p[c] = clampU32(v)
		}
	}
	return p
}

// clampU32 fits a schema-checked OVSDB integer (0..4294967295) into
// uint32, clamping anything a non-conforming server might send.
func clampU32(v int64) uint32 {
	return uint32(min(max(v, 0), math.MaxUint32))
}

// applyZones applies want to tracker t and resets what old configured
// that want does not.
func applyZones(t *conntrack.Tracker, old, want bridge.DatapathConfig) {
	for z, oz := range old.Zones {
		if _, kept := want.Zones[z]; kept {
			continue
		}
		if oz.TimeoutPolicy != nil {
			t.SetZoneTimeoutPolicy(z, nil)
		}
		if oz.Limit != nil {
			t.DeleteLimits(z)
		}
	}
	limits := map[uint16]uint32{}
	var unlimit []uint16
	for z, wz := range want.Zones {
		oz, had := old.Zones[z]
		switch {
		case wz.TimeoutPolicy != nil:
			p := timeoutPolicy(wz.TimeoutPolicy)
			t.SetZoneTimeoutPolicy(z, &p)
		case had && oz.TimeoutPolicy != nil:
			t.SetZoneTimeoutPolicy(z, nil)
		}
		switch {
		case wz.Limit != nil:
			limits[z] = clampU32(*wz.Limit)
		case had && oz.Limit != nil:
			unlimit = append(unlimit, z)
		}
	}
	var def *uint32
	switch {
	case want.DefaultZoneLimit != nil:
		v := clampU32(*want.DefaultZoneLimit)
		def = &v
	case old.DefaultZoneLimit != nil:
		// Unset again: back to the tracker's default, unlimited.
		var zero uint32
		def = &zero
	}
	if def != nil || len(limits) > 0 {
		t.SetLimits(def, limits)
	}
	if len(unlimit) > 0 {
		t.DeleteLimits(unlimit...)
	}
}
