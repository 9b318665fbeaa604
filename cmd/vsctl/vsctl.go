package vsctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gvs-project/gvs/internal/version"
	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/model"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

// Program is the name used in messages, where ovs-vsctl says "ovs-vsctl".
const Program = "gvs-vsctl"

// versionText is what --version prints: the project's version and the
// Open_vSwitch schema version, as ovs-vsctl prints them.
func versionText() string { return version.Line(Program) + "\nDB Schema 8.3.1\n" }

// unlimited is a command's max argument count when it has no limit.
const unlimited = int(^uint(0) >> 1)

// exitTimeout is the status ovs-vsctl's shell sees when its alarm fires
// (128 + SIGALRM).
const exitTimeout = 128 + int(syscall.SIGALRM)

// failure is an error that ends the run with a message and status.
type failure struct {
	code int
	msg  string
}

func (f *failure) Error() string { return f.msg }

// fail builds the usual "gvs-vsctl: ..." error with exit status 1.
func fail(format string, args ...any) error {
	return &failure{code: 1, msg: fmt.Sprintf(format, args...)}
}

// command is one row of the command table, like ovs-vsctl's
// vsctl_commands[]: name, argument counts, accepted options, whether it
// may write, and the handler.
type command struct {
	name      string
	minArgs   int
	maxArgs   int
	options   []string // "--may-exist", "--id=" (takes a value), ...
	readWrite bool
	run       func(*invocation) error
}

// commandTable lists every supported command.
func commandTable() []*command {
	return []*command{
		// Open vSwitch commands.
		{name: "init", readWrite: true, run: cmdInit},
		{name: "show", run: cmdShow},
		// Bridge commands.
		{name: "add-br", minArgs: 1, maxArgs: 3, options: []string{"--may-exist"}, readWrite: true, run: cmdAddBr},
		{name: "del-br", minArgs: 1, maxArgs: 1, options: []string{"--if-exists"}, readWrite: true, run: cmdDelBr},
		{name: "list-br", options: []string{"--real", "--fake"}, run: cmdListBr},
		{name: "br-exists", minArgs: 1, maxArgs: 1, run: cmdBrExists},
		{name: "br-to-vlan", minArgs: 1, maxArgs: 1, run: cmdBrToVlan},
		{name: "br-to-parent", minArgs: 1, maxArgs: 1, run: cmdBrToParent},
		{name: "br-set-external-id", minArgs: 2, maxArgs: 3, readWrite: true, run: cmdBrSetExternalID},
		{name: "br-get-external-id", minArgs: 1, maxArgs: 2, run: cmdBrGetExternalID},
		// Port commands.
		{name: "list-ports", minArgs: 1, maxArgs: 1, run: cmdListPorts},
		{name: "add-port", minArgs: 2, maxArgs: unlimited, options: []string{"--may-exist"}, readWrite: true, run: cmdAddPort},
		{name: "del-port", minArgs: 1, maxArgs: 2, options: []string{"--if-exists", "--with-iface"}, readWrite: true, run: cmdDelPort},
		{name: "port-to-br", minArgs: 1, maxArgs: 1, run: cmdPortToBr},
		// Interface commands.
		{name: "list-ifaces", minArgs: 1, maxArgs: 1, run: cmdListIfaces},
		{name: "iface-to-br", minArgs: 1, maxArgs: 1, run: cmdIfaceToBr},
		// Controller commands.
		{name: "get-controller", minArgs: 1, maxArgs: 1, run: cmdGetController},
		{name: "del-controller", minArgs: 1, maxArgs: 1, readWrite: true, run: cmdDelController},
		{name: "set-controller", minArgs: 1, maxArgs: unlimited, readWrite: true, run: cmdSetController},
		{name: "get-fail-mode", minArgs: 1, maxArgs: 1, run: cmdGetFailMode},
		{name: "del-fail-mode", minArgs: 1, maxArgs: 1, readWrite: true, run: cmdDelFailMode},
		{name: "set-fail-mode", minArgs: 2, maxArgs: 2, readWrite: true, run: cmdSetFailMode},
		// Manager commands.
		{name: "get-manager", run: cmdGetManager},
		{name: "del-manager", readWrite: true, run: cmdDelManager},
		{name: "set-manager", maxArgs: unlimited, readWrite: true, run: cmdSetManager},
		// Database commands.
		{name: "list", minArgs: 1, maxArgs: unlimited, options: []string{"--if-exists", "--columns="}, run: cmdList},
		{name: "find", minArgs: 1, maxArgs: unlimited, options: []string{"--columns="}, run: cmdFind},
		{name: "get", minArgs: 2, maxArgs: unlimited, options: []string{"--if-exists", "--id="}, run: cmdGet},
		{name: "set", minArgs: 3, maxArgs: unlimited, options: []string{"--if-exists"}, readWrite: true, run: cmdSet},
		{name: "add", minArgs: 4, maxArgs: unlimited, options: []string{"--if-exists"}, readWrite: true, run: cmdAdd},
		{name: "remove", minArgs: 4, maxArgs: unlimited, options: []string{"--if-exists"}, readWrite: true, run: cmdRemove},
		{name: "clear", minArgs: 3, maxArgs: unlimited, options: []string{"--if-exists"}, readWrite: true, run: cmdClear},
		{name: "create", minArgs: 2, maxArgs: unlimited, options: []string{"--id="}, readWrite: true, run: cmdCreate},
		{name: "destroy", minArgs: 1, maxArgs: unlimited, options: []string{"--if-exists", "--all"}, readWrite: true, run: cmdDestroy},
	}
}

// globals are the options that apply to the whole run.
type globals struct {
	db      string
	wait    bool
	timeout time.Duration
	format  string // "list", "table", "bare"
	data    string // "string" or "bare"
	noHead  bool
	oneline bool
	dryRun  bool
}

// invocation is one command of the run with its options and output.
type invocation struct {
	cmd  *command
	args []string
	opts map[string]string
	ctx  *dbctx
	g    *globals
	out  strings.Builder
	// post, when set, runs after the commit to finish the output (create
	// prints the new row's real UUID).
	post func(*client.Result)
}

func (inv *invocation) has(opt string) bool { _, ok := inv.opts[opt]; return ok }

// Run executes a gvs-vsctl command line (without the program name),
// writing output to stdout and errors to stderr, and returns the exit
// status: 0 on success, 1 on error, 2 for a failed br-exists, 142 (as
// ovs-vsctl killed by its SIGALRM) when --timeout expires.
func Run(args []string, stdout, stderr io.Writer) int {
	err := run(args, stdout, stderr)
	if err == nil {
		return 0
	}
	var f *failure
	if errors.As(err, &f) {
		if f.msg != "" {
			fmt.Fprintf(stderr, "%s: %s\n", Program, f.msg)
		}
		return f.code
	}
	fmt.Fprintf(stderr, "%s: %v\n", Program, err)
	return 1
}

// globalOptions maps each global option to whether it takes a value.
var globalOptions = map[string]bool{
	"--db": true, "--no-wait": false, "--wait": false, "--timeout": true, "-t": true,
	"--format": true, "-f": true, "--bare": false, "--data": true, "-d": true,
	"--no-headings": false, "--oneline": false, "--dry-run": false, "--no-syslog": false,
	"--pretty": false, "--retry": false, "--help": false, "-h": false, "--version": false, "-V": false,
	"--verbose": true, "-v": false, "--log-file": true, "--no-leader-only": false, "--leader-only": false,
}

func run(args []string, stdout, stderr io.Writer) error {
	rundir := os.Getenv("OVS_RUNDIR")
	if rundir == "" {
		rundir = "/var/run/openvswitch"
	}
	g := &globals{db: "unix:" + filepath.Join(rundir, "db.sock"), wait: true, format: "list", data: "string"}
	if env := os.Getenv("OVS_DB"); env != "" {
		g.db = env
	}
	// Leading options: global ones here, the rest belong to the first
	// command.
	var first []string
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		name, val, hasVal := strings.Cut(a, "=")
		takesVal, global := globalOptions[name]
		if !global {
			if !localOption(name) {
				return fail("unrecognized option '%s'", name)
			}
			first = append(first, a)
			continue
		}
		if takesVal && !hasVal {
			if i+1 >= len(args) {
				return fail("option '%s' requires an argument", name)
			}
			i++
			val = args[i]
		}
		switch name {
		case "--db":
			g.db = val
		case "--no-wait":
			g.wait = false
		case "--wait":
			g.wait = true
		case "--timeout", "-t":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return fail("value %s on -t or --timeout is invalid", val)
			}
			g.timeout = time.Duration(n) * time.Second
		case "--format", "-f":
			switch val {
			case "list", "table", "bare":
				g.format = val
			default:
				return fail("unknown output format \"%s\"", val)
			}
		case "--bare":
			g.format, g.data, g.noHead = "list", "bare", true
		case "--data", "-d":
			switch val {
			case "string", "bare":
				g.data = val
			default:
				return fail("unknown data format \"%s\"", val)
			}
		case "--no-headings":
			g.noHead = true
		case "--oneline":
			g.oneline = true
		case "--dry-run":
			g.dryRun = true
		case "--help", "-h":
			usage(stdout)
			return nil
		case "--version", "-V":
			io.WriteString(stdout, versionText())
			return nil
		}
	}
	invs, err := parseCommands(append(first, args[i:]...), g)
	if err != nil {
		return err
	}
	if len(invs) == 0 {
		return fail("missing command name (use --help for help)")
	}
	ctx := context.Background()
	if g.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.timeout)
		defer cancel()
	}
	err = execute(ctx, g, invs, args, stdout, stderr)
	if err != nil && ctx.Err() != nil {
		return &failure{code: exitTimeout, msg: "timeout"}
	}
	return err
}

// localOption reports whether some command accepts option name.
func localOption(name string) bool {
	for _, c := range commandTable() {
		for _, o := range c.options {
			if strings.TrimSuffix(o, "=") == name {
				return true
			}
		}
	}
	return false
}

// parseCommands splits args at "--" into commands with their options.
func parseCommands(args []string, g *globals) ([]*invocation, error) {
	table := commandTable()
	byName := make(map[string]*command, len(table))
	for _, c := range table {
		byName[c.name] = c
	}
	var invs []*invocation
	for len(args) > 0 {
		n := 0
		for n < len(args) && args[n] != "--" {
			n++
		}
		seg := args[:n]
		if n < len(args) {
			args = args[n+1:]
		} else {
			args = nil
		}
		if len(seg) == 0 {
			continue
		}
		var opts []string
		for len(seg) > 0 && strings.HasPrefix(seg[0], "-") {
			opts = append(opts, seg[0])
			seg = seg[1:]
		}
		if len(seg) == 0 {
			return nil, fail("missing command name (use --help for help)")
		}
		c := byName[seg[0]]
		if c == nil {
			return nil, fail("unknown command '%s'; use --help for help", seg[0])
		}
		inv := &invocation{cmd: c, args: seg[1:], opts: map[string]string{}, g: g}
		for _, o := range opts {
			name, val, hasVal := strings.Cut(o, "=")
			ok := false
			for _, allowed := range c.options {
				an, takesVal := strings.CutSuffix(allowed, "=")
				if an == name {
					if takesVal && !hasVal {
						return nil, fail("'%s' command requires %s option to have an argument", c.name, name)
					}
					if !takesVal && hasVal {
						return nil, fail("'%s' command option %s does not take an argument", c.name, name)
					}
					ok = true
				}
			}
			if !ok {
				return nil, fail("'%s' command has no '%s' option", c.name, name)
			}
			if _, dup := inv.opts[name]; dup {
				return nil, fail("'%s' option specified multiple times", name)
			}
			inv.opts[name] = val
		}
		if len(inv.args) < c.minArgs {
			return nil, fail("'%s' command requires at least %d arguments", c.name, c.minArgs)
		}
		if len(inv.args) > c.maxArgs {
			return nil, fail("'%s' command takes at most %d arguments", c.name, c.maxArgs)
		}
		invs = append(invs, inv)
	}
	return invs, nil
}

// execute connects, runs the commands against a working copy of the
// database, commits the changes and prints the outputs.
func execute(ctx context.Context, g *globals, invs []*invocation, args []string, stdout, stderr io.Writer) error {
	schema, err := vswitch.Schema()
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	if _, _, err := client.ParseTarget(g.db); err != nil {
		return fail("%s: database connection failed (%s)", g.db, connErrText(syscall.EAFNOSUPPORT))
	}
	cl, err := client.Dial(ctx, g.db, client.Options{NoReconnect: true})
	if err != nil {
		return fail("%s: database connection failed (%s)", g.db, connErrText(err))
	}
	defer cl.Close()
	tables := make([]client.MonitorTable, 0, len(schema.Tables))
	for name := range schema.Tables {
		tables = append(tables, client.MonitorTable{Table: name})
	}
	sort.Slice(tables, func(i, j int) bool { return tables[i].Table < tables[j].Table })
	rep, err := cl.Monitor(ctx, vswitch.DatabaseName, tables)
	if err != nil {
		return fail("%s: database connection failed (%v)", g.db, err)
	}
	var res *client.Result
	for attempt := 1; ; attempt++ {
		var retry bool
		// The wait below must be for a state newer than the one this
		// attempt reads (not one taken earlier): otherwise a retry can
		// re-read the same stale snapshot and burn its attempts while the
		// conflicting update is still on its way.
		snap := rep.Snapshot()
		seq := snap.Seq
		res, retry, err = commitOnce(ctx, g, cl, rep, snap, schema, invs, args, stderr)
		if err == nil || !retry || attempt == maxAttempts {
			break
		}
		// Another client changed what we read: start again once the
		// replica has that change (normally already, as the server sends
		// updates before later replies).
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		rep.WaitFor(wctx, func(s *client.Snapshot) bool { return s.Seq > seq })
		cancel()
	}
	if err != nil {
		return err
	}
	for _, inv := range invs {
		if inv.post != nil && res != nil {
			inv.post(res)
		}
		s := inv.out.String()
		if g.oneline {
			s = strings.TrimSuffix(s, "\n")
			s = strings.ReplaceAll(s, `\`, `\\`)
			s = strings.ReplaceAll(s, "\n", `\n`) + "\n"
		}
		io.WriteString(stdout, s)
	}
	return nil
}

// maxAttempts bounds how often a transaction is retried after another
// client changed the rows it read.
const maxAttempts = 100

// commitOnce runs the commands against snapshot snap of the replica and
// commits their changes (waiting for gvs-vswitchd unless --no-wait).
// retry reports that the transaction failed only because the verified
// columns changed meanwhile.
func commitOnce(ctx context.Context, g *globals, cl *client.Client, rep *client.Replica, snap *client.Snapshot, schema *model.DatabaseSchema,
	invs []*invocation, args []string, stderr io.Writer) (res *client.Result, retry bool, err error) {
	dc := newDBCtx(schema, snap, stderr)
	for _, inv := range invs {
		inv.ctx, inv.post = dc, nil
		inv.out.Reset()
		if err := inv.cmd.run(inv); err != nil {
			return nil, false, err
		}
	}
	if err := dc.checkSymbols(); err != nil {
		return nil, false, err
	}
	if !dc.dirty() || g.dryRun {
		return nil, false, nil
	}
	txn := cl.Txn(vswitch.DatabaseName)
	nextCfg := int64(-1)
	selIdx := -1
	if g.wait && dc.ovs.isNew {
		dc.ovs.data["next_cfg"] = model.Scalar(int64(1))
		nextCfg = 1
	}
	nVerify := dc.build(txn)
	if g.wait && !dc.ovs.isNew {
		txn.Mutate("Open_vSwitch", []client.Mutation{{Column: "next_cfg", Mutator: "+=", Value: int64(1)}}, client.UUIDIs(dc.ovs.uuid))
		selIdx = txn.Len()
		txn.Select("Open_vSwitch", []string{"next_cfg"}, client.UUIDIs(dc.ovs.uuid))
	}
	txn.Comment(Program + ": " + Program + " " + strings.Join(args, " "))
	res, err = txn.Commit(ctx)
	if err != nil {
		var te *client.TxnError
		if errors.As(err, &te) {
			if te.Index < nVerify && te.Err.Name == "timed out" {
				return nil, true, err
			}
			b, _ := te.Err.MarshalJSON()
			dc.warnf("ovsdb_idl", "transaction error: %s", b)
			return nil, false, fail("transaction error: %s", b)
		}
		if ctx.Err() != nil {
			return nil, false, err
		}
		return nil, false, fail("transaction error: %v", err)
	}
	if selIdx >= 0 && selIdx < len(res.Ops) && len(res.Ops[selIdx].Rows) == 1 {
		if d := res.Ops[selIdx].Rows[0].Get("next_cfg"); len(d.Keys) == 1 {
			nextCfg, _ = d.Keys[0].(int64)
		}
	}
	if g.wait && nextCfg >= 0 {
		_, err := rep.WaitFor(ctx, func(s *client.Snapshot) bool {
			for _, r := range s.Rows("Open_vSwitch") {
				if d := r.Get("cur_cfg"); len(d.Keys) == 1 {
					if v, _ := d.Keys[0].(int64); v >= nextCfg {
						return true
					}
				}
			}
			return false
		})
		if err != nil {
			return nil, false, err
		}
	}
	return res, false, nil
}

// connErrText is the errno text ovs-vsctl prints for a failed connection.
func connErrText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return err.Error()
}
