package ofprint

import (
	"bufio"
	"fmt"

	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

func init() {
	for body, p := range map[ofp.Message]msgPrinter{
		&ofp.MeterMod{}: printMeterMod, &ofp.MeterConfigRequest{}: printMeterConfigRequest, &ofp.MeterConfigReply{}: MeterConfig,
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

// MeterConfig prints a meter configuration reply.
func MeterConfig(w *bufio.Writer, m *ofp.Msg) error {
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
