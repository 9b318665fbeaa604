package backer

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestPortErrorsLogOnceUntilTheReasonChangesOrTheInterfaceGoes checks
// that a failure is logged when it first happens and when its reason
// changes, not on each retry; a patch port's error goes to netdev_vport
// at ERR; forgetting an unconfigured interface logs it again.
func TestPortErrorsLogOnceUntilTheReasonChangesOrTheInterfaceGoes(t *testing.T) {
	var buf bytes.Buffer
	pe := portErrors{logger: func(module string) *slog.Logger {
		return slog.New(slog.NewTextHandler(&buf, nil)).With("module", module)
	}}
	lines := func() []string {
		s := strings.TrimSpace(buf.String())
		buf.Reset()
		if s == "" {
			return nil
		}
		return strings.Split(s, "\n")
	}
	noDev := errors.New("could not open network device eth9 (No such device)")
	pe.log("br0", "eth9", noDev)
	pe.log("br0", "eth9", noDev)
	if l := lines(); len(l) != 1 || !strings.Contains(l[0], "level=WARN") || !strings.Contains(l[0], "module=bridge") {
		t.Fatalf("first failure: %q", l)
	}
	pe.log("br0", "patch0", errors.New("patch0: patch type takes only a 'peer' argument"))
	if l := lines(); len(l) != 1 || !strings.Contains(l[0], "level=ERROR") || !strings.Contains(l[0], "module=netdev_vport") {
		t.Fatalf("patch failure: %q", l)
	}
	pe.forget("br0", map[string]bool{"patch0": true})
	pe.log("br0", "eth9", noDev)
	pe.log("br0", "patch0", errors.New("patch0: patch type takes only a 'peer' argument"))
	if l := lines(); len(l) != 1 || !strings.Contains(l[0], "eth9") {
		t.Fatalf("after forgetting eth9 only: %q", l)
	}
	pe.log("br0", "eth9", nil)
	pe.log("br0", "eth9", noDev)
	if l := lines(); len(l) != 1 {
		t.Fatalf("after eth9 was added once: %q", l)
	}
}
