package tests

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// defaultParallel is how many tests that call t.Parallel() run at once
// unless -test.parallel is given. They are differential tests with their
// own directories and dummy ports, or switches in namespaces of their own
// (those that need fixed device names here hold a lock: rootns_test.go),
// that mostly wait on Open vSwitch's and gvs's daemons, so more of them
// than GOMAXPROCS (go test's default, 2 on CI) keep the cores busy: with
// 4, both cores of the CI machine are nearly always busy in that phase.
const defaultParallel = "4"

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", defaultParallel)
	}
	code := m.Run()
	// The binaries built once per run (daemonBinary, gvsOfctlBinary).
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if gvsOfctlPath != "" {
		os.RemoveAll(filepath.Dir(gvsOfctlPath))
	}
	os.Exit(code)
}
