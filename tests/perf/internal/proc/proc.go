// Package proc holds process helpers shared by the performance harnesses
// under tests/perf. It imports only the standard library.
package proc

import (
	"os/exec"
	"slices"
	"syscall"
	"time"
)

// StopAll terminates started commands in reverse order of start (a
// daemon before the database it uses): SIGTERM, then SIGKILL if one is
// still running after grace.
func StopAll(cmds []*exec.Cmd, grace time.Duration) {
	for _, c := range slices.Backward(cmds) {
		c.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(grace):
			c.Process.Kill()
			<-done
		}
	}
}
