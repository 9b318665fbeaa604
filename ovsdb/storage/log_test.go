package storage

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRecordFramingMatchesOVSDBTool(t *testing.T) {
	// ovsdb-tool frames {"a":1} with the length and SHA-1 of the text
	// plus its newline.
	got := string(AppendRecord(nil, []byte(`{"a":1}`)))
	want := "OVSDB JSON 8 8a3d961f7fe8ef7b41d461059884a9461be85059\n{\"a\":1}\n"
	if got != want {
		t.Fatalf("record %q, want %q", got, want)
	}
	recs, off, err := ReadRecords(strings.NewReader(got + got))
	if err != nil || len(recs) != 2 || off != int64(2*len(got)) || string(recs[1]) != `{"a":1}` {
		t.Fatalf("ReadRecords = %q, %d, %v", recs, off, err)
	}
}

func TestOpenTruncatesTornTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "db")
	f, err := Create(path, []byte(`{"name":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Append([]byte(`{"t":{}}`)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	good, _ := os.ReadFile(path)
	corrupt := AppendRecord(nil, []byte(`{"u":{}}`))
	corrupt[len(corrupt)-3] ^= 1 // checksum no longer matches
	for _, tail := range [][]byte{[]byte("OVSDB JSON 99"), corrupt, AppendRecord(nil, []byte(`{"v":1}`))[:20]} {
		os.WriteFile(path, append(append([]byte{}, good...), tail...), 0o600)
		f, recs, info, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 2 || info.Truncated != int64(len(tail)) || f.Size() != int64(len(good)) {
			t.Errorf("tail %q: %d records, truncated %d, size %d", tail, len(recs), info.Truncated, f.Size())
		}
		// Appending after the cut continues a clean log.
		if err := f.Append([]byte(`{"w":2}`)); err != nil {
			t.Fatal(err)
		}
		f.Close()
		data, _ := os.ReadFile(path)
		if !bytes.HasPrefix(data, good) {
			t.Errorf("tail %q: good records damaged", tail)
		}
		recs2, _, _ := ReadRecords(bytes.NewReader(data))
		if len(recs2) != 3 || string(recs2[2]) != `{"w":2}` {
			t.Errorf("tail %q: records after append %q", tail, recs2)
		}
	}
}

func TestCompactReplacesFileAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "db")
	f, err := Create(path, []byte(`{"name":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		f.Append([]byte(`{"t":{"pad":"` + strings.Repeat("x", 100) + `"}}`))
	}
	if !f.ShouldCompact(100) {
		t.Fatalf("log of %d bytes should compact", f.Size())
	}
	if err := f.Compact([]byte(`{"name":"x"}`), []byte(`{"snap":1}`)); err != nil {
		t.Fatal(err)
	}
	if f.ShouldCompact(100) {
		t.Error("should not compact right after compaction")
	}
	f.Append([]byte(`{"after":1}`))
	f.Close()
	data, _ := os.ReadFile(path)
	recs, _, _ := ReadRecords(bytes.NewReader(data))
	if len(recs) != 3 || string(recs[1]) != `{"snap":1}` || string(recs[2]) != `{"after":1}` {
		t.Errorf("records after compaction: %q", recs)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}
}

func TestCreateRefusesExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	os.WriteFile(path, []byte("x"), 0o600)
	if _, err := Create(path, []byte(`{}`)); err == nil {
		t.Error("Create overwrote an existing file")
	}
}

// FuzzReadRecords reads arbitrary bytes as a log: it must not panic, must
// report a good prefix within the input, and the records it keeps must
// survive being framed and read again unchanged.
func FuzzReadRecords(f *testing.F) {
	f.Add(AppendRecord(AppendRecord(nil, []byte(`{"name":"x"}`)), []byte(`{"t":{"u":null}}`)))
	f.Add([]byte("OVSDB JSON 3 0000000000000000000000000000000000000000\n{}\n"))
	f.Add([]byte("OVSDB JSON 99999999999 x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, good, err := ReadRecords(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("ReadRecords: %v", err)
		}
		if good < 0 || good > int64(len(data)) {
			t.Fatalf("good prefix %d of %d bytes", good, len(data))
		}
		var again []byte
		for _, r := range recs {
			again = AppendRecord(again, r)
		}
		recs2, good2, _ := ReadRecords(bytes.NewReader(again))
		if good2 != int64(len(again)) || len(recs2) != len(recs) {
			t.Fatalf("re-read %d of %d records", len(recs2), len(recs))
		}
		for i := range recs {
			if !bytes.Equal(recs[i], recs2[i]) {
				t.Fatalf("record %d changed: %q -> %q", i, recs[i], recs2[i])
			}
		}
	})
}
