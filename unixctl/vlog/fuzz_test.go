package vlog

import (
	"bytes"
	"testing"
	"time"
)

// FuzzSetAndFormat drives vlog/set specs and line patterns with arbitrary
// text: no panic, levels stay valid, and a pattern always formats.
func FuzzSetAndFormat(f *testing.F) {
	for _, s := range []string{
		"dbg", "bridge:console:warn", "any:any:off", "PATTERN:file:%-10c|%05N|%D{%Y ### %e}|%m",
		"PATTERN:console:%", "PATTERN:any:%D{", "FACILITY:local3", ":", " ,\t:", "%99999999999999999999N",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		fac := New(Options{Console: &bytes.Buffer{}, Now: func() time.Time { return fixed }})
		for _, m := range []string{"bridge", "dpif"} {
			fac.Module(m)
		}
		_ = fac.Set(spec)
		for _, n := range fac.Modules() {
			for d := range numDests {
				if l := fac.Module(n).Level(d); l < Off || l >= numLevels {
					t.Fatalf("Set(%q) left %s at level %d", spec, n, l)
				}
			}
		}
		fac.mu.Lock()
		_ = fac.format(spec, "m", Info, fixed, 1, "msg")
		fac.mu.Unlock()
		fac.Logger("bridge").Info("x")
		_ = fac.List()
		_ = fac.ListPatterns()
	})
}
