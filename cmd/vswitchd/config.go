package vswitchd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gvs-project/gvs/internal/version"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

// ovsProgram is the name under which gvs-vswitchd stands in for Open
// vSwitch's daemon (a link named ovs-vswitchd) and takes its defaults.
const ovsProgram = "ovs-vswitchd"

// Config is the daemon's configuration, from (in increasing precedence)
// a configuration file, GVS_* environment variables, Open vSwitch's
// OVS_RUNDIR/OVS_DBDIR/OVS_LOGDIR, and flags.
type Config struct {
	// Program is the name the daemon was invoked by (gvs-vswitchd, or
	// ovs-vswitchd through a link); the pidfile and control socket are
	// named after it.
	Program string
	RunDir  string
	DBDir   string
	LogDir  string
	// Database is "" for the embedded server, else an OVSDB remote such as
	// unix:PATH or tcp:HOST:PORT (ovs-vswitchd's positional DATABASE).
	Database string
	// DBFile is the embedded database file (default DBDir/conf.db).
	DBFile string
	// Pidfile is the pidfile path ("" for none).
	Pidfile string
	// Unixctl is the control socket path ("" for the default
	// RunDir/Program.PID.ctl, "none" for no socket).
	Unixctl string
	LogFile string
	// Verbose holds vlog specs (module:destination:level).
	Verbose []string
	Detach  bool
	NoChdir bool
	// EnableDummy and DisableSystem are ovs-vswitchd's test options:
	// gvs always has dummy ports; DisableSystem refuses system ports.
	EnableDummy bool
	// DummyOverride is --enable-dummy=override: system and internal
	// interfaces are dummy devices too, as in Open vSwitch.
	DummyOverride bool
	// DummySystem is --enable-dummy=system: system interfaces, and the
	// internal ports of bridges of the system datapath type, are dummies
	// (Open vSwitch overrides the "system" netdev and dpif types).
	DummySystem   bool
	DisableSystem bool
	// NoSelfConfinement (--no-self-confinement) lets a bridge's
	// controllers be Unix sockets outside the run directory.
	NoSelfConfinement bool
	// DisableSystemRoute (--disable-system-route) keeps the kernel's
	// routes out of the tunnel route table, as Open vSwitch's.
	DisableSystemRoute bool
	Workers            int
	// DummyNUMA is ovs-vswitchd's --dummy-numa: the i-th entry is the
	// NUMA node of CPU core i, a layout PMD threads are placed on (and
	// not pinned) instead of the machine's.
	DummyNUMA string
	// MetricsAddress is HOST:PORT for a Prometheus /metrics listener
	// ("" for none, the default).
	MetricsAddress string
	// GCHeadroom is the garbage collector's headroom as a percentage of
	// the live heap (vswitchd/heapgoal; 100 is Go's default and turns
	// the tuning off), GCHeadroomMin its floor in MiB. A GOGC variable in
	// the environment overrides both.
	GCHeadroom, GCHeadroomMin int
	// GCTrimAfter is the quiet period (no collection) after which the
	// free heap goes back to the operating system, when at least
	// GCTrimMin MiB of it are resident (vswitchd/heapgoal's Trimmer); 0
	// never trims.
	GCTrimAfter time.Duration
	GCTrimMin   int
	// Remotes are the embedded OVSDB server's remotes besides
	// RUNDIR/db.sock, as ovsdb-server's --remote (remotes.go); nil
	// means DefaultRemote alone.
	Remotes []string
	// PrivateKey, Certificate and CACert override the SSL table's files
	// for pssl:/ssl: OVSDB remotes and OpenFlow connections ("" or a
	// db:Open_vSwitch,SSL,COLUMN form: the SSL table's value).
	PrivateKey, Certificate, CACert string
	// SSLProtocols and SSLCiphers are ovs-vswitchd's --ssl-protocols
	// ("TLSv1.2,TLSv1.3") and --ssl-ciphers (OpenSSL suite names) for
	// every SSL connection; "" keeps the defaults (TLS 1.2 and 1.3).
	SSLProtocols, SSLCiphers string
	// SocketGroup is the group (name or number) given the unix sockets
	// (control socket, db.sock, <bridge>.mgmt, <bridge>.snoop, punix:
	// remotes); "" keeps the daemon's primary group. They are mode 0770.
	SocketGroup string
	// ConntrackState is a file the conntrack tables are saved to at a
	// planned stop and restored from at start ("" for none; ctstate.go).
	ConntrackState string
	// Handover starts the daemon by taking over from the running one
	// (its ports, sockets and state; handover.go).
	Handover bool
}

// defaultDir returns the Open vSwitch environment variable's value or a
// default.
func defaultDir(env, def string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	return def
}

// ignoredOVSFlags are ovs-vswitchd options gvs accepts and ignores, so
// scripts written for Open vSwitch run unchanged.
var ignoredOVSFlags = []string{
	"monitor", "overwrite-pidfile", "mlockall",
	"bootstrap-ca-cert", "peer-ca-cert",
}

var ignoredOVSValueFlags = []string{
	"user", "dpdk",
}

// normalizeArgs rewrites Open vSwitch option spellings that pflag does
// not parse: -vSPEC (attached value) becomes --verbose=SPEC.
func normalizeArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if strings.HasPrefix(a, "-v") && len(a) > 2 && !strings.HasPrefix(a, "--") {
			out = append(out, "--verbose="+a[2:])
			continue
		}
		out = append(out, a)
	}
	return out
}

// NewCommand returns the cobra command for the daemon. run is called with
// the final configuration.
func NewCommand(program string, run func(*Config) error) *cobra.Command {
	v := viper.New()
	cfg := &Config{Program: program}
	var configFile, enableDummy string
	var showVersion bool
	cmd := &cobra.Command{
		Use:   program + " [DATABASE]",
		Short: "gvs userspace virtual switch daemon",
		Long: program + ` runs the gvs switch. Without DATABASE it serves its own OVSDB
(the Open_vSwitch schema) on RUNDIR/db.sock, stored in DBDIR/conf.db; with
DATABASE (unix:PATH or tcp:HOST:PORT) it uses an existing ovsdb-server.
Directories come from --rundir/--dbdir/--logdir, else OVS_RUNDIR/OVS_DBDIR/
OVS_LOGDIR, else a configuration file (--config) or GVS_* variables.`,
		Args:          cobra.MaximumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(c *cobra.Command, args []string) error {
			if showVersion {
				// As ovs-vswitchd --version, and a line for the
				// scripts that read Open vSwitch's release from it
				// (Debian's ovs-ctl: awk '/Open vSwitch/{print $NF}').
				fmt.Fprintf(c.OutOrStdout(), "%s\nCompatible with Open vSwitch %s\n", version.Line(program), version.OpenVSwitch)
				return nil
			}
			if configFile != "" {
				v.SetConfigFile(configFile)
				if err := v.ReadInConfig(); err != nil {
					return fmt.Errorf("reading %s: %w", configFile, err)
				}
			}
			cfg.RunDir = v.GetString("rundir")
			cfg.DBDir = v.GetString("dbdir")
			cfg.LogDir = v.GetString("logdir")
			cfg.DBFile = v.GetString("db-file")
			cfg.Workers = v.GetInt("workers")
			cfg.Database = v.GetString("db")
			cfg.MetricsAddress = v.GetString("metrics-address")
			cfg.GCHeadroom = v.GetInt("gc-headroom")
			cfg.GCHeadroomMin = v.GetInt("gc-headroom-min")
			if cfg.GCHeadroom < 1 || cfg.GCHeadroom > 100 {
				return fmt.Errorf("--gc-headroom: %d is not a percentage from 1 to 100", cfg.GCHeadroom)
			}
			if cfg.GCHeadroomMin < 0 {
				return fmt.Errorf("--gc-headroom-min: %d MiB is negative", cfg.GCHeadroomMin)
			}
			cfg.GCTrimAfter = v.GetDuration("gc-trim-after")
			cfg.GCTrimMin = v.GetInt("gc-trim-min")
			if cfg.GCTrimAfter < 0 {
				return fmt.Errorf("--gc-trim-after: %v is negative", cfg.GCTrimAfter)
			}
			if cfg.GCTrimMin < 0 {
				return fmt.Errorf("--gc-trim-min: %d MiB is negative", cfg.GCTrimMin)
			}
			cfg.SocketGroup = v.GetString("socket-group")
			cfg.ConntrackState = v.GetString("conntrack-state")
			if cfg.ConntrackState != "" {
				// --detach changes directory: keep a relative path the
				// caller's.
				abs, err := filepath.Abs(cfg.ConntrackState)
				if err != nil {
					return fmt.Errorf("--conntrack-state: %w", err)
				}
				cfg.ConntrackState = abs
			}
			if len(args) == 1 {
				cfg.Database = args[0]
			}
			switch enableDummy {
			case "", "false":
			case "true": // bare --enable-dummy: dummy devices available
				cfg.EnableDummy = true
			case "system":
				cfg.EnableDummy, cfg.DummySystem = true, true
			case "override":
				cfg.EnableDummy, cfg.DummyOverride = true, true
			default:
				return fmt.Errorf("--enable-dummy: unknown mode %q (want system or override)", enableDummy)
			}
			if cfg.Database == "" && program == ovsProgram {
				// Under Open vSwitch's name the daemon is Open vSwitch's
				// client: its DATABASE defaults to the ovsdb-server on
				// RUNDIR/db.sock, which an embedded server would usurp.
				cfg.Database = "unix:" + filepath.Join(cfg.RunDir, "db.sock")
			}
			if cfg.DBFile == "" {
				cfg.DBFile = filepath.Join(cfg.DBDir, "conf.db")
			}
			cfg.Pidfile = resolveOptional(cfg.Pidfile, cfg.RunDir, program+".pid")
			cfg.LogFile = resolveOptional(cfg.LogFile, cfg.LogDir, program+".log")
			return run(cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&configFile, "config", "", "configuration file (YAML, TOML or JSON) with keys rundir, dbdir, logdir, db, db-file, workers, metrics-address, gc-headroom, gc-headroom-min, gc-trim-after, gc-trim-min, socket-group, conntrack-state")
	f.String("rundir", "", "directory for sockets and the pidfile (default $OVS_RUNDIR or /var/run/openvswitch)")
	f.String("dbdir", "", "directory of the embedded database (default $OVS_DBDIR or /etc/openvswitch)")
	f.String("logdir", "", "directory for the log file (default $OVS_LOGDIR or /var/log/openvswitch)")
	f.String("db", "", "use this OVSDB remote (unix:PATH, tcp:HOST:PORT) instead of the embedded server")
	f.String("db-file", "", "embedded database file (default DBDIR/conf.db)")
	f.Int("workers", 1, "poll-mode workers (cores) per datapath")
	f.String("metrics-address", "", "serve Prometheus metrics on http://HOST:PORT/metrics (default off)")
	f.Int("gc-headroom", 25, "let the heap grow by this percentage of its live size between garbage collections (Go's default, 100, keeps twice the live heap resident); overridden by GOGC in the environment")
	f.Int("gc-headroom-min", 64, "but by at least this many MiB (so that a switch with a small heap collects as often as with Go's default)")
	f.Duration("gc-trim-after", 10*time.Second, "return the heap's free memory to the system once no garbage collection has run for this long after one (0: never)")
	f.Int("gc-trim-min", 8, "but only when at least this many MiB of it are free (at least 1), and the daemon allocated less than a quarter of that in the period")
	f.String("socket-group", "", "group (name or number) of the unix sockets, which are mode 0770 (default: the daemon's primary group)")
	f.String("conntrack-state", "", "save the conntrack tables to this file at a planned stop (SIGTERM, exit) and restore them from it at start (default none)")
	f.StringVar(&cfg.Pidfile, "pidfile", "default", "write a pidfile (default RUNDIR/PROGRAM.pid; \"none\" for none)")
	f.Lookup("pidfile").NoOptDefVal = "default"
	f.StringVar(&cfg.LogFile, "log-file", "", "also log to this file (default LOGDIR/PROGRAM.log)")
	f.Lookup("log-file").NoOptDefVal = "default"
	f.StringVar(&cfg.Unixctl, "unixctl", "", "control socket path (default RUNDIR/PROGRAM.PID.ctl; \"none\" for none)")
	f.StringArrayVarP(&cfg.Verbose, "verbose", "v", nil, "vlog spec MODULE:DESTINATION:LEVEL (repeatable); -v alone means dbg everywhere")
	f.Lookup("verbose").NoOptDefVal = "dbg"
	f.BoolVar(&cfg.Detach, "detach", false, "run in the background once ready")
	f.BoolVar(&cfg.NoChdir, "no-chdir", false, "with --detach, do not chdir to /")
	f.StringVar(&enableDummy, "enable-dummy", "", "dummy devices and OpenFlow's debug actions (dummy ports are always available); =system makes system interfaces, and the internal ports of system-type bridges, dummies; =override makes every system and internal interface a dummy")
	f.Lookup("enable-dummy").NoOptDefVal = "true"
	f.StringArrayVar(&cfg.Remotes, "remote", nil, "also serve the embedded database on this remote (repeatable; replaces the default "+DefaultRemote+"): punix:PATH, ptcp:PORT[:IP], pssl:PORT[:IP], unix:PATH, tcp:IP[:PORT], ssl:IP[:PORT] or db:Open_vSwitch,TABLE,COLUMN")
	f.StringVar(&cfg.PrivateKey, "private-key", "", "SSL private key file (default: the SSL table's)")
	f.StringVar(&cfg.Certificate, "certificate", "", "SSL certificate file (default: the SSL table's)")
	f.StringVar(&cfg.CACert, "ca-cert", "", "SSL CA certificate file (default: the SSL table's)")
	f.StringVar(&cfg.SSLProtocols, "ssl-protocols", "", "SSL/TLS versions allowed, e.g. TLSv1.2,TLSv1.3 (default TLS 1.2 and 1.3)")
	f.StringVar(&cfg.SSLCiphers, "ssl-ciphers", "", "OpenSSL cipher suite names allowed for TLS 1.2 and earlier (default: Go's secure suites)")
	f.BoolVarP(&showVersion, "version", "V", false, "print the version and exit")
	f.BoolVar(&cfg.Handover, "handover", false, "take over from the gvs-vswitchd running with this run directory (its ports, listening sockets, database lock, flows, MAC tables and conntrack) without losing a packet; it exits once this one forwards")
	f.StringVar(&cfg.DummyNUMA, "dummy-numa", "", "test NUMA layout: the i-th comma-separated entry is CPU core i's node (PMD threads are placed on it, not pinned)")
	f.BoolVar(&cfg.NoSelfConfinement, "no-self-confinement", false, "let controllers (punix:, unix:) be sockets outside the run directory; by default a punix: controller must be RUNDIR/BRIDGE.* and a unix: one in RUNDIR, as Open vSwitch's")
	f.BoolVar(&cfg.DisableSystemRoute, "disable-system-route", false, "do not read the kernel's routes into the tunnel route table (ovs/route/show); only ovs/route/add routes")
	f.BoolVar(&cfg.DisableSystem, "disable-system", false, "disable the kernel datapath type: bridges of datapath_type system get no kernel devices (their system ports are refused, internal ports are dummies); netdev bridges are unaffected")
	for _, n := range ignoredOVSFlags {
		f.Bool(n, false, "accepted for ovs-vswitchd compatibility; ignored")
		f.Lookup(n).Hidden = true
	}
	for _, n := range ignoredOVSValueFlags {
		f.String(n, "", "accepted for ovs-vswitchd compatibility; ignored")
		f.Lookup(n).Hidden = true
	}
	for _, k := range []string{"rundir", "dbdir", "logdir", "db", "db-file", "workers", "metrics-address", "gc-headroom", "gc-headroom-min", "gc-trim-after", "gc-trim-min", "socket-group", "conntrack-state"} {
		_ = v.BindPFlag(k, f.Lookup(k))
	}
	v.SetEnvPrefix("GVS")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	v.SetDefault("rundir", defaultDir("OVS_RUNDIR", "/var/run/openvswitch"))
	v.SetDefault("dbdir", defaultDir("OVS_DBDIR", "/etc/openvswitch"))
	v.SetDefault("logdir", defaultDir("OVS_LOGDIR", "/var/log/openvswitch"))
	return cmd
}

// resolveOptional turns an optional-path option into a path: "" or "none"
// is none, "default" is dir/name, a relative path is under dir.
func resolveOptional(val, dir, name string) string {
	switch val {
	case "", "none":
		return ""
	case "default":
		return filepath.Join(dir, name)
	}
	if !filepath.IsAbs(val) {
		return filepath.Join(dir, val)
	}
	return val
}

// Main parses args and runs the daemon; it returns the exit status.
func Main(program string, args []string) int {
	cmd := NewCommand(program, func(c *Config) error { return Run(c) })
	cmd.SetArgs(normalizeArgs(args))
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", program, err)
		return 1
	}
	return 0
}
