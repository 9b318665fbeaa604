package backer

import (
	"context"
	"errors"
	"log/slog"
	"strings"
)

// portErrors remembers the error last logged for each interface that
// could not be added, by "bridge/interface", so that a failure is logged
// once, not on every reconciliation. It is guarded by the backer's mu.
type portErrors struct {
	// logger is Config.Logger.
	logger func(module string) *slog.Logger
	last   map[string]string
}

// log logs why an interface could not be added, in Open
// vSwitch's words and at its level: a patch port's configuration errors
// at ERR (module netdev_vport), every other failure ("could not open
// network device eth99 (No such device)", "could not add network device
// ... to ofproto (...)") at WARN (module bridge). Interface.error holds
// the same text; every Open vSwitch tool points the user at this log.
//
// gvs reconciles on every database change and every few seconds, so a
// failure is logged when it first happens or its reason changes, not on
// each retry. A nil err (the interface was added) forgets the failure.
// Called with the switch's mu held.
func (pe *portErrors) log(bname, iface string, err error) {
	key := bname + "/" + iface
	if err == nil {
		delete(pe.last, key)
		return
	}
	msg := err.Error()
	if pe.last[key] == msg {
		return
	}
	if pe.last == nil {
		pe.last = map[string]string{}
	}
	pe.last[key] = msg
	var le *loggedError
	if errors.As(err, &le) { // afxdp.go
		for _, l := range le.lines {
			pe.logger(l.module).Log(context.Background(), l.level, l.msg)
		}
		if strings.Contains(msg, ": could not set configuration (") {
			pe.logger("netdev").Warn(msg)
			return
		}
	}
	if strings.Contains(msg, ": patch ") {
		pe.logger("netdev_vport").Error(msg)
		return
	}
	pe.logger("bridge").Warn(msg)
}

// forget drops the remembered failures of a bridge's
// interfaces that are no longer configured, so that one added again is
// logged again. Called with the switch's mu held.
func (pe *portErrors) forget(bname string, configured map[string]bool) {
	prefix := bname + "/"
	for key := range pe.last {
		if name, ok := strings.CutPrefix(key, prefix); ok && !configured[name] {
			delete(pe.last, key)
		}
	}
}
