package vswitchd

import (
	"os"
	"path/filepath"
	"testing"
)

// A chain of symlinks, relative ones taken from the link's directory,
// resolves to the last path even when that does not exist; a loop is an
// error that names the path.
func TestFollowSymlinksResolvesDanglingChains(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "etc"), 0o755)
	os.Symlink("../lib/conf.db", filepath.Join(dir, "etc", "mid.db"))
	os.Symlink(filepath.Join(dir, "etc", "mid.db"), filepath.Join(dir, "etc", "conf.db"))
	got, err := followSymlinks(filepath.Join(dir, "etc", "conf.db"))
	if want := filepath.Join(dir, "lib", "conf.db"); err != nil || got != want {
		t.Errorf("followSymlinks = %q, %v; want %q", got, err, want)
	}
	loop := filepath.Join(dir, "loop")
	os.Symlink(loop, loop)
	if _, err := followSymlinks(loop); err == nil || err.Error() != loop+": too many levels of symbolic links" {
		t.Errorf("loop: %v", err)
	}
}

// undo removes exactly the directories mkdirAll created, and only while
// they are empty.
func TestDirMakerUndoesOnlyWhatItMade(t *testing.T) {
	dir := t.TempDir()
	var m dirMaker
	if err := m.mkdirAll("run directory", filepath.Join(dir, "a", "b", "c")); err != nil {
		t.Fatal(err)
	}
	if err := m.mkdirAll("log directory", filepath.Join(dir, "a", "keep")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "a", "keep", "f"), nil, 0o644)
	m.undo()
	if _, err := os.Stat(filepath.Join(dir, "a", "b")); !os.IsNotExist(err) {
		t.Errorf("a/b still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "keep", "f")); err != nil {
		t.Errorf("a/keep/f gone: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("the existing parent went: %v", err)
	}
}
