package netdev

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// Ready names an rx queue that has packets waiting.
type Ready struct {
	Dev   Device
	Queue int
}

type pollEntry struct {
	dev   Device
	queue int
	fd    int
	used  bool
}

// Poller waits, with epoll, until one of a set of rx queues may have
// packets, so a worker can sleep when all its queues are idle. A worker
// drains its queues with Recv until they return nothing, then calls Wait.
// A Poller belongs to one goroutine.
type Poller struct {
	epfd    int
	entries []pollEntry
	events  []unix.EpollEvent
	ready   []Ready
}

// NewPoller returns an empty Poller.
func NewPoller() (*Poller, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("netdev: epoll_create1: %w", err)
	}
	return &Poller{epfd: fd}, nil
}

// Add watches rx queue q of dev.
func (p *Poller) Add(dev Device, q int) error {
	if q < 0 || q >= dev.NumRxQueues() {
		return fmt.Errorf("netdev: poll %s queue %d: %w", dev.Name(), q, ErrQueue)
	}
	fd := dev.RxFd(q)
	if fd < 0 {
		return fmt.Errorf("netdev: poll %s queue %d: no rx descriptor", dev.Name(), q)
	}
	slot := -1
	for i := range p.entries {
		if !p.entries[i].used {
			slot = i
			break
		}
	}
	if slot < 0 {
		slot = len(p.entries)
		p.entries = append(p.entries, pollEntry{})
	}
	// The event carries the slot index, not the fd, so one Device's queues
	// sharing an fd number over time can never be confused.
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(slot)}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("netdev: poll %s queue %d: epoll_ctl add: %w", dev.Name(), q, err)
	}
	p.entries[slot] = pollEntry{dev: dev, queue: q, fd: fd, used: true}
	p.events = append(p.events, unix.EpollEvent{})
	p.ready = append(p.ready, Ready{})
	return nil
}

// Remove stops watching rx queue q of dev. Call it before closing dev.
func (p *Poller) Remove(dev Device, q int) error {
	for i := range p.entries {
		e := &p.entries[i]
		if e.used && e.dev == dev && e.queue == q {
			err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, e.fd, nil)
			*e = pollEntry{}
			p.events = p.events[:len(p.events)-1]
			p.ready = p.ready[:len(p.ready)-1]
			if err != nil && !errors.Is(err, unix.EBADF) && !errors.Is(err, unix.ENOENT) {
				return fmt.Errorf("netdev: poll %s queue %d: epoll_ctl del: %w", dev.Name(), q, err)
			}
			return nil
		}
	}
	return fmt.Errorf("netdev: poll %s queue %d: not watched", dev.Name(), q)
}

// Wait blocks up to timeout (forever if negative) until at least one
// watched queue is readable and returns the readable queues. The returned
// slice is reused by the next call. An interrupted wait returns (nil, nil).
func (p *Poller) Wait(timeout time.Duration) ([]Ready, error) {
	if len(p.events) == 0 {
		if timeout > 0 {
			time.Sleep(timeout)
		}
		return nil, nil
	}
	ms := -1
	if timeout >= 0 {
		ms = int((timeout + time.Millisecond - 1) / time.Millisecond)
	}
	n, err := unix.EpollWait(p.epfd, p.events, ms)
	if err != nil {
		if errors.Is(err, unix.EINTR) {
			return nil, nil
		}
		return nil, fmt.Errorf("netdev: epoll_wait: %w", err)
	}
	out := p.ready[:0]
	for _, ev := range p.events[:n] {
		i := int(ev.Fd)
		if i < 0 || i >= len(p.entries) || !p.entries[i].used {
			continue
		}
		out = append(out, Ready{Dev: p.entries[i].dev, Queue: p.entries[i].queue})
	}
	return out, nil
}

// Close releases the epoll descriptor; it does not close the devices.
func (p *Poller) Close() error {
	if p.epfd < 0 {
		return nil
	}
	err := unix.Close(p.epfd)
	p.epfd = -1
	return err
}
