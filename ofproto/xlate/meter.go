package xlate

import (
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/ofp"
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
func meter(c *ctx, a *ofp.Action) {
	id := uint32(a.Arg)
	dp, ok := c.x.Meters()[id]
	if !ok {
		c.tr.notef("meter %d does not exist", id)
		return
	}
	if dp == NoDPMeter {
		return
	}
	// Open vSwitch emits the meter without committing pending set
	// actions first.
	c.emit(odp.Meter(dp))
}

// dpMeter returns the datapath meter of OpenFlow meter id (a regular
// meter, or the slowpath or controller virtual meter), if it has one.
func (x *Xlator) dpMeter(id uint32) (uint32, bool) {
	dp, ok := x.Meters()[id]
	return dp, ok && dp != NoDPMeter
}

// controllerMeter is the datapath meter a controller action's packet-ins
// pass through: the meter it names (meter_id), else the controller
// virtual meter, as Open vSwitch's xlate_controller_action.
func (x *Xlator) controllerMeter(id uint32) (uint32, bool) {
	if id != ofp.NoMeter {
		if dp, ok := x.dpMeter(id); ok {
			return dp, true
		}
	}
	return x.dpMeter(ofp.MeterController)
}
