package main

import (
	"os"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// TestMain lets the test binary stand in for the gvs server child, which
// run starts by re-executing os.Executable with -serve-gvs.
func TestMain(m *testing.M) {
	if len(os.Args) == 5 && os.Args[1] == "-serve-gvs" && os.Args[3] == "-db" {
		if err := serveGVS(os.Args[2], os.Args[4], ""); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestRunMeasuresAllServersAndRemovesTheirDirectories(t *testing.T) {
	nstest.RequireBinary(t, "ovsdb-server", "openvswitch-switch")
	disk, shm := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", disk)
	if err := run(5, 20, 5, shm); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{disk, shm} {
		left, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) != 0 {
			t.Errorf("%s still holds %d entries after run, want 0 (servers stopped, directories removed)", dir, len(left))
		}
	}
}

func TestMeasureReportsEverySample(t *testing.T) {
	tg, err := startGVS("gvs", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := measure(tg, 3, 10, 4)
	tg.stop()
	if err != nil {
		t.Fatal(err)
	}
	if tg.cmd.ProcessState == nil {
		t.Error("server process not reaped after stop")
	}
	if len(r.latAfter) != 4 || len(r.latStart) != 4 {
		t.Fatalf("latency samples = %d, %d; want 4, 4", len(r.latAfter), len(r.latStart))
	}
	if r.addBrTPS <= 0 || r.updateTPS <= 0 || r.bulk <= 0 {
		t.Fatalf("non-positive result: %+v", r)
	}
}
