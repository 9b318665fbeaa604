package vswitchd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/cmd/appctl"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/ofproto/ofswitch"
)

// upcallCommands are Open vSwitch's revalidator/pause and resume,
// upcall/disable-megaflows and enable-megaflows, upcall/set-flow-limit, dpif/dump-dps, dpctl/dump-dps and
// netdev-dummy/set-admin-state, with its output and error texts.
func (d *Daemon) upcallCommands() []appctl.Command {
	return []appctl.Command{
		{Name: "revalidator/pause", Run: func(context.Context, []string) (string, error) {
			return "", d.eachBridge(func(b *ofswitch.Bridge) { b.PauseRevalidator(true) })
		}},
		{Name: "revalidator/resume", Run: func(context.Context, []string) (string, error) {
			return "", d.eachBridge(func(b *ofswitch.Bridge) { b.PauseRevalidator(false) })
		}},
		{Name: "upcall/disable-megaflows", Run: d.cmdMegaflows(false)},
		{Name: "upcall/enable-megaflows", Run: d.cmdMegaflows(true)},
		{Name: "upcall/set-flow-limit", Usage: "flow-limit-number", MinArgs: 1, MaxArgs: 1, Run: d.cmdSetFlowLimit},
		{Name: "dpif/dump-dps", Run: d.cmdDpifDumpDps},
		{Name: "dpctl/dump-dps", Usage: "", Run: d.cmdDpctlDumpDps},
		{Name: "netdev-dummy/set-admin-state", Usage: "[netdev] up|down", MinArgs: 1, MaxArgs: 2, Run: d.cmdDummySetAdminState},
	}
}

// eachBridge calls f for every bridge's OpenFlow switch.
func (d *Daemon) eachBridge(f func(*ofswitch.Bridge)) error {
	if d.sw == nil {
		return nil
	}
	for _, b := range d.sw.OFBridges() {
		f(b)
	}
	return nil
}

// cmdMegaflows turns megaflows off (every new datapath flow matches one
// kind of packet exactly) or on, and flushes the datapaths' flows so that
// what is installed follows at once, as Open vSwitch does.
func (d *Daemon) cmdMegaflows(on bool) func(context.Context, []string) (string, error) {
	return func(context.Context, []string) (string, error) {
		d.eachBridge(func(b *ofswitch.Bridge) { b.DisableMegaflows(!on) })
		for _, dp := range d.datapaths() {
			dp.FlowFlush()
		}
		if on {
			return "megaflows enabled\n", nil
		}
		return "megaflows disabled\n", nil
	}
}

// cmdSetFlowLimit sets every bridge's current dynamic megaflow limit;
// later revalidation rounds move it as usual (Open vSwitch's
// upcall/set-flow-limit).
func (d *Daemon) cmdSetFlowLimit(_ context.Context, args []string) (string, error) {
	n, err := strconv.Atoi(args[0])
	if err != nil {
		n = 0 // Open vSwitch reads it with atoi
	}
	d.eachBridge(func(b *ofswitch.Bridge) { b.FlowLimit().Set(n) })
	return fmt.Sprintf("set flow_limit to %d\n", max(n, 0)), nil
}

// cmdDpifDumpDps lists the bridges as TYPE@NAME.
func (d *Daemon) cmdDpifDumpDps(context.Context, []string) (string, error) {
	var sb strings.Builder
	if d.sw != nil {
		sb.WriteString(d.sw.DumpDps())
	}
	return sb.String(), nil
}

// cmdDpctlDumpDps lists the datapaths as TYPE@NAME.
func (d *Daemon) cmdDpctlDumpDps(context.Context, []string) (string, error) {
	var sb strings.Builder
	for _, dp := range d.datapaths() {
		sb.WriteString(dpName(dp) + "\n")
	}
	return sb.String(), nil
}

// cmdDummySetAdminState brings one dummy port, or all of them, up or
// down; the bridges' ports follow (port-status, OFPPC_PORT_DOWN).
func (d *Daemon) cmdDummySetAdminState(_ context.Context, args []string) (string, error) {
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
