package vlog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/unixctl"
)

var fixed = time.Date(2026, 11, 29, 21, 46, 47, 123456789, time.UTC)

func newTestFacility(console *bytes.Buffer) *Facility {
	f := New(Options{Program: "gvs-vswitchd", Console: console, Now: func() time.Time { return fixed }})
	for _, m := range []string{"bridge", "dpif", "unixctl"} {
		f.Module(m)
	}
	return f
}

func TestSetSpecs(t *testing.T) {
	tests := []struct {
		spec    string
		wantErr string
		// levels after the spec: module -> "console syslog file"
		want map[string]string
	}{
		{spec: "", want: map[string]string{"bridge": "dbg dbg dbg"}}, // as Open vSwitch: no words = all dbg
		{spec: "dbg", want: map[string]string{"bridge": "dbg dbg dbg", "dpif": "dbg dbg dbg"}},
		{spec: "bridge", want: map[string]string{"bridge": "dbg dbg dbg", "dpif": "info info info"}},
		{spec: "bridge:console:warn", want: map[string]string{"bridge": "warn info info"}},
		{spec: "file:off", want: map[string]string{"bridge": "info info off", "unixctl": "info info off"}},
		{spec: "ANY:SYSLOG:ERR", want: map[string]string{"dpif": "info err info"}},
		{spec: "dpif,emer", want: map[string]string{"dpif": "emer emer emer"}},
		{spec: "dpif any:any:warn", want: map[string]string{"dpif": "warn warn warn", "bridge": "info info info"}},
		{spec: "Bridge:Info", want: map[string]string{"bridge": "info info info"}},
		{spec: "foo", wantErr: `no destination, level, or module "foo"`},
		{spec: "bridge:foo", wantErr: `no destination, level, or module "foo"`},
		{spec: "dbg:info", wantErr: "cannot specify multiple levels"},
		{spec: "bridge:dpif", wantErr: "cannot specify multiple modules"},
		{spec: "console:file", wantErr: "cannot specify multiple destinations"},
		{spec: "PATTERN", wantErr: "missing destination"},
		{spec: "PATTERN:nowhere:%m", wantErr: `unknown destination "nowhere"`},
		{spec: "FACILITY", wantErr: "invalid facility"},
		{spec: "FACILITY:nope", wantErr: "invalid facility"},
		{spec: "FACILITY:local7"},
	}
	for _, tc := range tests {
		f := newTestFacility(&bytes.Buffer{})
		err := f.Set(tc.spec)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("Set(%q) = %v, want %q", tc.spec, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Set(%q) = %v", tc.spec, err)
			continue
		}
		for mod, want := range tc.want {
			m := f.Module(mod)
			got := m.Level(Console).String() + " " + m.Level(Syslog).String() + " " + m.Level(File).String()
			if got != want {
				t.Errorf("Set(%q): %s = %s, want %s", tc.spec, mod, got, want)
			}
		}
	}
}

func TestListFormat(t *testing.T) {
	f := newTestFacility(&bytes.Buffer{})
	f.Module("dpif_lookup_autovalidator")
	for _, s := range []string{"bridge:console:emer", "dpif:off", "unixctl:syslog:dbg", "dpif_lookup_autovalidator:file:err"} {
		if err := f.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	want := "" +
		"                 console    syslog    file\n" +
		"                 -------    ------    ------\n" +
		"bridge            EMER       INFO       INFO\n" +
		"dpif               OFF        OFF        OFF\n" +
		"dpif_lookup_autovalidator  INFO       INFO        ERR\n" +
		"unixctl           INFO        DBG       INFO\n"
	if got := f.List(); got != want {
		t.Errorf("List:\n%s\nwant:\n%s", got, want)
	}
}

func TestPatternSetAndList(t *testing.T) {
	f := newTestFacility(&bytes.Buffer{})
	if err := f.Set("PATTERN:console:%c: %m: end"); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"         prefix                            format\n" +
		"         ------                            ------\n" +
		"SYSLOG   <%B> %D{%h %e %T} %E %A:          ovs|%05N|%c%T|%p|%m\n" +
		"CONSOLE  none                              %c: %m: end\n" +
		"FILE     none                              %D{%Y-%m-%dT%H:%M:%S.###Z}|%05N|%c%T|%p|%m\n"
	if got := f.ListPatterns(); got != want {
		t.Errorf("ListPatterns:\n%s\nwant:\n%s", got, want)
	}
}

func TestLoggerWritesOVSLines(t *testing.T) {
	var console bytes.Buffer
	f := newTestFacility(&console)
	path := filepath.Join(t.TempDir(), "gvs-vswitchd.log")
	if err := f.SetLogFile(path); err != nil {
		t.Fatal(err)
	}
	log := f.Logger("bridge")
	log.Info("added port", "port", "p1", "ofport", 1)
	log.Debug("not shown at info")
	log.With("br", "br0").WithGroup("g").Warn("x", "k", "two words")
	log.Log(context.Background(), LevelEmer, "going down")

	wantFile := "" +
		"2026-11-29T21:46:47.123Z|00001|bridge|INFO|added port port=p1 ofport=1\n" +
		"2026-11-29T21:46:47.123Z|00002|bridge|WARN|x br=br0 g.k=\"two words\"\n" +
		"2026-11-29T21:46:47.123Z|00003|bridge|EMER|going down\n"
	b, err := os.ReadFile(path)
	if err != nil || string(b) != wantFile {
		t.Errorf("file:\n%s\nwant:\n%s (err %v)", b, wantFile, err)
	}
	wantConsole := strings.ReplaceAll(wantFile, ".123Z", "Z")
	if console.String() != wantConsole {
		t.Errorf("console:\n%s\nwant:\n%s", console.String(), wantConsole)
	}
}

func TestLevelsFilterPerDestination(t *testing.T) {
	var console bytes.Buffer
	f := newTestFacility(&console)
	path := filepath.Join(t.TempDir(), "l.log")
	if err := f.SetLogFile(path); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"bridge:console:off", "bridge:file:dbg", "PATTERN:file:%p %m"} {
		if err := f.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	log := f.Logger("bridge")
	if !log.Enabled(context.Background(), slog.LevelDebug) {
		t.Error("debug disabled although file is at dbg")
	}
	if f.Logger("dpif").Enabled(context.Background(), slog.LevelDebug) {
		t.Error("dpif debug enabled at info")
	}
	log.Debug("d1")
	if console.Len() != 0 {
		t.Errorf("console got %q with console off", console.String())
	}
	b, _ := os.ReadFile(path)
	if string(b) != "DBG d1\n" {
		t.Errorf("file = %q", b)
	}
}

func TestReopenAndClose(t *testing.T) {
	f := newTestFacility(&bytes.Buffer{})
	if err := f.Reopen(); err == nil || err.Error() != "Logging to file not configured" {
		t.Errorf("Reopen without file = %v", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "a.log")
	if err := f.SetLogFile(path); err != nil {
		t.Fatal(err)
	}
	if err := f.Set("PATTERN:file:%m"); err != nil {
		t.Fatal(err)
	}
	log := f.Logger("dpif")
	log.Info("one")
	// Rotate: rename, then reopen creates a fresh file.
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := f.Reopen(); err != nil {
		t.Fatal(err)
	}
	log.Info("two")
	f.CloseFile()
	log.Info("three")
	if err := f.Reopen(); err != nil {
		t.Fatal(err)
	}
	log.Info("four")
	old, _ := os.ReadFile(path + ".1")
	cur, _ := os.ReadFile(path)
	if string(old) != "one\n" || string(cur) != "two\nfour\n" {
		t.Errorf("rotated %q, current %q", old, cur)
	}
}

func TestFormatDirectives(t *testing.T) {
	f := New(Options{Program: "prog", Console: &bytes.Buffer{}, Now: func() time.Time { return fixed }})
	f.mu.Lock()
	f.facility = facilities["local0"]
	got := f.format("%A|%B|%-8c|%8c|%05N|%p|%m|%t|%T|%%|%D{%h %e %T %j}|%D|%r|%x", "mod", Warn, fixed, 42, "msg")
	f.mu.Unlock()
	want := "prog|132|mod     |     mod|00042|WARN|msg|main||%|Nov 29 21:46:47 333|2026-11-29 21:46:47.123|0|%x"
	if got != want {
		t.Errorf("format:\n got %q\nwant %q", got, want)
	}
}

func TestSyslogDestination(t *testing.T) {
	var sys bytes.Buffer
	f := New(Options{Program: "gvs", Console: &bytes.Buffer{}, Syslog: &sys, Now: func() time.Time { return fixed }})
	f.Logger("m").Error("boom")
	host, _ := os.Hostname()
	want := "<27> " + "Nov 29 21:46:47 " + host + " gvs: ovs|00001|m|ERR|boom"
	if sys.String() != want {
		t.Errorf("syslog %q, want %q", sys.String(), want)
	}
}

func TestCommandsThroughRegistry(t *testing.T) {
	f := newTestFacility(&bytes.Buffer{})
	reg := unixctl.NewRegistry("v")
	if err := f.RegisterCommands(reg); err != nil {
		t.Fatal(err)
	}
	set, _ := reg.Lookup("vlog/set")
	if _, err := set.Run(context.Background(), []string{"bridge:warn", "nosuch", "dpif:err"}); err == nil {
		t.Error("vlog/set with a bad spec succeeded")
	}
	// Specs before the bad one apply; those after do not.
	if f.Module("bridge").Level(File) != Warn || f.Module("dpif").Level(File) != Info {
		t.Errorf("levels: bridge %v dpif %v", f.Module("bridge").Level(File), f.Module("dpif").Level(File))
	}
	if err := f.RegisterCommands(reg); !errors.Is(err, unixctl.ErrDuplicate) {
		t.Errorf("second RegisterCommands = %v", err)
	}
}

func TestConcurrentLoggingAndSet(t *testing.T) {
	var console syncBuffer
	f := New(Options{Console: &console, Now: func() time.Time { return fixed }})
	log := f.Logger("m")
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				log.Info("x", "i", i, "j", j)
				if j%50 == 0 {
					f.Set("m:console:" + []string{"info", "dbg"}[j%2])
					_ = f.List()
				}
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(console.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	// Serial numbers are unique.
	seen := map[string]bool{}
	for _, l := range lines {
		n := strings.Split(l, "|")[1]
		if _, err := strconv.Atoi(n); err != nil || seen[n] {
			t.Fatalf("bad or duplicate serial in %q", l)
		}
		seen[n] = true
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func BenchmarkDisabledDebug(b *testing.B) {
	f := New(Options{Console: &bytes.Buffer{}})
	log := f.Logger("m")
	b.ReportAllocs()
	for b.Loop() {
		log.Debug("x", "k", 1)
	}
}
