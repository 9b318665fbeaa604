package afpacket

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/packet"
)

// txQueue is a send-only socket with message headers for one batch.
type txQueue struct {
	mu   sync.Mutex
	fd   int
	msgs [packet.BatchSize]unix.Mmsghdr
	iovs [packet.BatchSize]unix.Iovec
	_    [64]byte
}

func openTx(ifindex int) (*txQueue, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	// Protocol 0: bound for sending only, never queues received frames.
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: ifindex}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind: %w", err)
	}
	// Straight to the driver; the datapath has its own queues.
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("PACKET_QDISC_BYPASS: %w", err)
	}
	return newTxQueue(fd), nil
}

// newTxQueue wraps a bound send socket.
func newTxQueue(fd int) *txQueue {
	t := &txQueue{fd: fd}
	for i := range t.msgs {
		t.msgs[i].Hdr.Iov = &t.iovs[i]
		t.msgs[i].Hdr.Iovlen = 1
	}
	return t
}

// send transmits every frame of b. A frame the kernel refuses is skipped
// and counted as dropped; a full socket buffer drops the rest of the
// batch rather than block the worker. err reports only unexpected
// failures.
func (t *txQueue) send(b *packet.Batch) (sent, bytes, dropped int, err error) {
	n := b.N
	if n == 0 {
		return 0, 0, 0, nil
	}

	for i, p := range b.Slice() {
		d := p.Data()
		t.iovs[i].Base = nil
		if len(d) > 0 {
			t.iovs[i].Base = &d[0]
		}
		t.iovs[i].SetLen(len(d))
	}
	for i := 0; i < n; {
		k, e := sendmmsg(t.fd, t.msgs[i:n])
		switch e {
		case 0:
			if k <= 0 {
				dropped += n - i
				i = n
				break
			}
			for _, p := range b.Pkts[i : i+k] {
				bytes += p.Len()
			}
			sent += k
			i += k
		case unix.EINTR:
		case unix.EAGAIN, unix.ENOBUFS:
			dropped += n - i
			i = n
		case unix.EMSGSIZE, unix.EINVAL, unix.ENETDOWN, unix.ENXIO:
			// The first remaining frame was refused.
			dropped++
			i++
		default:
			dropped += n - i
			err = e
			i = n
		}
	}
	for i := range n {
		t.iovs[i].Base = nil
	}
	return sent, bytes, dropped, err
}
