package ofswitch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

func newStateBridge(t testing.TB) *Bridge {
	t.Helper()
	b, err := New(Config{Name: "br0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	b.SetConfig(Settings{FailMode: "secure"}) // no default flow
	return b
}

// sampleState is a state with a TLV mapping, a meter, a group and two
// flows, one with a cookie, both timeouts, importance and flags.
func sampleState(t testing.TB) []byte {
	t.Helper()
	out := func(port uint32) []byte {
		b, err := ofp.AppendOfpacts(nil, []ofp.Action{{Type: ofp.ActOutput, Raw: ofp.RawActOFPAT10_OUTPUT, Port: port}}, stateOFVersion, true)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var st []byte
	for _, m := range []ofp.Message{
		&ofp.TLVTableMod{Command: ofp.TLVAdd, Mappings: []ofp.TLVMap{{OptClass: 0xffff, OptType: 0, OptLen: 4, Index: 0}}},
		&ofp.MeterMod{Command: ofp.MeterAdd, Flags: ofp.MeterFlagPktps, MeterID: 7, Bands: []ofp.MeterBand{{Type: ofp.MeterBandDrop, Rate: 1000}}},
		&ofp.GroupMod{Command: ofp.GroupAdd, Type: ofp.GroupTypeAll, GroupID: 5, CommandBucketID: ofp.BucketAll,
			Buckets: []ofp.Bucket{{ID: 0, WatchPort: ofp.PortAny, WatchGroup: ofp.GroupAny,
				Actions: []ofp.Action{{Type: ofp.ActOutput, Raw: ofp.RawActOFPAT10_OUTPUT, Port: 2}}}}},
		&ofp.FlowMod{Format: ofp.FormatOXM, Command: ofp.FlowAdd, TableID: 3, Priority: 77, Cookie: 0xabc,
			IdleTimeout: 600, HardTimeout: 900, Importance: 9, Flags: 1, BufferID: ofp.BufferNone,
			OutPort: ofp.PortAny, OutGroup: ofp.GroupAny, Match: matchInPort(1), Instructions: out(2)},
		&ofp.FlowMod{Format: ofp.FormatOXM, Command: ofp.FlowAdd, TableID: 0, Priority: 1, BufferID: ofp.BufferNone,
			OutPort: ofp.PortAny, OutGroup: ofp.GroupAny, Match: matchInPort(2), Instructions: out(1)},
	} {
		at := len(st)
		st = append(st, 0, 0, 0, 0)
		var err error
		if st, err = ofp.Encode(st, stateOFVersion, 0, m); err != nil {
			t.Fatal(err)
		}
		binary.BigEndian.PutUint32(st[at:], uint32(len(st)-at-4))
	}
	return st
}

// TestHandedOpenFlowStateIsTheSameSwitch: a bridge that imports another's
// held state holds the same TLV map, meters, groups and flows (its own
// export is byte for byte the same), with each flow's cookie, timeouts,
// importance, flags and packet and byte counts.
func TestHandedOpenFlowStateIsTheSameSwitch(t *testing.T) {
	a := newStateBridge(t)
	if err := a.ImportState(sampleState(t)); err != nil {
		t.Fatal(err)
	}
	m := matchInPort(1)
	ra := a.Tables().FindStrict(3, &m, 77)
	ra.Stats.Packets.Add(5)
	ra.Stats.Bytes.Add(300)
	st, release, err := a.HoldState()
	if err != nil {
		t.Fatal(err)
	}
	release()
	b := newStateBridge(t)
	if err := b.ImportState(st); err != nil {
		t.Fatal(err)
	}
	st2, release, err := b.HoldState()
	if err != nil {
		t.Fatal(err)
	}
	release()
	if !bytes.Equal(st, st2) {
		t.Fatalf("re-exported state differs:\n%x\n%x", st, st2)
	}
	r := b.Tables().FindStrict(3, &m, 77)
	if r == nil {
		t.Fatal("the flow in table 3 is missing")
	}
	if idle, hard := r.Timeouts(); r.Cookie != 0xabc || idle != 600 || hard != 900 || r.Importance != 9 || r.Flags&1 == 0 {
		t.Fatalf("flow: cookie %#x timeouts %d/%d importance %d flags %#x", r.Cookie, idle, hard, r.Importance, r.Flags)
	}
	if p, by := r.Stats.Packets.Load(), r.Stats.Bytes.Load(); p != 5 || by != 300 {
		t.Fatalf("flow counters %d packets %d bytes, want 5 and 300", p, by)
	}
	if n := b.Tables().Count(); n != 2 {
		t.Fatalf("%d flows, want 2", n)
	}
	if b.groups.m[5] == nil || b.meters.m[7] == nil || len(b.ports.tlv) != 1 {
		t.Fatalf("group 5 %v, meter 7 %v, TLV map %v", b.groups.m[5], b.meters.m[7], b.ports.tlv)
	}
}

// TestImportStateRefusesStateThatFailsItsChecks: truncated, damaged or
// foreign state, and messages that are not additions, are refused with
// ErrState before anything is applied.
func TestImportStateRefusesStateThatFailsItsChecks(t *testing.T) {
	good := sampleState(t)
	del, err := ofp.Encode([]byte{0, 0, 0, 0}, stateOFVersion, 0, &ofp.FlowMod{Format: ofp.FormatOXM, Command: ofp.FlowDelete,
		TableID: 0xff, BufferID: ofp.BufferNone, OutPort: ofp.PortAny, OutGroup: ofp.GroupAny})
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(del, uint32(len(del)-4))
	old, err := ofp.Encode([]byte{0, 0, 0, 0}, 4, 0, &ofp.BarrierRequest{})
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(old, uint32(len(old)-4))
	damaged := append([]byte(nil), good...)
	damaged[5] ^= 0xff // the first message's length field
	for name, st := range map[string][]byte{
		"truncated":        good[:len(good)-3],
		"length past end":  append(append([]byte(nil), good...), 0, 0, 1, 0, 1),
		"damaged message":  damaged,
		"a delete":         append(append([]byte(nil), good...), del...),
		"another message":  old,
		"bare length only": {0, 0},
	} {
		b := newStateBridge(t)
		err := b.ImportState(st)
		if !errors.Is(err, ErrState) {
			t.Errorf("%s: %v, want ErrState", name, err)
		}
		if n := b.Tables().Count(); n != 0 || len(b.groups.m) != 0 || len(b.meters.m) != 0 || len(b.ports.tlv) != 0 {
			t.Errorf("%s: applied something: %d flows, %d groups, %d meters, %d TLVs", name, n, len(b.groups.m), len(b.meters.m), len(b.ports.tlv))
		}
	}
}

// TestHeldStateIsNotChangedUntilReleased: while HoldState's hold is in
// effect, a flow change waits; it goes through once released.
func TestHeldStateIsNotChangedUntilReleased(t *testing.T) {
	b := newStateBridge(t)
	_, release, err := b.HoldState()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.ImportState(sampleState(t)) }()
	select {
	case err := <-done:
		t.Fatalf("a change went through a hold: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := b.Tables().Count(); n != 2 {
		t.Fatalf("%d flows after the release, want 2", n)
	}
}

// FuzzImportState: nothing panics on any state, and a state that is
// refused applies nothing.
func FuzzImportState(f *testing.F) {
	good := sampleState(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{0, 0, 0, 8, 6, 20, 0, 8, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, st []byte) {
		b := newStateBridge(t)
		if err := b.ImportState(st); errors.Is(err, ErrState) && b.Tables().Count() != 0 {
			t.Fatalf("refused state applied %d flows", b.Tables().Count())
		}
	})
}
