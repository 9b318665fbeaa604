package dpctl

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/datapath/netdev/dummy"
)

// cmdDpifDumpDps lists the bridges as TYPE@NAME.
func (d *Commands) cmdDpifDumpDps(context.Context, []string) (string, error) {
	var sb strings.Builder
	if d.sw != nil {
		sb.WriteString(d.sw.View().DumpDps())
	}
	return sb.String(), nil
}

// cmdDpctlDumpDps lists the datapaths as TYPE@NAME.
func (d *Commands) cmdDpctlDumpDps(context.Context, []string) (string, error) {
	var sb strings.Builder
	for _, dp := range d.datapaths() {
		sb.WriteString(DPName(dp) + "\n")
	}
	return sb.String(), nil
}

// cmdDummySetAdminState brings one dummy port, or all of them, up or
// down; the bridges' ports follow (port-status, OFPPC_PORT_DOWN).
func (d *Commands) cmdDummySetAdminState(_ context.Context, args []string) (string, error) {
	state := args[len(args)-1]
	if state != "up" && state != "down" {
		return "", errors.New("Invalid Admin State")
	}
	var devs []*dummy.Device
	for _, dp := range d.datapaths() {
		for _, p := range dp.Ports() {
			if dd, ok := p.Device.(*dummy.Device); ok && (len(args) == 1 || p.Device.Name() == args[0]) {
				devs = append(devs, dd)
			}
		}
	}
	if len(args) == 2 && len(devs) == 0 {
		return "", errors.New("Unknown Dummy Interface")
	}
	for _, dd := range devs {
		if err := dd.SetAdminUp(state == "up"); err != nil {
			return "", err
		}
	}
	if d.sw != nil {
		d.sw.SyncAllPorts()
	}
	return "OK\n", nil
}

// cmdDummyConnState is netdev-dummy/conn-state [NETDEV]: a dummy port's
// stream state ("connected" or "disconnected" for an active stream,
// "unknown" otherwise); without an argument, every port whose state is
// known.
func (d *Commands) cmdDummyConnState(_ context.Context, args []string) (string, error) {
	var b strings.Builder
	if len(args) == 1 {
		state := "unknown"
		for _, dp := range d.datapaths() {
			if p, ok := dp.PortByName(args[0]); ok {
				if dd, ok := p.Device.(*dummy.Device); ok {
					state = dd.ConnState()
				}
			}
		}
		fmt.Fprintf(&b, "%s: %s\n", args[0], state)
		return b.String(), nil
	}
	for _, dp := range d.datapaths() {
		for _, p := range dp.Ports() {
			if dd, ok := p.Device.(*dummy.Device); ok {
				if st := dd.ConnState(); st != "unknown" {
					fmt.Fprintf(&b, "%s: %s\n", dd.Name(), st)
				}
			}
		}
	}
	return b.String(), nil
}
