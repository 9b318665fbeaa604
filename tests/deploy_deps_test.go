package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// scripts/install-deps.sh, which `make test` runs, stops no process it
// did not start: with a package missing (dpkg and apt-get are stand-ins
// here, so nothing is installed), processes named as Open vSwitch's and
// OVN's daemons keep running, and apt-get runs under a policy-rc.d that
// refuses service starts, which is removed afterwards.
func TestInstallDepsStopsNoForeignProcess(t *testing.T) {
	nstest.Require(t, "util-linux", "unshare", "bash")
	dir := t.TempDir()
	stubs := filepath.Join(dir, "bin")
	if err := os.Mkdir(stubs, 0o755); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(dir, "policy-rc.d")
	aptLog := filepath.Join(dir, "apt.log")
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(stubs, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// dpkg says ovn-central is missing; apt-get records its arguments
	// and whether the policy refused starts at that moment.
	write("dpkg", `[ "$2" = ovn-central ] && exit 1; exit 0`)
	write("apt-get", `echo "$* policy=$(`+policy+` x start >/dev/null 2>&1; echo $?)" >>`+aptLog)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"ovs-vswitchd", "ovsdb-server", "ovn-northd", "ovn-controller"}
	for _, name := range names {
		data, err := os.ReadFile(sleep)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The script and the stand-in daemons run in a PID namespace of their
	// own, so that a script that kills by name reaches only those.
	harness := `set -u
pids=""
for n in ` + strings.Join(names, " ") + `; do "$DIR/$n" 60 & pids="$pids $n:$!"; done
bash ../scripts/install-deps.sh || exit 3
sleep 0.1
for np in $pids; do
	state=$(sed 's/.*) //' /proc/${np#*:}/stat 2>/dev/null | cut -c1)
	[ "$state" = Z ] || [ -z "$state" ] && echo "stopped: ${np%%:*}"
done
exit 0
`
	c := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "bash", "-c", harness)
	c.Env = append(os.Environ(), "PATH="+stubs+":"+os.Getenv("PATH"), "POLICY_RC_D="+policy, "DIR="+dir)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("install-deps.sh: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "stopped: ") {
		t.Errorf("install-deps.sh stopped processes it did not start:\n%s", out)
	}
	log, err := os.ReadFile(aptLog)
	if err != nil {
		t.Fatal(err)
	}
	want := "update -qq policy=101\ninstall -y -qq --no-install-recommends ovn-central policy=101\n"
	if string(log) != want {
		t.Errorf("apt-get ran as\n%s\nwant\n%s", log, want)
	}
	if _, err := os.Stat(policy); err == nil {
		t.Errorf("policy-rc.d %s left behind", policy)
	}
	script, err := os.ReadFile("../scripts/install-deps.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"pkill", "killall", "kill "} {
		if strings.Contains(string(script), cmd) {
			t.Errorf("install-deps.sh runs %q", cmd)
		}
	}
}
