package xlate

import (
	"github.com/gvs-project/gvs/datapath/odp"
)

// NoDPMeter marks an OpenFlow meter without a datapath meter (the
// controller and slowpath meters, or a datapath without meters): the
// meter action then has no datapath effect.
const NoDPMeter = ^uint32(0)

// SetMeters publishes the bridge's meters: OpenFlow meter id → datapath
// meter id.
func (x *Xlator) SetMeters(m map[uint32]uint32) { x.meters.Store(&m) }

// Meters returns the published meters.
func (x *Xlator) Meters() map[uint32]uint32 {
	if p := x.meters.Load(); p != nil {
		return *p
	}
	return nil
}

// meter translates meter:ID (an OpenFlow 1.3/1.4 instruction or a 1.5
// action) into the datapath meter(N) action, as Open vSwitch does: the
// packets the meter passes go on through the rest of the actions. The
// meter has no effect on the megaflow's mask.
func (c *ctx) meter(id uint32) {
	dp, ok := c.x.Meters()[id]
	if !ok {
		c.trace("meter %d does not exist", id)
		return
	}
	if dp == NoDPMeter {
		return
	}
	// Open vSwitch emits the meter without committing pending set
	// actions first.
	c.emit(odp.Meter(dp))
}
