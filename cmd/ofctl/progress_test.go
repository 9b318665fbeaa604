package ofctl

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// fakeClock advances by step on every reading.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Unix(1000, 0)
	return func() time.Time {
		t = t.Add(step)
		return t
	}
}

func TestProgressRedrawsOneLineOnATerminal(t *testing.T) {
	var buf bytes.Buffer
	e := &env{stderr: &buf, stderrTTY: true, now: fakeClock(60 * time.Millisecond)}
	p := e.newProgress("added", "flows", 100000)
	for _, n := range []int{10000, 20000, 30000, 40000, 50000, 60000, 100000} {
		p.update(n)
	}
	p.finish(100000)
	// Updates at 120 and 180 ms are inside the start-up delay; then at
	// most one redraw per 100 ms, and always the last.
	want := "\radded 40000/100000 flows\radded 60000/100000 flows\radded 100000/100000 flows\radded 100000/100000 flows\n"
	if got := buf.String(); got != want {
		t.Errorf("progress wrote %q, want %q", got, want)
	}
}

func TestProgressIsSilentWhenStderrIsNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	e := &env{stderr: &buf, now: fakeClock(time.Second)}
	p := e.newProgress("added", "flows", 5)
	if p != nil {
		t.Fatalf("newProgress without a terminal = %+v, want nil", p)
	}
	p.update(5) // no-ops on nil
	p.finish(5)
	if buf.Len() != 0 {
		t.Errorf("progress wrote %q without a terminal", buf.String())
	}
}

func TestProgressOfAQuickOperationPrintsNothing(t *testing.T) {
	var buf bytes.Buffer
	e := &env{stderr: &buf, stderrTTY: true, now: fakeClock(time.Millisecond)}
	p := e.newProgress("sent", "flow changes", 3)
	for n := 1; n <= 3; n++ {
		p.update(n)
	}
	p.finish(3)
	if buf.Len() != 0 {
		t.Errorf("a 4 ms operation drew %q", buf.String())
	}
}

func TestIsTerminalIsFalseForBuffersAndPipes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(&bytes.Buffer{}) || isTerminal(w) {
		t.Error("a buffer or a pipe was taken for a terminal")
	}
}
