package meter

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/datapath/packet"
)

// MaxMeters bounds the datapath meter ids (the bound Open vSwitch's
// datapaths report as max_meter in meter features).
const MaxMeters = 1 << 18

// MaxBands is the number of bands a meter may have.
const MaxBands = 8

// Band is one drop band.
type Band struct {
	// Rate is in kbps, or in packets per second with Config.Pktps.
	Rate uint32
	// Burst is the bucket size in kilobits or packets; 0 means Rate.
	Burst uint32
}

// Config is a meter's configuration.
type Config struct {
	Pktps bool
	Bands []Band
}

// BandStats counts the packets a band dropped.
type BandStats struct {
	Packets, Bytes uint64
}

// Stats are a meter's counters.
type Stats struct {
	Packets, Bytes uint64 // every packet that reached the meter
	Bands          []BandStats
}

// ErrNoMeter is returned for an id without a meter.
var ErrNoMeter = errors.New("no such meter")

type band struct {
	rate     uint64 // kbps (= bits per ms) or packets per second (= milli-packets per ms)
	capacity uint64 // bits, or milli-packets
	bucket   uint64 // tokens available, in the units of capacity
	frac     uint64 // refill carried over, in tokens × nanoseconds per millisecond
	stats    BandStats
}

// Meter is one configured meter.
type Meter struct {
	mu      sync.Mutex
	pktps   bool
	bands   []band
	last    int64 // monotonic nanoseconds of the last refill
	maxIdle int64 // nanoseconds after which every bucket is full again
	packets uint64
	bytes   uint64
}

// Table holds a datapath's meters by id.
type Table struct {
	mu       sync.Mutex
	meters   atomic.Pointer[map[uint32]*Meter]
	reserved map[uint32]bool // ids handed out by Alloc (mu)
	lowFree  uint32          // no id below it is free (mu)
	clock    func() int64
}

// NewTable returns an empty table. clock returns monotonic nanoseconds;
// nil uses the runtime's monotonic clock.
func NewTable(clock func() int64) *Table {
	if clock == nil {
		start := time.Now()
		clock = func() int64 { return int64(time.Since(start)) }
	}
	t := &Table{clock: clock, reserved: map[uint32]bool{}}
	m := map[uint32]*Meter{}
	t.meters.Store(&m)
	return t
}

// Set adds or replaces meter id. Replacing keeps the counters of the
// bands that remain (as Open vSwitch's modify keeps stats) and refills
// the buckets.
func (t *Table) Set(id uint32, cfg Config) error {
	if id >= MaxMeters {
		return fmt.Errorf("meter %d: id out of range (max %d)", id, MaxMeters-1)
	}
	if len(cfg.Bands) == 0 || len(cfg.Bands) > MaxBands {
		return fmt.Errorf("meter %d: %d bands (1 to %d allowed)", id, len(cfg.Bands), MaxBands)
	}
	m := &Meter{pktps: cfg.Pktps, bands: make([]band, len(cfg.Bands)), last: t.clock()}
	for i, b := range cfg.Bands {
		if b.Rate == 0 {
			return fmt.Errorf("meter %d band %d: rate 0", id, i)
		}
		burst := b.Burst
		if burst == 0 {
			burst = b.Rate
		}
		// Tokens are bits (kbps) or thousandths of a packet (pktps): either
		// way a band refills by its rate per millisecond.
		m.bands[i] = band{rate: uint64(b.Rate), capacity: uint64(burst) * 1000}
		m.bands[i].bucket = m.bands[i].capacity
		if idle := int64(m.bands[i].capacity/m.bands[i].rate+1) * int64(time.Millisecond); idle > m.maxIdle {
			m.maxIdle = idle
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := *t.meters.Load()
	next := make(map[uint32]*Meter, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	if prev := old[id]; prev != nil {
		prev.mu.Lock()
		m.packets, m.bytes = prev.packets, prev.bytes
		for i := range m.bands {
			if i < len(prev.bands) {
				m.bands[i].stats = prev.bands[i].stats
			}
		}
		prev.mu.Unlock()
	}
	next[id] = m
	t.meters.Store(&next)
	return nil
}

// Delete removes meter id and returns its last counters.
func (t *Table) Delete(id uint32) (Stats, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := *t.meters.Load()
	m := old[id]
	if m == nil {
		return Stats{}, fmt.Errorf("meter %d: %w", id, ErrNoMeter)
	}
	next := make(map[uint32]*Meter, len(old))
	for k, v := range old {
		if k != id {
			next[k] = v
		}
	}
	t.meters.Store(&next)
	return m.Stats(), nil
}

// Alloc reserves the lowest free meter id, so that the bridges sharing a
// datapath number their meters from 0 as Open vSwitch does.
func (t *Table) Alloc() (uint32, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id := t.lowFree; id < MaxMeters; id++ {
		if !t.reserved[id] {
			t.reserved[id] = true
			t.lowFree = id + 1
			return id, nil
		}
	}
	return 0, fmt.Errorf("all %d datapath meters in use", MaxMeters)
}

// Free releases an id from Alloc (its meter, if any, is deleted first).
func (t *Table) Free(id uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reserved[id] {
		delete(t.reserved, id)
		t.lowFree = min(t.lowFree, id)
	}
}

// Now reads the table's clock, the time Apply expects.
func (t *Table) Now() int64 { return t.clock() }

// Get returns meter id, nil if there is none.
func (t *Table) Get(id uint32) *Meter { return (*t.meters.Load())[id] }

// Len is the number of meters.
func (t *Table) Len() int { return len(*t.meters.Load()) }

// Stats returns a copy of the meter's counters.
func (m *Meter) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Stats{Packets: m.packets, Bytes: m.bytes, Bands: make([]BandStats, len(m.bands))}
	for i := range m.bands {
		s.Bands[i] = m.bands[i].stats
	}
	return s
}

// Apply meters the packets of b at time now (from the table's clock) and
// reports in drop which ones exceeded a band (drop[i] for b.Pkts[i]). It
// returns the number of packets to drop. It allocates nothing.
func (m *Meter) Apply(now int64, b *packet.Batch, drop *[packet.BatchSize]bool) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if dt := now - m.last; dt > 0 {
		if dt > m.maxIdle {
			dt = m.maxIdle
		}
		// Refill by rate per millisecond, carrying the fraction so that
		// frequent small batches lose nothing. dt is capped at maxIdle,
		// so rate×dt stays far below 2^64.
		for i := range m.bands {
			bd := &m.bands[i]
			acc := bd.rate*uint64(dt) + bd.frac
			bd.frac = acc % uint64(time.Millisecond)
			bd.bucket = min(bd.bucket+acc/uint64(time.Millisecond), bd.capacity)
		}
		m.last = now
	}
	dropped := 0
	for i, p := range b.Slice() {
		n := uint64(p.Len())
		m.packets++
		m.bytes += n
		cost := uint64(1000)
		if !m.pktps {
			cost = n * 8
		}
		worst := -1
		for j := range m.bands {
			bd := &m.bands[j]
			if bd.bucket >= cost {
				bd.bucket -= cost
			} else if worst < 0 || bd.rate > m.bands[worst].rate {
				worst = j
			}
		}
		drop[i] = worst >= 0
		if worst >= 0 {
			m.bands[worst].stats.Packets++
			m.bands[worst].stats.Bytes += n
			dropped++
		}
	}
	return dropped
}
