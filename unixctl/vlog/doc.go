// Package vlog is gvs's logging facility in the shape of Open vSwitch's
// vlog: log/slog loggers per module, each with a level per destination
// (console, syslog, file) that can be changed while the daemon runs
// through the vlog/* unixctl commands, and lines formatted with Open
// vSwitch's pattern language so that tools reading ovs-vswitchd.log read
// gvs's log too.
//
// # Overview
//
// A [Facility] is owned by the daemon (there is no global state). The
// daemon asks it for one *slog.Logger per module ([Facility.Logger]);
// the handler behind each logger checks the module's levels with atomic
// loads, so a disabled debug call costs about nothing. Levels are Open
// vSwitch's: off, emer, err, warn, info, dbg; slog's Error, Warn, Info and
// Debug map to err, warn, info and dbg, and [LevelEmer] to emer.
//
// [Facility.RegisterCommands] adds vlog/list, vlog/set, vlog/list-pattern,
// vlog/reopen and vlog/close to an unixctl.Registry. vlog/set accepts Open
// vSwitch's spec syntax ([Facility.Set]) with its error texts, and the
// list commands print exactly what ovs-vswitchd prints.
//
// # Thread-safety
//
// Every method may be called from any goroutine. Lines are written whole,
// one at a time.
//
// # Imports
//
// The standard library and unixctl (for registration only); nothing
// else of gvs (tests/deps_test.go).
package vlog
