package vlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/unixctl"
)

// Level is an Open vSwitch log level. A message is written to a
// destination when its level is at most the destination's level, so Off
// writes nothing.
type Level int32

// The levels, least to most verbose.
const (
	Off Level = iota
	Emer
	Err
	Warn
	Info
	Dbg
	numLevels
)

var levelNames = [numLevels]string{"off", "emer", "err", "warn", "info", "dbg"}

// rfc5424 is each level's syslog severity (Open vSwitch sends info as
// notice).
var rfc5424 = [numLevels]int{0, 1, 3, 4, 5, 7}

func (l Level) String() string {
	if l >= 0 && l < numLevels {
		return levelNames[l]
	}
	return fmt.Sprintf("level(%d)", int32(l))
}

// LevelEmer is the slog level that maps to emer.
const LevelEmer = slog.Level(12)

// FromSlog maps a slog level to a vlog level.
func FromSlog(l slog.Level) Level {
	switch {
	case l >= LevelEmer:
		return Emer
	case l >= slog.LevelError:
		return Err
	case l >= slog.LevelWarn:
		return Warn
	case l >= slog.LevelInfo:
		return Info
	}
	return Dbg
}

// Destination is where log lines go.
type Destination int

// The destinations, in Open vSwitch's order.
const (
	Syslog Destination = iota
	Console
	File
	numDests
)

var destNames = [numDests]string{"syslog", "console", "file"}

func (d Destination) String() string {
	if d >= 0 && d < numDests {
		return destNames[d]
	}
	return fmt.Sprintf("destination(%d)", int(d))
}

// DefaultPatterns are Open vSwitch's default line formats per destination.
var defaultPatterns = [numDests]string{
	Syslog:  "ovs|%05N|%c%T|%p|%m",
	Console: "%D{%Y-%m-%dT%H:%M:%SZ}|%05N|%c%T|%p|%m",
	File:    "%D{%Y-%m-%dT%H:%M:%S.###Z}|%05N|%c%T|%p|%m",
}

const syslogPrefix = "<%B> %D{%h %e %T} %E %A:"

// facilities are the syslog facility names and codes.
var facilities = map[string]int{
	"kern": 0, "user": 1, "mail": 2, "daemon": 3, "auth": 4, "syslog": 5, "lpr": 6, "news": 7,
	"uucp": 8, "clock": 9, "authpriv": 10, "ftp": 11, "ntp": 12, "audit": 13, "alert": 14,
	"clock2": 15, "local0": 16, "local1": 17, "local2": 18, "local3": 19, "local4": 20,
	"local5": 21, "local6": 22, "local7": 23,
}

// Options configure a Facility.
type Options struct {
	Program string           // %A; default "gvs-vswitchd"
	Console io.Writer        // console destination; nil means os.Stderr
	Syslog  io.Writer        // syslog destination, one write per line; nil drops syslog lines
	Level   Level            // initial level of every module and destination; 0 means Info
	Now     func() time.Time // when set, stamps every line instead of the record's time (tests)
}

// Facility is a set of log modules with their levels, patterns and
// outputs.
type Facility struct {
	opts       Options
	fixedClock bool
	start      time.Time
	seq        atomic.Uint64
	host       string
	pid        int
	defLevel   Level

	mu       sync.Mutex
	modules  map[string]*Module    // guarded by mu
	patterns [numDests]string      // guarded by mu
	facility int                   // guarded by mu
	filePath string                // guarded by mu
	file     *os.File              // guarded by mu
	sinks    [numDests]io.Writer   // guarded by mu; nil = no output
	hasSink  [numDests]atomic.Bool // mirrors sinks != nil for lock-free Enabled
}

// New returns a facility with no modules.
func New(opts Options) *Facility {
	if opts.Program == "" {
		opts.Program = "gvs-vswitchd"
	}
	if opts.Console == nil {
		opts.Console = os.Stderr
	}
	fixedClock := opts.Now != nil
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Level == Off {
		opts.Level = Info
	}
	host, _ := os.Hostname()
	f := &Facility{
		opts: opts, fixedClock: fixedClock, start: opts.Now(), host: host, pid: os.Getpid(), defLevel: opts.Level,
		modules: make(map[string]*Module), patterns: defaultPatterns, facility: facilities["daemon"],
	}
	f.setSink(Console, opts.Console)
	if opts.Syslog != nil {
		f.setSink(Syslog, opts.Syslog)
	}
	return f
}

// guarded by f.mu (or during construction)
func (f *Facility) setSink(d Destination, w io.Writer) {
	f.sinks[d] = w
	f.hasSink[d].Store(w != nil)
}

// Module is one named log module.
type Module struct {
	name   string
	f      *Facility
	levels [numDests]atomic.Int32
}

// Name returns the module's name.
func (m *Module) Name() string { return m.name }

// Level returns the module's level at d.
func (m *Module) Level(d Destination) Level { return Level(m.levels[d].Load()) }

// Module returns the module called name, creating it at the default level.
func (f *Facility) Module(name string) *Module {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.modules[name]
	if !ok {
		m = &Module{name: name, f: f}
		for d := range m.levels {
			m.levels[d].Store(int32(f.defLevel))
		}
		f.modules[name] = m
	}
	return m
}

// Logger returns a logger writing as module name.
func (f *Facility) Logger(name string) *slog.Logger {
	return slog.New(&handler{m: f.Module(name)})
}

// Modules returns the module names, sorted.
func (f *Facility) Modules() []string {
	f.mu.Lock()
	names := make([]string, 0, len(f.modules))
	for n := range f.modules {
		names = append(names, n)
	}
	f.mu.Unlock()
	sort.Strings(names)
	return names
}

// SetLevel sets module m (nil: every module) at destination d (-1: all)
// to level l.
func (f *Facility) SetLevel(m *Module, d Destination, l Level) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, mod := range f.modules {
		if m != nil && mod != m {
			continue
		}
		for dd := range numDests {
			if d < 0 || d == dd {
				mod.levels[dd].Store(int32(l))
			}
		}
	}
}

// SetPattern sets destination d's (-1: all) line format. An empty pattern
// writes empty lines, as in Open vSwitch ("PATTERN:file" with nothing after).
func (f *Facility) SetPattern(d Destination, pattern string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for dd := range numDests {
		if d < 0 || d == dd {
			f.patterns[dd] = pattern
		}
	}
}

// SetLogFile starts logging to path (appending), replacing any previous
// file. An empty path stops file logging and forgets the name.
func (f *Facility) SetLogFile(path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if path == "" {
		f.closeFile()
		f.filePath = ""
		return nil
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640) // less the umask, as Open vSwitch
	if err != nil {
		return fmt.Errorf("vlog: opening log file: %w", err)
	}
	f.closeFile()
	f.filePath, f.file = path, fh
	f.setSink(File, fh)
	return nil
}

// ErrNoLogFile is returned by Reopen when no log file was configured.
var ErrNoLogFile = errors.New("Logging to file not configured")

// Reopen reopens the log file (after rotation).
func (f *Facility) Reopen() error {
	f.mu.Lock()
	path := f.filePath
	f.mu.Unlock()
	if path == "" {
		return ErrNoLogFile
	}
	return f.SetLogFile(path)
}

// CloseFile stops writing to the log file until Reopen.
func (f *Facility) CloseFile() {
	f.mu.Lock()
	f.closeFile()
	f.mu.Unlock()
}

// guarded by f.mu
func (f *Facility) closeFile() {
	if f.file != nil {
		f.file.Close()
		f.file = nil
	}
	f.setSink(File, nil)
}

// Set applies one vlog/set spec (Open vSwitch's syntax): words separated
// by spaces, commas or colons, naming at most one module, destination and
// level ("any" for all; defaults: every module, every destination, dbg);
// or "PATTERN:destination:pattern"; or "FACILITY:facility".
func (f *Facility) Set(spec string) error {
	words, rest := splitWords(spec)
	if len(words) > 0 && strings.EqualFold(words[0], "PATTERN") {
		if len(words) < 2 {
			return errors.New("missing destination")
		}
		d := Destination(-1)
		if !strings.EqualFold(words[1], "any") {
			var ok bool
			if d, ok = parseDest(words[1]); !ok {
				return fmt.Errorf("unknown destination %q", words[1])
			}
		}
		f.SetPattern(d, rest[1])
		return nil
	}
	if len(words) > 0 && strings.EqualFold(words[0], "FACILITY") {
		if len(words) < 2 {
			return errors.New("invalid facility")
		}
		code, ok := facilities[strings.ToLower(words[1])]
		if !ok {
			return errors.New("invalid facility")
		}
		f.mu.Lock()
		f.facility = code
		f.mu.Unlock()
		return nil
	}
	var (
		mod   *Module
		dest  = Destination(-1)
		level = Level(-1)
	)
	for _, w := range words {
		if strings.EqualFold(w, "any") {
			continue
		}
		if d, ok := parseDest(w); ok {
			if dest >= 0 {
				return errors.New("cannot specify multiple destinations")
			}
			dest = d
		} else if l, ok := ParseLevel(w); ok {
			if level >= 0 {
				return errors.New("cannot specify multiple levels")
			}
			level = l
		} else if m := f.lookup(w); m != nil {
			if mod != nil {
				return errors.New("cannot specify multiple modules")
			}
			mod = m
		} else {
			return fmt.Errorf("no destination, level, or module %q", w)
		}
	}
	if level < 0 {
		level = Dbg
	}
	f.SetLevel(mod, dest, level)
	return nil
}

// splitWords splits spec at runs of " ,:\t" and returns, for each word,
// the text after the one delimiter that ends it (used for PATTERN, whose
// pattern may itself contain delimiters).
func splitWords(spec string) (words, rest []string) {
	isDelim := func(c byte) bool { return c == ' ' || c == ',' || c == ':' || c == '\t' }
	i := 0
	for i < len(spec) {
		for i < len(spec) && isDelim(spec[i]) {
			i++
		}
		if i >= len(spec) {
			break
		}
		j := i
		for j < len(spec) && !isDelim(spec[j]) {
			j++
		}
		words = append(words, spec[i:j])
		if j < len(spec) {
			j++ // the delimiter that ended the word
		}
		rest = append(rest, spec[j:])
		i = j
	}
	return words, rest
}

func parseDest(s string) (Destination, bool) {
	for d, n := range destNames {
		if strings.EqualFold(s, n) {
			return Destination(d), true
		}
	}
	return 0, false
}

// ParseLevel parses an Open vSwitch level name (case-insensitive).
func ParseLevel(s string) (Level, bool) {
	for l, n := range levelNames {
		if strings.EqualFold(s, n) {
			return Level(l), true
		}
	}
	return 0, false
}

func (f *Facility) lookup(name string) *Module {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.modules[name]; ok {
		return m
	}
	for n, m := range f.modules {
		if strings.EqualFold(n, name) {
			return m
		}
	}
	return nil
}

// List renders vlog/list: each module's level per destination.
func (f *Facility) List() string {
	var b strings.Builder
	b.WriteString("                 console    syslog    file\n")
	b.WriteString("                 -------    ------    ------\n")
	for _, n := range f.Modules() {
		m := f.Module(n)
		fmt.Fprintf(&b, "%-16s  %4s       %4s       %4s\n", n,
			strings.ToUpper(m.Level(Console).String()),
			strings.ToUpper(m.Level(Syslog).String()),
			strings.ToUpper(m.Level(File).String()))
	}
	return b.String()
}

// ListPatterns renders vlog/list-pattern.
func (f *Facility) ListPatterns() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	b.WriteString("         prefix                            format\n")
	b.WriteString("         ------                            ------\n")
	for d := range numDests {
		prefix := "none"
		if d == Syslog {
			prefix = syslogPrefix
		}
		fmt.Fprintf(&b, "%-9s%-34s%s\n", strings.ToUpper(d.String()), prefix, f.patterns[d])
	}
	return b.String()
}

// RegisterCommands adds the vlog/* commands to reg.
func (f *Facility) RegisterCommands(reg *unixctl.Registry) error {
	noArgs := func(fn func() (string, error)) unixctl.Handler {
		return func(context.Context, []string) (string, error) { return fn() }
	}
	for _, c := range []unixctl.Command{
		{Name: "vlog/list", Run: noArgs(func() (string, error) { return f.List(), nil })},
		{Name: "vlog/list-pattern", Run: noArgs(func() (string, error) { return f.ListPatterns(), nil })},
		{Name: "vlog/set", Usage: "{spec | PATTERN:destination:pattern}", MaxArgs: unixctl.Unlimited,
			Run: func(_ context.Context, args []string) (string, error) {
				for _, a := range args {
					if err := f.Set(a); err != nil {
						return "", err
					}
				}
				return "", nil
			}},
		// gvs does not rate-limit log lines; these validate their modules
		// and succeed so that scripts written for Open vSwitch keep working.
		{Name: "vlog/enable-rate-limit", Usage: "[module]...", MaxArgs: unixctl.Unlimited, Run: f.checkModules},
		{Name: "vlog/disable-rate-limit", Usage: "[module]...", MaxArgs: unixctl.Unlimited, Run: f.checkModules},
		{Name: "vlog/reopen", Run: noArgs(func() (string, error) { return "", f.Reopen() })},
		{Name: "vlog/close", Run: noArgs(func() (string, error) { f.CloseFile(); return "", nil })},
	} {
		if err := reg.RegisterCommand(c); err != nil {
			return err
		}
	}
	return nil
}

func (f *Facility) checkModules(_ context.Context, args []string) (string, error) {
	for _, a := range args {
		if f.lookup(a) == nil {
			return "", errors.New("unknown module")
		}
	}
	return "", nil
}
