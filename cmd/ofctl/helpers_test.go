package ofctl

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

const (
	flowsFile    = "../../ofproto/ofptext/testdata/flows.txt"
	ofpPrintFile = "../../ofproto/ofp/testdata/ofp-print.txt"
)

// result is one run's observable behaviour.
type result struct {
	stdout, stderr string
	code           int
}

// runGvs runs gvs-ofctl in-process.
func runGvs(stdin string, args ...string) result {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return result{out.String(), errb.String(), code}
}

// ovsOfctl returns the path of Debian's ovs-ofctl. Under CI=true a
// missing binary fails the test; otherwise the test is skipped.
func ovsOfctl(t testing.TB) string {
	t.Helper()
	p := nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	return p
}

// runOVS runs the real ovs-ofctl with its name in messages masked as
// gvs-ofctl's. Log lines (ovs-ofctl's vlog INFO output on stderr) are
// dropped.
func runOVS(t testing.TB, bin, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s %v: %v", bin, args, err)
	}
	var kept []string
	for _, l := range strings.SplitAfter(errb.String(), "\n") {
		if l != "" && !vlogLine.MatchString(l) {
			kept = append(kept, l)
		}
	}
	mask := func(s string) string { return strings.ReplaceAll(s, "ovs-ofctl", progName) }
	return result{mask(out.String()), mask(strings.Join(kept, "")), code}
}

// vlogLine matches ovs-ofctl's log lines ("2026-...Z|00001|module|WARN|...").
var vlogLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT[0-9:.]+Z\|\d+\|`)

// loadFlows reads the flow corpus shared with ofproto/ofptext.
func loadFlows(t testing.TB) []string {
	t.Helper()
	f, err := os.Open(flowsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && l[0] != '#' {
			out = append(out, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// capture is one message from ofp-print.txt: its hex and what the real
// ovs-ofctl ofp-print printed for it.
type capture struct {
	name, hex, want string
}

func loadCaptures(t testing.TB) []capture {
	t.Helper()
	data, err := os.ReadFile(ofpPrintFile)
	if err != nil {
		t.Fatal(err)
	}
	var out []capture
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if strings.HasPrefix(l, "# ") {
			f := strings.Fields(l)
			if len(f) != 4 {
				t.Fatalf("bad capture header %q", l)
			}
			out = append(out, capture{name: f[1] + " " + f[2], hex: f[3]})
			continue
		}
		if len(out) > 0 && l != "" {
			out[len(out)-1].want += l
		}
	}
	return out
}
