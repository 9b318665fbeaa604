package ofctl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
)

const progName = "gvs-ofctl"

// version is what --version prints; the OpenFlow range is what ofp decodes.
const version = progName + " (gvs) 0.1\nOpenFlow versions 0x1:0x6\n"

// env is one invocation's state: options and output streams.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	versions       []uint8 // from -O, in preference order; nil: OpenFlow10
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

// errNotImplemented marks online commands gvs-ofctl cannot run yet.
var errNotImplemented = errors.New("not implemented yet (gvs-ofctl runs offline commands only)")

func commands() []command {
	online := func(name, args, help string, min, max int) command {
		return command{name: name, args: args, help: help, min: min, max: max, online: true,
			run: func(*env, []string) error { return fmt.Errorf("%s: %w", name, errNotImplemented) }}
	}
	return []command{
		online("show", "SWITCH", "show OpenFlow information", 1, 1),
		online("dump-flows", "SWITCH [FLOW]", "print matching flow entries", 1, 2),
		online("add-flow", "SWITCH FLOW", "add flow described by FLOW", 2, 2),
		online("add-flows", "SWITCH FILE", "add flows from FILE", 2, 2),
		online("mod-flows", "SWITCH FLOW", "modify actions of matching FLOWs", 2, 2),
		online("del-flows", "SWITCH [FLOW]", "delete matching FLOWs", 1, 2),
		online("replace-flows", "SWITCH FILE", "replace flows with those in FILE", 2, 2),
		{name: "parse-flow", args: "FLOW", help: "parse FLOW and print its flow mod", min: 1, max: 1, run: parseFlowCmd},
		{name: "parse-flows", args: "FILE", help: "parse flows in FILE (- for stdin) and print their flow mods", min: 1, max: 1, run: parseFlowsCmd},
		{name: "ofp-print", args: "HEX [VERBOSITY]", help: "print OpenFlow message given in hex", min: 1, max: 2, run: ofpPrintCmd},
		{name: "ofp-parse", args: "FILE", help: "print OpenFlow messages read from binary FILE", min: 1, max: 1, run: ofpParseCmd},
	}
}

// protocolVersions maps -O names to wire versions.
var protocolVersions = map[string]uint8{
	"OpenFlow10": mf.OF10, "OpenFlow13": mf.OF13, "OpenFlow14": mf.OF14, "OpenFlow15": mf.OF15,
}

// Run executes gvs-ofctl with args (without the program name) and returns
// the exit status: 0 on success, 1 on any error (as ovs-ofctl's
// ovs_fatal).
func Run(args []string, stdout, stderr io.Writer) int {
	return run(args, os.Stdin, stdout, stderr)
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, progName+": "+format+"\n", a...)
		return 1
	}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(rest) > 0 || a == "-" || !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		name, val, hasVal := strings.Cut(a, "=")
		switch name {
		case "-h", "--help":
			usage(stdout)
			return 0
		case "-V", "--version":
			io.WriteString(stdout, version)
			return 0
		case "-O", "--protocols":
			if !hasVal {
				if name == "-O" && len(a) > 2 {
					val = a[2:]
				} else {
					if i+1 >= len(args) {
						return fail("option '%s' requires an argument", name)
					}
					i++
					val = args[i]
				}
			}
			vs, err := parseProtocols(val)
			if err != nil {
				return fail("%v", err)
			}
			e.versions = vs
		default:
			if strings.HasPrefix(a, "-O") {
				vs, err := parseProtocols(a[2:])
				if err != nil {
					return fail("%v", err)
				}
				e.versions = vs
				continue
			}
			return fail("unrecognized option '%s'", a)
		}
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
	fmt.Fprintf(bw, "\nFor OpenFlow switches (not implemented yet):\n")
	for _, c := range commands() {
		if c.online {
			fmt.Fprintf(bw, "  %-26s  %s\n", c.name+" "+c.args, c.help)
		}
	}
	fmt.Fprintf(bw, "\nOptions:\n  -O, --protocols=LIST   OpenFlow10, OpenFlow13, OpenFlow14, OpenFlow15 (comma-separated)\n  -h, --help             display this help message\n  -V, --version          display version information\n")
	bw.Flush()
}
