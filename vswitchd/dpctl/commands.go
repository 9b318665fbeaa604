package dpctl

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofptext"
	"github.com/gvs-project/gvs/unixctl"
	"github.com/gvs-project/gvs/vswitchd/backer"
)

// DPName is how datapaths are named in dpctl output: "TYPE@NAME".
func DPName(dp *dpnetdev.Datapath) string {
	return strings.TrimPrefix(dp.Name(), "ovs-") + "@" + dp.Name()
}

// findDatapath resolves a dpctl datapath argument ("netdev@ovs-netdev",
// "ovs-netdev" or the type), or the only datapath when name is "".
func (d *Commands) findDatapath(name string) (*dpnetdev.Datapath, error) {
	if x, ok := d.dpctlDatapath(name); ok && (!strings.Contains(name, "@") || strings.HasPrefix(name, x.typ+"@")) {
		return x.dp, nil
	}
	dps := d.datapaths()
	if name == "" {
		switch len(dps) {
		case 0:
			return nil, errors.New("no datapaths exist")
		case 1:
			return dps[0], nil
		}
		return nil, errors.New("multiple datapaths, specify one")
	}
	for _, dp := range dps {
		if name == DPName(dp) || name == dp.Name() || "ovs-"+name == dp.Name() {
			return dp, nil
		}
	}
	return nil, fmt.Errorf("datapath %q does not exist", name)
}

func (d *Commands) cmdDpifShow(context.Context, []string) (string, error) {
	var b strings.Builder
	for _, dp := range d.datapaths() {
		s := dp.Stats()
		fmt.Fprintf(&b, "%s: hit:%d missed:%d\n", DPName(dp), s.Hit, s.Missed)
		b.WriteString(d.sw.View().DpifShowBridges(strings.TrimPrefix(dp.Name(), "ovs-")))
	}
	return b.String(), nil
}

func (d *Commands) cmdDpctlShow(_ context.Context, args []string) (string, error) {
	stats := false
	var names []string
	for _, a := range args {
		if a == "-s" || a == "--statistics" {
			stats = true
		} else {
			names = append(names, a)
		}
	}
	dps := d.datapaths()
	if len(names) > 0 {
		dps = dps[:0]
		for _, n := range names {
			dp, err := d.findDatapath(n)
			if err != nil {
				return "", err
			}
			dps = append(dps, dp)
		}
	}
	var b strings.Builder
	for _, dp := range dps {
		s := dp.Stats()
		fmt.Fprintf(&b, "%s:\n  lookups: hit:%d missed:%d lost:%d\n  flows: %d\n", d.fullDPName(dp), s.Hit, s.Missed, s.Lost, s.Flows)
		for _, p := range dp.Ports() {
			typ := ""
			if p.Type != "system" {
				typ = " (" + p.Type + backer.DeviceConfigText(p.Device) + ")"
			}
			fmt.Fprintf(&b, "  port %d: %s%s\n", p.No, p.Name, typ)
			if stats {
				st := p.Device.Stats()
				fmt.Fprintf(&b, "    RX packets:%d errors:%d dropped:%d overruns:? frame:?\n", st.RxPackets, st.RxErrors, st.RxDropped)
				fmt.Fprintf(&b, "    TX packets:%d errors:%d dropped:%d aborted:? carrier:?\n", st.TxPackets, st.TxErrors, st.TxDropped)
				fmt.Fprintf(&b, "    collisions:?\n    RX bytes:%d  TX bytes:%d\n", st.RxBytes, st.TxBytes)
			}
		}
	}
	return b.String(), nil
}

func (d *Commands) cmdDumpFlows(_ context.Context, args []string) (string, error) {
	verbose := false
	name := ""
	var filter *flow.Match
	pmdFilter, filterPMD := 0, false
	for _, a := range args {
		switch {
		case a == "-m" || a == "--more":
			verbose = true
		case strings.HasPrefix(a, "pmd="):
			n, err := strconv.Atoi(strings.TrimPrefix(a, "pmd="))
			if err != nil {
				return "", d.dpctlErr("%s", "Invalid argument")
			}
			pmdFilter, filterPMD = n, true
		case a == "--names" || a == "--no-names" || strings.HasPrefix(a, "type="):
		case strings.HasPrefix(a, "filter="):
			m, err := parseDumpFilter(strings.TrimPrefix(a, "filter="))
			if err != nil {
				return "", d.dpctlErr("Failed to parse filter (%v)", err)
			}
			filter = &m
		default:
			name = a
		}
	}
	dp, err := d.findDatapath(name)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	now := time.Now()
	if dp.PMDPlacement() {
		// One dump per thread, each under its heading unless pmd=
		// picks one (-1: the main thread).
		last := ""
		dp.FlowDumpThreads(func(t dpnetdev.Thread, f *dpif.Flow) bool {
			if filter != nil && !filterMatches(filter, f) {
				return true
			}
			if filterPMD {
				if t.Main != (pmdFilter == -1) || !t.Main && t.Core != pmdFilter {
					return true
				}
			} else if h := threadDumpHeading(t); h != last {
				b.WriteString(h)
				last = h
			}
			b.WriteString(dpif.FormatFlow(f, now, verbose))
			b.WriteByte('\n')
			return true
		})
		return b.String(), nil
	}
	dp.FlowDump(func(f *dpif.Flow) bool {
		if filter != nil && !filterMatches(filter, f) {
			return true
		}
		if b.Len() == 0 {
			// As Open vSwitch, the heading comes with the first flow.
			b.WriteString("flow-dump from the main thread:\n")
		}
		b.WriteString(dpif.FormatFlow(f, now, verbose))
		b.WriteByte('\n')
		return true
	})
	return b.String(), nil
}

// threadDumpHeading is the line dpctl/dump-flows puts before a
// thread's flows.
func threadDumpHeading(t dpnetdev.Thread) string {
	if t.Main {
		return "flow-dump from the main thread:\n"
	}
	return fmt.Sprintf("flow-dump from pmd on cpu core: %d\n", t.Core)
}

// parseDumpFilter reads dpctl/dump-flows' filter= as Open vSwitch does,
// an OpenFlow flow ("in_port=1,tcp", "key(value)" also taken as
// key=value; in_port is a datapath port number), or else as a datapath
// flow ("in_port(1),eth_type(0x0800)").
func parseDumpFilter(s string) (flow.Match, error) {
	toks := strings.Split(s, ",")
	for i, t := range toks {
		if m := keyParenRE.FindStringSubmatch(t); m != nil {
			toks[i] = m[1] + "=" + m[2]
		}
	}
	fl, ofErr := ofptext.ParseFlow(strings.Join(toks, ",")+",actions=drop", mf.OF10)
	if ofErr == nil {
		m := flow.Match{Key: fl.Match.Flow.Key, Mask: flow.Mask(fl.Match.Mask.Key)}
		if fl.Match.Mask.InPort != 0 {
			m.Key.InPort, m.Mask.InPort = fl.Match.Flow.InPort, ^uint32(0)
		}
		m.Normalize()
		return m, nil
	}
	m, err := flow.ParseMatch(s)
	if err != nil {
		// Open vSwitch's exact-flow parser names the whole filter.
		if _, kw, ok := strings.Cut(ofErr.Error(), "unknown keyword "); ok {
			return flow.Match{}, fmt.Errorf("%s: unknown field %s", s, kw)
		}
		return flow.Match{}, ofErr
	}
	return m, nil
}

// keyParenRE is an OpenFlow "key(value)" token.
var keyParenRE = regexp.MustCompile(`^([a-z_0-9]+)\(([^()]*)\)$`)

// filterMatches applies a dump-flows filter as Open vSwitch does: on the
// filter's bits, the megaflow's key must equal the filter's value where
// the megaflow matches, and zero where it does not (so a filter on a
// field the megaflow wildcards passes it).
func filterMatches(filter *flow.Match, f *dpif.Flow) bool {
	kw, mw := f.Match.Key.W(), f.Match.Mask.W()
	fv, fm := filter.Key.W(), filter.Mask.W()
	for i := range kw {
		if kw[i]&mw[i]&fm[i] != fv[i]&mw[i]&fm[i] {
			return false
		}
	}
	return true
}

func splitDP(args []string, want int) (string, []string) {
	if len(args) > want {
		return args[0], args[1:]
	}
	return "", args
}

// cmdGetFlow is dpctl/get-flow: the megaflow with a UFID, as
// dpctl/dump-flows prints it.
func (d *Commands) cmdGetFlow(_ context.Context, args []string) (string, error) {
	name, rest := splitDP(args, 1)
	dp, err := d.findDatapath(name)
	if err != nil {
		return "", err
	}
	u, err := dpif.ParseUFID(rest[0])
	if err != nil {
		return "", d.dpctlErr("parsing flow ufid (Invalid argument)")
	}
	f, err := dp.FlowGet(u)
	if err != nil {
		return "", d.dpctlErr("getting flow (No such file or directory)")
	}
	return dpif.FormatFlow(&f, time.Now(), false) + "\n", nil
}

func (d *Commands) cmdPutFlow(flags dpif.PutFlags) unixctl.Handler {
	return func(_ context.Context, args []string) (string, error) {
		name, rest := splitDP(args, 2)
		dp, err := d.findDatapath(name)
		if err != nil {
			return "", err
		}
		err = putFlow(dp, rest[0], rest[1], flags)
		var tooLong *flow.TooLongError
		if errors.As(err, &tooLong) {
			return "", d.dpctlErr("parsing flow key (syntax error at %s) (Argument list too long)", tooLong.Rest)
		}
		for _, e := range putErrnos {
			if errors.Is(err, e.err) {
				return "", d.dpctlErr("updating flow table (%s)", e.text)
			}
		}
		return "", err
	}
}

// putErrnos are the datapath's refusals of a put as Open vSwitch's
// dpctl reports them (the errno's text).
var putErrnos = []struct {
	err  error
	text string
}{
	{dpif.ErrInvalid, "Invalid argument"},
	{dpif.ErrExists, "File exists"},
	{dpif.ErrNotFound, "No such file or directory"},
}

// putFlow installs a datapath flow given in dpctl's text form.
func putFlow(dp *dpnetdev.Datapath, match, actions string, flags dpif.PutFlags) error {
	m, err := flow.ParseMatch(match)
	if err != nil {
		return err
	}
	acts, err := odp.ParseActions(actions)
	if err != nil {
		return err
	}
	exactRecirc(&m)
	// The key is kept as given, bits outside the mask included, for
	// dumps (Open vSwitch's dpif-netdev keeps the unmasked flow).
	return dp.FlowPut(&dpif.FlowPut{Match: m, Actions: acts, Flags: flags})
}

// exactRecirc matches recirc_id exactly when the text leaves it out, as
// Open vSwitch's userspace datapath installs every flow (it dumps them
// with recirc_id(0)).
func exactRecirc(m *flow.Match) {
	if m.Mask.RecircID == 0 {
		m.Mask.RecircID = ^uint32(0)
	}
}

// delFlow deletes the datapath flow whose match is given in text form.
func delFlow(dp *dpnetdev.Datapath, match string) error {
	m, err := flow.ParseMatch(match)
	if err != nil {
		return err
	}
	m.Mask.MatchVLANPresence() // as FlowPut stored it
	exactRecirc(&m)
	m.Normalize()
	_, err = dp.FlowDel(dpif.UFIDFromMatch(&m))
	return err
}

func (d *Commands) cmdDelFlow(_ context.Context, args []string) (string, error) {
	name, rest := splitDP(args, 1)
	dp, err := d.findDatapath(name)
	if err != nil {
		return "", err
	}
	return "", delFlow(dp, rest[0])
}

// cmdDelFlows is dpctl/del-flows [dp] [file]: every flow, or those the
// file lists.
func (d *Commands) cmdDelFlows(_ context.Context, args []string) (string, error) {
	name, file := "", ""
	switch len(args) {
	case 1:
		if _, err := os.Stat(args[0]); err == nil {
			file = args[0]
		} else {
			name = args[0]
		}
	case 2:
		name, file = args[0], args[1]
	}
	dp, err := d.findDatapath(name)
	if err != nil {
		return "", err
	}
	if file != "" {
		return "", d.applyFlowsFile(dp, file, "delete")
	}
	dp.FlowFlush()
	return "", nil
}

// cmdDummyReceive injects packets into a dummy port, as Open vSwitch's
// netdev-dummy/receive: each argument is a packet in hex or a datapath
// flow to compose a packet from ("--len N" after a flow pads its packet
// to N bytes; "--qid N" before the packets picks the receive queue).
func (d *Commands) cmdDummyReceive(_ context.Context, args []string) (string, error) {
	var dev *dummy.Device
	for _, dp := range d.datapaths() {
		if p, ok := dp.PortByName(args[0]); ok {
			if dd, ok := p.Device.(*dummy.Device); ok {
				dev = dd
			}
		}
	}
	if dev == nil {
		return "", fmt.Errorf("no such dummy netdev '%s'", args[0])
	}
	qid := 0
	queues := map[int]bool{}
	rest := args[1:]
	// "--qid N" comes first, as Open vSwitch reads it.
	if len(rest) > 1 && rest[0] == "--qid" {
		n, err := strconv.Atoi(rest[1])
		if err != nil || n < 0 || n >= dev.NumRxQueues() {
			return "", errors.New("bad rx queue id.")
		}
		qid, rest = n, rest[2:]
	}
	for i := 0; i < len(rest); i++ {
		a, size := rest[i], 0
		// "--len N" right after a flow pads the packet composed from
		// it to N bytes (Open vSwitch's SEND_TCP_BOND_PKTS).
		if i+1 < len(rest) && rest[i+1] == "--len" && !isHexFrame(a) {
			n := 0
			if i+2 < len(rest) {
				n, _ = strconv.Atoi(rest[i+2])
			}
			if n < 60 {
				return "", errors.New("too small packet len")
			}
			size = n
			i += 2
		}
		frame, err := packetArg(a, size)
		if err != nil {
			return "", err
		}
		// A full receive queue drops the frame (counted in the port's
		// rx_dropped) and the command still succeeds, as Open vSwitch's
		// netdev-dummy/receive does.
		if dev.InjectQueue(qid, frame) {
			queues[qid] = true
		}
	}
	// Open vSwitch's main thread handles a dummy port's packets before
	// the command returns, and scripts check the effects right after:
	// wait (boundedly) for the datapath to have processed them.
	for q := range queues {
		dev.WaitProcessed(q, dummyReceiveWait)
	}
	return "", nil
}

// dummyReceiveWait bounds how long netdev-dummy/receive waits for the
// datapath to process what it injected (a port no worker polls, or an
// overloaded datapath, must not hang the command).
const dummyReceiveWait = 2 * time.Second

// isHexFrame reports whether a netdev-dummy/receive argument is a packet
// in hex (else it is a flow).
func isHexFrame(a string) bool {
	b, err := hex.DecodeString(strings.Join(strings.Fields(a), ""))
	return err == nil && len(b) >= 14
}

// packetArg turns a netdev-dummy/receive argument into a frame.
func packetArg(a string, size int) ([]byte, error) {
	a = strings.TrimSpace(a)
	// Hex may be grouped with spaces, as Open vSwitch reads it
	// (ofproto-dpif.at "fragment handling").
	if frame, err := hex.DecodeString(strings.Join(strings.Fields(a), "")); err == nil && len(frame) >= 14 {
		if len(frame) > packet.DefaultMTUBuf {
			return nil, errors.New("packet too long")
		}
		return frame, nil
	}
	if size > 0 {
		m, err := flow.ParseMatch(a)
		if err != nil {
			return nil, fmt.Errorf("bad packet or flow syntax: %w", err)
		}
		return flow.ComposeLen(nil, &m.Key, size)
	}
	// A flow may be split across lines (ofproto-dpif.at "megaflow -
	// resubmit table action"); its text has no meaningful whitespace.
	frame, err := flow.ComposeString(strings.Join(strings.Fields(a), ""))
	if err != nil {
		return nil, fmt.Errorf("bad packet or flow syntax: %w", err)
	}
	return frame, nil
}
