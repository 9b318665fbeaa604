package ofctl

import (
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofprint"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// Meter mods and meter configuration dumps in the meter syntax
// (ofptext.ParseMeterMod). Meters need OpenFlow 1.3 or later.

// meterModCmd sends the meter mod METER describes (without METER: every
// meter, for deletes).
func meterModCmd(command int) func(e *env, args []string) error {
	return func(e *env, args []string) error {
		mm := &ofp.MeterMod{Command: uint16(command), MeterID: ofp.MeterAll}
		if len(args) > 1 {
			var err error
			if mm, err = ofptext.ParseMeterMod(args[1], command); err != nil {
				return err
			}
		}
		c, err := e.openForMeters(args[0])
		if err != nil {
			return err
		}
		defer c.close()
		return e.reportReply(c.transactNoReply(mm))
	}
}

var (
	addMeterCmd  = meterModCmd(ofp.MeterAdd)
	modMeterCmd  = meterModCmd(ofp.MeterModify)
	delMetersCmd = meterModCmd(ofp.MeterDelete)
)

// dumpMetersCmd prints the configuration of the meters METER selects
// (default all).
func dumpMetersCmd(e *env, args []string) error {
	id, err := selector(args, ofp.MeterAll, parseMeterSelector)
	if err != nil {
		return err
	}
	c, err := e.openForMeters(args[0])
	if err != nil {
		return err
	}
	defer c.close()
	return e.dumpTransaction(c, &ofp.MeterConfigRequest{MeterID: id}, ofprint.MeterConfig)
}
