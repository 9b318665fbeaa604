package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// dupFile duplicates f's descriptor as SCM_RIGHTS would for another
// process: the same open file description.
func dupFile(t *testing.T, f *os.File) *os.File {
	t.Helper()
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fd), f.Name())
}

// The successor opens the log under the handed lock while the
// predecessor still has it open, sees every record, and keeps the lock
// when the predecessor closes: nobody else can take it in between.
func TestHandedLockKeepsTheDatabaseLockedAcrossProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conf.db")
	old, err := Create(path, []byte(`{"name":"s"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Append([]byte(`{"t":{"r":{"a":1}}}`)); err != nil {
		t.Fatal(err)
	}
	handed := dupFile(t, old.LockFile())
	lf, recs, _, err := OpenLocked(path, handed)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if len(recs) != 2 || string(recs[1]) != `{"t":{"r":{"a":1}}}` {
		t.Fatalf("records %q", recs)
	}
	if _, _, _, err := Open(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("a third opener while both hold it: %v", err)
	}
	old.Close()
	if _, _, _, err := Open(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("a third opener after the predecessor closed: %v", err)
	}
	if err := lf.Append([]byte(`{"t":{"r":{"a":2}}}`)); err != nil {
		t.Fatal(err)
	}
}

// A descriptor of another file, or of the right file through which
// another process's lock is not held, is refused and left open.
func TestOpenLockedRefusesADescriptorThatDoesNotHoldTheLock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "conf.db")
	db, err := Create(path, []byte(`{"name":"s"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := os.Create(filepath.Join(dir, "other"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, _, _, err := OpenLocked(path, other); err == nil || !strings.Contains(err.Error(), "is not "+LockName(path)) {
		t.Fatalf("another file: %v", err)
	}
	fresh, err := os.OpenFile(LockName(path), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, _, _, err := OpenLocked(path, fresh); !errors.Is(err, ErrLocked) {
		t.Fatalf("a fresh descriptor of the held lock file: %v", err)
	}
	if _, err := fresh.Stat(); err != nil {
		t.Fatalf("the refused descriptor was closed: %v", err)
	}
}

// TestDeferredAppendsReachTheFileOnlyAtFlush: while deferred, appended
// records are not written (a failed handover's successor leaves the log
// as it was); Flush writes them in order, and they read back.
func TestDeferredAppendsReachTheFileOnlyAtFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conf.db")
	lf, err := Create(path, []byte(`{"name":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	before := fi.Size()
	lf.Defer()
	for _, rec := range []string{`{"a":1}`, `{"b":2}`} {
		if err := lf.Append([]byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	if fi, _ := os.Stat(path); fi.Size() != before || lf.ShouldCompact(0) {
		t.Fatalf("deferred records written (%d bytes, was %d) or compaction allowed", fi.Size(), before)
	}
	if err := lf.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := lf.Append([]byte(`{"c":3}`)); err != nil {
		t.Fatal(err)
	}
	lf.Close()
	lf, recs, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	var got []string
	for _, r := range recs {
		got = append(got, string(r))
	}
	if want := []string{`{"name":"x"}`, `{"a":1}`, `{"b":2}`, `{"c":3}`}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("records %q, want %q", got, want)
	}
}
