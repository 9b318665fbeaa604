package l2fib

import (
	"errors"
	"testing"
	"time"
)

// TestSetCapacityBelowTheEntriesRemovesTheOldestAtOnce: lowering
// mac-table-size below what the table holds removes the least recently
// used dynamic entries down to the new size at once, counted as expired
// (as Open vSwitch's mac_learning_run); static entries stay; raising it
// again within the allocation removes nothing; past it, SetCapacity says
// so and Resize carries every entry, age and counter into a larger table.
func TestSetCapacityBelowTheEntriesRemovesTheOldestAtOnce(t *testing.T) {
	tb := newTable(t, Config{Capacity: 100, Shards: 4})
	for i := 0; i < 40; i++ {
		tb.Learn(1, mac(i), uint32(1+i%3))
	}
	tb.Tick(t0.Add(5 * time.Second))
	for i := 40; i < 80; i++ {
		tb.Learn(1, mac(i), uint32(1+i%3))
	}
	for i := 0; i < 5; i++ {
		if err := tb.AddStatic(2, mac(1000+i), 9); err != nil {
			t.Fatal(err)
		}
	}
	n, err := tb.SetCapacity(50)
	if err != nil || n != 35 {
		t.Fatalf("SetCapacity(50) = %d, %v; want 35 removed", n, err)
	}
	st := tb.Stats()
	if st.Current != 50 || st.Max != 50 || st.Expired != 35 || st.Evicted != 0 || st.Static != 5 {
		t.Fatalf("after shrink: %+v", st)
	}
	// The 35 removed are among the 40 learned 5 s before the others.
	oldKept := 0
	for i := 0; i < 80; i++ {
		_, ok := tb.Lookup(1, mac(i))
		switch {
		case i >= 40 && !ok:
			t.Fatalf("entry %d, among the newest, was removed", i)
		case i < 40 && ok:
			oldKept++
		}
	}
	if oldKept != 5 {
		t.Fatalf("%d of the oldest kept, want 5", oldKept)
	}
	for i := 0; i < 5; i++ {
		if p, ok := tb.Lookup(2, mac(1000+i)); !ok || p != 9 {
			t.Fatalf("static entry %d lost", i)
		}
	}
	// Learning now evicts to stay at 50.
	tb.Learn(1, mac(500), 1)
	if st := tb.Stats(); st.Current != 50 || st.Evicted != 1 {
		t.Fatalf("learning at the new size: %+v", st)
	}
	if n, err := tb.SetCapacity(90); err != nil || n != 0 || tb.Capacity() != 90 {
		t.Fatalf("SetCapacity(90) = %d, %v, capacity %d", n, err, tb.Capacity())
	}
	if _, err := tb.SetCapacity(200); !errors.Is(err, ErrCapacityTooLarge) {
		t.Fatalf("SetCapacity(200) = %v, want ErrCapacityTooLarge", err)
	}
	before := tb.Dump()
	big, err := tb.Resize(Config{Capacity: 200, Shards: 4}, t0.Add(7*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	after := big.Dump()
	if len(after) != len(before) {
		t.Fatalf("grown table holds %d entries, want %d", len(after), len(before))
	}
	for i := range before {
		b, a := before[i], after[i]
		if a.Port != b.Port || a.VLAN != b.VLAN || a.MAC != b.MAC || a.Static != b.Static || a.Age != b.Age {
			t.Fatalf("entry %d: %+v, want %+v", i, a, b)
		}
	}
	if st := big.Stats(); st.Max != 200 || st.Evicted != 1 || st.Expired != 35 || st.Static != 5 || st.Current != 50 {
		t.Fatalf("grown table stats %+v", st)
	}
}

// TestResizeToFewerShardsKeepsTheNewestAndEvictsAtTheNewSize: a table made
// for millions of entries, cut to a handful, is re-made with one shard
// holding the newest entries, so that learning then evicts within it (a
// table sharded for millions would refuse learns whose shard holds none).
func TestResizeToFewerShardsKeepsTheNewestAndEvictsAtTheNewSize(t *testing.T) {
	tb := newTable(t, Config{})
	for i := 0; i < 10; i++ {
		tb.Learn(0, mac(i), 1)
	}
	tb.Tick(t0.Add(time.Second))
	for i := 10; i < 15; i++ {
		tb.Learn(0, mac(i), 1)
	}
	small, err := tb.Resize(Config{Capacity: 8}, t0.Add(time.Second))
	if err != nil || small == tb {
		t.Fatalf("Resize = %p, %v: want a new table", small, err)
	}
	if st := small.Stats(); st.Current != 8 || st.Max != 8 || st.Expired != 7 || st.Learned != 15 {
		t.Fatalf("resized: %+v", st)
	}
	for i := 10; i < 15; i++ {
		if _, ok := small.Lookup(0, mac(i)); !ok {
			t.Fatalf("newest entry %d dropped", i)
		}
	}
	for i := 20; i < 23; i++ {
		small.Learn(0, mac(i), 2)
	}
	if st := small.Stats(); st.Current != 8 || st.Evicted != 3 || st.Refused != 0 || st.Learned != 18 {
		t.Fatalf("learning at the new size: %+v", st)
	}
}
