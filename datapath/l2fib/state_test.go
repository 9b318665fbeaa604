package l2fib

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"
)

// A table rebuilt from another's state has the same entries, as old as
// they were (fdb/show's text is identical), and the same counters.
func TestImportedStateIsTheSameTable(t *testing.T) {
	src := newTable(t, Config{})
	for i := 0; i < 10; i++ {
		src.Learn(uint16(i%3), mac(i), uint32(1+i%4))
	}
	src.Tick(t0.Add(7 * time.Second))
	for i := 5; i < 8; i++ {
		src.Learn(uint16(i%3), mac(i), 9) // moves, refreshed
	}
	if err := src.AddStatic(42, mac(100), 3); err != nil {
		t.Fatal(err)
	}
	st := src.ExportState()

	dst := newTable(t, Config{})
	dst.Tick(t0.Add(7 * time.Second))
	n, err := dst.ImportState(st)
	if err != nil || n != 11 {
		t.Fatalf("ImportState = %d, %v; want 11 entries", n, err)
	}
	show := func(tb *Table) string {
		return string(AppendShow(nil, tb.Dump(), func(p uint32) string { return string(rune('0' + p)) }))
	}
	if got, want := show(dst), show(src); got != want {
		t.Fatalf("fdb/show after import:\n%s\nwant\n%s", got, want)
	}
	if got, want := dst.Stats(), src.Stats(); got != want {
		t.Fatalf("counters after import %+v, want %+v", got, want)
	}
}

// Into a smaller table the oldest dynamic entries do not fit and count
// as expired; static entries always come.
func TestImportIntoASmallerTableKeepsTheNewest(t *testing.T) {
	src := newTable(t, Config{})
	for i := 0; i < 6; i++ {
		src.Learn(0, mac(i), 1)
		src.Tick(t0.Add(time.Duration(i+1) * time.Second))
	}
	src.AddStatic(0, mac(50), 2)
	dst := newTable(t, Config{Capacity: 4})
	n, err := dst.ImportState(src.ExportState())
	if err != nil || n != 4 {
		t.Fatalf("ImportState = %d, %v; want 4", n, err)
	}
	for i, want := range []bool{false, false, false, true, true, true} {
		if _, ok := dst.Lookup(0, mac(i)); ok != want {
			t.Errorf("entry %d present %v, want %v", i, ok, want)
		}
	}
	if _, ok := dst.Lookup(0, mac(50)); !ok {
		t.Error("static entry left out")
	}
	if st := dst.Stats(); st.Expired != 3 || st.Learned != 6 {
		t.Fatalf("counters %+v: want 3 expired, 6 learned", st)
	}
}

func TestImportRefusesStateThatFailsItsChecksAndAddsNothing(t *testing.T) {
	src := newTable(t, Config{})
	src.Learn(7, mac(1), 1)
	src.Learn(8, mac(2), 1)
	good := src.ExportState()
	bad := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for name, b := range map[string][]byte{
		"magic":     bad(func(b []byte) []byte { b[3] = '2'; return b }),
		"truncated": bad(func(b []byte) []byte { return b[:len(b)-1] }),
		"count":     bad(func(b []byte) []byte { binary.BigEndian.PutUint32(b[4:], 3); return b }),
		"vlan":      bad(func(b []byte) []byte { binary.BigEndian.PutUint16(b[8+entryRec:], 4096); return b }),
		"flags":     bad(func(b []byte) []byte { b[8+entryRec+16] = 2; return b }),
	} {
		dst := newTable(t, Config{})
		if _, err := dst.ImportState(b); !errors.Is(err, ErrState) {
			t.Errorf("%s: %v, want ErrState", name, err)
		}
		if dst.Len() != 0 || dst.Stats().Learned != 0 {
			t.Errorf("%s: a refused state added entries", name)
		}
	}
}

func FuzzImportState(f *testing.F) {
	src, _ := New(Config{}, t0)
	src.Learn(1, MAC{2, 0, 0, 0, 0, 1}, 3)
	f.Add(src.ExportState())
	f.Add([]byte("MTS1\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dst, err := New(Config{Capacity: 16}, t0)
		if err != nil {
			t.Fatal(err)
		}
		n, err := dst.ImportState(b)
		if err == nil && dst.Len() > 16+n {
			t.Fatalf("%d entries after importing %d", dst.Len(), n)
		}
	})
}
