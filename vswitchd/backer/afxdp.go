package backer

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/afxdp"
	"github.com/gvs-project/gvs/internal/syserr"
)

// logLine is a message an interface's failure logs before its error.
type logLine struct {
	module string
	level  slog.Level
	msg    string
}

// loggedError is a port failure that comes with the lines Open vSwitch
// logs on the way to it (an AF_XDP port's mode attempts), logged with the
// error by portErrors.log, once per distinct failure.
type loggedError struct {
	msg   string
	lines []logLine
}

func (e *loggedError) Error() string { return e.msg }

// afxdpOptions reads an afxdp interface's options as Open vSwitch does:
// n_rxq (an integer, at least 1, at most 16), xdp-mode (a mode name in
// any case, best-effort by default), use-need-wakeup (true unless
// "false").
func afxdpOptions(name string, opts map[string]string) (afxdp.Config, error) {
	cfg := afxdp.Config{Name: name, RxQueues: 1, NeedWakeup: true}
	if v, ok := opts["n_rxq"]; ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			cfg.RxQueues = max(n, 1)
		}
	}
	bad := func(msg string) (afxdp.Config, error) {
		return cfg, &loggedError{msg: fmt.Sprintf("%s: could not set configuration (Invalid argument)", name),
			lines: []logLine{{"netdev_afxdp", slog.LevelError, msg}}}
	}
	if cfg.RxQueues > afxdp.MaxQueues {
		return bad(fmt.Sprintf("%s: Too big 'n_rxq' (%d > %d).", name, cfg.RxQueues, afxdp.MaxQueues))
	}
	if v, ok := opts["xdp-mode"]; ok {
		m, ok := afxdp.ParseMode(v)
		if !ok {
			return bad(fmt.Sprintf("%s: Incorrect xdp-mode (%s).", name, v))
		}
		cfg.Mode = m
	}
	if v, ok := opts["use-need-wakeup"]; ok {
		cfg.NeedWakeup = !strings.EqualFold(v, "false")
	}
	return cfg, nil
}

// openAFXDP opens an afxdp interface, logging in Open vSwitch's words
// the mode it sets and, for best-effort, the one it ends up using.
func (d *devices) openAFXDP(name string, opts map[string]string) (*afxdp.Device, error) {
	cfg, err := afxdpOptions(name, opts)
	if err != nil {
		return nil, err
	}
	log := d.logger("netdev_afxdp")
	var lines []logLine
	cfg.Failed = func(m afxdp.Mode, q int, err error) {
		// best-effort's early attempts are debug-level, as in Open vSwitch.
		lvl := slog.LevelError
		if cfg.Mode == afxdp.ModeBestEffort && m != afxdp.ModeGeneric {
			lvl = slog.LevelDebug
		}
		lines = append(lines,
			logLine{"netdev_afxdp", lvl, fmt.Sprintf("xsk_socket__create failed (%s) mode: %s, use-need-wakeup: %t, qid: %d", syserr.Text(errnoOf(err)), m, cfg.NeedWakeup, q)},
			logLine{"netdev_afxdp", lvl, fmt.Sprintf("%s: Failed to create AF_XDP socket on queue %d in %s mode.", name, q, m)})
		if cfg.Mode != afxdp.ModeBestEffort || q > 0 {
			lines = append(lines, logLine{"netdev_afxdp", slog.LevelError, fmt.Sprintf("%s: Failed to create AF_XDP socket on queue %d.", name, q)})
		}
	}
	if _, err := net.InterfaceByName(name); err != nil {
		return nil, fmt.Errorf("could not open network device %s (No such device)", name)
	}
	setting := logLine{"netdev_afxdp", slog.LevelInfo, fmt.Sprintf("%s: Setting XDP mode to %s.", name, cfg.Mode)}
	lines = append(lines, setting)
	dev, err := afxdp.Open(cfg)
	if err == nil {
		log.Info(setting.msg)
		if cfg.Mode == afxdp.ModeBestEffort {
			log.Info(fmt.Sprintf("%s: %s XDP mode will be in use.", name, dev.ModeInUse()))
		}
		return dev, nil
	}
	if errors.Is(err, unix.ENODEV) {
		return nil, fmt.Errorf("could not open network device %s (No such device)", name)
	}
	if cfg.Mode == afxdp.ModeBestEffort {
		lines = append(lines, logLine{"netdev_afxdp", slog.LevelError, fmt.Sprintf("%s: Failed to detect suitable XDP mode.", name)})
	}
	lines = append(lines, logLine{"netdev_afxdp", slog.LevelError, fmt.Sprintf("%s: AF_XDP device reconfiguration failed.", name)})
	return nil, &loggedError{msg: fmt.Sprintf("could not add network device %s to ofproto (Invalid argument)", name), lines: lines}
}

// errnoOf is the system error under err (EINVAL if there is none).
func errnoOf(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EINVAL
}

// closing logs, as Open vSwitch does, that an AF_XDP port's program is
// going away with the port (closing its device detaches it).
func (d *devices) closing(dev netdev.Device) {
	if x, ok := dev.(*afxdp.Device); ok {
		d.logger("netdev_afxdp").Info(fmt.Sprintf("%s: Removing xdp program.", x.Name()))
	}
}

// afxdpStatistics gives an AF_XDP port's Interface.statistics Open
// vSwitch's keys: its sockets' kernel counters (xsk_queue_N_*) added,
// and no rx_dropped, rx_errors or tx_errors, which Open vSwitch's afxdp
// ports leave unset.
func afxdpStatistics(dev netdev.Device, st map[string]int64) {
	x, ok := dev.(*afxdp.Device)
	if !ok {
		return
	}
	for k, v := range x.CustomStats() {
		st[k] = v
	}
	delete(st, "rx_dropped")
	delete(st, "rx_errors")
	delete(st, "tx_errors")
}
