package ofcmds

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gvs-project/gvs/ofproto/ofswitch"
	"github.com/gvs-project/gvs/unixctl"
)

// upcallCommands are Open vSwitch's revalidator/pause and resume,
// upcall/disable-megaflows and enable-megaflows, upcall/disable-ufid and
// enable-ufid, and upcall/set-flow-limit,
// with their output and error texts.
func (d *Commands) upcallCommands() []unixctl.Command {
	return []unixctl.Command{
		{Name: "revalidator/pause", Run: func(context.Context, []string) (string, error) {
			return "", d.eachBridge(func(b *ofswitch.Bridge) { b.Upcalls().PauseRevalidator(true) })
		}},
		{Name: "revalidator/resume", Run: func(context.Context, []string) (string, error) {
			return "", d.eachBridge(func(b *ofswitch.Bridge) { b.Upcalls().PauseRevalidator(false) })
		}},
		{Name: "upcall/disable-megaflows", Run: d.cmdMegaflows(false)},
		{Name: "upcall/enable-megaflows", Run: d.cmdMegaflows(true)},
		{Name: "upcall/set-flow-limit", Usage: "flow-limit-number", MinArgs: 1, MaxArgs: 1, Run: d.cmdSetFlowLimit},
		{Name: "upcall/disable-ufid", Run: func(context.Context, []string) (string, error) {
			return "Datapath dumping tersely using UFID disabled\n", d.eachBridge(func(b *ofswitch.Bridge) { b.Upcalls().SetTerseDumps(false) })
		}},
		{Name: "upcall/enable-ufid", Run: func(context.Context, []string) (string, error) {
			return "Datapath dumping tersely using UFID enabled for supported datapaths\n", d.eachBridge(func(b *ofswitch.Bridge) { b.Upcalls().SetTerseDumps(true) })
		}},
	}
}

// eachBridge calls f for every bridge's OpenFlow switch.
func (d *Commands) eachBridge(f func(*ofswitch.Bridge)) error {
	if d.sw == nil {
		return nil
	}
	for _, b := range d.sw.View().OFBridges() {
		f(b)
	}
	return nil
}

// cmdMegaflows turns megaflows off (every new datapath flow matches one
// kind of packet exactly) or on, and flushes the datapaths' flows so that
// what is installed follows at once, as Open vSwitch does.
func (d *Commands) cmdMegaflows(on bool) func(context.Context, []string) (string, error) {
	return func(context.Context, []string) (string, error) {
		d.eachBridge(func(b *ofswitch.Bridge) { b.Upcalls().DisableMegaflows(!on) })
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
func (d *Commands) cmdSetFlowLimit(_ context.Context, args []string) (string, error) {
	n, err := strconv.Atoi(args[0])
	if err != nil {
		n = 0 // Open vSwitch reads it with atoi
	}
	d.eachBridge(func(b *ofswitch.Bridge) { b.Upcalls().FlowLimit().Set(n) })
	return fmt.Sprintf("set flow_limit to %d\n", max(n, 0)), nil
}
