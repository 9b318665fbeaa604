package ofcmds

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/gvs-project/gvs/datapath/flow"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofswitch"
	"github.com/gvs-project/gvs/unixctl"
)

// ofCommands are the unixctl commands of the OpenFlow switch layer, as
// Open vSwitch's ofproto/* and dpif/* commands.
func (d *Commands) ofCommands() []unixctl.Command {
	return []unixctl.Command{
		{Name: "ofproto/trace", Usage: "{[dp_name] odp_flow | bridge br_flow} [OPTIONS...] [-generate|packet]", MinArgs: 1, MaxArgs: unixctl.Unlimited, Run: d.cmdTrace},
		{Name: "ofproto/trace-packet-out", Usage: "[-consistent] {[dp_name] odp_flow | bridge br_flow} [OPTIONS...] [-generate|packet] actions", MinArgs: 2, MaxArgs: 5, Run: d.cmdTracePacketOut},
		{Name: "dpif/dump-flows", Usage: "[-m] bridge", MinArgs: 1, MaxArgs: 2, Run: d.cmdDpifDumpFlows},
		{Name: "revalidator/wait", Run: d.cmdRevalidatorWait},
		{Name: "ofproto/list", Run: d.cmdOfprotoList},
	}
}

func (d *Commands) cmdTrace(_ context.Context, args []string) (string, error) {
	return d.trace(args, "")
}

// traceOptions takes ofproto/trace's options out of args, as Open
// vSwitch accepts them anywhere among the arguments: -generate (trace
// with a packet composed from the flow), --l7 HEX and --l7-len N (that
// packet's payload), --ct-next STATE (the conntrack state of the next
// recirculation after ct(), repeatable), -consistent and --names
// (accepted). Any other argument starting with '-' is an unknown option.
func traceOptions(args []string) (rest []string, o traceOpts, err error) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-generate", "--generate":
			o.generate = true
		case "-consistent", "--consistent", "-names", "--names":
		case "--l7", "--l7-len", "--ct-next":
			if i+1 >= len(args) {
				return nil, o, fmt.Errorf("Missing argument for option %s", a)
			}
			i++
			switch a {
			case "--l7":
				if o.l7, err = hex.DecodeString(strings.ReplaceAll(args[i], " ", "")); err != nil {
					return nil, o, errors.New("Trailing garbage in packet data")
				}
			case "--l7-len":
				n, _ := strconv.Atoi(args[i])
				if n > 64000 {
					return nil, o, fmt.Errorf("%s: too much L7 data", args[i])
				}
				o.l7 = make([]byte, max(n, 0))
			default:
				st, err := flow.ParseCtState(args[i])
				if err != nil {
					return nil, o, err
				}
				o.ctNext = append(o.ctNext, st)
			}
		default:
			if strings.HasPrefix(a, "-") {
				return nil, o, fmt.Errorf("%s: unknown option", a)
			}
			rest = append(rest, a)
		}
	}
	return rest, o, nil
}

// traceOpts are ofproto/trace's options (traceOptions).
type traceOpts struct {
	generate bool
	l7       []byte
	ctNext   []uint8
}

// trace runs ofproto/trace's arguments; acts, if not empty, are a
// packet-out's actions to trace instead of the tables.
func (d *Commands) trace(args []string, acts string) (string, error) {
	args, opts, err := traceOptions(args)
	if err != nil {
		return "", err
	}
	generate, l7 := opts.generate, opts.l7
	// The forms, as Open vSwitch tells them apart: odp_flow, dp_name
	// odp_flow or bridge br_flow, each optionally followed by a packet
	// in hex (the last argument, when it decodes as one).
	var pkt []byte
	if n := len(args); !generate && n > 1 {
		if b, err := hex.DecodeString(strings.Join(strings.Fields(args[n-1]), "")); err == nil && len(b) >= 14 {
			pkt, args = b, args[:n-1]
		} else if n == 3 {
			return "", fmt.Errorf("trace: packet: %w", err)
		}
	}
	if len(args) == 1 && strings.Contains(args[0], "(") {
		args = []string{"", args[0]} // odp_flow alone
	}
	if len(args) != 2 {
		return "", fmt.Errorf("syntax: ofproto/trace {[dp_name] odp_flow | bridge br_flow} [-generate | packet]")
	}
	br := d.sw.View().OFBridge(args[0])
	var in ofswitch.TraceInput
	if br == nil && strings.Contains(args[1], "(") {
		// "[dp_name] odp_flow": a datapath flow, traced through the
		// bridge that owns its input port (which may be named).
		m, err := flow.ParseMatch(resolveODPInPortName(args[1], d.datapathPortNumber))
		if err != nil {
			return "", fmt.Errorf("trace: %w", err)
		}
		key := m.Key
		if br = d.sw.View().ODPBridge(&key); br == nil {
			// A packet with a tunnel destination is looked up among the
			// tunnel ports (xlate_lookup_ofproto_).
			if key.TunDst != 0 || key.TunIPv6Dst != ([16]byte{}) {
				return "", fmt.Errorf("no OpenFlow tunnel port for this packet")
			}
			return "", fmt.Errorf("no OpenFlow port for datapath port %d", key.InPort)
		}
		in.ODPKey = &key
	} else {
		if br == nil {
			return "", fmt.Errorf("%s: unknown bridge", args[0])
		}
		if err := ofswitch.CheckTraceFlowFields(args[1]); err != nil {
			return "", err
		}
		fl, err := ofswitch.ParseTraceFlow(resolveInPortName(args[1], func(name string) (int64, bool) {
			return d.sw.View().PortNumber(args[0], name)
		}))
		if err != nil {
			return "", err
		}
		in.Flow = fl
	}
	in.Packet = pkt
	in.CtNext = opts.ctNext
	if generate {
		key := in.Flow.Key
		if in.ODPKey != nil {
			key = *in.ODPKey
		}
		in.Packet = flow.Compose(nil, &key, l7)
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

// inPortRE finds a br_flow's in_port value (optionally quoted).
var inPortRE = regexp.MustCompile(`(^|[\s,])in_port="?([^,\s"]+)"?`)

// resolveInPortName rewrites a br_flow's in_port=NAME to the port's
// OpenFlow number, as Open vSwitch's ofproto/trace accepts port names
// ("in_port=p1"); numbers, reserved names (LOCAL, ...) and unknown names
// are left to the flow parser.
func resolveInPortName(flowText string, lookup func(string) (int64, bool)) string {
	m := inPortRE.FindStringSubmatchIndex(flowText)
	if m == nil {
		return flowText
	}
	name := flowText[m[4]:m[5]]
	if _, err := strconv.ParseUint(name, 0, 32); err == nil {
		return flowText
	}
	no, ok := lookup(name)
	if !ok {
		return flowText
	}
	return flowText[:m[2]] + flowText[m[2]:m[3]] + "in_port=" + strconv.FormatInt(no, 10) + flowText[m[1]:]
}

// odpInPortRE finds a datapath flow's in_port(NAME).
var odpInPortRE = regexp.MustCompile(`in_port\(([^()]+)\)`)

// resolveODPInPortName rewrites a datapath flow's in_port(NAME) to the
// port's datapath number, as Open vSwitch's ofproto/trace accepts
// ("in_port(p1)"); numbers and unknown names are left to the parser.
func resolveODPInPortName(flowText string, lookup func(string) (uint32, bool)) string {
	m := odpInPortRE.FindStringSubmatchIndex(flowText)
	if m == nil {
		return flowText
	}
	name := flowText[m[2]:m[3]]
	if _, err := strconv.ParseUint(name, 0, 32); err == nil {
		return flowText
	}
	no, ok := lookup(name)
	if !ok {
		return flowText
	}
	return flowText[:m[2]] + strconv.FormatUint(uint64(no), 10) + flowText[m[3]:]
}

// datapathPortNumber finds a port by name in any datapath.
func (d *Commands) datapathPortNumber(name string) (uint32, bool) {
	for _, dp := range d.datapaths() {
		if p, ok := dp.PortByName(name); ok {
			return uint32(p.No), true
		}
	}
	return 0, false
}

// cmdDpifDumpFlows lists the megaflows whose input port belongs to the
// bridge, as Open vSwitch's dpif/dump-flows: -m adds the UFID and every
// field with its mask, and names ports (in_port and outputs) unless
// --no-names; --names names them without -m.
func (d *Commands) cmdDpifDumpFlows(_ context.Context, args []string) (string, error) {
	verbose, names, setNames := false, false, false
	name := ""
	for _, a := range args {
		switch a {
		case "-m", "--more":
			verbose = true
		case "--names":
			names, setNames = true, true
		case "--no-names":
			names, setNames = false, true
		default:
			name = a
		}
	}
	if !setNames {
		names = verbose
	}
	dp, ports, ok := d.sw.View().BridgeDatapath(name)
	if !ok {
		return "", fmt.Errorf("%s: unknown bridge", name)
	}
	var portName func(uint32) (string, bool)
	if names {
		byNo := map[uint32]string{}
		for _, p := range dp.Ports() {
			byNo[uint32(p.No)] = p.Name
		}
		portName = func(no uint32) (string, bool) { n, ok := byNo[no]; return n, ok }
	}
	var b strings.Builder
	now := time.Now()
	dp.FlowDump(func(f *dpif.Flow) bool {
		if ports[f.Match.Key.InPort] {
			b.WriteString(dpif.FormatBridgeFlow(f, now, verbose, portName))
			b.WriteByte('\n')
		}
		return true
	})
	return b.String(), nil
}

// cmdRevalidatorWait runs a revalidation round on every bridge, so that
// the counters and megaflows are current when it returns.
func (d *Commands) cmdRevalidatorWait(context.Context, []string) (string, error) {
	for _, br := range d.sw.View().OFBridges() {
		br.Upcalls().Revalidate()
	}
	return "", nil
}

func (d *Commands) cmdOfprotoList(context.Context, []string) (string, error) {
	var b strings.Builder
	for _, br := range d.sw.View().OFBridges() {
		b.WriteString(br.Name() + "\n")
	}
	return b.String(), nil
}

// cmdTracePacketOut is ofproto/trace-packet-out: ofproto/trace with the
// last argument as a packet-out's actions, run instead of the tables.
func (d *Commands) cmdTracePacketOut(ctx context.Context, args []string) (string, error) {
	if len(args) > 0 && (args[0] == "-consistent" || args[0] == "--consistent") {
		args = args[1:]
	}
	if len(args) < 2 {
		return "", fmt.Errorf("syntax: ofproto/trace-packet-out bridge flow [packet] actions")
	}
	return d.trace(args[:len(args)-1], args[len(args)-1])
}
