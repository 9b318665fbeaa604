package dummy

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// notifier is an eventfd that is readable while its rx queue is not
// empty, so a Poller can wait on a dummy port like on a real one.
type notifier struct{ fd int }

func newNotifier() (notifier, error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return notifier{fd: -1}, fmt.Errorf("dummy: eventfd: %w", err)
	}
	return notifier{fd: fd}, nil
}

func (n notifier) set() {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], 1)
	unix.Write(n.fd, b[:])
}

func (n notifier) clear() {
	var b [8]byte
	unix.Read(n.fd, b[:])
}

func (n notifier) close() {
	if n.fd >= 0 {
		unix.Close(n.fd)
	}
}
