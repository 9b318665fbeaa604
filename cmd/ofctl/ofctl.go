package ofctl

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofconn"

	"github.com/gvs-project/gvs/internal/version"
	"github.com/gvs-project/gvs/ofproto/mf"
)

const progName = "gvs-ofctl"

// versionText is what --version prints: the project's version and the
// OpenFlow range ofp decodes.
func versionText() string { return version.Line(progName) + "\nOpenFlow versions 0x1:0x6\n" }

// env is one invocation's state: options and output streams.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	versions       []uint8 // from -O, in preference order; nil: OpenFlow10
	xid            uint32  // last transaction ID used
	timeout        time.Duration
	strict         bool
	noStats        bool
	bundle         bool
	mayCreate      bool // --may-create: mod-group adds a missing group
	names          int  // --names 1, --no-names 0, default -1
	sort           []sortKey
	portByName     map[string]uint32 // from the switch, for --names (default)
	tableNames     map[uint8]string
	// packetInFormat is -P's NXPIF_* format for monitor (-1: prefer
	// NXT_PACKET_IN2 where the switch has it).
	packetInFormat int
	timestamp      bool // --timestamp: monitor and snoop prefix times
	verbosity      int  // -m/--more, once per use
	// stderrTTY enables progress lines for long flow table changes.
	stderrTTY bool
	// tls are -p/-c/-C (--private-key, --certificate, --ca-cert), for
	// ssl: targets.
	tls ofconn.TLSFiles
	now func() time.Time // nil: time.Now (tests fake it)
}

// command is one row of the command table, like ovs-ofctl's all_commands[].
type command struct {
	name     string
	args     string // argument synopsis shown by --help
	help     string // one-line description shown by --help
	min, max int
	online   bool // needs a switch connection
	run      func(e *env, args []string) error
}

func commands() []command {
	online := func(name, args, help string, min, max int, run func(*env, []string) error) command {
		return command{name: name, args: args, help: help, min: min, max: max, online: true, run: run}
	}
	cmds := []command{
		online("show", "SWITCH", "show OpenFlow information", 1, 1, showCmd),
		online("dump-desc", "SWITCH", "print switch description", 1, 1, dumpDescCmd),
		online("dump-ports", "SWITCH [PORT]", "print port statistics", 1, 2, dumpPortsCmd),
		online("dump-ports-desc", "SWITCH [PORT]", "print port descriptions", 1, 2, dumpPortsDescCmd),
		online("dump-tables", "SWITCH", "print table stats", 1, 1, dumpTablesCmd),
		online("dump-table-features", "SWITCH", "print table features", 1, 1, dumpTableFeaturesCmd),
		online("dump-flows", "SWITCH [FLOW]", "print matching flow entries", 1, 2, dumpFlowsCmd),
		online("dump-aggregate", "SWITCH [FLOW]", "print aggregate stats for FLOWs", 1, 2, dumpAggregateCmd),
		online("add-flow", "SWITCH FLOW", "add flow described by FLOW", 2, 2, addFlowCmd),
		online("add-flows", "SWITCH FILE", "add flows from FILE", 2, 2, addFlowsCmd),
		online("mod-flows", "SWITCH FLOW", "modify actions of matching FLOWs", 2, 2, modFlowsCmd),
		online("del-flows", "SWITCH [FLOW]", "delete matching FLOWs", 1, 2, delFlowsCmd),
		online("replace-flows", "SWITCH FILE", "replace flows with those in FILE", 2, 2, replaceFlowsCmd),
		online("monitor", "SWITCH [MISSLEN] [invalid_ttl]", "print packets received from SWITCH", 1, 3, monitorCmd),
		online("snoop", "SWITCH", "snoop on SWITCH and its controller", 1, 1, snoopCmd),
		online("add-group", "SWITCH GROUP", "add group described by GROUP", 1, 2, addGroupCmd),
		online("add-groups", "SWITCH FILE", "add group from FILE", 2, 2, addGroupsCmd),
		online("mod-group", "SWITCH GROUP", "modify specific group", 1, 2, modGroupCmd),
		online("del-groups", "SWITCH [GROUP]", "delete matching GROUPs", 1, 2, delGroupsCmd),
		online("insert-buckets", "SWITCH [GROUP]", "add buckets to GROUP", 1, 2, insertBucketsCmd),
		online("remove-buckets", "SWITCH [GROUP]", "remove buckets from GROUP", 1, 2, removeBucketsCmd),
		online("dump-groups", "SWITCH [GROUP]", "print group description", 1, 2, dumpGroupsCmd),
		online("add-meter", "SWITCH METER", "add meter described by METER", 2, 2, addMeterCmd),
		online("mod-meter", "SWITCH METER", "modify specific METER", 2, 2, modMeterCmd),
		online("dump-meters", "SWITCH [METER]", "print METER configuration", 1, 2, dumpMetersCmd),
		online("del-meter", "SWITCH [METER]", "delete METER", 1, 2, delMetersCmd),
		online("del-meters", "SWITCH [METER]", "delete METER (default: all)", 1, 2, delMetersCmd),
		online("dump-group-features", "SWITCH", "print group features", 1, 1, dumpGroupFeaturesCmd),
		online("dump-group-stats", "SWITCH [GROUP]", "print group statistics", 1, 2, dumpGroupStatsCmd),
		online("meter-stats", "SWITCH [METER]", "print meter statistics", 1, 2, meterStatsCmd),
		online("meter-features", "SWITCH", "print meter features", 1, 1, meterFeaturesCmd),
		online("packet-out", "SWITCH IN_PORT ACTIONS PACKET...", "execute ACTIONS on PACKET", 2, 1<<30, packetOutCmd),
		online("diff-flows", "SOURCE1 SOURCE2", "compare flows from two sources", 2, 2, diffFlowsCmd),
	}
	cmds = append(cmds, tlvCommands()...)
	return append(cmds, []command{
		{name: "parse-flow", args: "FLOW", help: "parse FLOW and print its flow mod", min: 1, max: 1, run: parseFlowCmd},
		{name: "parse-flows", args: "FILE", help: "parse flows in FILE (- for stdin) and print their flow mods", min: 1, max: 1, run: parseFlowsCmd},
		{name: "ofp-print", args: "HEX [VERBOSITY]", help: "print OpenFlow message given in hex", min: 1, max: 2, run: ofpPrintCmd},
		{name: "ofp-parse", args: "FILE", help: "print OpenFlow messages read from binary FILE", min: 1, max: 1, run: ofpParseCmd},
	}...)
}

// packetInFormats are -P's names for the NXPIF_* formats.
var packetInFormats = map[string]int{"standard": 0, "openflow10": 0, "nxt_packet_in": 1, "nxm": 1, "nxt_packet_in2": 2}

// protocolVersions maps -O names to wire versions.
var protocolVersions = map[string]uint8{
	"OpenFlow10": mf.OF10, "OpenFlow11": mf.OF11, "OpenFlow12": mf.OF12, "OpenFlow13": mf.OF13, "OpenFlow14": mf.OF14, "OpenFlow15": mf.OF15,
}

// Run executes gvs-ofctl with args (without the program name) and returns
// the exit status: 0 on success, 1 on any error (as ovs-ofctl's
// ovs_fatal).
func Run(args []string, stdout, stderr io.Writer) int {
	return run(args, os.Stdin, stdout, stderr)
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, names: -1, packetInFormat: -1, stderrTTY: isTerminal(stderr)}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, progName+": "+format+"\n", a...)
		return 1
	}
	// Options may appear anywhere before "--", as with getopt_long.
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-" || !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		name, val, hasVal := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") && len(a) > 2 {
			name, val, hasVal = a[:2], a[2:], true
		}
		needVal := func() (string, bool) {
			if hasVal {
				return val, true
			}
			if i+1 >= len(args) {
				return "", false
			}
			i++
			return args[i], true
		}
		switch name {
		case "-h", "--help":
			usage(stdout)
			return 0
		case "-V", "--version":
			io.WriteString(stdout, versionText())
			return 0
		case "-O", "--protocols":
			v, ok := needVal()
			if !ok {
				return fail("option '%s' requires an argument", name)
			}
			vs, err := parseProtocols(v)
			if err != nil {
				return fail("%v", err)
			}
			e.versions = vs
		case "-t", "--timeout":
			v, ok := needVal()
			if !ok {
				return fail("option '%s' requires an argument", name)
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fail("value %s on -t or --timeout is invalid", v)
			}
			e.timeout = time.Duration(n) * time.Second
		case "-p", "--private-key", "-c", "--certificate", "-C", "--ca-cert":
			v, ok := needVal()
			if !ok {
				return fail("option '%s' requires an argument", name)
			}
			switch name {
			case "-p", "--private-key":
				e.tls.PrivateKey = v
			case "-c", "--certificate":
				e.tls.Certificate = v
			default:
				e.tls.CACert = v
			}
		case "-P", "--packet-in-format":
			v, ok := needVal()
			if !ok {
				return fail("option '%s' requires an argument", name)
			}
			f, ok := packetInFormats[v]
			if !ok {
				return fail("unknown packet-in format `%s'", v)
			}
			e.packetInFormat = f
		case "--timestamp":
			e.timestamp = true
		case "-m", "--more":
			e.verbosity++
		case "--strict":
			e.strict = true
		case "--no-stats":
			e.noStats = true
		case "--bundle":
			e.bundle = true
		case "--may-create":
			e.mayCreate = true
		case "--names":
			e.names = 1
		case "--no-names":
			e.names = 0
		case "--read-only", "--readd", "--no-readd":
		case "--sort", "--rsort":
			k := sortKey{desc: name == "--rsort"}
			if hasVal && val != "priority" {
				if k.field = mf.Lookup(val); k.field == nil {
					return fail("%s: unknown field name", val)
				}
			}
			e.sort = append(e.sort, k)
		default:
			return fail("unrecognized option '%s'", a)
		}
	}
	if e.bundle {
		// Bundles need OpenFlow 1.3 or later; without such a version
		// allowed, ovs-ofctl uses OpenFlow 1.4.
		var vs []uint8
		for _, v := range e.versions {
			if v >= mf.OF13 {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			vs = []uint8{mf.OF14}
		}
		e.versions = vs
	}
	if len(rest) == 0 {
		return fail("missing command name; use --help for help")
	}
	var cmd *command
	for _, c := range commands() {
		if c.name == rest[0] {
			cmd = &c
			break
		}
	}
	if cmd == nil {
		return fail("unknown command '%s'; use --help for help", rest[0])
	}
	n := len(rest) - 1
	if n < cmd.min {
		return fail("'%s' command requires at least %d arguments", cmd.name, cmd.min)
	}
	if n > cmd.max {
		return fail("'%s' command takes at most %d arguments", cmd.name, cmd.max)
	}
	if err := cmd.run(e, rest[1:]); err != nil {
		if err == errSilent {
			return 1
		}
		if err == errDiffer {
			return 2
		}
		return fail("%v", err)
	}
	return 0
}

// parseProtocols parses -O's comma-separated list.
func parseProtocols(s string) ([]uint8, error) {
	var out []uint8
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		v, ok := protocolVersions[name]
		if !ok {
			return nil, fmt.Errorf("Unknown OpenFlow version: \"%s\"", name)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no OpenFlow versions given", s)
	}
	return out, nil
}

func usage(w io.Writer) {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s: OpenFlow switch management utility\nusage: %s [OPTIONS] COMMAND [ARG...]\n\nOffline commands:\n", progName, progName)
	for _, c := range commands() {
		if !c.online {
			fmt.Fprintf(bw, "  %-26s  %s\n", c.name+" "+c.args, c.help)
		}
	}
	fmt.Fprintf(bw, "\nFor OpenFlow switches:\n")
	for _, c := range commands() {
		if c.online {
			fmt.Fprintf(bw, "  %-26s  %s\n", c.name+" "+c.args, c.help)
		}
	}
	fmt.Fprintf(bw, "\nOptions:\n  -O, --protocols=LIST   OpenFlow10, OpenFlow11, OpenFlow12, OpenFlow13, OpenFlow14, OpenFlow15 (comma-separated)\n  -h, --help             display this help message\n  -V, --version          display version information\n")
	bw.Flush()
}
