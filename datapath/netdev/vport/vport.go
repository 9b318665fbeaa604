package vport

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/datapath/tnl"
)

// Port types, as the Interface table's type column names them.
const (
	TypeGeneve = "geneve"
	TypeVXLAN  = "vxlan"
	TypeGRE    = "gre"
	TypeIP6GRE = "ip6gre"
)

// DefaultMTU is the MTU a tunnel port reports until set.
const DefaultMTU = 1500

// Name returns the datapath port name Open vSwitch gives the tunnel port
// of type t and UDP destination port dst: genev_sys_6081, vxlan_sys_4789;
// GRE has no port: gre_sys, ip6gre_sys (tnl.Types).
func Name(t tnl.Type, dst uint16) string {
	i := t.Info()
	switch {
	case i.Name == "":
		return fmt.Sprintf("tnl%d_sys_%d", uint8(t), dst)
	case i.UDP:
		return fmt.Sprintf("%s_%d", i.DPPort, dst)
	}
	return i.DPPort
}

// Device is a tunnel port. It is safe for concurrent use.
type Device struct {
	name    string
	typ     tnl.Type
	dstPort uint16
	closed  atomic.Bool
	// counters[0] counts what Send dropped.
	counters [1]netdev.Counters

	// seq is the next GRE sequence number (Open vSwitch's per-port
	// tnl_cfg.seqno), shared by every worker pushing through this port.
	seq atomic.Uint32

	mu  sync.Mutex // guards mac, mtu
	mac [6]byte
	mtu int
}

var _ netdev.Device = (*Device)(nil)

// New returns a tunnel port of type t (tnl.TypeGeneve, tnl.TypeVXLAN,
// tnl.TypeGRE or tnl.TypeIP6GRE) for UDP destination port dst (0: the
// type's IANA port; always 0 for GRE). An empty name becomes Name(t, dst).
func New(name string, t tnl.Type, dst uint16) (*Device, error) {
	i := t.Info()
	switch {
	case i.Name == "":
		return nil, fmt.Errorf("vport: tunnel type %d not supported", t)
	case i.UDP:
		if dst == 0 {
			dst = i.DefaultPort
		}
	case dst != 0:
		return nil, fmt.Errorf("vport: %v has no UDP port (got %d)", t, dst)
	}
	if name == "" {
		name = Name(t, dst)
	}
	return &Device{name: name, typ: t, dstPort: dst, mtu: DefaultMTU}, nil
}

// TunnelType returns the tunnel type; the datapath uses it to pick the
// decapsulation of tnl_pop and to accept tnl_push's tnl_port.
func (d *Device) TunnelType() tnl.Type { return d.typ }

// ReserveSeq returns the first of n consecutive GRE sequence numbers for
// packets pushed through this port.
func (d *Device) ReserveSeq(n uint32) uint32 { return d.seq.Add(n) - n }

// DstPort returns the UDP destination port the tunnel listens on (0 for
// GRE).
func (d *Device) DstPort() uint16 { return d.dstPort }

// Name returns the port name.
func (d *Device) Name() string { return d.name }

// Type returns the Interface type ("geneve", "vxlan", "gre", ...).
func (d *Device) Type() string { return d.typ.String() }

// NumRxQueues is 0: a tunnel port receives nothing itself.
func (d *Device) NumRxQueues() int { return 0 }

// ErrNoQueues is returned by Recv: a tunnel port has no receive queues.
var ErrNoQueues = errors.New("vport: tunnel ports have no receive queues")

// Recv returns ErrNoQueues.
func (d *Device) Recv(q int, b *packet.Batch, pool *packet.Pool) (int, error) {
	return 0, fmt.Errorf("vport %s: recv queue %d: %w", d.name, q, ErrNoQueues)
}

// Send drops every packet, counting them as tx drops: packets reach a
// tunnel through tnl_push and an output to the underlay port.
func (d *Device) Send(q int, b *packet.Batch, pool *packet.Pool) error {
	d.counters[0].AddTxDropped(uint64(b.N))
	netdev.FreeBatch(b, pool)
	if d.closed.Load() {
		return fmt.Errorf("vport %s: %w", d.name, netdev.ErrClosed)
	}
	return nil
}

// RxFd returns -1: there is nothing to poll.
func (d *Device) RxFd(q int) int { return -1 }

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

// SetMTU accepts 68 to 65535.
func (d *Device) SetMTU(mtu int) error {
	if mtu < 68 || mtu > 65535 {
		return fmt.Errorf("vport %s: mtu %d out of range 68-65535", d.name, mtu)
	}
	d.mu.Lock()
	d.mtu = mtu
	d.mu.Unlock()
	return nil
}

func (d *Device) Ifindex() int                { return 0 }
func (d *Device) LinkState() netdev.LinkState { return netdev.LinkUp }
func (d *Device) Stats() netdev.Stats         { return netdev.Sum(d.counters[:]) }

// Close marks the port closed; later Sends report netdev.ErrClosed.
func (d *Device) Close() error {
	d.closed.Store(true)
	return nil
}
