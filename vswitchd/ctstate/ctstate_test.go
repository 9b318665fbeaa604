package ctstate

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/internal/statefile"
)

// The file written at stop holds one section per datapath; read at the
// next start it is consumed (removed) and restored into the datapath of
// the same name.
func TestStateWrittenAtStopIsConsumedAtStart(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	path := filepath.Join(t.TempDir(), "ct.state")
	dp := dpnetdev.New("ovs-netdev", dpif.DefaultConfig())
	Load(path, log).Save([]*dpnetdev.Datapath{dp})
	f, err := statefile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sections) != 1 || f.Sections[0].Name != "conntrack/ovs-netdev" {
		t.Fatalf("sections %+v", f.Sections)
	}
	s := Load(path, log)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("file still there after Load: %v", err)
	}
	if s.file == nil {
		t.Fatal("Load kept no state")
	}
	dp2 := dpnetdev.New("ovs-netdev", dpif.DefaultConfig())
	defer dp2.Close()
	s.Restore(dp2) // no connections; no error either
}

// A file that cannot be read as a state file is renamed FILE.refused and
// the daemon starts with empty tables; no file at all is normal.
func TestRefusedStateIsKeptAsRefused(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	path := filepath.Join(dir, "ct.state")
	if s := Load(path, log); s.file != nil {
		t.Error("state from a missing file")
	}
	if err := os.WriteFile(path, []byte("not a state file"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s := Load(path, log); s.file != nil {
		t.Error("state from a garbage file")
	}
	if _, err := os.Stat(path + ".refused"); err != nil {
		t.Errorf("no %s.refused: %v", path, err)
	}
	var none *Store
	none.Restore(nil) // a daemon that failed before Load
	none.Save(nil)
}
