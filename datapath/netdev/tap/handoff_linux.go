package tap

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/internal/linkutil"
)

// handoffVersion is the version of the state Handoff writes: the
// version byte and the interface index (4 bytes). The tap descriptor is
// the rest of the port.
const handoffVersion = 1

var _ netdev.HandingOff = (*Device)(nil)

// Handoff gives the tap descriptor. While another process holds it the
// interface survives this process's exit.
func (d *Device) Handoff() (netdev.Handoff, error) {
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	if d.closed.Load() {
		return netdev.Handoff{}, netdev.ErrClosed
	}
	st := binary.BigEndian.AppendUint32([]byte{handoffVersion}, uint32(d.ifindex))
	return netdev.Handoff{Type: netdev.TypeInternal, Name: d.name, Fds: []int{d.fd},
		State: st, Stats: netdev.Sum(d.counters[:])}, nil
}

// Adopt makes a Device of a tap descriptor another process handed over
// for interface name, after checking that it is a tap attached to that
// interface. On success the Device owns the descriptor; on error it
// stays the caller's.
func Adopt(name string, h netdev.Handoff) (*Device, error) {
	fail := func(format string, args ...any) (*Device, error) {
		return nil, fmt.Errorf("tap %s: adopting: %s", name, fmt.Sprintf(format, args...))
	}
	if h.Type != netdev.TypeInternal || h.Name != name {
		return fail("handed a %s port %q", h.Type, h.Name)
	}
	if len(h.State) != 5 || h.State[0] != handoffVersion {
		return fail("state %x is not version %d", h.State, handoffVersion)
	}
	ifindex := int(binary.BigEndian.Uint32(h.State[1:]))
	if len(h.Fds) != 1 {
		return fail("%d descriptors, want 1", len(h.Fds))
	}
	fd := h.Fds[0]
	ifr, err := unix.NewIfreq("")
	if err != nil {
		return fail("%v", err)
	}
	if err := unix.IoctlIfreq(fd, unix.TUNGETIFF, ifr); err != nil {
		return fail("descriptor %d is not a tun/tap device: TUNGETIFF: %v", fd, err)
	}
	if got := ifr.Name(); got != name {
		return fail("descriptor %d is attached to %q", fd, got)
	}
	if ifr.Uint16()&(unix.IFF_TAP|unix.IFF_TUN|unix.IFF_NO_PI) != unix.IFF_TAP|unix.IFF_NO_PI {
		return fail("descriptor %d is not a tap without packet information (flags %#x)", fd, ifr.Uint16())
	}
	// An internal port moved into another namespace (as OVN's tests and
	// container networking do) is not found here; one that is must be
	// the interface the descriptor drives.
	if here, err := linkutil.Ifindex(name); err == nil && here != ifindex {
		return fail("interface %s has index %d, the handed port had %d", name, here, ifindex)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return fail("%v", err)
	}
	d := &Device{Link: linkutil.Link{IfName: name, Kind: "tap"}, name: name, fd: fd, ifindex: ifindex}
	d.counters[0].AddStats(h.Stats)
	return d, nil
}
