package tnlneigh

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testdata/*.golden are transcripts of Open vSwitch 3.1 itself:
// go test -run TestTranscripts -update runs testdata/oracle.sh in a fresh
// network namespace for every testdata/*.txt script.
var update = flag.Bool("update", false, "regenerate testdata/*.golden with the Open vSwitch oracle")

func needEnv(t *testing.T, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("ofproto/tnlneigh: %s is required under CI", what)
	}
	t.Skipf("ofproto/tnlneigh: skipping, %s not available", what)
}

func runOracle(t *testing.T, script string) string {
	t.Helper()
	_, errOVS := exec.LookPath("ovs-vswitchd")
	_, errIP := exec.LookPath("ip")
	needEnv(t, errOVS == nil && errIP == nil && os.Geteuid() == 0, "root, ip netns and Open vSwitch")
	var b [4]byte
	_, _ = rand.Read(b[:])
	ns := "gvsnb-" + hex.EncodeToString(b[:])
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	defer exec.Command("ip", "netns", "del", ns).Run()
	cmd := exec.Command("sh", "testdata/oracle.sh", ns)
	cmd.Stdin = strings.NewReader(script)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("oracle: %v", err)
	}
	return stdout.String()
}

// runScript replays a script against c and prints oracle.sh's transcript.
func runScript(t *testing.T, c *Cache, script string) string {
	t.Helper()
	cmds := map[string]Command{}
	for _, cmd := range c.Commands() {
		cmds[cmd.Name] = cmd
	}
	var out strings.Builder
	for _, line := range strings.Split(script, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fmt.Fprintf(&out, "$ %s\n", line)
		f := strings.Fields(line)
		cmd, ok := cmds[f[0]]
		if !ok {
			t.Fatalf("unknown command %q", f[0])
		}
		args := f[1:]
		if len(args) < cmd.MinArgs || len(args) > cmd.MaxArgs {
			t.Fatalf("%s: bad argument count", line)
		}
		reply, err := cmd.Run(context.Background(), args)
		out.WriteString(reply)
		if err != nil {
			fmt.Fprintf(&out, "[stderr: %s\novs-appctl: ovs-vswitchd: server returned an error]\n[exit 2]\n", err)
		}
	}
	return out.String()
}

// sortShows sorts the entry lines of every show block: Open vSwitch lists
// entries in hash-table order under a random per-process hash basis, so
// only the set of lines is defined.
func sortShows(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "=====") {
			continue
		}
		j := i + 1
		for j < len(lines) && lines[j] != "" && !strings.HasPrefix(lines[j], "$ ") {
			j++
		}
		slices.Sort(lines[i+1 : j])
		i = j - 1
	}
	return strings.Join(lines, "")
}

// TestTranscriptsMatchOVS replays every testdata/*.txt script and compares
// the transcript with Open vSwitch's (show entries compared as sets).
func TestTranscriptsMatchOVS(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(file, ".txt") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(runOracle(t, string(b))), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			got := runScript(t, New(), string(b))
			if sortShows(got) != sortShows(string(want)) {
				t.Errorf("transcript differs from Open vSwitch's (%s)\n--- got ---\n%s\n--- want ---\n%s", golden, got, want)
			}
		})
	}
}
