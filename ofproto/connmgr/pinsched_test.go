package connmgr

import (
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestPinschedBypassesWithinBurstThenQueuesAndDropsFromLongestQueue(t *testing.T) {
	clk := &fakeClock{t: time.Unix(100, 0)}
	p := newPinsched(pinLimits{Rate: 100, Burst: 25}, clk.now)
	var sent []uint32
	emit := func(port uint32) func() { return func() { sent = append(sent, port) } }
	// The bucket starts full: 25 go out at once.
	for i := 0; i < 25; i++ {
		p.send(1, emit(1))
	}
	if len(sent) != 25 {
		t.Fatalf("sent %d of the first 25, want all", len(sent))
	}
	// Then 30 from port 1 and 5 from port 2 wait; the backlog is capped
	// at the burst (25), the excess taken from port 1's longer queue.
	for i := 0; i < 30; i++ {
		p.send(1, emit(1))
	}
	for i := 0; i < 5; i++ {
		p.send(2, emit(2))
	}
	st := p.snapshot()
	if st.Bypassed != 25 || st.Queued != 35 || st.Dropped != 10 || st.Backlog != 25 {
		t.Fatalf("stats %+v, want bypassed 25, queued 35, dropped 10, backlog 25", st)
	}
	if len(p.queues[2]) != 5 || len(p.queues[1]) != 20 {
		t.Fatalf("queues: port 1 %d, port 2 %d; want 20 and 5", len(p.queues[1]), len(p.queues[2]))
	}
	// 100 ms at 100/s is 10 tokens: 10 go out, alternating ports.
	sent = nil
	clk.t = clk.t.Add(100 * time.Millisecond)
	if wait := p.drain(); wait <= 0 {
		t.Fatalf("drain with a backlog left returned wait %v", wait)
	}
	want := []uint32{1, 2, 1, 2, 1, 2, 1, 2, 1, 2}
	if len(sent) != len(want) {
		t.Fatalf("drained %v, want %v", sent, want)
	}
	for i := range want {
		if sent[i] != want[i] {
			t.Fatalf("drained %v, want round-robin %v", sent, want)
		}
	}
	// Enough time for the rest: everything goes, nothing waits.
	clk.t = clk.t.Add(time.Second)
	sent = nil
	if wait := p.drain(); wait != 0 || len(sent) != 15 {
		t.Fatalf("final drain sent %d (want 15), wait %v (want 0)", len(sent), wait)
	}
	if st := p.snapshot(); st.Backlog != 0 {
		t.Fatalf("backlog %d after draining", st.Backlog)
	}
}

func TestPinschedLimitsDefaultLikeOpenVSwitch(t *testing.T) {
	for _, c := range []struct{ in, want pinLimits }{
		{pinLimits{}, pinLimits{1000, 250}},
		{pinLimits{Rate: 100}, pinLimits{100, 25}},
		{pinLimits{Rate: 2}, pinLimits{2, 1}},
		{pinLimits{Rate: 500, Burst: 7}, pinLimits{500, 7}},
	} {
		if got := c.in.adjust(); got != c.want {
			t.Errorf("%+v adjusted to %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestPinschedShrinkingBurstDropsBacklog(t *testing.T) {
	clk := &fakeClock{t: time.Unix(100, 0)}
	p := newPinsched(pinLimits{Rate: 10, Burst: 10}, clk.now)
	for i := 0; i < 20; i++ {
		p.send(uint32(i%2), func() {})
	}
	p.setLimits(pinLimits{Rate: 10, Burst: 4})
	if st := p.snapshot(); st.Backlog != 4 || st.Dropped != 6 {
		t.Fatalf("after shrinking the burst: %+v, want backlog 4, dropped 6", st)
	}
}
