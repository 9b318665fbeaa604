package backer

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofswitch"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// Self-confinement of a bridge's controllers, as Open vSwitch's
// bridge_configure_remotes: a database client must not make the daemon
// listen on, overwrite or connect to Unix sockets outside its run
// directory. A "punix:" controller must be RUNDIR/BRIDGE.* with no further
// "/", a "unix:" one with a "/" must be in RUNDIR; others are dropped with
// Open vSwitch's error. --no-self-confinement turns the checks off.

// settingsOf is a bridge's OpenFlow settings from its configuration, its
// controllers confined.
func (s *Backer) settingsOf(cfg *bridge.BridgeConfig) ofswitch.Settings {
	return ofswitch.Settings{FailMode: cfg.FailMode, Controllers: s.confinedControllers(cfg.Name, cfg.Controllers),
		RateLimits: rateLimits(cfg), InactivityProbes: inactivityProbes(cfg)}
}

// confinedControllers returns the targets bridge br may use.
func (s *Backer) confinedControllers(br string, targets []string) []string {
	if s.cfg.NoSelfConfinement || s.cfg.RunDir == "" {
		return targets
	}
	out := make([]string, 0, len(targets))
	for _, t := range targets {
		if msg := confineController(s.cfg.RunDir, br, t); msg != "" {
			if log := s.cfg.Logger("bridge"); s.confineLimit.Allow(log, slog.LevelError, time.Now().UnixMilli()) {
				log.Error(msg)
			}
			continue
		}
		out = append(out, t)
	}
	return out
}

// confineController returns Open vSwitch's error for a target bridge br
// may not use, "" for one it may.
func confineController(runDir, br, target string) string {
	switch {
	case strings.HasPrefix(target, "unix:"):
		allowed := "unix:" + runDir + "/"
		if strings.Contains(target, "/") && !equalPathnames(target, allowed) {
			return fmt.Sprintf("bridge %s: Not connecting to socket controller \"%s\" due to possibility for remote exploit.  "+
				"Instead, specify socket in permitted directory \"%s\" or connect to \"unix:%s/%s.mgmt\" (which is always "+
				"available without special configuration).", br, target, allowed, runDir, br)
		}
	case strings.HasPrefix(target, "punix:"):
		allowed := "punix:" + runDir + "/" + br + "."
		if !equalPathnames(target, allowed) || strings.Contains(pathAfter(target, allowed), "/") {
			return fmt.Sprintf("bridge %s: Not adding Unix domain socket controller \"%s\" due to possibility of overwriting "+
				"local files. Instead, specify path in permitted format \"%s*\" or connect to \"unix:%s/%s.mgmt\" (which "+
				"is always available without special configuration).", br, target, allowed, runDir, br)
		}
	}
	return ""
}

// equalPathnames reports whether a starts with prefix, runs of "/" in
// either counting as one (Open vSwitch's equal_pathnames).
func equalPathnames(a, prefix string) bool {
	for prefix != "" {
		switch {
		case a == "" || a[0] != prefix[0]:
			return false
		case a[0] == '/':
			a, prefix = strings.TrimLeft(a, "/"), strings.TrimLeft(prefix, "/")
		default:
			a, prefix = a[1:], prefix[1:]
		}
	}
	return true
}

// pathAfter is a past prefix's length, as Open vSwitch takes the rest of a
// punix target (c->target + strlen(allowed)).
func pathAfter(a, prefix string) string {
	if len(a) < len(prefix) {
		return ""
	}
	return a[len(prefix):]
}
