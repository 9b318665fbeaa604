package netdev

import (
	"errors"

	"github.com/gvs-project/gvs/datapath/packet"
)

// Port types, as Open vSwitch names them in the Interface table's type
// column.
const (
	TypeDummy    = "dummy"
	TypeSystem   = "system"
	TypeInternal = "internal"
)

// LinkState is the carrier state of a port, as shown in the Interface
// table's link_state column.
type LinkState uint8

const (
	LinkDown LinkState = iota
	LinkUp
)

func (s LinkState) String() string {
	if s == LinkUp {
		return "up"
	}
	return "down"
}

// ErrClosed is returned by operations on a closed device.
var ErrClosed = errors.New("netdev: device closed")

// ErrQueue is returned for a queue number the device does not have.
var ErrQueue = errors.New("netdev: no such queue")

// Device is a datapath port.
type Device interface {
	// Name is the port's name (the Linux interface name for system and
	// internal ports).
	Name() string
	// Type is TypeDummy, TypeSystem or TypeInternal.
	Type() string

	// NumRxQueues is the number of rx queues, each with its own RxFd.
	NumRxQueues() int
	// Recv appends up to BatchSize-b.N received packets, taken from pool,
	// to b and returns how many it appended. It never blocks; (0, nil)
	// means nothing is waiting. Errors are per call, not per packet:
	// malformed or truncated frames are dropped and counted.
	Recv(q int, b *packet.Batch, pool *packet.Pool) (int, error)
	// Send transmits every packet of b on tx queue q, returns all of them
	// to pool and empties b, whatever happens. Packets the device could not
	// send are counted as tx drops; an error reports a device failure.
	Send(q int, b *packet.Batch, pool *packet.Pool) error
	// RxFd returns a descriptor that polls readable when Recv on queue q
	// may return packets (level-triggered), for Poller.
	RxFd(q int) int

	MAC() [6]byte
	SetMAC(mac [6]byte) error
	MTU() int
	SetMTU(mtu int) error
	// Ifindex is the Linux interface index, 0 for devices without one.
	Ifindex() int
	LinkState() LinkState

	// Stats returns the counters summed over queues.
	Stats() Stats
	Close() error
}

// AdminStater is a Device whose administrative state (IFF_UP) can be
// read and set: OpenFlow port_mod's OFPPC_PORT_DOWN and the Interface
// table's admin_state. Devices without it are always up.
type AdminStater interface {
	AdminUp() bool
	SetAdminUp(up bool) error
}

// Stats are a port's counters, as in the Interface table's statistics
// column.
type Stats struct {
	RxPackets uint64
	RxBytes   uint64
	RxDropped uint64
	RxErrors  uint64
	TxPackets uint64
	TxBytes   uint64
	TxDropped uint64
	TxErrors  uint64
}

// Add returns the field-wise sum of s and o.
func (s Stats) Add(o Stats) Stats {
	return Stats{
		RxPackets: s.RxPackets + o.RxPackets,
		RxBytes:   s.RxBytes + o.RxBytes,
		RxDropped: s.RxDropped + o.RxDropped,
		RxErrors:  s.RxErrors + o.RxErrors,
		TxPackets: s.TxPackets + o.TxPackets,
		TxBytes:   s.TxBytes + o.TxBytes,
		TxDropped: s.TxDropped + o.TxDropped,
		TxErrors:  s.TxErrors + o.TxErrors,
	}
}

// FreeBatch returns every packet of b to pool and empties b. Send
// implementations end with it.
func FreeBatch(b *packet.Batch, pool *packet.Pool) {
	for i := 0; i < b.N; i++ {
		pool.Put(b.Pkts[i])
		b.Pkts[i] = nil
	}
	b.N = 0
}
