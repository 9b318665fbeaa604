package tap

import (
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/internal/linkutil"
	"github.com/gvs-project/gvs/datapath/packet"
)

// Config describes an internal port.
type Config struct {
	// Name is the interface to create (at most 15 bytes).
	Name string
	// MTU and MAC are applied when set; otherwise the kernel's defaults
	// (1500 and a random address) stay.
	MTU int
	MAC [6]byte
	// Down leaves the interface administratively down.
	Down bool
}

// Device is an internal port.
type Device struct {
	linkutil.Link
	name     string
	ifindex  int
	fd       int
	txMu     sync.Mutex
	counters [1]netdev.Counters
	closed   atomic.Bool
	closeMu  sync.RWMutex
}

var _ netdev.Device = (*Device)(nil)

// Open creates the tap interface cfg.Name and brings it up.
func Open(cfg Config) (*Device, error) {
	if cfg.Name == "" || len(cfg.Name) >= unix.IFNAMSIZ {
		return nil, fmt.Errorf("tap: invalid interface name %q", cfg.Name)
	}
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("tap %s: open /dev/net/tun: %w", cfg.Name, err)
	}
	ifr, err := unix.NewIfreq(cfg.Name)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("tap %s: %w", cfg.Name, err)
	}
	ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("tap %s: TUNSETIFF: %w", cfg.Name, err)
	}
	d := &Device{Link: linkutil.Link{IfName: cfg.Name, Kind: "tap"}, name: cfg.Name, fd: fd}
	fail := func(err error) (*Device, error) {
		d.Close()
		return nil, fmt.Errorf("tap: %w", err)
	}
	if d.ifindex, err = linkutil.Ifindex(cfg.Name); err != nil {
		return fail(err)
	}
	if cfg.MTU > 0 {
		if err := linkutil.SetMTU(cfg.Name, cfg.MTU); err != nil {
			return fail(err)
		}
	}
	if cfg.MAC != ([6]byte{}) {
		if err := linkutil.SetMAC(cfg.Name, cfg.MAC); err != nil {
			return fail(err)
		}
	}
	if !cfg.Down {
		if err := linkutil.SetUp(cfg.Name, true); err != nil {
			return fail(err)
		}
	}
	return d, nil
}

func (d *Device) Name() string     { return d.name }
func (d *Device) Type() string     { return netdev.TypeInternal }
func (d *Device) NumRxQueues() int { return 1 }
func (d *Device) Ifindex() int     { return d.ifindex }

func (d *Device) RxFd(q int) int {
	if q != 0 {
		return -1
	}
	return d.fd
}

func (d *Device) Stats() netdev.Stats { return netdev.Sum(d.counters[:]) }

// Recv reads frames until the batch is full or none is waiting.
func (d *Device) Recv(q int, b *packet.Batch, pool *packet.Pool) (int, error) {
	if q != 0 {
		return 0, fmt.Errorf("tap %s: recv queue %d: %w", d.name, q, netdev.ErrQueue)
	}
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	if d.closed.Load() {
		return 0, fmt.Errorf("tap %s: %w", d.name, netdev.ErrClosed)
	}
	got, bytes, dropped := 0, 0, 0
	var err error
	for b.N < packet.BatchSize {
		p := pool.Get()
		buf := p.RecvBuffer()
		n, e := unix.Read(d.fd, buf)
		if e != nil {
			pool.Put(p)
			if e != unix.EAGAIN && e != unix.EINTR {
				err = fmt.Errorf("tap %s: read: %w", d.name, e)
			}
			break
		}
		if n >= len(buf) || n < 14 {
			// Filled the buffer: the kernel cut a bigger frame.
			pool.Put(p)
			dropped++
			continue
		}
		p.SetLen(n)
		b.Add(p)
		got++
		bytes += n
	}
	c := &d.counters[0]
	c.AddRx(uint64(got), uint64(bytes))
	c.AddRxDropped(uint64(dropped))
	if err != nil {
		c.AddRxErrors(1)
	}
	return got, err
}

// Send writes each frame of b to the tap.
func (d *Device) Send(q int, b *packet.Batch, pool *packet.Pool) error {
	c := &d.counters[0]
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	if d.closed.Load() {
		c.AddTxDropped(uint64(b.N))
		netdev.FreeBatch(b, pool)
		return fmt.Errorf("tap %s: %w", d.name, netdev.ErrClosed)
	}
	sent, bytes, dropped := 0, 0, 0
	d.txMu.Lock()
	for _, p := range b.Slice() {
		data := p.Data()
		for {
			_, e := unix.Write(d.fd, data)
			if e == unix.EINTR {
				continue
			}
			if e != nil {
				// EIO while the interface is down, EAGAIN when the
				// kernel's backlog is full, EINVAL for a runt.
				dropped++
			} else {
				sent++
				bytes += len(data)
			}
			break
		}
	}
	d.txMu.Unlock()
	c.AddTx(uint64(sent), uint64(bytes))
	c.AddTxDropped(uint64(dropped))
	netdev.FreeBatch(b, pool)
	return nil
}

// Close closes the descriptor, which deletes the interface.
func (d *Device) Close() error {
	d.closeMu.Lock()
	defer d.closeMu.Unlock()
	if d.closed.Swap(true) {
		return nil
	}
	if err := unix.Close(d.fd); err != nil {
		return fmt.Errorf("tap %s: close: %w", d.name, err)
	}
	return nil
}
