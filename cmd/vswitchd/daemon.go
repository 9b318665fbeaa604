package vswitchd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/internal/unixsock"
	"github.com/gvs-project/gvs/internal/version"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ovsdb/bridge"
	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/server"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
	"github.com/gvs-project/gvs/unixctl"
	"github.com/gvs-project/gvs/unixctl/coverage"
	"github.com/gvs-project/gvs/unixctl/vlog"
	"github.com/gvs-project/gvs/vswitchd/backer"
	"github.com/gvs-project/gvs/vswitchd/ctstate"
	"github.com/gvs-project/gvs/vswitchd/dpctl"
	"github.com/gvs-project/gvs/vswitchd/metrics"
)

// detachEnv carries the descriptor on which a detached child reports
// readiness to the parent that started it.
const detachEnv = "GVS_DETACH_READY_FD"

// Daemon is a running gvs-vswitchd.
type Daemon struct {
	cfg  *Config
	logs *vlog.Facility
	log  *slog.Logger
	cov  *coverage.Registry
	reg  *unixctl.Registry
	ctl  *unixctl.Server
	pid  *unixctl.Pidfile
	db   *server.Server
	dbc  *client.Client
	sw   *backer.Backer
	// dpctl are the datapath's commands; it owns the datapaths
	// dpctl/add-dp creates.
	dpctl *dpctl.Commands
	mx    *metrics.Server // nil unless Config.MetricsAddress is set
	// tls is the SSL settings of OpenFlow connections and database
	// remotes (remotes.go).
	tls ofconn.TLSSettings

	ctlPath string
	dbSock  string
	// sockPerm is the mode and group of every unix socket the daemon
	// listens on (sockperm.go).
	sockPerm unixsock.Perm

	mu sync.Mutex
	// remotesPending is set when the external database could not be
	// reached at start: the remotes start once it is (startBridges).
	remotesPending bool
	// ct is the --conntrack-state file: read at start and applied to
	// each datapath as it is created, written at a planned stop.
	ct *ctstate.Store
	// started is set once Start succeeded: only then does Close save
	// the conntrack state.
	started bool

	// Handover (handover.go): the listening sockets that can be handed
	// over, the database file (its lock), the handover socket, what a
	// failed handover thaws, and keepSockets while a successor's start
	// may still fail (the socket files are the predecessor's).
	handed      *unixsock.Handed
	dbFile      *server.Database
	ho          *handoverListener
	frozen      *frozenDaemon
	keepSockets bool
	takingOver  bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Run runs the daemon until SIGTERM, SIGINT or `exit`.
func Run(cfg *Config) error {
	if cfg.Detach && os.Getenv(detachEnv) == "" {
		return detach(cfg)
	}
	d, err := Start(cfg)
	if err != nil {
		return err
	}
	if fd := os.Getenv(detachEnv); fd != "" {
		if n, err := strconv.Atoi(fd); err == nil {
			f := os.NewFile(uintptr(n), "ready")
			f.Write([]byte{1})
			f.Close()
		}
		closeStandardFDs()
	}
	// Logged once detached, so that the console of whoever started the
	// daemon stays silent, as Open vSwitch's test suite requires.
	d.log.Info(d.cfg.Program+" started", "version", version.String(), "rundir", cfg.RunDir, "database", d.databaseName())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	select {
	case s := <-sig:
		d.log.Info("received signal, exiting", "signal", s.String())
	case <-d.ctx.Done():
	case <-d.handedOver():
		d.exitHandedOver()
		return nil
	}
	return d.Close()
}

// closeStandardFDs points stdin, stdout and stderr at /dev/null once a
// detached daemon is ready, as Open vSwitch's daemonize does, so that
// whoever started it (a shell's command substitution, a test harness)
// is not kept waiting on the pipes.
func closeStandardFDs() {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return
	}
	for fd := 0; fd <= 2; fd++ {
		unix.Dup3(int(null.Fd()), fd, 0)
	}
	null.Close()
}

// detach starts the daemon again in a new session and returns once the
// child reports that it is ready (its sockets exist), as Open vSwitch's
// --detach does.
func detach(cfg *Config) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, os.Args[1:]...)
	cmd.Args[0] = os.Args[0]
	cmd.Env = append(os.Environ(), detachEnv+"=3")
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stderr = os.Stderr // start-up errors show before the parent exits
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if !cfg.NoChdir {
		cmd.Dir = "/"
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("detach: %w", err)
	}
	w.Close()
	buf := make([]byte, 1)
	if n, _ := r.Read(buf); n != 1 {
		cmd.Wait()
		return errors.New("detach: the daemon exited before it was ready")
	}
	return nil
}

// Start brings the daemon up: directories, logging, pidfile, database,
// control socket. It returns once every socket accepts connections.
func Start(cfg *Config) (*Daemon, error) {
	if cfg.Handover {
		return startTakingOver(cfg) // handover.go
	}
	d, err := start(cfg, nil)
	if err != nil {
		return nil, err
	}
	if err := d.listenHandover(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// start starts the daemon, from scratch or (in not nil) with what a
// predecessor handed over.
func start(cfg *Config, in *takeover) (*Daemon, error) {
	d := &Daemon{cfg: cfg, keepSockets: in != nil, takingOver: in != nil}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	var dirs dirMaker
	ok := false
	defer func() {
		if !ok {
			dirs.undo() // after d.Close below: the sockets are gone by then
		}
	}()
	if err := prepareFiles(cfg, &dirs); err != nil { // paths.go
		return nil, err
	}
	d.logs = vlog.New(vlog.Options{Program: cfg.Program})
	if cfg.LogFile != "" {
		if err := d.logs.SetLogFile(cfg.LogFile); err != nil {
			return nil, fmt.Errorf("log file %s: %w", cfg.LogFile, reason(err))
		}
	}
	d.log = d.logs.Logger("vswitchd")
	for _, m := range ovsLogModules {
		d.logs.Module(m)
	}
	for _, spec := range cfg.Verbose {
		// Scripts written for Open vSwitch name its modules (-vvconn,
		// -vofproto_dpif): a module gvs does not have is not fatal.
		if err := d.logs.Set(spec); err != nil {
			d.log.Warn("ignoring -v option", "spec", spec, "err", err)
		}
	}
	defer func() {
		if !ok {
			d.Close()
		}
	}()
	perm, err := socketPerm(cfg.SocketGroup)
	if err != nil {
		return nil, err
	}
	d.handed = unixsock.NewHanded()
	if in != nil {
		d.handed = in.handed
	}
	perm.Handed = d.handed
	d.sockPerm = perm
	if cfg.Pidfile != "" && in == nil { // a successor takes it once forwarding (handover.go)
		p, err := unixctl.CreatePidfile(cfg.Pidfile)
		if err != nil {
			return nil, err
		}
		d.pid = p
	}
	if err := d.startDatabase(in); err != nil {
		return nil, err
	}
	if err := d.startControl(); err != nil {
		return nil, err
	}
	d.startHeapGoal()
	d.cov = coverage.New()
	d.wg.Add(1)
	go func() { defer d.wg.Done(); d.cov.Run(d.ctx) }()
	if err := d.startRemotes(); err != nil {
		return nil, err
	}
	d.ct = ctstate.Load(cfg.ConntrackState, d.log) // before any datapath exists
	numa := numaLayout(cfg.DummyNUMA, d.logs.Logger("ovs_numa"))
	d.sw = backer.New(d.ctx, backer.Config{
		RunDir: cfg.RunDir, SocketPerm: d.sockPerm,
		DisableSystem: cfg.DisableSystem, DisableSystemRoute: cfg.DisableSystemRoute, NoSelfConfinement: cfg.NoSelfConfinement, DummyOverride: cfg.DummyOverride, DummySystem: cfg.DummySystem, EnableDummy: cfg.EnableDummy,
		Workers:         cfg.Workers,
		NUMA:            numa,
		PinPMDs:         cfg.DummyNUMA == "",
		Logger:          d.logs.Logger,
		Count:           func(name string) { d.cov.Counter(name).Inc() },
		Counter:         func(name string) odp.Counter { return d.cov.Counter(name) },
		TLS:             d.TLS(),
		OFDebug:         vconnLog{d.logs.Logger("vconn")},
		DatapathCreated: d.ct.Restore,
	})
	if in != nil {
		d.sw.Handover().Adopt(in.ports)
	}
	d.dpctl = dpctl.New(d.sw, dpctl.Config{Program: cfg.Program, DummyOverride: cfg.DummyOverride})
	if err := d.registerCommands(); err != nil {
		return nil, err
	}
	for _, c := range append(d.sw.TunnelCommands(), d.sw.DPFeatureCommands()...) {
		if err := d.reg.Register(c.Name, c.Usage, c.MinArgs, c.MaxArgs, unixctl.Handler(c.Run)); err != nil {
			return nil, err
		}
	}
	if err := d.startBridges(); err != nil {
		return nil, err
	}
	if err := d.startMetrics(); err != nil {
		return nil, err
	}
	if in != nil {
		if err := in.finish(d); err != nil { // handover.go
			return nil, err
		}
	}
	ok = true
	d.started = true
	return d, nil
}

func (d *Daemon) databaseName() string {
	if d.cfg.Database != "" {
		return d.cfg.Database
	}
	return "unix:" + d.dbSock + " (embedded, " + d.cfg.DBFile + ")"
}

// startDatabase opens (or creates from the embedded Open_vSwitch schema)
// the database file and serves it on RUNDIR/db.sock, unless an external
// database was given.
func (d *Daemon) startDatabase(in *takeover) error {
	if d.cfg.Database != "" {
		return nil
	}
	var db *server.Database
	if _, err := os.Stat(d.cfg.DBFile); errors.Is(err, os.ErrNotExist) {
		db, err = server.CreateDatabaseFile(d.cfg.DBFile, vswitch.SchemaJSON)
		if err != nil {
			return fmt.Errorf("creating database %s: %w", d.cfg.DBFile, err)
		}
	} else {
		db, err = d.openDatabase(in)
		if err != nil {
			return fmt.Errorf("opening database %s: %w", d.cfg.DBFile, err)
		}
	}
	d.dbFile = db
	d.db = server.New()
	d.db.SetLimits(server.Limits{StallTimeout: stallTimeoutFromEnv()})
	dblog := d.logs.Logger("ovsdb_server")
	d.db.SetErrorHook(func(err error) { dblog.Warn("connection error", "err", err) })
	if err := d.db.AddDatabase(db); err != nil {
		return err
	}
	sock := filepath.Join(d.cfg.RunDir, "db.sock")
	ln, err := listenUnix(sock, d.sockPerm)
	if err != nil {
		return err
	}
	d.dbSock = sock // removed at exit only once it is ours
	d.wg.Add(1)
	go func() { defer d.wg.Done(); d.db.Serve(ln) }()
	return nil
}

// stallTimeoutFromEnv reads GVS_OVSDB_STALL_TIMEOUT (a Go duration): how
// long a database client may stay behind on its monitors with nothing
// read before it is dropped; 0 (unset) is the server's default, 60 s.
func stallTimeoutFromEnv() time.Duration {
	v, err := time.ParseDuration(os.Getenv("GVS_OVSDB_STALL_TIMEOUT"))
	if err != nil {
		return 0
	}
	return v
}

// listenUnix listens on a unix socket path with the permissions p,
// replacing a stale socket file left by a process that died (never a live
// one: the pidfile lock guards against two daemons).
func listenUnix(path string, p unixsock.Perm) (net.Listener, error) {
	return unixsock.Listen(path, p)
}

func (d *Daemon) startControl() error {
	d.reg = unixctl.NewRegistry(unixctl.VersionString(d.cfg.Program, "gvs", version.String()))
	d.ctl = unixctl.NewServer(d.reg, d.logs.Logger("unixctl"))
	var path string
	switch d.cfg.Unixctl {
	case "none":
		return nil
	case "":
		path = unixctl.SocketPath(d.cfg.RunDir, d.cfg.Program, os.Getpid())
	default:
		path = unixctl.ResolvePath(d.cfg.RunDir, d.cfg.Unixctl)
	}
	ln, err := unixctl.ListenPerm(path, d.sockPerm)
	if err != nil {
		return err
	}
	d.ctlPath = path // removed at exit only once it is ours
	d.wg.Add(1)
	go func() { defer d.wg.Done(); d.ctl.Serve(ln) }()
	return nil
}

// ovsdbLock is the OVSDB lock that keeps two switch daemons from
// configuring from one database at once (Open vSwitch's name, so that
// gvs and Open vSwitch's daemon also exclude each other).
const ovsdbLock = "ovs_vswitchd"

// startBridges connects to the database (the embedded one over its socket,
// like any client) and starts the bridge layer once it holds the
// ovs_vswitchd lock. An external database that cannot be reached yet is
// retried in the background, as Open vSwitch's daemon keeps trying
// (ovs-vswitchd.at "invalid database path").
func (d *Daemon) startBridges() error {
	target := d.cfg.Database
	if target == "" {
		target = "unix:" + d.dbSock
	}
	ctx, cancel := context.WithTimeout(d.ctx, 10*time.Second)
	c, err := client.Dial(ctx, target)
	cancel()
	if err != nil {
		if d.cfg.Database == "" {
			return fmt.Errorf("connecting to %s: %w", target, err)
		}
		d.log.Info(fmt.Sprintf("%s: connection attempt failed (%v), retrying", target, err))
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			c := d.redial(target)
			if c == nil {
				return
			}
			if d.remotesPending {
				if err := d.startRemotes(); err != nil {
					d.log.Info("remotes: " + err.Error())
				}
			}
			d.runBridges(c)
		}()
		return nil
	}
	d.setDBClient(c)
	d.wg.Add(1)
	go func() { defer d.wg.Done(); d.runBridges(c) }()
	return nil
}

// redial connects to target with backoff (1 s doubling to 8 s) until it
// succeeds or the daemon stops (nil).
func (d *Daemon) redial(target string) *client.Client {
	wait := time.Second
	for {
		select {
		case <-d.ctx.Done():
			return nil
		case <-time.After(wait):
		}
		ctx, cancel := context.WithTimeout(d.ctx, 10*time.Second)
		c, err := client.Dial(ctx, target)
		cancel()
		if err == nil {
			d.log.Info(target + ": connected")
			if !d.setDBClient(c) {
				c.Close()
				return nil
			}
			return c
		}
		wait = min(2*wait, 8*time.Second)
	}
}

// setDBClient records the database connection for Close; false if the
// daemon is already stopping.
func (d *Daemon) setDBClient(c *client.Client) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx.Err() != nil {
		return false
	}
	d.dbc = c
	return true
}

// runBridges takes the ovs_vswitchd lock, waiting while another daemon
// holds it, and runs the bridge layer until the daemon stops.
func (d *Daemon) runBridges(c *client.Client) {
	take := c.Lock
	if d.takingOver {
		// The predecessor's session still holds it (an external
		// database); it exits once this daemon forwards.
		take = c.Steal
	}
	lock, err := take(d.ctx, ovsdbLock)
	if err != nil {
		if d.ctx.Err() == nil {
			d.log.Error("requesting the " + ovsdbLock + " database lock: " + err.Error())
		}
		return
	}
	if !lock.Held() {
		d.log.Error(fmt.Sprintf("another %s process is running, disabling this process (pid %d) until it goes away", d.cfg.Program, os.Getpid()))
		if err := lock.Wait(d.ctx); err != nil {
			return
		}
	}
	info := bridge.Info{
		OVSVersion:    version.String(),
		DatapathTypes: []string{"dummy", "netdev", "system"},
		IfaceTypes:    []string{"dummy", "geneve", "internal", "patch", "system", "vxlan"},
		Capabilities:  dpnetdev.Capabilities(),
	}
	if d.cfg.DisableSystem {
		// As Open vSwitch with --disable-system: no system datapath type.
		info.DatapathTypes = []string{"dummy", "netdev"}
	}
	run := bridge.NewRunner(c, d.sw, info, d.logs.Logger("bridge"))
	if err := run.Run(d.ctx); err != nil && d.ctx.Err() == nil {
		d.log.Error("bridge layer stopped", "err", err)
	}
}

// Datapath returns the datapath of a type, creating it on first use
// (tests reach the datapath through it).
func (d *Daemon) Datapath(typ string) *dpnetdev.Datapath { return d.sw.Datapath(typ) }

// datapaths returns the bridges' datapaths sorted by name.
func (d *Daemon) datapaths() []*dpnetdev.Datapath {
	if d.sw == nil {
		return nil
	}
	return d.sw.Datapaths()
}

// Exit asks the daemon to stop (the `exit` command).
func (d *Daemon) Exit() { d.cancel() }

// Close stops everything and removes the sockets and pidfile.
func (d *Daemon) Close() error {
	d.cancel()
	if d.ho != nil {
		d.ho.l.Close() // removes the handover socket
	}
	if d.mx != nil {
		d.mx.Close()
	}
	if d.ctl != nil {
		d.ctl.Close()
	}
	d.mu.Lock()
	dbc := d.dbc
	d.mu.Unlock()
	if dbc != nil {
		dbc.Close()
	}
	if d.db != nil {
		d.db.Close()
	}
	d.wg.Wait()
	if d.sw != nil {
		d.sw.Close()
	}
	if d.started {
		d.ct.Save(d.datapaths())
	}
	if d.sw != nil {
		d.sw.CloseDatapaths()
	}
	if d.dpctl != nil {
		d.dpctl.Close()
	}
	if d.ctlPath != "" {
		os.Remove(d.ctlPath)
	}
	if d.dbSock != "" && !d.keepSockets {
		os.Remove(d.dbSock)
	}
	if d.pid != nil {
		d.pid.Remove()
	}
	if d.logs != nil {
		d.logs.CloseFile()
	}
	return nil
}

// waitSocket waits until a unix socket accepts connections (tests).
func waitSocket(path string, timeout time.Duration) error {
	end := time.Now().Add(timeout)
	for {
		c, err := net.Dial("unix", path)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(end) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}
