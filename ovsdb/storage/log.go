package storage

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

const magic = "OVSDB JSON "

// maxRecord bounds a record's declared length so that a corrupt header
// cannot make Open allocate without limit.
const maxRecord = 1 << 30

// File is an open database log positioned for appending.
type File struct {
	path string
	f    *os.File
	lock *os.File // the held lock file (lock.go)
	size int64
	// base is the size right after the last compaction (or open), used to
	// decide when to compact again.
	base int64
	// deferred keeps appended records in pending instead of writing
	// them (handover.go).
	deferred bool
	pending  []byte
}

// OpenInfo reports what Open found.
type OpenInfo struct {
	// Truncated is the number of bytes of torn or corrupt tail removed.
	Truncated int64
	// Dropped is the number of intact records dropped because they could
	// not be read (a string with \u0000 written by an older gvs), with
	// every record after them.
	Dropped int
}

// Create makes a new log holding only the schema record. It fails if path
// exists.
func Create(path string, schema []byte) (*File, error) {
	lk, err := lock(path)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		lk.Close()
		return nil, fmt.Errorf("storage: create: %w", err)
	}
	lf := &File{path: path, f: f, lock: lk}
	if err := lf.Append(schema); err != nil {
		f.Close()
		os.Remove(path)
		lk.Close()
		return nil, err
	}
	lf.base = lf.size
	if err := syncDir(path); err != nil {
		f.Close()
		lk.Close()
		return nil, err
	}
	return lf, nil
}

// Open takes the database's lock file (Create too: another process holding
// it makes them fail with ErrLocked, the file untouched), reads every
// intact record of the log at path and returns them (the schema first),
// truncating a torn or corrupt tail.
func Open(path string) (*File, [][]byte, OpenInfo, error) {
	lk, err := lock(path)
	if err != nil {
		return nil, nil, OpenInfo{}, err
	}
	lf, recs, info, err := open(path)
	if err != nil {
		lk.Close()
		return nil, nil, info, err
	}
	lf.lock = lk
	return lf, recs, info, nil
}

func open(path string) (*File, [][]byte, OpenInfo, error) {
	var info OpenInfo
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, info, fmt.Errorf("storage: open: %w", err)
	}
	recs, good, err := ReadRecords(f)
	if err != nil {
		f.Close()
		return nil, nil, info, fmt.Errorf("storage: %s: %w", path, err)
	}
	if len(recs) == 0 {
		f.Close()
		return nil, nil, info, fmt.Errorf("storage: %s: no schema record", path)
	}
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, nil, info, fmt.Errorf("storage: %s: %w", path, err)
	}
	if end > good {
		info.Truncated = end - good
		if err := f.Truncate(good); err != nil {
			f.Close()
			return nil, nil, info, fmt.Errorf("storage: truncating torn tail of %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, nil, info, fmt.Errorf("storage: %s: %w", path, err)
		}
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, nil, info, fmt.Errorf("storage: %s: %w", path, err)
	}
	return &File{path: path, f: f, size: good, base: good}, recs, info, nil
}

// ReadRecords reads records from r until EOF or the first torn or corrupt
// record. It returns the records' JSON texts and the offset just past the
// last good record. Only I/O errors are returned as errors.
func ReadRecords(r io.Reader) ([][]byte, int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var recs [][]byte
	var off int64
	for {
		body, n, err := readRecord(br)
		if err != nil {
			if errors.Is(err, errTorn) || errors.Is(err, io.EOF) {
				return recs, off, nil
			}
			return recs, off, err
		}
		recs = append(recs, body)
		off += n
	}
}

var errTorn = errors.New("torn record")

func readRecord(br *bufio.Reader) ([]byte, int64, error) {
	header, err := br.ReadSlice('\n')
	if err != nil {
		if err == io.EOF && len(header) == 0 {
			return nil, 0, io.EOF
		}
		if err == io.EOF || err == bufio.ErrBufferFull {
			return nil, 0, errTorn
		}
		return nil, 0, err
	}
	hlen := int64(len(header))
	h := bytes.TrimSuffix(header, []byte("\n"))
	if !bytes.HasPrefix(h, []byte(magic)) {
		return nil, 0, errTorn
	}
	fields := bytes.Fields(h[len(magic):])
	if len(fields) != 2 || len(fields[1]) != 40 {
		return nil, 0, errTorn
	}
	length, err := strconv.ParseInt(string(fields[0]), 10, 64)
	if err != nil || length < 0 || length > maxRecord {
		return nil, 0, errTorn
	}
	want := string(fields[1])
	body := make([]byte, length)
	if _, err := io.ReadFull(br, body); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, 0, errTorn
		}
		return nil, 0, err
	}
	sum := sha1.Sum(body)
	if hex.EncodeToString(sum[:]) != want {
		return nil, 0, errTorn
	}
	return bytes.TrimSuffix(body, []byte("\n")), hlen + length, nil
}

// recordSize is the size AppendRecord gives js.
func recordSize(js []byte) int64 {
	body := len(js) + 1
	return int64(len(magic) + len(strconv.Itoa(body)) + 1 + 2*sha1.Size + 1 + body)
}

// KeepRecords truncates the log to its first n records, recs being every
// record Open returned (a record's framing is a function of its text, so
// its offset follows from the texts before it). Open vSwitch truncates its
// log the same way after a record it cannot read.
func (lf *File) KeepRecords(n int, recs [][]byte) error {
	var off int64
	for _, r := range recs[:n] {
		off += recordSize(r)
	}
	if off > lf.size {
		return fmt.Errorf("storage: %s: keeping %d records: offset %d past the end", lf.path, n, off)
	}
	if err := lf.f.Truncate(off); err != nil {
		return fmt.Errorf("storage: truncating %s: %w", lf.path, err)
	}
	if err := lf.f.Sync(); err != nil {
		return fmt.Errorf("storage: sync %s: %w", lf.path, err)
	}
	if _, err := lf.f.Seek(off, io.SeekStart); err != nil {
		return fmt.Errorf("storage: %s: %w", lf.path, err)
	}
	lf.size = off
	lf.base = min(lf.base, off)
	return nil
}

// AppendRecord appends the framed form of the JSON text js to dst.
func AppendRecord(dst, js []byte) []byte {
	body := make([]byte, 0, len(js)+1)
	body = append(append(body, js...), '\n')
	sum := sha1.Sum(body)
	dst = append(dst, magic...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, ' ')
	dst = hex.AppendEncode(dst, sum[:])
	dst = append(dst, '\n')
	return append(dst, body...)
}

// Append writes one record and syncs it to disk.
func (lf *File) Append(js []byte) error {
	rec := AppendRecord(nil, js)
	if lf.deferred {
		lf.pending = append(lf.pending, rec...)
		return nil
	}
	if _, err := lf.f.Write(rec); err != nil {
		lf.rewind()
		return fmt.Errorf("storage: append to %s: %w", lf.path, err)
	}
	if err := lf.f.Sync(); err != nil {
		lf.rewind()
		return fmt.Errorf("storage: sync %s: %w", lf.path, err)
	}
	lf.size += int64(len(rec))
	return nil
}

// rewind cuts a failed append off so that the next one does not follow a
// partial record.
func (lf *File) rewind() {
	if lf.f.Truncate(lf.size) == nil {
		lf.f.Seek(lf.size, io.SeekStart)
	}
}

// Size is the file's current length.
func (lf *File) Size() int64 { return lf.size }

// ShouldCompact applies ovsdb-server's rule of thumb: compact once the log
// has grown past minSize and to at least four times its size after the
// last compaction.
func (lf *File) ShouldCompact(minSize int64) bool {
	return !lf.deferred && lf.size >= minSize && lf.size >= 4*lf.base
}

// Compact replaces the log with one holding the schema and a single
// snapshot record, atomically.
func (lf *File) Compact(schema, snapshot []byte) error {
	tmp := lf.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return fmt.Errorf("storage: compact: %w", err)
	}
	buf := AppendRecord(nil, schema)
	buf = AppendRecord(buf, snapshot)
	if _, err := f.Write(buf); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("storage: compact: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("storage: compact: %w", err)
	}
	if err := os.Rename(tmp, lf.path); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("storage: compact: %w", err)
	}
	if err := syncDir(lf.path); err != nil {
		f.Close()
		return err
	}
	lf.f.Close()
	lf.f = f
	lf.size = int64(len(buf))
	lf.base = lf.size
	return nil
}

// Close closes the file.
func (lf *File) Close() error {
	err := lf.f.Close()
	if lf.lock != nil {
		lf.lock.Close()
		lf.lock = nil
	}
	return err
}

func syncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("storage: sync directory: %w", err)
	}
	return nil
}
