package ofctl

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Progress of long flow table changes (add-flows, replace-flows) is shown
// on stderr as one line updated in place, "added 50000/100000 flows",
// only when stderr is a terminal: scripts and tests see ovs-ofctl's
// output unchanged.

const (
	// progressDelay is how long an operation runs before its progress
	// appears: short ones never print it.
	progressDelay = 200 * time.Millisecond
	// progressEvery limits redraws.
	progressEvery = 100 * time.Millisecond
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// progress draws "VERB N/TOTAL WHAT" with carriage returns.
type progress struct {
	w           io.Writer
	verb, what  string
	total       int
	now         func() time.Time
	start, last time.Time
	shown       bool
}

// newProgress returns a progress line for total items, or nil (every
// method is a no-op on nil) when stderr is not a terminal.
func (e *env) newProgress(verb, what string, total int) *progress {
	if !e.stderrTTY || total == 0 {
		return nil
	}
	now := e.now
	if now == nil {
		now = time.Now
	}
	return &progress{w: e.stderr, verb: verb, what: what, total: total, now: now, start: now()}
}

// update reports n items done.
func (p *progress) update(n int) {
	if p == nil {
		return
	}
	t := p.now()
	if t.Sub(p.start) < progressDelay || p.shown && t.Sub(p.last) < progressEvery && n < p.total {
		return
	}
	p.last, p.shown = t, true
	fmt.Fprintf(p.w, "\r%s %d/%d %s", p.verb, n, p.total, p.what)
}

// finish ends the line if one was drawn, with the final count.
func (p *progress) finish(n int) {
	if p == nil || !p.shown {
		return
	}
	fmt.Fprintf(p.w, "\r%s %d/%d %s\n", p.verb, n, p.total, p.what)
}
