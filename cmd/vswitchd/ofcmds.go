package vswitchd

import (
	"context"
	"encoding/hex"
	"fmt"
	"github.com/gvs-project/gvs/datapath/flow"
	"strings"
	"time"

	"github.com/gvs-project/gvs/cmd/appctl"
	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofswitch"
)

// ofCommands are the unixctl commands of the OpenFlow switch layer, as
// Open vSwitch's ofproto/* and dpif/* commands.
func (d *Daemon) ofCommands() []appctl.Command {
	return []appctl.Command{
		{Name: "ofproto/trace", Usage: "{[dp_name] odp_flow | bridge br_flow} [packet]", MinArgs: 1, MaxArgs: 3, Run: d.cmdTrace},
		{Name: "ofproto/trace-packet-out", Usage: "[-consistent] {[dp_name] odp_flow | bridge br_flow} [packet] actions", MinArgs: 2, MaxArgs: 5, Run: d.cmdTracePacketOut},
		{Name: "dpif/dump-flows", Usage: "[-m] bridge", MinArgs: 1, MaxArgs: 2, Run: d.cmdDpifDumpFlows},
		{Name: "revalidator/wait", Run: d.cmdRevalidatorWait},
		{Name: "ofproto/list", Run: d.cmdOfprotoList},
	}
}

func (d *Daemon) cmdTrace(_ context.Context, args []string) (string, error) {
	return d.trace(args, "")
}

// trace runs ofproto/trace's arguments; acts, if not empty, are a
// packet-out's actions to trace instead of the tables.
func (d *Daemon) trace(args []string, acts string) (string, error) {
	if len(args) < 2 {
		return "", fmt.Errorf("syntax: ofproto/trace bridge flow [packet]")
	}
	br := d.sw.ofBridge(args[0])
	var in ofswitch.TraceInput
	if br == nil && strings.Contains(args[1], "(") {
		// "dp_name odp_flow": a datapath flow, traced through the
		// bridge that owns its input port.
		m, err := flow.ParseMatch(args[1])
		if err != nil {
			return "", fmt.Errorf("trace: %w", err)
		}
		key := m.Key
		if br = d.sw.odpBridge(&key); br == nil {
			return "", fmt.Errorf("no bridge owns datapath port %d", key.InPort)
		}
		in.ODPKey = &key
	} else {
		if br == nil {
			return "", fmt.Errorf("%s: unknown bridge", args[0])
		}
		fl, err := ofswitch.ParseTraceFlow(args[1])
		if err != nil {
			return "", err
		}
		in.Flow = fl
	}
	if len(args) == 3 {
		b, err := hex.DecodeString(strings.ReplaceAll(args[2], " ", ""))
		if err != nil {
			return "", fmt.Errorf("trace: packet: %w", err)
		}
		in.Packet = b
	}
	if acts != "" {
		fl := in.Flow
		if in.ODPKey != nil {
			fl = mf.Flow{Key: *in.ODPKey}
		}
		var err error
		if in.Actions, err = ofswitch.ParseTraceActions(acts, &fl); err != nil {
			return "", err
		}
	}
	return br.Trace(in), nil
}

// cmdDpifDumpFlows lists the megaflows whose input port belongs to the
// bridge.
func (d *Daemon) cmdDpifDumpFlows(_ context.Context, args []string) (string, error) {
	verbose := false
	name := ""
	for _, a := range args {
		if a == "-m" || a == "--more" {
			verbose = true
		} else {
			name = a
		}
	}
	dp, ports, ok := d.sw.bridgeDatapath(name)
	if !ok {
		return "", fmt.Errorf("%s: unknown bridge", name)
	}
	var b strings.Builder
	now := time.Now()
	dp.FlowDump(func(f *dpif.Flow) bool {
		if ports[f.Match.Key.InPort] {
			b.WriteString(dpif.FormatFlow(f, now, verbose))
			b.WriteByte('\n')
		}
		return true
	})
	return b.String(), nil
}

// cmdRevalidatorWait runs a revalidation round on every bridge, so that
// the counters and megaflows are current when it returns.
func (d *Daemon) cmdRevalidatorWait(context.Context, []string) (string, error) {
	for _, br := range d.sw.ofBridges() {
		br.Revalidate()
	}
	return "", nil
}

func (d *Daemon) cmdOfprotoList(context.Context, []string) (string, error) {
	var b strings.Builder
	for _, br := range d.sw.ofBridges() {
		b.WriteString(br.Name() + "\n")
	}
	return b.String(), nil
}

// cmdTracePacketOut is ofproto/trace-packet-out: ofproto/trace with the
// last argument as a packet-out's actions, run instead of the tables.
func (d *Daemon) cmdTracePacketOut(ctx context.Context, args []string) (string, error) {
	if len(args) > 0 && (args[0] == "-consistent" || args[0] == "--consistent") {
		args = args[1:]
	}
	if len(args) < 2 {
		return "", fmt.Errorf("syntax: ofproto/trace-packet-out bridge flow [packet] actions")
	}
	return d.trace(args[:len(args)-1], args[len(args)-1])
}
