package tests

import (
	"flag"
	"os"
	"testing"
)

// defaultParallel is how many tests that call t.Parallel() run at once
// unless -test.parallel is given. They are differential tests with their
// own directories and dummy ports that mostly wait on Open vSwitch's and
// gvs's daemons, so more of them than GOMAXPROCS (go test's default,
// 2 on CI) keep the cores busy.
const defaultParallel = "4"

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", defaultParallel)
	}
	os.Exit(m.Run())
}
