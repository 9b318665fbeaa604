// Package nstest creates veth pairs and network namespaces for gvs
// tests and removes them when the test ends, pass or fail. Under
// CI=true a missing ip binary or missing privileges fail the test;
// elsewhere they skip it.
package nstest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// debianPackage names the Debian package of a binary tests run in
// namespaces (scripts/install-deps.sh installs them), "" if unknown.
func debianPackage(bin string) string {
	for _, bp := range [...][2]string{
		{"ip", "iproute2"}, {"sysctl", "procps"}, {"ping", "iputils-ping"}, {"bash", "bash"},
		{"ethtool", "ethtool"}, {"python3", "python3"}, {"unshare", "util-linux"},
	} {
		if bp[0] == bin {
			return bp[1]
		}
	}
	return ""
}

// Require skips (or, under CI, fails) t unless ip and the other named
// binaries are installed and the test runs as root.
func Require(t testing.TB, pkg string, binaries ...string) {
	t.Helper()
	missing := ""
	for _, b := range append([]string{"ip", "sysctl"}, binaries...) {
		if _, err := exec.LookPath(b); err != nil {
			missing = "the " + b + " binary"
			if p := debianPackage(b); p != "" {
				missing += " (Debian package " + p + ")"
			}
			break
		}
	}
	if missing == "" && os.Geteuid() != 0 {
		missing = "root privileges"
	}
	if missing == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: test needs %s", pkg, missing)
	}
	t.Skipf("%s: skipping, test needs %s", pkg, missing)
}

// RequireBinary skips (or, under CI, fails) t unless bin is on PATH; pkg
// names the Debian package that provides it.
// It returns the binary's path.
func RequireBinary(t testing.TB, bin, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(bin)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("test needs %s (Debian package %s)", bin, pkg)
	}
	t.Skipf("skipping, test needs %s (Debian package %s)", bin, pkg)
	return ""
}

// Suffix returns 8 random hex digits for unique names.
func Suffix() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Run runs a command and fails t with its output if it fails.
func Run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// RunIgnoreStatus runs a command whose exit status does not matter (a
// ping that gets no reply) and returns its output.
func RunIgnoreStatus(args ...string) string {
	out, _ := exec.Command(args[0], args[1:]...).CombinedOutput()
	return string(out)
}

// Netns creates a network namespace named gvs-t-<random> and deletes it
// at cleanup.
func Netns(t testing.TB) string {
	t.Helper()
	name := "gvs-t-" + Suffix()
	Run(t, "ip", "netns", "add", name)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	return name
}

// InNetns runs a command inside namespace ns.
func InNetns(t testing.TB, ns string, args ...string) string {
	t.Helper()
	return Run(t, append([]string{"ip", "netns", "exec", ns}, args...)...)
}

// Veth creates a veth pair with random names (both in the root
// namespace, both up) and deletes it at cleanup.
func Veth(t testing.TB) (a, b string) {
	t.Helper()
	s := Suffix()
	a, b = "gvta"+s, "gvtb"+s
	Run(t, "ip", "link", "add", a, "type", "veth", "peer", "name", b)
	t.Cleanup(func() { exec.Command("ip", "link", "del", a).Run() })
	// No IPv6 autoconfiguration chatter on test links.
	for _, n := range []string{a, b} {
		os.WriteFile("/proc/sys/net/ipv6/conf/"+n+"/disable_ipv6", []byte("1"), 0o644)
	}
	Run(t, "ip", "link", "set", a, "up")
	Run(t, "ip", "link", "set", b, "up")
	return a, b
}

// DeleteLinkAtCleanup deletes interface name at cleanup if it still
// exists (in the root namespace).
func DeleteLinkAtCleanup(t testing.TB, name string) {
	t.Cleanup(func() { exec.Command("ip", "link", "del", name).Run() })
}
