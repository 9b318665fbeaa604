// Package linkutil reads and sets Linux interface attributes (index, MAC,
// MTU, flags) with the classic SIOC* ioctls, for the afpacket and tap
// devices. It is not on any packet path.
package linkutil

import (
	"fmt"

	"golang.org/x/sys/unix"
)

func ctlSocket() (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		// Kernels without IPv4 still allow interface ioctls on packet
		// sockets.
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	}
	if err != nil {
		return -1, fmt.Errorf("control socket: %w", err)
	}
	return fd, nil
}

func ifreq(name string, req uint, set func(*unix.Ifreq)) (*unix.Ifreq, error) {
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return nil, fmt.Errorf("interface %q: %w", name, err)
	}
	if set != nil {
		set(ifr)
	}
	fd, err := ctlSocket()
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if err := unix.IoctlIfreq(fd, req, ifr); err != nil {
		return nil, err
	}
	return ifr, nil
}

// Ifindex returns the interface index of name.
func Ifindex(name string) (int, error) {
	ifr, err := ifreq(name, unix.SIOCGIFINDEX, nil)
	if err != nil {
		return 0, fmt.Errorf("interface %q: get index: %w", name, err)
	}
	return int(ifr.Uint32()), nil
}

// MTU returns the MTU of name.
func MTU(name string) (int, error) {
	ifr, err := ifreq(name, unix.SIOCGIFMTU, nil)
	if err != nil {
		return 0, fmt.Errorf("interface %q: get mtu: %w", name, err)
	}
	return int(int32(ifr.Uint32())), nil
}

// SetMTU sets the MTU of name.
func SetMTU(name string, mtu int) error {
	if _, err := ifreq(name, unix.SIOCSIFMTU, func(r *unix.Ifreq) { r.SetUint32(uint32(mtu)) }); err != nil {
		return fmt.Errorf("interface %q: set mtu %d: %w", name, mtu, err)
	}
	return nil
}

// Flags returns the IFF_* flags of name.
func Flags(name string) (uint16, error) {
	ifr, err := ifreq(name, unix.SIOCGIFFLAGS, nil)
	if err != nil {
		return 0, fmt.Errorf("interface %q: get flags: %w", name, err)
	}
	return ifr.Uint16(), nil
}

// SetUp sets or clears IFF_UP on name.
func SetUp(name string, up bool) error {
	f, err := Flags(name)
	if err != nil {
		return err
	}
	if up {
		f |= unix.IFF_UP
	} else {
		f &^= unix.IFF_UP
	}
	if _, err := ifreq(name, unix.SIOCSIFFLAGS, func(r *unix.Ifreq) { r.SetUint16(f) }); err != nil {
		return fmt.Errorf("interface %q: set flags: %w", name, err)
	}
	return nil
}

// Running reports whether name is up with carrier (IFF_RUNNING).
func Running(name string) (bool, error) {
	f, err := Flags(name)
	if err != nil {
		return false, err
	}
	return f&unix.IFF_RUNNING != 0, nil
}

// MAC returns the Ethernet address of name.
func MAC(name string) ([6]byte, error) {
	var r hwReq
	if err := r.do(name, unix.SIOCGIFHWADDR); err != nil {
		return [6]byte{}, fmt.Errorf("interface %q: get mac: %w", name, err)
	}
	var mac [6]byte
	copy(mac[:], r.data[:6])
	return mac, nil
}

// SetMAC sets the Ethernet address of name.
func SetMAC(name string, mac [6]byte) error {
	var r hwReq
	r.family = unix.ARPHRD_ETHER
	copy(r.data[:], mac[:])
	if err := r.do(name, unix.SIOCSIFHWADDR); err != nil {
		return fmt.Errorf("interface %q: set mac: %w", name, err)
	}
	return nil
}
