package afxdp

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/internal/linkutil"
	"github.com/gvs-project/gvs/datapath/packet"
)

// Type is the Interface table's type of an AF_XDP port.
const Type = "afxdp"

// MaxQueues bounds RxQueues, as Open vSwitch bounds options:n_rxq.
const MaxQueues = 16

// Mode is the XDP mode of a port (options:xdp-mode).
type Mode uint8

const (
	ModeBestEffort Mode = iota
	ModeNativeZC
	ModeNative
	ModeGeneric
)

var modeNames = [...]string{"best-effort", "native-with-zerocopy", "native", "generic"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "unspecified"
}

// ParseMode reads an xdp-mode name, ignoring case, as Open vSwitch does.
func ParseMode(s string) (Mode, bool) {
	for i, n := range modeNames {
		if strings.EqualFold(s, n) {
			return Mode(i), true
		}
	}
	return 0, false
}

// flags are the attach and bind flags of a concrete mode.
func (m Mode) flags() (xdpFlags uint32, bindFlags uint16) {
	switch m {
	case ModeNativeZC:
		return unix.XDP_FLAGS_DRV_MODE, unix.XDP_ZEROCOPY
	case ModeNative:
		return unix.XDP_FLAGS_DRV_MODE, unix.XDP_COPY
	}
	return unix.XDP_FLAGS_SKB_MODE, unix.XDP_COPY
}

// Config describes an AF_XDP port.
type Config struct {
	// Name is the Linux interface; it must exist.
	Name string
	// Mode is the XDP mode asked for.
	Mode Mode
	// RxQueues is the number of the interface's queues to bind, from 0
	// (default 1, at most MaxQueues). Tx queues are as many.
	RxQueues int
	// NeedWakeup binds with XDP_USE_NEED_WAKEUP.
	NeedWakeup bool
	// Failed, if set, is told of each mode best-effort tried and gave up
	// on, and of the queue that could not be set up in the final mode.
	Failed func(mode Mode, queue int, err error)
}

// Device is an AF_XDP port.
type Device struct {
	linkutil.Link
	name     string
	ifindex  int
	cfg      Config
	inUse    Mode
	xsks     []*xsk
	mapFD    int
	progFD   int
	linkFD   int
	promFD   int
	counters []netdev.Counters
	closed   atomic.Bool
	// closeMu keeps Close from unmapping rings under a running Recv or
	// Send.
	closeMu sync.RWMutex
}

var _ netdev.Device = (*Device)(nil)

// Open binds AF_XDP sockets to the first cfg.RxQueues queues of
// interface cfg.Name and attaches the redirect program, in cfg.Mode or,
// for best-effort, the first mode that works.
func Open(cfg Config) (*Device, error) {
	ifindex, err := linkutil.Ifindex(cfg.Name)
	if err != nil {
		return nil, fmt.Errorf("afxdp: %w", err)
	}
	if cfg.RxQueues <= 0 {
		cfg.RxQueues = 1
	}
	if cfg.RxQueues > MaxQueues {
		return nil, fmt.Errorf("afxdp %s: %d rx queues, at most %d", cfg.Name, cfg.RxQueues, MaxQueues)
	}
	d := &Device{Link: linkutil.Link{IfName: cfg.Name, Kind: "afxdp"}, name: cfg.Name, ifindex: ifindex, cfg: cfg,
		mapFD: -1, progFD: -1, linkFD: -1, promFD: -1, counters: make([]netdev.Counters, cfg.RxQueues)}
	modes := []Mode{cfg.Mode}
	if cfg.Mode == ModeBestEffort {
		modes = []Mode{ModeNativeZC, ModeNative, ModeGeneric}
	}
	for _, m := range modes {
		err = d.setup(m)
		if err == nil {
			d.inUse = m
			break
		}
		d.teardown()
	}
	if err != nil {
		return nil, fmt.Errorf("afxdp %s: %w", cfg.Name, err)
	}
	if err := d.promisc(); err != nil {
		d.teardown()
		return nil, fmt.Errorf("afxdp %s: promiscuous mode: %w", cfg.Name, err)
	}
	return d, nil
}

// setup creates the map, program, sockets and link in mode m.
func (d *Device) setup(m Mode) error {
	report := func(q int, err error) error {
		if d.cfg.Failed != nil {
			d.cfg.Failed(m, q, err)
		}
		return err
	}
	xdpFlags, bindFlags := m.flags()
	if d.cfg.NeedWakeup {
		bindFlags |= unix.XDP_USE_NEED_WAKEUP
	}
	var err error
	if d.mapFD, err = newXSKMap(d.cfg.RxQueues); err != nil {
		return report(0, err)
	}
	if d.progFD, err = loadProgram(d.mapFD); err != nil {
		return report(0, err)
	}
	// Sockets first: the program only redirects to queues that have one.
	for q := 0; q < d.cfg.RxQueues; q++ {
		x, err := openXSK(d.ifindex, q, bindFlags)
		if err != nil {
			return report(q, fmt.Errorf("queue %d in %s mode: %w", q, m, err))
		}
		d.xsks = append(d.xsks, x)
		if err := setXSK(d.mapFD, q, x.fd); err != nil {
			return report(q, err)
		}
	}
	if d.linkFD, err = attachProgram(d.progFD, d.ifindex, xdpFlags); err != nil {
		return report(0, fmt.Errorf("%s mode: %w", m, err))
	}
	return nil
}

// promisc holds the interface in promiscuous mode through a packet
// socket that receives nothing (protocol 0); the kernel drops the
// membership when the socket closes.
func (d *Device) promisc() error {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	d.promFD = fd
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: d.ifindex}); err != nil {
		return err
	}
	mr := unix.PacketMreq{Ifindex: int32(d.ifindex), Type: unix.PACKET_MR_PROMISC}
	return unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mr)
}

// teardown detaches the program and releases every kernel object.
func (d *Device) teardown() error {
	var errs []error
	closeFD := func(fd *int) {
		if *fd >= 0 {
			errs = append(errs, unix.Close(*fd))
			*fd = -1
		}
	}
	closeFD(&d.linkFD) // detaches the program
	for _, x := range d.xsks {
		errs = append(errs, x.close())
	}
	d.xsks = nil
	closeFD(&d.progFD)
	closeFD(&d.mapFD)
	closeFD(&d.promFD)
	return errors.Join(errs...)
}

func (d *Device) Name() string     { return d.name }
func (d *Device) Type() string     { return Type }
func (d *Device) NumRxQueues() int { return len(d.xsks) }
func (d *Device) Ifindex() int     { return d.ifindex }

// Mode is the xdp-mode asked for; ModeInUse the one the port runs in.
func (d *Device) Mode() Mode      { return d.cfg.Mode }
func (d *Device) ModeInUse() Mode { return d.inUse }

// NeedWakeup reports whether the sockets use XDP_USE_NEED_WAKEUP.
func (d *Device) NeedWakeup() bool { return d.cfg.NeedWakeup }

// ConfigText is the port's configuration as dpif/show prints it, in
// Open vSwitch's key order.
func (d *Device) ConfigText() string {
	return fmt.Sprintf("n_rxq=%d, use-need-wakeup=%t, xdp-mode=%s, xdp-mode-in-use=%s", len(d.counters), d.cfg.NeedWakeup, d.cfg.Mode, d.inUse)
}

func (d *Device) RxFd(q int) int {
	if q < 0 || q >= len(d.xsks) {
		return -1
	}
	return d.xsks[q].fd
}

// Stats sums the queue counters and the frames the kernel dropped
// because an rx ring was full.
func (d *Device) Stats() netdev.Stats {
	s := netdev.Sum(d.counters)
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	if !d.closed.Load() {
		for _, x := range d.xsks {
			if st, ok := x.stats(); ok {
				s.RxDropped += st.Rx_dropped
			}
		}
	}
	return s
}

// CustomStats are the sockets' kernel counters, named as Open vSwitch
// names them in the Interface table's statistics column.
func (d *Device) CustomStats() map[string]int64 {
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	out := map[string]int64{}
	if d.closed.Load() {
		return out
	}
	for q, x := range d.xsks {
		st, _ := x.stats()
		out[fmt.Sprintf("xsk_queue_%d_rx_dropped", q)] = int64(st.Rx_dropped)
		out[fmt.Sprintf("xsk_queue_%d_rx_invalid_descs", q)] = int64(st.Rx_invalid_descs)
		out[fmt.Sprintf("xsk_queue_%d_tx_invalid_descs", q)] = int64(st.Tx_invalid_descs)
	}
	return out
}

// Recv copies up to the batch's free slots of frames from rx queue q.
func (d *Device) Recv(q int, b *packet.Batch, pool *packet.Pool) (int, error) {
	if q < 0 || q >= len(d.counters) {
		return 0, fmt.Errorf("afxdp %s: recv queue %d: %w", d.name, q, netdev.ErrQueue)
	}
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	if d.closed.Load() {
		return 0, fmt.Errorf("afxdp %s: %w", d.name, netdev.ErrClosed)
	}
	var r netdev.RxBatch
	d.xsks[q].recv(b, pool, &r)
	c := &d.counters[q]
	c.AddRxBatch(&r)
	return r.Pkts, nil
}

// Send posts b on tx queue q (modulo the number of queues).
func (d *Device) Send(q int, b *packet.Batch, pool *packet.Pool) error {
	i := int(uint(q) % uint(len(d.counters)))
	c := &d.counters[i]
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	if d.closed.Load() {
		c.AddTxDropped(uint64(b.N))
		netdev.FreeBatch(b, pool)
		return fmt.Errorf("afxdp %s: %w", d.name, netdev.ErrClosed)
	}
	sent, bytes, dropped, err := d.xsks[i].send(b)
	c.AddTx(uint64(sent), uint64(bytes))
	c.AddTxDropped(uint64(dropped))
	netdev.FreeBatch(b, pool)
	if err != nil {
		c.AddTxErrors(1)
		return fmt.Errorf("afxdp %s: send: %w", d.name, err)
	}
	return nil
}

// Close detaches the XDP program and releases the sockets, rings and
// UMEMs, waiting for running Recv and Send calls. Remove the rx fds from
// pollers first.
func (d *Device) Close() error {
	d.closeMu.Lock()
	defer d.closeMu.Unlock()
	if d.closed.Swap(true) {
		return nil
	}
	return d.teardown()
}
