package conntrack

import (
	"sync"
	"sync/atomic"
)

// zoneConfig owns the zones' configuration: the zone limits and the
// timeout policies (the default and per zone). The packet path reads
// immutable snapshots atomically, and each zone keeps its own copy of
// its limit and policy (apply), so that a lookup never consults this
// type; a change is pushed into every zone that exists.
type zoneConfig struct {
	defPolicy atomic.Pointer[TimeoutPolicy]
	limits    atomic.Pointer[limitSet]

	// mu serialises configuration changes; the packet path takes it
	// only when a zone is created (apply).
	mu sync.Mutex
	// guarded by mu
	zonePolicies map[uint16]*TimeoutPolicy
}

// limitSet is an immutable snapshot of the configured zone limits.
type limitSet struct {
	def  uint32
	zone map[uint16]uint32
}

func (l *limitSet) of(z uint16) uint32 {
	if v, ok := l.zone[z]; ok {
		return v
	}
	return l.def
}

// init sets Open vSwitch's defaults: no limits, the default policy.
func (c *zoneConfig) init() {
	c.zonePolicies = map[uint16]*TimeoutPolicy{}
	p := DefaultTimeoutPolicy()
	c.defPolicy.Store(&p)
	c.limits.Store(&limitSet{})
}

// apply gives z its configured limit and timeout policy.
func (c *zoneConfig) apply(z *zone) {
	z.limit.Store(c.limits.Load().of(z.id))
	c.mu.Lock()
	p := c.zonePolicies[z.id]
	c.mu.Unlock()
	if p == nil {
		p = c.defPolicy.Load()
	}
	z.policy.Store(p)
}

// policy returns the timeout policy of z (nil: a zone not created yet).
func (c *zoneConfig) policy(z *zone) *TimeoutPolicy {
	if z != nil {
		if p := z.policy.Load(); p != nil {
			return p
		}
	}
	return c.defPolicy.Load()
}

// setLimits sets the default limit (if def is non-nil) and per-zone
// limits and pushes them into the existing zones.
func (c *zoneConfig) setLimits(zones *zoneSlots, def *uint32, set map[uint16]uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.limits.Load()
	n := &limitSet{def: old.def, zone: make(map[uint16]uint32, len(old.zone)+len(set))}
	if def != nil {
		n.def = *def
	}
	for k, v := range old.zone {
		n.zone[k] = v
	}
	for k, v := range set {
		n.zone[k] = v
	}
	c.limits.Store(n)
	n.push(zones)
}

// deleteLimits removes per-zone limits: the zones fall back to the
// default limit.
func (c *zoneConfig) deleteLimits(zones *zoneSlots, del []uint16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.limits.Load()
	n := &limitSet{def: old.def, zone: make(map[uint16]uint32, len(old.zone))}
	for k, v := range old.zone {
		n.zone[k] = v
	}
	for _, z := range del {
		delete(n.zone, z)
	}
	c.limits.Store(n)
	n.push(zones)
}

// push gives every existing zone its limit from l. It walks the zone
// array (65,536 pointers) on a configuration change only.
func (l *limitSet) push(zones *zoneSlots) {
	for i := range zones {
		if z := zones[i].Load(); z != nil {
			z.limit.Store(l.of(uint16(i)))
		}
	}
}

// setDefaultPolicy replaces the default timeout policy, in every
// existing zone without a policy of its own too.
func (c *zoneConfig) setDefaultPolicy(zones *zoneSlots, p TimeoutPolicy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.defPolicy.Store(&p)
	for i := range zones {
		if z := zones[i].Load(); z != nil && c.zonePolicies[uint16(i)] == nil {
			z.policy.Store(&p)
		}
	}
}

// setZonePolicy sets zone z's timeout policy; nil reverts to the
// default.
func (c *zoneConfig) setZonePolicy(zones *zoneSlots, z uint16, p *TimeoutPolicy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p == nil {
		delete(c.zonePolicies, z)
		p = c.defPolicy.Load()
	} else {
		cp := *p
		p = &cp
		c.zonePolicies[z] = p
	}
	if zz := zones[z].Load(); zz != nil {
		zz.policy.Store(p)
	}
}

// zonePolicy returns the policy zone z uses.
func (c *zoneConfig) zonePolicy(z uint16) TimeoutPolicy {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.zonePolicies[z]; p != nil {
		return *p
	}
	return *c.defPolicy.Load()
}
