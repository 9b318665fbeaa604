package coverage

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/unixctl"
)

// Interval is how often Run samples the counters; the rates shown are
// per second over the last interval, minute and hour.
const Interval = 5 * time.Second

const (
	samplesPerMinute = int(time.Minute / Interval)
	minutesPerHour   = 60
)

// Counter is one named event count.
type Counter struct {
	name string
	n    atomic.Uint64

	// Sampling state, guarded by the registry's mu.
	last    uint64                   // total at the previous tick
	samples [samplesPerMinute]uint64 // events per interval, ring
	minutes [minutesPerHour]uint64   // events per minute, ring
	partial uint64                   // events since the last minute boundary
}

// Name returns the counter's name.
func (c *Counter) Name() string { return c.name }

// Add counts n events.
func (c *Counter) Add(n uint64) { c.n.Add(n) }

// Inc counts one event.
func (c *Counter) Inc() { c.n.Add(1) }

// Value returns the total count.
func (c *Counter) Value() uint64 { return c.n.Load() }

// Registry holds a daemon's counters.
type Registry struct {
	mu       sync.Mutex
	counters []*Counter          // guarded by mu; registration order
	byName   map[string]*Counter // guarded by mu
	ticks    int                 // guarded by mu
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{byName: make(map[string]*Counter)}
}

// Counter returns the counter called name, creating it on first use.
func (r *Registry) Counter(name string) *Counter {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.byName[name]; ok {
		return c
	}
	c := &Counter{name: name}
	r.counters = append(r.counters, c)
	r.byName[name] = c
	return c
}

// Tick takes one sample of every counter; call it once per Interval.
func (r *Registry) Tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	slot := r.ticks % samplesPerMinute
	endOfMinute := slot == samplesPerMinute-1
	minute := (r.ticks / samplesPerMinute) % minutesPerHour
	for _, c := range r.counters {
		total := c.n.Load()
		delta := total - c.last
		c.last = total
		c.samples[slot] = delta
		c.partial += delta
		if endOfMinute {
			c.minutes[minute] = c.partial
			c.partial = 0
		}
	}
	r.ticks++
}

// Run calls Tick every Interval until ctx ends.
func (r *Registry) Run(ctx context.Context) {
	t := time.NewTicker(Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.Tick()
		}
	}
}

// Show renders coverage/show as Open vSwitch prints it.
func (r *Registry) Show() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := fnv.New32a()
	var lines strings.Builder
	never := 0
	lastSlot := (r.ticks + samplesPerMinute - 1) % samplesPerMinute
	for _, c := range r.counters {
		total := c.n.Load()
		if total == 0 {
			never++
			continue
		}
		h.Write([]byte(c.name))
		var sec5, minute, hour uint64
		if r.ticks > 0 {
			sec5 = c.samples[lastSlot]
		}
		for _, s := range c.samples {
			minute += s
		}
		for _, m := range c.minutes {
			hour += m
		}
		hour += c.partial
		lines.WriteString(formatLine(c.name, float64(sec5)/Interval.Seconds(), float64(minute)/60, float64(hour)/3600, total))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Event coverage, avg rate over last: 5 seconds, last minute, last hour,  hash=%08x:\n", h.Sum32())
	b.WriteString(lines.String())
	fmt.Fprintf(&b, "%d events never hit\n", never)
	return b.String()
}

// formatLine renders one counter as coverage/show prints it.
func formatLine(name string, perSec5, perSecMin, perSecHour float64, total uint64) string {
	return fmt.Sprintf("%-24s %5.1f/sec %9.3f/sec %13.4f/sec   total: %d\n", name, perSec5, perSecMin, perSecHour, total)
}

// RegisterCommands adds coverage/show and coverage/read-counter to reg.
func (r *Registry) RegisterCommands(reg *unixctl.Registry) error {
	if err := reg.Register("coverage/show", "", 0, 0, func(context.Context, []string) (string, error) {
		return r.Show(), nil
	}); err != nil {
		return err
	}
	return reg.Register("coverage/read-counter", "COUNTER", 1, 1, func(_ context.Context, args []string) (string, error) {
		r.mu.Lock()
		c, ok := r.byName[args[0]]
		r.mu.Unlock()
		if !ok {
			return "", errors.New("No such counter")
		}
		return strconv.FormatUint(c.Value(), 10), nil
	})
}
