package vswitchd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Directories and the database file as Debian's Open vSwitch lays them
// out: RUNDIR (/var/run/openvswitch) for the pidfile and sockets, the log
// file's directory (/var/log/openvswitch), and DBDIR/conf.db, which on
// Debian is a symlink to /var/lib/openvswitch/conf.db that does not exist
// until the database is first created. gvs follows the symlink, as
// ovsdb-server does, and creates the file (and its directories) where it
// points.

// maxSymlinks bounds a symlink chain, as Open vSwitch's follow_symlinks.
const maxSymlinks = 10

// followSymlinks returns the file a path names after following symlinks
// in its last component (the target need not exist: a dangling symlink
// resolves to the path it points at). A relative link is taken relative
// to the directory holding it.
func followSymlinks(path string) (string, error) {
	for range maxSymlinks {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || (err == nil && fi.Mode()&fs.ModeSymlink == 0) {
			return path, nil // not a symlink (or not there: creating it says why)
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, reason(err))
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", fmt.Errorf("%s: reading symlink: %w", path, reason(err))
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// reason strips a path error down to its cause ("permission denied"),
// for messages that name the path themselves.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// dirMaker creates directories and remembers the ones it created, so
// that a start that fails removes them again (nothing empty is left
// behind, e.g. /var/run/openvswitch when the database cannot be opened).
type dirMaker struct {
	made []string
}

// mkdirAll creates dir and its missing parents (mode 0755); what names
// the directory (its role, "run directory") goes into the error.
func (m *dirMaker) mkdirAll(role, dir string) error {
	if dir == "" {
		return nil
	}
	dir = filepath.Clean(dir)
	var missing []string
	for p := dir; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("cannot create %s %s: %s is not a directory", role, dir, p)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("cannot create %s %s: %s: %w", role, dir, p, reason(err))
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cannot create %s %s: %w", role, missing[i], reason(err))
		}
		m.made = append(m.made, missing[i])
	}
	return nil
}

// undo removes the directories mkdirAll created, newest first, where
// they are still empty.
func (m *dirMaker) undo() {
	for i := len(m.made) - 1; i >= 0; i-- {
		os.Remove(m.made[i]) // fails, harmlessly, on a directory in use
	}
	m.made = nil
}

// prepareFiles creates the directories the daemon writes to and resolves
// the embedded database's file through symlinks (cfg.DBFile becomes the
// file itself). Failures name the path and the reason.
func prepareFiles(cfg *Config, m *dirMaker) error {
	if err := m.mkdirAll("run directory", cfg.RunDir); err != nil {
		return err
	}
	if cfg.LogFile != "" {
		if err := m.mkdirAll("log directory", filepath.Dir(cfg.LogFile)); err != nil {
			return err
		}
	}
	if cfg.Database != "" {
		return nil
	}
	file, err := followSymlinks(cfg.DBFile)
	if err != nil {
		return fmt.Errorf("database %s: %w", cfg.DBFile, err)
	}
	role := "database directory"
	if file != cfg.DBFile {
		role = fmt.Sprintf("database directory (%s is a symlink to %s)", cfg.DBFile, file)
	}
	if err := m.mkdirAll(role, filepath.Dir(file)); err != nil {
		return err
	}
	if fi, err := os.Stat(file); err == nil && fi.IsDir() {
		return fmt.Errorf("database %s: is a directory", file)
	}
	cfg.DBFile = file
	return nil
}
