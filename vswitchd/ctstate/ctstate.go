package ctstate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/gvs-project/gvs/datapath/conntrack"
	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/internal/statefile"
	"github.com/gvs-project/gvs/internal/version"
	"github.com/gvs-project/gvs/unixctl"
)

// Conntrack state across a planned restart (docs/reliability.md): with
// --conntrack-state=FILE the daemon writes every datapath's connection
// tracker to FILE when it stops on SIGTERM, SIGINT or `exit` (after its
// datapaths stopped forwarding), and at start reads FILE once and
// restores each datapath's connections when the datapath is created,
// before any port is added to it. dpctl/ct-save and dpctl/ct-restore do
// the same on demand. The file is an internal/statefile container with
// one section per datapath, "conntrack/<datapath name>".

// ctSectionPrefix starts the name of a datapath's conntrack section.
const ctSectionPrefix = "conntrack/"

// Store is the --conntrack-state file of one run: the state read at
// start, waiting for its datapaths, and where the state is written at
// stop. A Store for no file ("") does nothing.
type Store struct {
	path string
	log  *slog.Logger
	file *statefile.File // read at start; nil when there was none
}

// Load reads the file at path at start. The file is
// consumed: it is removed once read, so that a later crash does not
// bring back connections that ended since. A missing file is normal (a
// first start, or after a crash); a refused one is renamed FILE.refused
// for inspection (the next stop writes FILE afresh) and the daemon
// starts with empty tables.
func Load(path string, log *slog.Logger) *Store {
	d := &Store{path: path, log: log}
	if path == "" {
		return d
	}
	f, err := statefile.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		d.log.Info("no conntrack state to restore: starting with empty conntrack tables", "file", path)
		return d
	case err != nil:
		d.log.Warn("conntrack state refused: starting with empty conntrack tables", "file", path, "err", err)
		if rerr := os.Rename(path, path+".refused"); rerr == nil {
			d.log.Info("kept the refused conntrack state", "file", path+".refused")
		}
		return d
	}
	if err := os.Remove(path); err != nil {
		d.log.Warn("removing the conntrack state file after reading it", "file", path, "err", err)
	}
	d.log.Info("read conntrack state", "file", path, "written_by", f.GVSVersion, "age", time.Since(f.Written).Round(time.Millisecond).String(), "sections", len(f.Sections))
	d.file = f
	return d
}

// Restore applies the state read at start to a datapath just created
// (no ports yet): backer.Config.DatapathCreated.
func (d *Store) Restore(dp *dpnetdev.Datapath) {
	if d == nil || d.file == nil {
		return
	}
	s, ok := d.file.Section(ctSectionPrefix + dp.Name())
	if !ok {
		return
	}
	res, err := importSection(dp.Conntrack(), d.file, s)
	if err != nil {
		d.log.Warn("conntrack state refused: starting with empty conntrack tables", "file", d.path, "datapath", dp.Name(), "err", err)
		return
	}
	d.log.Info("restored conntrack state", "file", d.path, "datapath", dp.Name(), "result", res.String())
}

// importSection checks a section's version and imports it, taking the
// time the file spent stored from the connections' remaining lifetimes.
func importSection(t *conntrack.Tracker, f *statefile.File, s *statefile.Section) (conntrack.ImportResult, error) {
	if s.Version != conntrack.StateVersion {
		return conntrack.ImportResult{}, fmt.Errorf("section %s has version %d (written by gvs %s); this gvs (%s) reads version %d",
			s.Name, s.Version, f.GVSVersion, version.String(), conntrack.StateVersion)
	}
	return t.ImportState(s.Data, max(0, time.Since(f.Written)))
}

// conntrackFile encodes the given datapaths' trackers as a state file.
func conntrackFile(dps []*dpnetdev.Datapath) (*statefile.File, int) {
	f := &statefile.File{GVSVersion: version.String(), Written: time.Now()}
	n := 0
	for _, dp := range dps {
		t := dp.Conntrack()
		n += t.Count()
		f.Sections = append(f.Sections, statefile.Section{Name: ctSectionPrefix + dp.Name(), Version: conntrack.StateVersion, Data: t.ExportState()})
	}
	return f, n
}

// Save writes the conntrack state at a planned stop: it stops every
// datapath's forwarding first, so that the file holds the connections'
// last state.
func (d *Store) Save(dps []*dpnetdev.Datapath) {
	if d == nil || d.path == "" {
		return
	}
	for _, dp := range dps {
		dp.Close()
	}
	f, n := conntrackFile(dps)
	if err := statefile.WriteFile(d.path, f); err != nil {
		d.log.Error("saving conntrack state", "file", d.path, "err", err)
		return
	}
	d.log.Info("saved conntrack state", "file", d.path, "connections", n, "datapaths", len(dps))
}

// Commands are gvs's dpctl/ct-save and dpctl/ct-restore, over the
// datapaths find resolves by dpctl's datapath argument.
func Commands(find func(name string) (*dpnetdev.Datapath, error)) []unixctl.Command {
	d := files{find: find}
	return []unixctl.Command{
		{Name: "dpctl/ct-save", Usage: "[dp] FILE", MinArgs: 1, MaxArgs: 2, Run: d.cmdCtSave},
		{Name: "dpctl/ct-restore", Usage: "[dp] FILE", MinArgs: 1, MaxArgs: 2, Run: d.cmdCtRestore},
	}
}

// files runs dpctl/ct-save and ct-restore.
type files struct {
	find func(name string) (*dpnetdev.Datapath, error)
}

// ctFileArgs splits [dp] FILE.
func (d files) ctFileArgs(args []string) (*dpnetdev.Datapath, string, error) {
	name, file := "", args[len(args)-1]
	if len(args) == 2 {
		name = args[0]
	}
	dp, err := d.find(name)
	return dp, file, err
}

func (d files) cmdCtSave(_ context.Context, args []string) (string, error) {
	dp, file, err := d.ctFileArgs(args)
	if err != nil {
		return "", err
	}
	f, n := conntrackFile([]*dpnetdev.Datapath{dp})
	if err := statefile.WriteFile(file, f); err != nil {
		return "", err
	}
	return fmt.Sprintf("saved %d connections of %s to %s\n", n, dp.Name(), file), nil
}

func (d files) cmdCtRestore(_ context.Context, args []string) (string, error) {
	dp, file, err := d.ctFileArgs(args)
	if err != nil {
		return "", err
	}
	f, err := statefile.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("conntrack state refused: %w", err)
	}
	s, ok := f.Section(ctSectionPrefix + dp.Name())
	if !ok {
		// A file saved from another datapath: take its only section.
		var cts []*statefile.Section
		for i := range f.Sections {
			if strings.HasPrefix(f.Sections[i].Name, ctSectionPrefix) {
				cts = append(cts, &f.Sections[i])
			}
		}
		if len(cts) != 1 {
			return "", fmt.Errorf("conntrack state refused: %s has no conntrack section for %s", file, dp.Name())
		}
		s = cts[0]
	}
	res, err := importSection(dp.Conntrack(), f, s)
	if err != nil {
		return "", fmt.Errorf("conntrack state refused: %s: %w", file, err)
	}
	return res.String() + "\n", nil
}
