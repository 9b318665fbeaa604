package linkutil

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/netdev"
)

// Link gives a device bound to a Linux interface by name the address, MTU
// and link-state methods of netdev.Device. Devices embed it.
type Link struct {
	// IfName is the interface; Kind prefixes errors ("afpacket", "tap").
	IfName string
	Kind   string
}

// MAC returns the interface's address (zero if it cannot be read, for
// example after the interface moved to another namespace).
func (l *Link) MAC() [6]byte {
	mac, _ := MAC(l.IfName)
	return mac
}

// SetMAC sets the interface's address.
func (l *Link) SetMAC(mac [6]byte) error {
	if err := SetMAC(l.IfName, mac); err != nil {
		return fmt.Errorf("%s: %w", l.Kind, err)
	}
	return nil
}

// MTU returns the interface's MTU (0 if it cannot be read).
func (l *Link) MTU() int {
	mtu, _ := MTU(l.IfName)
	return mtu
}

// SetMTU sets the interface's MTU.
func (l *Link) SetMTU(mtu int) error {
	if err := SetMTU(l.IfName, mtu); err != nil {
		return fmt.Errorf("%s: %w", l.Kind, err)
	}
	return nil
}

// LinkState is up while the interface is up and running (for a veth, when
// it has carrier; a tap has carrier while its device holds it open).
func (l *Link) LinkState() netdev.LinkState {
	if ok, _ := Running(l.IfName); ok {
		return netdev.LinkUp
	}
	return netdev.LinkDown
}

// AdminUp reports whether the interface is administratively up (IFF_UP).
func (l *Link) AdminUp() bool {
	f, err := Flags(l.IfName)
	return err == nil && f&unix.IFF_UP != 0
}

// SetAdminUp sets or clears the interface's IFF_UP.
func (l *Link) SetAdminUp(up bool) error {
	if err := SetUp(l.IfName, up); err != nil {
		return fmt.Errorf("%s: %w", l.Kind, err)
	}
	return nil
}
