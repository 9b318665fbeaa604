package pcap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/gvs-project/gvs/internal/race"
	"io"
	"testing"
	"time"
)

func TestWriteThenReadReturnsSameFramesAndTimes(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, true)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1700000000, 123456000)
	frames := [][]byte{{1, 2, 3}, bytes.Repeat([]byte{0xab}, 1514), {}}
	for i, f := range frames {
		if err := w.WritePacket(t0.Add(time.Duration(i)*time.Second), f); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.Len(), 24+3*16+3+1514; got != want {
		t.Fatalf("file length %d, want %d", got, want)
	}
	r, err := NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range frames {
		got, ts, orig, err := r.Next()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !bytes.Equal(got, want) || orig != len(want) {
			t.Fatalf("record %d: got %d bytes (orig %d), want %d", i, len(got), orig, len(want))
		}
		if wantTS := t0.Add(time.Duration(i) * time.Second); !ts.Equal(wantTS) {
			t.Fatalf("record %d: ts %v, want %v", i, ts, wantTS)
		}
	}
	if _, _, _, err := r.Next(); err != io.EOF {
		t.Fatalf("after last record: %v, want EOF", err)
	}
}

func TestReaderAcceptsBigEndianNanosecondFiles(t *testing.T) {
	be := binary.BigEndian
	h := make([]byte, 24+16+2)
	be.PutUint32(h[0:], magicNanos)
	be.PutUint16(h[4:], 2)
	be.PutUint16(h[6:], 4)
	be.PutUint32(h[16:], 65535)
	be.PutUint32(h[20:], 1)
	be.PutUint32(h[24:], 5)
	be.PutUint32(h[28:], 7)
	be.PutUint32(h[32:], 2)
	be.PutUint32(h[36:], 60)
	h[40], h[41] = 0xaa, 0xbb
	r, err := NewReader(bytes.NewReader(h))
	if err != nil {
		t.Fatal(err)
	}
	f, ts, orig, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f, []byte{0xaa, 0xbb}) || orig != 60 || !ts.Equal(time.Unix(5, 7)) {
		t.Fatalf("got %x orig=%d ts=%v", f, orig, ts)
	}
}

func TestReaderRejectsBadInput(t *testing.T) {
	good := func() []byte {
		var b bytes.Buffer
		w, _ := NewWriter(&b, true)
		w.WritePacket(time.Unix(0, 0), []byte{1, 2, 3, 4})
		w.Flush()
		return b.Bytes()
	}
	cases := []struct {
		name string
		mut  func([]byte) []byte
		open error
		next error
	}{
		{"bad magic", func(b []byte) []byte { b[0] = 0; return b }, ErrBadMagic, nil},
		{"not ethernet", func(b []byte) []byte { b[20] = 113; return b }, ErrLinkType, nil},
		{"huge record", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[32:], 1<<31); return b }, nil, ErrRecordLen},
		{"truncated data", func(b []byte) []byte { return b[:len(b)-1] }, nil, ErrShortRecord},
		{"truncated header", func(b []byte) []byte { return b[:30] }, nil, ErrShortRecord},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(c.mut(good())))
			if c.open != nil {
				if !errors.Is(err, c.open) {
					t.Fatalf("open: %v, want %v", err, c.open)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, _, _, err := r.Next(); !errors.Is(err, c.next) {
				t.Fatalf("next: %v, want %v", err, c.next)
			}
		})
	}
}

func TestWritePacketDoesNotAllocate(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	w, _ := NewWriter(io.Discard, true)
	f := make([]byte, 64)
	ts := time.Now()
	if n := testing.AllocsPerRun(100, func() { w.WritePacket(ts, f) }); n != 0 {
		t.Fatalf("WritePacket allocates %v times", n)
	}
}

// FuzzReader checks that no input panics and that every frame read back
// and rewritten reads back identically.
func FuzzReader(f *testing.F) {
	var b bytes.Buffer
	w, _ := NewWriter(&b, true)
	w.WritePacket(time.Unix(1, 2000), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 5, 6, 8, 6})
	w.WritePacket(time.Unix(3, 0), nil)
	w.Flush()
	f.Add(b.Bytes())
	f.Add([]byte{})
	f.Add(b.Bytes()[:30])
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		ow, _ := NewWriter(&out, true)
		var frames [][]byte
		for {
			fr, ts, _, err := r.Next()
			if err != nil {
				break
			}
			frames = append(frames, append([]byte(nil), fr...))
			ow.WritePacket(ts, fr)
		}
		ow.Flush()
		r2, err := NewReader(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range frames {
			got, _, _, err := r2.Next()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("frame %d: %v %x want %x", i, err, got, want)
			}
		}
	})
}
