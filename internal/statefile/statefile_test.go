package statefile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func sample() *File {
	return &File{
		GVSVersion: "0.1.0-test",
		Written:    time.Unix(1700000000, 123),
		Sections: []Section{
			{Name: "conntrack/ovs-netdev", Version: 1, Data: []byte("abc")},
			{Name: "empty", Version: 7},
		},
	}
}

func TestEncodeDecodeRoundTripsSectionsVersionAndTime(t *testing.T) {
	b, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	f, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if f.GVSVersion != "0.1.0-test" || !f.Written.Equal(time.Unix(1700000000, 123)) || len(f.Sections) != 2 {
		t.Fatalf("decoded %+v", f)
	}
	s, ok := f.Section("conntrack/ovs-netdev")
	if !ok || s.Version != 1 || string(s.Data) != "abc" {
		t.Fatalf("section %+v %v", s, ok)
	}
	if s, ok := f.Section("empty"); !ok || s.Version != 7 || len(s.Data) != 0 {
		t.Fatalf("empty section %+v %v", s, ok)
	}
}

func TestDecodeRefusesOtherFilesVersionsTruncationAndDamage(t *testing.T) {
	good, _ := Encode(sample())
	otherVersion := bytes.Clone(good)
	otherVersion[len(Magic)+1] = 2
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 1
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrNotStateFile},
		{"other file", []byte("OVSDB JSON 42 0123\n{}"), ErrNotStateFile},
		{"other format version", otherVersion, ErrVersion},
		{"truncated", good[:len(good)-5], ErrCorrupt},
		{"header only", good[:len(Magic)+3], ErrCorrupt},
		{"bit flipped", flipped, ErrCorrupt},
		{"trailing byte", append(bytes.Clone(good), 0), ErrCorrupt},
	} {
		if _, err := Decode(tc.b); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestWriteFileReplacesAtomicallyAndReadFileReportsMissing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ct.state")
	if _, err := ReadFile(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if err := WriteFile(p, sample()); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(p)
	if err != nil || len(f.Sections) != 2 {
		t.Fatalf("%v %+v", err, f)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
}

// FuzzDecode: nothing panics, and whatever decodes re-encodes to the
// same bytes.
func FuzzDecode(f *testing.F) {
	good, _ := Encode(sample())
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add([]byte(Magic))
	e, _ := Encode(&File{})
	f.Add(e)
	f.Fuzz(func(t *testing.T, b []byte) {
		fl, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Encode(fl)
		if err != nil {
			t.Fatalf("re-encoding a decoded file: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs")
		}
	})
}
