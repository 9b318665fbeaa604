package ofctl

import (
	"bufio"
	"fmt"

	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// Meter mods and meter configuration dumps in the meter syntax
// (ofptext.ParseMeterMod). Meters need OpenFlow 1.3 or later.

func init() {
	for body, p := range map[ofp.Message]msgPrinter{
		&ofp.MeterMod{}: printMeterMod, &ofp.MeterConfigRequest{}: printMeterConfigRequest, &ofp.MeterConfigReply{}: printMeterConfig,
	} {
		printers[kindOf(body)] = p
	}
}

func printMeterMod(w *bufio.Writer, m *ofp.Msg) error {
	header(w, "OFPT_METER_MOD", m)
	fmt.Fprintf(w, " %s\n", ofptext.FormatMeterMod(m.Body.(*ofp.MeterMod)))
	return nil
}

func printMeterConfigRequest(w *bufio.Writer, m *ofp.Msg) error {
	header(w, "OFPST_METER_CONFIG request", m)
	fmt.Fprintf(w, " meter=%s\n", meterIDString(m.Body.(*ofp.MeterConfigRequest).MeterID))
	return nil
}

func printMeterConfig(w *bufio.Writer, m *ofp.Msg) error {
	r, ok := m.Body.(*ofp.MeterConfigReply)
	if !ok {
		return fmt.Errorf("unexpected reply %s", m.Raw)
	}
	header(w, "OFPST_METER_CONFIG reply", m)
	w.WriteString(moreFlag(r.Flags) + "\n")
	for i := range r.Configs {
		if i > 0 {
			w.WriteByte('\n')
		}
		fmt.Fprintf(w, "%s\n", ofptext.FormatMeterConfig(&r.Configs[i]))
	}
	return nil
}

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
	return e.dumpTransaction(c, &ofp.MeterConfigRequest{MeterID: id}, printMeterConfig)
}
