package conntrack

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// populate commits TCP with SNAT (zone 1, marked and labelled), UDP
// (zone 2), an ICMP echo (zone 0), IPv6 TCP (zone 3) and a TFTP request
// whose helper expects the server's answer.
func populate(t *testing.T, tr *Tracker) {
	t.Helper()
	snat := "ct(commit,zone=1,nat(src=192.168.0.100:5000-5000),mark=0x2a/0xff,label=0x10/0xff)"
	run(t, tr, snat, tcp4(t, cA, cB, 1234, 80, fSYN, 100, 0, nil))
	run(t, tr, "ct(zone=1,nat)", tcp4(t, cB, "192.168.0.100", 80, 5000, fSYN|fACK, 500, 101, nil))
	wantState(t, run(t, tr, "ct(zone=1,nat)", tcp4(t, cA, cB, 1234, 80, fACK, 101, 501, []byte("hello"))), "+trk+est+snat")
	run(t, tr, "ct(commit,zone=2)", udp4(t, cA, cB, 4000, 53))
	run(t, tr, "ct(zone=2)", udp4(t, cB, cA, 53, 4000))
	run(t, tr, "ct(commit)", icmp4Echo(t, cA, cB, 8, 77))
	run(t, tr, "ct(commit,zone=3)", tcp6(t, "fd00::1", "fd00::2", 999, 22, fSYN, 1, 0))
	run(t, tr, "ct(commit,helper=tftp)", udp4(t, cA, cB, 3000, 69))
}

// followUps are packets of the populated connections and what they get.
func followUps(t *testing.T) []struct {
	act   string
	frame []byte
	state string
} {
	return []struct {
		act   string
		frame []byte
		state string
	}{
		{"ct(zone=1,nat)", tcp4(t, cA, cB, 1234, 80, fACK, 106, 501, []byte("more")), "+trk+est+snat"},
		{"ct(zone=1,nat)", tcp4(t, cB, "192.168.0.100", 80, 5000, fACK, 501, 110, nil), "+trk+est+rpl+dnat"},
		// Far outside the tracked window: the window state came along.
		{"ct(zone=1,nat)", tcp4(t, cB, "192.168.0.100", 80, 5000, fACK, 501+1<<30, 110, []byte("x")), "+trk+inv"},
		{"ct(zone=2)", udp4(t, cB, cA, 53, 4000), "+trk+est+rpl"},
		{"ct(zone=2)", udp4(t, cA, cB, 4000, 53), "+trk+est"},
		{"ct", icmp4Echo(t, cB, cA, 0, 77), "+trk+est+rpl"},
		{"ct(zone=3)", tcp6(t, "fd00::2", "fd00::1", 22, 999, fSYN|fACK, 7, 2), "+trk+est+rpl"},
		{"ct(commit)", udp4(t, cB, cA, 40000, 3000), "+trk+new+rel"},
		// Not part of any connection: new, as before the restart.
		{"ct(zone=2)", udp4(t, cB, cA, 53, 4001), "+trk+new"},
	}
}

func TestExportImportGivesIdenticalDumpsAndCtResults(t *testing.T) {
	a, clkA := newTracker(t)
	populate(t, a)
	clkA.advance(3)
	state := a.ExportState()

	clkB := &fakeClock{ns: 777e9} // another process, another monotonic clock
	b := New(Config{Now: clkB.now})
	res, err := b.ImportState(state, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported != 5 || res.Expectations != 1 || res.Expired+res.Existing+res.Refused != 0 {
		t.Fatalf("import: %v", res)
	}
	if got, want := FormatDump(b.Dump(nil), true), FormatDump(a.Dump(nil), true); got != want {
		t.Fatalf("dump after import:\n%s\nexporter's:\n%s", got, want)
	}
	if !strings.Contains(FormatDump(a.Dump(nil), false), "reply=(src=10.0.0.2,dst=192.168.0.100,sport=80,dport=5000),zone=1,mark=42,labels=0x10,protoinfo=(state=ESTABLISHED)") {
		t.Fatalf("populate did not build the NAT connection:\n%s", FormatDump(a.Dump(nil), false))
	}
	for i, f := range followUps(t) {
		pa, pb := run(t, a, f.act, f.frame), run(t, b, f.act, bytes.Clone(f.frame))
		if stateString(pa.Md.CtState) != f.state {
			t.Fatalf("packet %d in the exporter: ct_state %s, want %s", i, stateString(pa.Md.CtState), f.state)
		}
		if stateString(pb.Md.CtState) != f.state || !bytes.Equal(pa.Data(), pb.Data()) || pa.Md.CtMark != pb.Md.CtMark || pa.Md.CtLabel != pb.Md.CtLabel {
			t.Fatalf("packet %d: importer gives %s (%+v), exporter %s", i, stateString(pb.Md.CtState), pb.Md, f.state)
		}
	}
	if got, want := FormatDump(b.Dump(nil), true), FormatDump(a.Dump(nil), true); got != want {
		t.Fatalf("dump after follow-ups:\n%s\nexporter's:\n%s", got, want)
	}
}

func TestImportTakesTheStoredTimeFromExpiriesAndKeepsExistingConnections(t *testing.T) {
	a, _ := newTracker(t)
	populate(t, a)
	state := a.ExportState()
	b, _ := newTracker(t)
	// After 45 s of storage the bidirectional UDP (30 s), the IPv6
	// SYN_SENT (30 s) and the TFTP expectation (30 s) are over; the
	// established TCP, the one-way TFTP request (60 s) and the ICMP echo
	// (60 s) are left, and the echo is already in the new tracker.
	run(t, b, "ct(commit)", icmp4Echo(t, cA, cB, 8, 77))
	res, err := b.ImportState(state, 45*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported != 2 || res.Existing != 1 || res.Expired != 2 || res.Expectations != 0 {
		t.Fatalf("import after 45 s: %v\n%s", res, FormatDump(b.Dump(nil), true))
	}
	if d := FormatDump(b.Dump(nil), true); !strings.Contains(d, "zone=1,timeout=86355,mark=42") {
		t.Fatalf("TCP timeout not reduced by the storage time:\n%s", d)
	}
}

func TestImportRespectsZoneLimits(t *testing.T) {
	a, _ := newTracker(t)
	for p := range 5 {
		run(t, a, "ct(commit,zone=7)", udp4(t, cA, cB, uint16(1000+p), 53))
	}
	b, _ := newTracker(t)
	b.SetLimits(nil, map[uint16]uint32{7: 3})
	res, err := b.ImportState(a.ExportState(), 0)
	if err != nil || res.Imported != 3 || res.Refused != 2 || b.ZoneCount(7) != 3 {
		t.Fatalf("%v %v count %d", res, err, b.ZoneCount(7))
	}
}

func TestImportRefusesDamagedStateAndAddsNothing(t *testing.T) {
	a, _ := newTracker(t)
	populate(t, a)
	good := a.ExportState()
	badFamily := bytes.Clone(good)
	badFamily[8+39] = 5 // first connection's original key family
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"other magic", append([]byte("CTS2"), good[4:]...)},
		{"truncated", good[:len(good)-3]},
		{"truncated record", good[:8+connRecSize/2]},
		{"count too large", append(append([]byte("CTS1"), 0xff, 0xff, 0xff, 0xff), good[8:]...)},
		{"family", badFamily},
		{"trailing", append(bytes.Clone(good), 1)},
	} {
		b, _ := newTracker(t)
		res, err := b.ImportState(tc.b, 0)
		if !errors.Is(err, ErrState) || b.Count() != 0 || res.Imported != 0 {
			t.Errorf("%s: %v %v, %d connections", tc.name, res, err, b.Count())
		}
	}
}

// FuzzImportState: arbitrary encodings never panic, and whatever imports
// exports again without error.
func FuzzImportState(f *testing.F) {
	a, _ := newTracker(f)
	empty := a.ExportState()
	f.Add(empty)
	run(f, a, "ct(commit,zone=1,nat(src=192.168.0.100:5000-5000))", tcp4(f, cA, cB, 1234, 80, fSYN, 100, 0, nil))
	run(f, a, "ct(commit,helper=tftp)", udp4(f, cA, cB, 3000, 69))
	f.Add(a.ExportState())
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, _ := newTracker(t)
		if _, err := tr.ImportState(b, 0); err != nil {
			return
		}
		_ = FormatDump(tr.Dump(nil), false)
		tr2, _ := newTracker(t)
		if _, err := tr2.ImportState(tr.ExportState(), 0); err != nil {
			t.Fatalf("re-import: %v", err)
		}
		tr.Sweep(1<<62, 1000)
	})
}

// TestExportImportWhilePacketsRun exports and imports (dpctl/ct-save and
// ct-restore at run time) while another goroutine commits and updates
// connections; run under -race.
func TestExportImportWhilePacketsRun(t *testing.T) {
	tr, _ := newTracker(t)
	frames := make([][]byte, 64)
	for i := range frames {
		frames[i] = udp4(t, cA, cB, uint16(2000+i), 53)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for r := range 50 {
			for i, f := range frames {
				if (i+r)%7 == 0 {
					tr.FlushZone(1)
				}
				run(t, tr, "ct(commit,zone=1)", bytes.Clone(f))
			}
		}
	}()
	for range 50 {
		st := tr.ExportState()
		if _, err := tr.ImportState(st, 0); err != nil {
			t.Error(err)
			break
		}
	}
	<-done
	if _, err := New(Config{}).ImportState(tr.ExportState(), 0); err != nil {
		t.Fatal(err)
	}
}
