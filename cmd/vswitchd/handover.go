package vswitchd

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gvs-project/gvs/internal/fdpass"
	"github.com/gvs-project/gvs/internal/statefile"
	"github.com/gvs-project/gvs/internal/unixsock"
	"github.com/gvs-project/gvs/internal/version"
	"github.com/gvs-project/gvs/ovsdb/server"
	"github.com/gvs-project/gvs/unixctl"
	"github.com/gvs-project/gvs/unixctl/vlog"
	"github.com/gvs-project/gvs/vswitchd/backer"
	"github.com/gvs-project/gvs/vswitchd/handover"
)

// The handover between two gvs-vswitchd processes (docs/reliability.md
// "Handover between two processes"). Every daemon listens on
// RUNDIR/PROGRAM.handover (mode 0600). A successor started with the
// same command line plus --handover connects to it and receives the
// kernel ports, the listening sockets (unixsock.Handed: db.sock,
// punix:/ptcp:/pssl: remotes, an explicit --unixctl socket, each
// bridge's .mgmt and .snoop, controller listeners, the metrics
// listener), the database's lock and, as a state file, each bridge's
// OpenFlow state, MAC table and port numbers and each datapath's
// conntrack. It starts as an ordinary daemon would, except that it
// serves the handed sockets, adopts the handed ports as the bridge layer
// adds them, keeps its datapaths paused and its database writes in
// memory until the state is applied, and only then forwards and says
// "done"; the old daemon then exits without closing anything. Any
// failure leaves the old daemon forwarding and the successor exits
// non-zero saying why.

// handoverTimeout bounds a whole handover, each side.
const handoverTimeout = 20 * time.Second

// freezeTimeout bounds the pause of the old daemon's datapaths.
const freezeTimeout = 5 * time.Second

// testReadsVersionEnv is for tests only: a successor with it set
// pretends to read that version of the OpenFlow state sections, so
// that a test can show a refused state leaves the old daemon
// forwarding.
const testReadsVersionEnv = "GVS_TEST_HANDOVER_OPENFLOW_STATE_VERSION"

// Names of the non-socket descriptors in a bundle's listeners.
const (
	listenPrefix = "listen:"
	dbLockPrefix = "dblock:"
)

// handoverPath is the handover socket of the daemon.
func handoverPath(cfg *Config) string {
	return filepath.Join(cfg.RunDir, cfg.Program+".handover")
}

// handoverListener is the running daemon's side: its socket and
// whether a handover succeeded.
type handoverListener struct {
	l    *net.UnixListener
	done chan struct{} // closed once a successor took over
	once sync.Once
}

// listenHandover opens the handover socket (replacing a stale one: the
// pidfile already kept a second daemon out) and serves successors one at
// a time.
func (d *Daemon) listenHandover() error {
	path := handoverPath(d.cfg)
	os.Remove(path)
	l, err := fdpass.Listen(path)
	if err != nil {
		return fmt.Errorf("handover socket: %w", err)
	}
	d.ho = &handoverListener{l: l, done: make(chan struct{})}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		for {
			c, err := fdpass.Accept(l)
			if err != nil {
				return // closed
			}
			err = handover.Give(c, daemonSource{d}, handover.SameFamily(), version.String(), handoverTimeout)
			c.Close()
			if err != nil {
				d.log.Warn(err.Error())
				continue
			}
			d.log.Info("handed over to the successor: exiting without closing ports")
			d.ho.once.Do(func() { close(d.ho.done) })
			return
		}
	}()
	return nil
}

// handedOver is closed once a successor has taken over (never when the
// daemon has no handover socket).
func (d *Daemon) handedOver() <-chan struct{} {
	if d.ho == nil {
		return nil
	}
	return d.ho.done
}

// exitHandedOver ends a daemon whose successor took over: nothing is
// closed (the successor owns the ports and sockets now); only this
// process's own control socket, named after its pid, goes.
func (d *Daemon) exitHandedOver() {
	if d.cfg.Unixctl == "" && d.ctlPath != "" {
		os.Remove(d.ctlPath)
	}
}

// daemonSource is the running daemon as handover.Source.
type daemonSource struct{ d *Daemon }

// frozenDaemon is what Thaw undoes: the database hold, the listeners'
// hold and the backer's freeze.
type frozenDaemon struct {
	release, accept func()
	fr              *backer.Frozen
}

func (s daemonSource) Freeze() (*handover.Bundle, error) {
	d := s.d
	var release func()
	if d.db != nil {
		release = d.db.Hold()
	}
	fr, err := d.sw.Handover().Freeze(freezeTimeout)
	if err != nil {
		if release != nil {
			release()
		}
		return nil, err
	}
	// The successor accepts on the shared listeners from now on.
	accept := d.handed.Hold()
	d.mu.Lock()
	d.frozen = &frozenDaemon{release: release, accept: accept, fr: fr}
	d.mu.Unlock()
	bd := &handover.Bundle{Build: version.String(), Ports: fr.Ports}
	for _, l := range d.handed.Listeners() {
		if l.Path == d.ctlPath && d.cfg.Unixctl == "" {
			continue // named after this process's pid: the successor has its own
		}
		bd.Listeners = append(bd.Listeners, handover.Listener{Name: listenPrefix + l.Path, Fd: l.Fd})
	}
	if d.dbFile != nil {
		if lf := d.dbFile.LockFile(); lf != nil {
			rc, err := lf.SyscallConn()
			if err == nil {
				rc.Control(func(fd uintptr) {
					bd.Listeners = append(bd.Listeners, handover.Listener{Name: dbLockPrefix + d.cfg.DBFile, Fd: int(fd)})
				})
			}
		}
	}
	st, err := statefile.Encode(&statefile.File{GVSVersion: version.String(), Written: time.Now(), Sections: fr.Sections})
	if err != nil {
		s.Thaw()
		return nil, fmt.Errorf("encoding the state: %w", err)
	}
	bd.State = st
	d.log.Info(fmt.Sprintf("handover: frozen: %d ports, %d sockets, %d bytes of state", len(bd.Ports), len(bd.Listeners), len(st)))
	return bd, nil
}

func (s daemonSource) Thaw() {
	d := s.d
	d.mu.Lock()
	f := d.frozen
	d.frozen = nil
	d.mu.Unlock()
	if f == nil {
		return
	}
	f.fr.Thaw()
	if f.release != nil {
		f.release()
	}
	f.accept()
	d.log.Info("handover failed: forwarding again")
}

// takeover is what a successor received, until start has used it.
type takeover struct {
	ports  []handover.Port
	handed *unixsock.Handed
	dbLock *os.File
	state  *statefile.File
	// from is the pid of the daemon handing over (its pidfile's).
	from int
}

// close closes what start did not take.
func (in *takeover) close() {
	in.handed.CloseUnclaimed()
	if in.dbLock != nil {
		in.dbLock.Close()
	}
}

// startTakingOver starts a daemon by a handover from the running one.
func startTakingOver(cfg *Config) (*Daemon, error) {
	from := 0
	if cfg.Pidfile != "" {
		from, _ = unixctl.ReadPidfile(cfg.Pidfile)
	}
	var d *Daemon
	err := handover.Take(handoverPath(cfg), version.String(), func(bd *handover.Bundle) error {
		in, err := newTakeover(bd)
		if err != nil {
			return err
		}
		in.from = from
		d, err = start(cfg, in)
		if err != nil {
			in.close()
		}
		return err
	}, handoverTimeout)
	if err != nil {
		if d != nil {
			d.keepSockets = true
			d.Close()
		}
		logFailure(cfg, err)
		return nil, err
	}
	d.keepSockets = false
	d.handed.Own()
	if err := d.listenHandover(); err != nil {
		d.log.Warn(err.Error())
	}
	return d, nil
}

// logFailure writes why a handover failed to the log file, as an ERR
// line of module vswitchd (the console gets it from Main).
func logFailure(cfg *Config, err error) {
	if cfg.LogFile == "" {
		return
	}
	f := vlog.New(vlog.Options{Program: cfg.Program})
	lg := f.Logger("vswitchd")
	if f.Set("console:off") != nil || f.SetLogFile(cfg.LogFile) != nil {
		return
	}
	lg.Error(err.Error())
	f.CloseFile()
}

// newTakeover sorts a received bundle and checks its state's container
// and versions; on error every descriptor is closed.
func newTakeover(bd *handover.Bundle) (*takeover, error) {
	in := &takeover{ports: bd.Ports, handed: unixsock.NewHanded()}
	for _, l := range bd.Listeners {
		switch {
		case strings.HasPrefix(l.Name, listenPrefix):
			in.handed.Inherit(strings.TrimPrefix(l.Name, listenPrefix), l.Fd)
		case strings.HasPrefix(l.Name, dbLockPrefix) && in.dbLock == nil:
			in.dbLock = os.NewFile(uintptr(l.Fd), strings.TrimPrefix(l.Name, dbLockPrefix))
		default:
			closeFd(l.Fd)
		}
	}
	fail := func(err error) (*takeover, error) {
		in.close()
		for _, p := range bd.Ports {
			for _, fd := range p.Handoff.Fds {
				closeFd(fd)
			}
		}
		return nil, err
	}
	f, err := statefile.Decode(bd.State)
	if err != nil {
		return fail(fmt.Errorf("state from gvs %s refused: %w", bd.Build, err))
	}
	if err := checkStateVersions(f, stateVersions()); err != nil {
		return fail(err)
	}
	in.state = f
	return in, nil
}

// stateVersions are the state section versions this build reads (the
// test-only override applies to the OpenFlow sections).
func stateVersions() map[string]uint16 {
	v := backer.StateVersions()
	if s := os.Getenv(testReadsVersionEnv); s != "" {
		if n, err := strconv.ParseUint(s, 10, 16); err == nil {
			v["openflow/"] = uint16(n)
		}
	}
	return v
}

// checkStateVersions refuses a state with a section this build does
// not read.
func checkStateVersions(f *statefile.File, versions map[string]uint16) error {
	for _, sec := range f.Sections {
		kind, _, _ := strings.Cut(sec.Name, "/")
		want, ok := versions[kind+"/"]
		if !ok {
			return fmt.Errorf("state from gvs %s refused: unknown section %s", f.GVSVersion, sec.Name)
		}
		if sec.Version != want {
			return fmt.Errorf("state from gvs %s refused: section %s has version %d, this gvs (%s) reads version %d",
				f.GVSVersion, sec.Name, sec.Version, version.String(), want)
		}
	}
	return nil
}

// finish completes a successor's start once its bridge layer runs: it
// waits until every handed port is adopted and the bridges match the
// state, applies the state, lets the datapaths forward and takes the
// pidfile.
func (in *takeover) finish(d *Daemon) error {
	end := time.Now().Add(handoverTimeout / 2)
	var last error
	for {
		done, pending, err := d.sw.Handover().AdoptionDone()
		if err != nil {
			return fmt.Errorf("adopting ports: %w", err)
		}
		if done {
			if last = d.sw.Handover().CheckState(in.state, stateVersions()); last == nil {
				break
			}
		} else {
			last = fmt.Errorf("ports not added yet: %s", strings.Join(pending, ", "))
		}
		if time.Now().After(end) {
			return fmt.Errorf("the bridges did not come up as handed over: %w", last)
		}
		time.Sleep(time.Millisecond) // the old daemon is frozen meanwhile
	}
	sum, err := d.sw.Handover().ApplyState(in.state)
	if err != nil {
		return err
	}
	if d.db != nil {
		if err := d.db.FlushDeferred(); err != nil {
			return err
		}
	}
	d.sw.Handover().ResumeDatapaths()
	if unclaimed := in.handed.CloseUnclaimed(); len(unclaimed) > 0 {
		d.log.Info("handover: closed handed sockets nothing listens on", "paths", strings.Join(unclaimed, " "))
	}
	if d.cfg.Pidfile != "" {
		p, err := unixctl.TakePidfile(d.cfg.Pidfile, in.from)
		if err != nil {
			return err
		}
		d.pid = p
	}
	d.log.Info(fmt.Sprintf("handover: took over %d ports from gvs %s: %s", len(in.ports), in.state.GVSVersion, sum))
	return nil
}

// openDatabase opens the embedded database's file, with the lock handed
// over when there is one.
func (d *Daemon) openDatabase(in *takeover) (*server.Database, error) {
	if in == nil || in.dbLock == nil {
		db, _, err := server.OpenDatabaseFile(d.cfg.DBFile)
		return db, err
	}
	lock := in.dbLock
	db, _, err := server.OpenDatabaseFileLocked(d.cfg.DBFile, lock)
	if err != nil {
		return nil, fmt.Errorf("with the handed lock: %w", err)
	}
	in.dbLock = nil  // the database's now
	db.DeferWrites() // nothing written until the handover succeeded (finish)
	return db, nil
}

func closeFd(fd int) { os.NewFile(uintptr(fd), "").Close() }
