// Package statefile owns the container format of the state gvs-vswitchd
// carries across a restart (docs/reliability.md): a header with a magic
// string, the format version, the version string of the gvs that wrote
// it and the wall-clock time it was written, then named sections, each
// with its own version and length, then a CRC-32C of everything before
// it. What a section holds belongs to its owner (datapath/conntrack
// encodes the connection tracker's); this package only frames,
// checksums and refuses.
//
// A file that is not a state file, comes from another format version or
// fails its length or checksum checks is refused as a whole with an
// error that says which: the caller then starts with empty state.
//
// It imports only the standard library.
package statefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"time"
)

// Magic starts every state file.
const Magic = "GVSSTATE"

// FormatVersion is the container layout this package reads and writes;
// a file of any other version is refused.
const FormatVersion = 1

// Limits on what Decode accepts.
const (
	MaxVersionLen = 256
	MaxNameLen    = 64
	MaxSections   = 1024
	// MaxSize bounds a file (3 million connections take about 400 MB).
	MaxSize = 1 << 30
)

// Errors Decode wraps; test with errors.Is.
var (
	ErrNotStateFile = errors.New("not a gvs state file")
	ErrVersion      = errors.New("incompatible state file version")
	ErrCorrupt      = errors.New("corrupt state file")
)

// Section is one named, versioned part of a file.
type Section struct {
	Name    string
	Version uint16
	Data    []byte
}

// File is a decoded state file.
type File struct {
	// GVSVersion is the version string of the gvs that wrote the file
	// (informational: compatibility is FormatVersion's and each
	// section's Version).
	GVSVersion string
	// Written is when the file was written (wall clock); readers take
	// the time since from remaining timeouts.
	Written  time.Time
	Sections []Section
}

// Section returns the section called name.
func (f *File) Section(name string) (*Section, bool) {
	for i := range f.Sections {
		if f.Sections[i].Name == name {
			return &f.Sections[i], true
		}
	}
	return nil, false
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header: magic, format version (u16), flags (u16, zero), written
// (unix nanoseconds, i64), version length (u16), version, section
// count (u16). Integers are big-endian.
const fixedHeader = len(Magic) + 2 + 2 + 8 + 2

// Encode serialises f.
func Encode(f *File) ([]byte, error) {
	if len(f.GVSVersion) > MaxVersionLen {
		return nil, fmt.Errorf("statefile: version string of %d bytes (max %d)", len(f.GVSVersion), MaxVersionLen)
	}
	if len(f.Sections) > MaxSections {
		return nil, fmt.Errorf("statefile: %d sections (max %d)", len(f.Sections), MaxSections)
	}
	var b bytes.Buffer
	b.WriteString(Magic)
	be := binary.BigEndian
	b.Write(be.AppendUint16(nil, FormatVersion))
	b.Write(be.AppendUint16(nil, 0))
	b.Write(be.AppendUint64(nil, uint64(f.Written.UnixNano())))
	b.Write(be.AppendUint16(nil, uint16(len(f.GVSVersion))))
	b.WriteString(f.GVSVersion)
	b.Write(be.AppendUint16(nil, uint16(len(f.Sections))))
	for _, s := range f.Sections {
		if len(s.Name) == 0 || len(s.Name) > MaxNameLen {
			return nil, fmt.Errorf("statefile: section name %q: length must be 1 to %d", s.Name, MaxNameLen)
		}
		b.WriteByte(byte(len(s.Name)))
		b.WriteString(s.Name)
		b.Write(be.AppendUint16(nil, s.Version))
		b.Write(be.AppendUint32(nil, uint32(len(s.Data))))
		b.Write(s.Data)
	}
	if b.Len()+4 > MaxSize {
		return nil, fmt.Errorf("statefile: %d bytes exceed the maximum of %d", b.Len()+4, MaxSize)
	}
	b.Write(be.AppendUint32(nil, crc32.Checksum(b.Bytes(), castagnoli)))
	return b.Bytes(), nil
}

// Decode parses and checks a file. Section data alias b.
func Decode(b []byte) (*File, error) {
	if len(b) < len(Magic) || string(b[:len(Magic)]) != Magic {
		return nil, ErrNotStateFile
	}
	if len(b) < fixedHeader+4 {
		return nil, fmt.Errorf("%w: truncated header (%d bytes)", ErrCorrupt, len(b))
	}
	be := binary.BigEndian
	if v := be.Uint16(b[len(Magic):]); v != FormatVersion {
		return nil, fmt.Errorf("%w: format %d, this gvs reads format %d", ErrVersion, v, FormatVersion)
	}
	if len(b) > MaxSize {
		return nil, fmt.Errorf("%w: %d bytes exceed the maximum of %d", ErrCorrupt, len(b), MaxSize)
	}
	body, sum := b[:len(b)-4], be.Uint32(b[len(b)-4:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return nil, fmt.Errorf("%w: checksum %08x, expected %08x (truncated or damaged)", ErrCorrupt, got, sum)
	}
	if flags := be.Uint16(body[len(Magic)+2:]); flags != 0 {
		return nil, fmt.Errorf("%w: unknown flags %#x", ErrVersion, flags)
	}
	f := &File{Written: time.Unix(0, int64(be.Uint64(body[len(Magic)+4:])))}
	r := body[len(Magic)+12:]
	take := func(n int, what string) ([]byte, error) {
		if n > len(r) {
			return nil, fmt.Errorf("%w: %s runs past the end", ErrCorrupt, what)
		}
		v := r[:n]
		r = r[n:]
		return v, nil
	}
	v, err := take(2, "version length")
	if err != nil {
		return nil, err
	}
	n := int(be.Uint16(v))
	if n > MaxVersionLen {
		return nil, fmt.Errorf("%w: version string of %d bytes", ErrCorrupt, n)
	}
	if v, err = take(n, "version string"); err != nil {
		return nil, err
	}
	f.GVSVersion = string(v)
	if v, err = take(2, "section count"); err != nil {
		return nil, err
	}
	ns := int(be.Uint16(v))
	if ns > MaxSections {
		return nil, fmt.Errorf("%w: %d sections", ErrCorrupt, ns)
	}
	for i := range ns {
		if v, err = take(1, "section name length"); err != nil {
			return nil, err
		}
		nl := int(v[0])
		if nl == 0 || nl > MaxNameLen {
			return nil, fmt.Errorf("%w: section %d: name length %d", ErrCorrupt, i, nl)
		}
		name, err := take(nl, "section name")
		if err != nil {
			return nil, err
		}
		hdr, err := take(6, "section header")
		if err != nil {
			return nil, err
		}
		data, err := take(int(be.Uint32(hdr[2:])), "section "+string(name))
		if err != nil {
			return nil, err
		}
		if _, dup := f.Section(string(name)); dup {
			return nil, fmt.Errorf("%w: section %q twice", ErrCorrupt, name)
		}
		f.Sections = append(f.Sections, Section{Name: string(name), Version: be.Uint16(hdr), Data: data})
	}
	if len(r) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last section", ErrCorrupt, len(r))
	}
	return f, nil
}

// WriteFile encodes f into path atomically (a temporary file in the same
// directory, synced, then renamed), mode 0600: a crash while writing
// leaves the old file or none, never a torn one.
func WriteFile(path string, f *File) error {
	b, err := Encode(f)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("statefile: %w", err)
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("statefile: writing %s: %w", path, err)
	}
	return nil
}

// ReadFile reads and decodes path. A missing file gives an error
// satisfying errors.Is(err, os.ErrNotExist).
func ReadFile(path string) (*File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxSize {
		return nil, fmt.Errorf("%s: %w: %d bytes exceed the maximum of %d", path, ErrCorrupt, st.Size(), MaxSize)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
