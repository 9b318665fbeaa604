package ovscmdtest

import (
	"bytes"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/internal/ovscmd"
)

// oracleScript runs Open vSwitch with the dummy datapath and replays a
// script from stdin; see its header for the transcript format.
//
//go:embed oracle.sh
var oracleScript string

// Env names the package under test in skip and failure messages and in the
// network namespaces it creates.
type Env struct {
	Pkg         string // e.g. "ofproto/router"
	NetnsPrefix string // e.g. "gvsrt-"; a random suffix is added
}

// Need fails the test under CI=true and skips it elsewhere when a
// prerequisite (what) is missing.
func (e Env) Need(t testing.TB, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: %s is required under CI", e.Pkg, what)
	}
	t.Skipf("%s: skipping, %s not available", e.Pkg, what)
}

// CanNetns reports whether network namespaces can be created (root and ip).
func CanNetns() bool {
	if os.Geteuid() != 0 {
		return false
	}
	_, err := exec.LookPath("ip")
	return err == nil
}

// HaveOVS reports whether the Open vSwitch daemon is installed.
func HaveOVS() bool {
	_, err := exec.LookPath("ovs-vswitchd")
	return err == nil
}

// NewNetns creates a uniquely named network namespace removed at cleanup.
func (e Env) NewNetns(t testing.TB) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := e.NetnsPrefix + hex.EncodeToString(b[:])
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	return name
}

// RunOracle replays script against Open vSwitch running inside namespace
// ns (the current one if ns is "") and returns its transcript.
func RunOracle(t testing.TB, ns, script string) string {
	t.Helper()
	args := []string{"-c", oracleScript, "oracle.sh"}
	if ns != "" {
		args = append(args, ns)
	}
	cmd := exec.Command("sh", args...)
	cmd.Stdin = strings.NewReader(script)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("oracle: %v", err)
	}
	return stdout.String()
}

// Oracle replays script against Open vSwitch in a fresh namespace, failing
// or skipping (see Need) without root, ip or Open vSwitch.
func (e Env) Oracle(t testing.TB, script string) string {
	t.Helper()
	e.Need(t, CanNetns() && HaveOVS(), "root, ip netns and Open vSwitch")
	return RunOracle(t, e.NewNetns(t), script)
}

// Replay runs script against cmds and returns the transcript oracle.sh
// prints for it. Setup lines ("!") go to setup; a script with setup lines
// and a nil setup, an unknown command or a wrong argument count fail t.
func Replay(t testing.TB, cmds []ovscmd.Command, script string, setup func(cmd string)) string {
	t.Helper()
	byName := make(map[string]ovscmd.Command, len(cmds))
	for _, c := range cmds {
		byName[c.Name] = c
	}
	var out strings.Builder
	for _, line := range strings.Split(script, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "!") {
			if setup == nil {
				t.Fatalf("%s: setup lines are not supported here", line)
			}
			setup(line[1:])
			continue
		}
		fmt.Fprintf(&out, "$ %s\n", line)
		f := strings.Fields(line)
		c, ok := byName[f[0]]
		if !ok {
			t.Fatalf("unknown command %q", f[0])
		}
		args := f[1:]
		if len(args) < c.MinArgs || len(args) > c.MaxArgs {
			t.Fatalf("%s: bad argument count", line)
		}
		reply, err := c.Run(context.Background(), args)
		out.WriteString(reply)
		if err != nil {
			fmt.Fprintf(&out, "[stderr: %s\novs-appctl: ovs-vswitchd: server returned an error]\n[exit 2]\n", err)
		}
	}
	return out.String()
}

// Golden checks every testdata/*.txt script, as a subtest named after it:
// replay's transcript must equal testdata/<name>.golden, after both pass
// through normalize if it is not nil. With update set the golden file is
// first regenerated with e.Oracle.
func (e Env) Golden(t *testing.T, update bool, replay func(t *testing.T, script string) string, normalize func(string) string) {
	t.Helper()
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts")
	}
	if normalize == nil {
		normalize = func(s string) string { return s }
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			script := string(b)
			golden := strings.TrimSuffix(file, ".txt") + ".golden"
			if update {
				if err := os.WriteFile(golden, []byte(e.Oracle(t, script)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			got := replay(t, script)
			if normalize(got) != normalize(string(want)) {
				t.Errorf("transcript differs from Open vSwitch's (%s)\n--- got ---\n%s\n--- want ---\n%s", golden, got, want)
			}
		})
	}
}
