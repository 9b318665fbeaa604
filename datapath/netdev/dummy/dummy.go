package dummy

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/pcap"
	"github.com/gvs-project/gvs/datapath/packet"
)

// Defaults for zero Config fields.
const (
	DefaultMTU      = 1500
	DefaultQueueLen = 1024
)

// maxL2Overhead is what a frame may carry beyond the MTU: an Ethernet
// header and one VLAN tag.
const maxL2Overhead = 14 + 4

// Config describes a dummy port. Only Name is required.
type Config struct {
	Name string
	// Internal makes the device report type "dummy-internal", as Open
	// vSwitch's dummy datapath names its internal ports.
	Internal bool
	// MAC defaults to aa:55:aa:55:xx:xx with xx:xx derived from Name.
	MAC [6]byte
	// MTU defaults to DefaultMTU.
	MTU int
	// RxQueues defaults to 1.
	RxQueues int
	// PMD makes the device a "dummy-pmd" port, which the datapath's PMD
	// threads poll (Open vSwitch's options n_rxq, n_txq and numa_id
	// apply to it: RxQueues, TxQueues, NUMA).
	PMD bool
	// TxQueues is the number of transmit queues a PMD dummy reports
	// (default 1; frames are sent the same whatever the queue).
	TxQueues int
	// NUMA is the NUMA node a PMD dummy says it is on.
	NUMA int
	// QueueLen bounds each rx queue (frames injected but not yet
	// received); defaults to DefaultQueueLen. Frames beyond it are dropped
	// and counted in RxDropped.
	QueueLen int
	// CaptureLen bounds the transmitted frames kept for Captured; 0 keeps
	// none. When full, the oldest frame is discarded.
	CaptureLen int
	// Pcap, if set, names a pcap file that gets both received and
	// transmitted frames (Open vSwitch's options:pcap). Otherwise RxqPcap
	// and TxPcap name separate files (options:rxq_pcap, options:tx_pcap).
	// Existing files are appended to.
	Pcap    string
	RxqPcap string
	TxPcap  string
}

// Device is an in-memory port.
type Device struct {
	name     string
	internal bool
	pmd      bool
	ntxq     int
	numa     int
	queueLen int
	rxq      []rxQueue
	counters []netdev.Counters

	mu   sync.Mutex // guards mac, mtu, link, down
	mac  [6]byte
	mtu  int
	link netdev.LinkState
	// down is the administrative state (IFF_UP clear): the link is down
	// whatever its carrier.
	down bool

	txMu    sync.Mutex // serialises Send: capture ring, tx pcap, callback
	capture captureRing
	onTx    atomic.Pointer[func(frame []byte)]

	rxPcap, txPcap *pcapFile
	closed         atomic.Bool

	// streams are the port's pstream/stream connections (stream.go);
	// streamMu serialises their configuration.
	streams  atomic.Pointer[streams]
	streamMu sync.Mutex
}

var _ netdev.Device = (*Device)(nil)

// rxQueue is a bounded ring of reusable frame buffers.
type rxQueue struct {
	mu       sync.Mutex
	slots    [][]byte
	head, n  int
	signaled bool // note holds a count; cleared when the ring drains
	note     notifier
	// queued counts the frames ever queued, taken those Recv returned;
	// processed is taken as of the latest Recv call: a receiver
	// processes what one Recv returned before it calls Recv again
	// (WaitProcessed).
	queued, taken uint64
	processed     atomic.Uint64
	_             [64]byte
}

// New opens a dummy port.
func New(cfg Config) (*Device, error) {
	if cfg.Name == "" {
		return nil, errors.New("dummy: empty port name")
	}
	d := &Device{
		name:     cfg.Name,
		internal: cfg.Internal,
		pmd:      cfg.PMD,
		ntxq:     max(cfg.TxQueues, 1),
		numa:     cfg.NUMA,
		queueLen: cfg.QueueLen,
		mac:      cfg.MAC,
		mtu:      cfg.MTU,
		link:     netdev.LinkUp,
	}
	if d.queueLen <= 0 {
		d.queueLen = DefaultQueueLen
	}
	if d.mtu <= 0 {
		d.mtu = DefaultMTU
	}
	if d.mac == ([6]byte{}) {
		h := fnv.New32a()
		h.Write([]byte(cfg.Name))
		s := h.Sum32()
		d.mac = [6]byte{0xaa, 0x55, 0xaa, 0x55, byte(s >> 8), byte(s)}
	}
	nq := cfg.RxQueues
	if nq <= 0 {
		nq = 1
	}
	d.rxq = make([]rxQueue, nq)
	d.counters = make([]netdev.Counters, nq)
	for i := range d.rxq {
		note, err := newNotifier()
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("dummy %s: %w", cfg.Name, err)
		}
		d.rxq[i].note = note
		d.rxq[i].slots = make([][]byte, d.queueLen)
	}
	if cfg.CaptureLen > 0 {
		d.capture.slots = make([][]byte, cfg.CaptureLen)
	}
	var err error
	switch {
	case cfg.Pcap != "":
		d.rxPcap, err = openPcap(cfg.Pcap)
		d.txPcap = d.rxPcap
	default:
		if cfg.RxqPcap != "" {
			d.rxPcap, err = openPcap(cfg.RxqPcap)
		}
		if err == nil && cfg.TxPcap != "" {
			d.txPcap, err = openPcap(cfg.TxPcap)
		}
	}
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("dummy %s: %w", cfg.Name, err)
	}
	return d, nil
}

func (d *Device) Name() string { return d.name }
func (d *Device) Type() string {
	switch {
	case d.internal:
		return TypeInternal
	case d.pmd:
		return TypePMD
	}
	return netdev.TypeDummy
}

// TypePMD is the type of a dummy port that PMD threads poll.
const TypePMD = "dummy-pmd"

// NUMAID returns the NUMA node the device is on (0 but for dummy-pmd
// ports given one).
func (d *Device) NUMAID() int { return d.numa }

// ConfigText is what Open vSwitch's dpif/show and dpctl/show print after
// a dummy-pmd port's type: its requested and configured queue counts,
// in key order ("" for other dummy ports).
func (d *Device) ConfigText() string {
	if !d.pmd {
		return ""
	}
	return fmt.Sprintf("configured_rx_queues=%d, configured_tx_queues=%d, requested_rx_queues=%d, requested_tx_queues=%d",
		len(d.rxq), d.ntxq, len(d.rxq), d.ntxq)
}

// TypeInternal is the type of an internal port on a dummy datapath.
const TypeInternal = "dummy-internal"

func (d *Device) NumRxQueues() int { return len(d.rxq) }
func (d *Device) Ifindex() int     { return 0 }

// RxFd returns an eventfd that is readable while rx queue q is not empty
// (-1 outside Linux or for a bad queue).
func (d *Device) RxFd(q int) int {
	if q < 0 || q >= len(d.rxq) {
		return -1
	}
	return d.rxq[q].note.fd
}

func (d *Device) MAC() [6]byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mac
}

func (d *Device) SetMAC(mac [6]byte) error {
	d.mu.Lock()
	d.mac = mac
	d.mu.Unlock()
	return nil
}

func (d *Device) MTU() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mtu
}

// SetMTU accepts 68 to 65535, as Linux does for Ethernet devices.
func (d *Device) SetMTU(mtu int) error {
	if mtu < 68 || mtu > 65535 {
		return fmt.Errorf("dummy %s: mtu %d out of range 68-65535", d.name, mtu)
	}
	d.mu.Lock()
	d.mtu = mtu
	d.mu.Unlock()
	return nil
}

func (d *Device) LinkState() netdev.LinkState {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down {
		return netdev.LinkDown
	}
	return d.link
}

var _ netdev.AdminStater = (*Device)(nil)

// AdminUp reports the administrative state (netdev.AdminStater).
func (d *Device) AdminUp() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !d.down
}

// SetAdminUp brings the port up or down; a down port's link is down.
func (d *Device) SetAdminUp(up bool) error {
	d.mu.Lock()
	d.down = !up
	d.mu.Unlock()
	return nil
}

// SetLinkState sets the carrier. A down port drops what is injected and
// what is sent, counting both as drops.
func (d *Device) SetLinkState(s netdev.LinkState) {
	d.mu.Lock()
	d.link = s
	d.mu.Unlock()
}

func (d *Device) Stats() netdev.Stats { return netdev.Sum(d.counters) }

// OnTransmit sets a callback that sees every transmitted frame (nil to
// remove it). The frame is valid only during the call. It runs on the
// sending goroutine, with Sends to this port serialised; it may Inject
// into any port, which is how two dummy ports are patched together.
func (d *Device) OnTransmit(fn func(frame []byte)) {
	if fn == nil {
		d.onTx.Store(nil)
		return
	}
	d.onTx.Store(&fn)
}

// Inject queues frame for reception on rx queue 0 and reports whether it
// was queued (false if the queue was full, the link down or the port
// closed; the drop is counted).
func (d *Device) Inject(frame []byte) bool { return d.InjectQueue(0, frame) }

// InjectQueue is Inject on rx queue q.
func (d *Device) InjectQueue(q int, frame []byte) bool {
	if q < 0 || q >= len(d.rxq) || d.closed.Load() {
		return false
	}
	if d.LinkState() != netdev.LinkUp {
		d.counters[q].AddRxDropped(1)
		return false
	}
	r := &d.rxq[q]
	r.mu.Lock()
	if r.n == len(r.slots) {
		r.mu.Unlock()
		d.counters[q].AddRxDropped(1)
		return false
	}
	i := (r.head + r.n) % len(r.slots)
	r.slots[i] = append(r.slots[i][:0], frame...)
	r.n++
	r.queued++
	if !r.signaled {
		r.signaled = true
		r.note.set()
	}
	r.mu.Unlock()
	if d.rxPcap != nil {
		d.rxPcap.write(frame)
	}
	return true
}

// WaitProcessed waits until every frame queued on rx queue q so far has
// been received and processed — its receiver came back to Recv after
// the batch that held it — or until timeout, and reports which. It makes
// injection synchronous, as Open vSwitch's netdev-dummy/receive is for
// ports its main thread polls: tests check the datapath's effects right
// after it returns.
func (d *Device) WaitProcessed(q int, timeout time.Duration) bool {
	if q < 0 || q >= len(d.rxq) {
		return false
	}
	r := &d.rxq[q]
	r.mu.Lock()
	target := r.queued
	r.mu.Unlock()
	deadline := time.Now().Add(timeout)
	for r.processed.Load() < target {
		if d.closed.Load() || time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Microsecond)
	}
	return true
}

// ReplayPcap injects every frame of a pcap stream on rx queue 0 and
// returns how many were queued.
func (d *Device) ReplayPcap(r io.Reader) (int, error) {
	pr, err := pcap.NewReader(r)
	if err != nil {
		return 0, fmt.Errorf("dummy %s: replay: %w", d.name, err)
	}
	n := 0
	for {
		f, _, _, err := pr.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("dummy %s: replay: %w", d.name, err)
		}
		if d.Inject(f) {
			n++
		}
	}
}

// Recv moves queued frames into packets from pool.
func (d *Device) Recv(q int, b *packet.Batch, pool *packet.Pool) (int, error) {
	if q < 0 || q >= len(d.rxq) {
		return 0, fmt.Errorf("dummy %s: recv queue %d: %w", d.name, q, netdev.ErrQueue)
	}
	if d.closed.Load() {
		return 0, fmt.Errorf("dummy %s: %w", d.name, netdev.ErrClosed)
	}
	r := &d.rxq[q]
	got, bytes, trunc := 0, 0, 0
	r.mu.Lock()
	if r.processed.Load() != r.taken {
		r.processed.Store(r.taken)
	}
	for r.n > 0 && b.N < packet.BatchSize {
		p := pool.Get()
		if p.SetData(r.slots[r.head]) {
			trunc++
		}
		r.head = (r.head + 1) % len(r.slots)
		r.n--
		b.Add(p)
		got++
		bytes += p.Len()
	}
	r.taken += uint64(got)
	if r.n == 0 && r.signaled {
		r.signaled = false
		r.note.clear()
	}
	r.mu.Unlock()
	d.counters[q].AddRx(uint64(got), uint64(bytes))
	d.counters[q].AddRxErrors(uint64(trunc))
	return got, nil
}

// Send delivers every frame of b to the callback, capture ring and tx
// pcap, then frees the packets.
func (d *Device) Send(q int, b *packet.Batch, pool *packet.Pool) error {
	c := &d.counters[uint(q)%uint(len(d.counters))]
	if d.closed.Load() {
		c.AddTxDropped(uint64(b.N))
		netdev.FreeBatch(b, pool)
		return fmt.Errorf("dummy %s: %w", d.name, netdev.ErrClosed)
	}
	d.mu.Lock()
	maxLen, up := d.mtu+maxL2Overhead, d.link == netdev.LinkUp && !d.down
	d.mu.Unlock()
	if !up {
		c.AddTxDropped(uint64(b.N))
		netdev.FreeBatch(b, pool)
		return nil
	}
	var fn func([]byte)
	if p := d.onTx.Load(); p != nil {
		fn = *p
	}
	st := d.streams.Load()
	sent, bytes, dropped := 0, 0, 0
	d.txMu.Lock()
	for _, p := range b.Slice() {
		f := p.Data()
		if len(f) < 14 || len(f) > maxLen {
			dropped++
			continue
		}
		sent++
		bytes += len(f)
		d.capture.push(f)
		if d.txPcap != nil {
			d.txPcap.write(f)
		}
		if fn != nil {
			fn(f)
		}
		if st != nil {
			st.send(f)
		}
	}
	d.txMu.Unlock()
	c.AddTx(uint64(sent), uint64(bytes))
	c.AddTxDropped(uint64(dropped))
	netdev.FreeBatch(b, pool)
	return nil
}

// Captured removes and returns the transmitted frames kept so far, oldest
// first (copies; for tests and appctl, not the fast path).
func (d *Device) Captured() [][]byte {
	d.txMu.Lock()
	defer d.txMu.Unlock()
	return d.capture.drain()
}

// Close releases the port's descriptors and files. Later Recv and Send
// calls fail with netdev.ErrClosed.
func (d *Device) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	d.SetStreams("", "", "")
	for i := range d.rxq {
		r := &d.rxq[i]
		r.mu.Lock()
		r.note.close()
		r.note.fd = -1
		r.mu.Unlock()
	}
	var errs []error
	if d.rxPcap != nil {
		errs = append(errs, d.rxPcap.close())
	}
	if d.txPcap != nil && d.txPcap != d.rxPcap {
		errs = append(errs, d.txPcap.close())
	}
	return errors.Join(errs...)
}

// captureRing keeps the last len(slots) transmitted frames in reused
// buffers.
type captureRing struct {
	slots   [][]byte
	head, n int
}

func (c *captureRing) push(f []byte) {
	if len(c.slots) == 0 {
		return
	}
	if c.n == len(c.slots) {
		c.head = (c.head + 1) % len(c.slots)
		c.n--
	}
	i := (c.head + c.n) % len(c.slots)
	c.slots[i] = append(c.slots[i][:0], f...)
	c.n++
}

func (c *captureRing) drain() [][]byte {
	out := make([][]byte, 0, c.n)
	for ; c.n > 0; c.n-- {
		out = append(out, append([]byte(nil), c.slots[c.head]...))
		c.head = (c.head + 1) % len(c.slots)
	}
	return out
}

// pcapFile is a pcap writer shared by rx and tx, flushed after every
// frame so that readers (tests, tcpdump -r) see complete records.
type pcapFile struct {
	mu sync.Mutex
	f  *os.File
	w  *pcap.Writer
}

func openPcap(path string) (*pcapFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open pcap: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open pcap: %w", err)
	}
	w, err := pcap.NewWriter(f, st.Size() == 0)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open pcap %s: %w", path, err)
	}
	return &pcapFile{f: f, w: w}, nil
}

func (p *pcapFile) write(frame []byte) {
	p.mu.Lock()
	// A failing capture file must not stop the port; the error shows up
	// again at Close.
	if p.w.WritePacket(time.Now(), frame) == nil {
		p.w.Flush()
	}
	p.mu.Unlock()
}

func (p *pcapFile) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.w.Flush()
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	return err
}
