package dpctl

import (
	"testing"

	"strings"

	"context"
	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/vswitchd/backer"
	"log/slog"
)

func TestPmdStatsShowPrintsOpenVSwitchLines(t *testing.T) {
	var b strings.Builder
	writePmdStats(&b, dpif.Stats{EMCHit: 4, MegaflowHit: 6, Missed: 2, Recirc: 3, UpcallOK: 1, UpcallFail: 1, Lookups: 9})
	want := `  packets received: 9
  packet recirculations: 3
  avg. datapath passes per packet: 1.33
  phwol hits: 0
  mfex opt hits: 0
  simple match hits: 0
  emc hits: 4
  smc hits: 0
  megaflow hits: 6
  avg. subtable lookups per megaflow hit: 1.50
  miss with success upcall: 1
  miss with failed upcall: 1
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	writePmdStats(&b, dpif.Stats{})
	if !strings.Contains(b.String(), "  avg. datapath passes per packet: 0.00\n") || !strings.Contains(b.String(), "per megaflow hit: 0.00\n") {
		t.Errorf("idle thread:\n%s", b.String())
	}
}

func TestPmdStatsShowSelectsWorkerAndRejectsBadArguments(t *testing.T) {
	sw := backer.New(context.Background(), backer.Config{
		DisableSystem: true, DisableSystemRoute: true, Workers: 2,
		Logger: func(string) *slog.Logger { return slog.New(slog.DiscardHandler) },
	})
	defer func() { sw.Close(); sw.CloseDatapaths() }()
	sw.Datapath("dummy")
	d := New(sw, Config{Program: "gvs-vswitchd"})
	ctx := context.Background()
	out, err := d.cmdPmdStatsShow(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "pmd thread numa_id 0 core_id "); n != 2 {
		t.Errorf("%d thread sections for 2 workers:\n%s", n, out)
	}
	out, err = d.cmdPmdStatsShow(ctx, []string{"-pmd", "1", "dummy@ovs-dummy"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "pmd thread numa_id 0 core_id 1:\n") || strings.Count(out, "pmd thread") != 1 {
		t.Errorf("-pmd 1:\n%s", out)
	}
	for _, args := range [][]string{{"-pmd"}, {"-pmd", "x"}, {"-pmd", "-1"}, {"nosuch@dp"}} {
		if _, err := d.cmdPmdStatsShow(ctx, args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
