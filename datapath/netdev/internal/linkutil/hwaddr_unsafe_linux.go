package linkutil

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hwReq is struct ifreq with the ifr_hwaddr sockaddr member, which
// unix.Ifreq has no accessor for.
type hwReq struct {
	name   [unix.IFNAMSIZ]byte
	family uint16
	data   [14]byte
	_      [8]byte
}

func (r *hwReq) do(name string, req uintptr) error {
	if len(name) >= unix.IFNAMSIZ {
		return unix.EINVAL
	}
	copy(r.name[:], name)
	fd, err := ctlSocket()
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(unsafe.Pointer(r)))
	if e != 0 {
		return e
	}
	return nil
}
