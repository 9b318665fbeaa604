package afpacket

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/internal/linkutil"
	"github.com/gvs-project/gvs/datapath/packet"
)

// Defaults for zero Config fields.
const (
	// 4 MiB a ring, in many small blocks: at low rates each block is
	// retired with a frame or two after BlockTimeout, so the number of
	// blocks is how long the ring holds frames while nobody reads it
	// (128 ms: a handover's pause, dpnetdev.Datapath.Pause).
	DefaultBlockSize    = 32 << 10
	DefaultNumBlocks    = 128
	DefaultBlockTimeout = time.Millisecond
)

// Config describes a system port.
type Config struct {
	// Name is the Linux interface to bind to; it must exist.
	Name string
	// RxQueues is the number of rx sockets in a fanout group (default 1).
	// Tx queues are as many.
	RxQueues int
	// BlockSize and NumBlocks size each rx ring. BlockSize must be a
	// multiple of the page size.
	BlockSize int
	NumBlocks int
	// BlockTimeout is how long the kernel waits before handing over a
	// block that is not full: the worst-case latency at low rates.
	BlockTimeout time.Duration
	// NoPromisc leaves the interface's promiscuous mode alone.
	NoPromisc bool
}

// Device is a system port.
type Device struct {
	linkutil.Link
	name     string
	ifindex  int
	rx       []*rxQueue
	tx       []*txQueue
	counters []netdev.Counters
	closed   atomic.Bool
	// closeMu keeps Close from unmapping a ring under a running Recv.
	closeMu sync.RWMutex
}

var _ netdev.Device = (*Device)(nil)

// Open binds a system port to interface cfg.Name.
func Open(cfg Config) (*Device, error) {
	ifindex, err := linkutil.Ifindex(cfg.Name)
	if err != nil {
		return nil, fmt.Errorf("afpacket: %w", err)
	}
	nq := cfg.RxQueues
	if nq <= 0 {
		nq = 1
	}
	if cfg.BlockSize <= 0 {
		cfg.BlockSize = DefaultBlockSize
	}
	if cfg.NumBlocks <= 0 {
		cfg.NumBlocks = DefaultNumBlocks
	}
	if cfg.BlockTimeout <= 0 {
		cfg.BlockTimeout = DefaultBlockTimeout
	}
	if cfg.BlockSize%unix.Getpagesize() != 0 || cfg.BlockSize < 4096 {
		return nil, fmt.Errorf("afpacket %s: block size %d is not a multiple of the page size", cfg.Name, cfg.BlockSize)
	}
	d := &Device{Link: linkutil.Link{IfName: cfg.Name, Kind: "afpacket"}, name: cfg.Name, ifindex: ifindex, counters: make([]netdev.Counters, nq)}
	fanoutID := -1
	for i := 0; i < nq; i++ {
		q, err := openRx(ifindex, cfg, nq > 1, &fanoutID, !cfg.NoPromisc && i == 0)
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("afpacket %s: rx queue %d: %w", cfg.Name, i, err)
		}
		d.rx = append(d.rx, q)
		t, err := openTx(ifindex)
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("afpacket %s: tx queue %d: %w", cfg.Name, i, err)
		}
		d.tx = append(d.tx, t)
	}
	return d, nil
}

func (d *Device) Name() string     { return d.name }
func (d *Device) Type() string     { return netdev.TypeSystem }
func (d *Device) NumRxQueues() int { return len(d.rx) }
func (d *Device) Ifindex() int     { return d.ifindex }

func (d *Device) RxFd(q int) int {
	if q < 0 || q >= len(d.rx) {
		return -1
	}
	return d.rx[q].fd
}

// Stats sums the queue counters, first folding in the frames the kernel
// dropped because a ring was full.
func (d *Device) Stats() netdev.Stats {
	d.closeMu.RLock()
	if !d.closed.Load() {
		for i, q := range d.rx {
			d.counters[i].AddRxDropped(q.kernelDrops())
		}
	}
	d.closeMu.RUnlock()
	return netdev.Sum(d.counters)
}

// Recv copies up to the batch's free slots of frames from rx ring q.
func (d *Device) Recv(q int, b *packet.Batch, pool *packet.Pool) (int, error) {
	if q < 0 || q >= len(d.rx) {
		return 0, fmt.Errorf("afpacket %s: recv queue %d: %w", d.name, q, netdev.ErrQueue)
	}
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	if d.closed.Load() {
		return 0, fmt.Errorf("afpacket %s: %w", d.name, netdev.ErrClosed)
	}
	var r netdev.RxBatch
	d.rx[q].recv(b, pool, &r)
	c := &d.counters[q]
	c.AddRxBatch(&r)
	return r.Pkts, nil
}

// Send transmits b on tx queue q with one sendmmsg call (more if the
// kernel refuses a frame part way).
func (d *Device) Send(q int, b *packet.Batch, pool *packet.Pool) error {
	i := int(uint(q) % uint(len(d.tx)))
	c := &d.counters[i]
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	if d.closed.Load() {
		c.AddTxDropped(uint64(b.N))
		netdev.FreeBatch(b, pool)
		return fmt.Errorf("afpacket %s: %w", d.name, netdev.ErrClosed)
	}
	t := d.tx[i]
	t.mu.Lock()
	sent, bytes, dropped, err := t.send(b)
	t.mu.Unlock()
	c.AddTx(uint64(sent), uint64(bytes))
	c.AddTxDropped(uint64(dropped))
	netdev.FreeBatch(b, pool)
	if err != nil {
		c.AddTxErrors(1)
		return fmt.Errorf("afpacket %s: send: %w", d.name, err)
	}
	return nil
}

// Close unmaps the rings and closes the sockets, waiting for running Recv
// and Send calls. Remove the rx fds from pollers first.
func (d *Device) Close() error {
	d.closeMu.Lock()
	defer d.closeMu.Unlock()
	if d.closed.Swap(true) {
		return nil
	}
	var errs []error
	for _, q := range d.rx {
		errs = append(errs, q.close())
	}
	for _, t := range d.tx {
		errs = append(errs, unix.Close(t.fd))
	}
	return errors.Join(errs...)
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
