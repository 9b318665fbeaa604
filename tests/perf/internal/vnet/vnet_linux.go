// Package vnet holds the veth and network-namespace helpers of the
// performance harnesses under tests/perf (macbench, dpbench): running
// code inside a namespace, reading an interface's kernel counters over
// rtnetlink, and sending frames with sendmmsg on an AF_PACKET socket.
// It imports only the standard library and golang.org/x/sys/unix,
// nothing of gvs.
package vnet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// InNetns runs fn on an OS thread switched into the named network
// namespace (made by `ip netns add`). Sockets fn opens stay in that
// namespace after the thread switches back.
func InNetns(name string, fn func() error) error {
	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("opening own netns: %w", err)
	}
	defer orig.Close()
	ns, err := os.Open("/run/netns/" + name)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("opening netns %s: %w", name, err)
	}
	defer ns.Close()
	if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("entering netns %s: %w", name, err)
	}
	ferr := fn()
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		// Leave the thread locked: it dies with its goroutine rather
		// than run other goroutines in the wrong namespace.
		return fmt.Errorf("leaving netns %s: %w", name, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// LinkCounters are the kernel's counters of one interface.
type LinkCounters struct {
	RxPackets, TxPackets, RxDropped, TxDropped uint64
}

// LinkStats reads one interface's counters over an rtnetlink socket
// opened in the interface's namespace: a few tens of microseconds per
// read, no process per read, so the generator can pace on it.
type LinkStats struct {
	fd      int
	Ifindex int32
	seq     uint32
	buf     []byte
}

// OpenLinkStats opens a counter reader for ifname in netns.
func OpenLinkStats(netns, ifname string) (*LinkStats, error) {
	s := &LinkStats{buf: make([]byte, 64<<10)}
	err := InNetns(netns, func() error {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
		if err != nil {
			return fmt.Errorf("netlink socket: %w", err)
		}
		if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			unix.Close(fd)
			return fmt.Errorf("netlink bind: %w", err)
		}
		s.fd = fd
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := s.query(ifname); err != nil {
		s.Close()
		return nil, fmt.Errorf("%s in %s: %w", ifname, netns, err)
	}
	return s, nil
}

// Close releases the netlink socket.
func (s *LinkStats) Close() { unix.Close(s.fd) }

// Read returns the interface's current counters.
func (s *LinkStats) Read() (LinkCounters, error) { return s.query("") }

// query sends RTM_GETLINK by index (or by name the first time) and
// decodes IFLA_STATS64 from the reply.
func (s *LinkStats) query(name string) (LinkCounters, error) {
	s.seq++
	req := make([]byte, unix.NLMSG_HDRLEN+unix.SizeofIfInfomsg, 64)
	hdr := (*unix.NlMsghdr)(unsafe.Pointer(&req[0]))
	hdr.Type, hdr.Flags, hdr.Seq = unix.RTM_GETLINK, unix.NLM_F_REQUEST, s.seq
	ifi := (*unix.IfInfomsg)(unsafe.Pointer(&req[unix.NLMSG_HDRLEN]))
	ifi.Family = unix.AF_UNSPEC
	if name != "" {
		req = AppendAttr(req, unix.IFLA_IFNAME, append([]byte(name), 0))
	} else {
		ifi.Index = s.Ifindex
	}
	binary.NativeEndian.PutUint32(req[0:4], uint32(len(req)))
	if err := unix.Sendto(s.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return LinkCounters{}, fmt.Errorf("RTM_GETLINK: %w", err)
	}
	for {
		n, _, err := unix.Recvfrom(s.fd, s.buf, 0)
		if err != nil {
			return LinkCounters{}, fmt.Errorf("RTM_GETLINK reply: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(s.buf[:n])
		if err != nil {
			return LinkCounters{}, fmt.Errorf("RTM_GETLINK reply: %w", err)
		}
		for _, m := range msgs {
			if m.Header.Seq != s.seq {
				continue
			}
			switch m.Header.Type {
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if e := int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
						return LinkCounters{}, fmt.Errorf("RTM_GETLINK: %w", syscall.Errno(-e))
					}
				}
				return LinkCounters{}, errors.New("RTM_GETLINK: empty error reply")
			case unix.RTM_NEWLINK:
				if len(m.Data) < unix.SizeofIfInfomsg {
					return LinkCounters{}, errors.New("RTM_NEWLINK: short message")
				}
				s.Ifindex = (*unix.IfInfomsg)(unsafe.Pointer(&m.Data[0])).Index
				return DecodeStats64(m.Data[unix.SizeofIfInfomsg:])
			}
		}
	}
}

// AppendAttr appends a route attribute (padded to 4 bytes) to b.
func AppendAttr(b []byte, typ uint16, val []byte) []byte {
	l := unix.SizeofRtAttr + len(val)
	b = binary.NativeEndian.AppendUint16(b, uint16(l))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, val...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// DecodeStats64 finds IFLA_STATS64 (struct rtnl_link_stats64: rx_packets,
// tx_packets, rx_bytes, tx_bytes, rx_errors, tx_errors, rx_dropped,
// tx_dropped, ... as native-endian u64) among route attributes.
func DecodeStats64(attrs []byte) (LinkCounters, error) {
	for len(attrs) >= unix.SizeofRtAttr {
		l := int(binary.NativeEndian.Uint16(attrs[0:2]))
		typ := binary.NativeEndian.Uint16(attrs[2:4])
		if l < unix.SizeofRtAttr || l > len(attrs) {
			return LinkCounters{}, errors.New("IFLA attribute overruns the message")
		}
		if typ == unix.IFLA_STATS64 && l >= unix.SizeofRtAttr+64 {
			v := attrs[unix.SizeofRtAttr:]
			u := func(i int) uint64 { return binary.NativeEndian.Uint64(v[8*i:]) }
			return LinkCounters{RxPackets: u(0), TxPackets: u(1), RxDropped: u(6), TxDropped: u(7)}, nil
		}
		adv := (l + 3) &^ 3
		if adv > len(attrs) {
			break
		}
		attrs = attrs[adv:]
	}
	return LinkCounters{}, errors.New("no IFLA_STATS64 in RTM_NEWLINK")
}

// TxSocket sends frames on one interface with sendmmsg. It is bound with
// protocol 0, so it never receives: frames arriving at the guest cost
// the generator nothing.
type TxSocket struct {
	fd   int
	msgs []unix.Mmsghdr
	iovs []unix.Iovec
}

// OpenTx opens a sending socket on interface ifindex of netns that
// sends up to batch frames per call.
func OpenTx(netns string, ifindex int32, batch int) (*TxSocket, error) {
	t := &TxSocket{msgs: make([]unix.Mmsghdr, batch), iovs: make([]unix.Iovec, batch)}
	err := InNetns(netns, func() error {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("packet socket: %w", err)
		}
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: int(ifindex)}); err != nil {
			unix.Close(fd)
			return fmt.Errorf("packet bind: %w", err)
		}
		// Straight to the veth, as vethbench's generator.
		if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1); err != nil {
			unix.Close(fd)
			return fmt.Errorf("PACKET_QDISC_BYPASS: %w", err)
		}
		t.fd = fd
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range t.msgs {
		t.msgs[i].Hdr.Iov = &t.iovs[i]
		t.msgs[i].Hdr.Iovlen = 1
	}
	return t, nil
}

// Close closes the socket.
func (t *TxSocket) Close() { unix.Close(t.fd) }

// Send transmits frames with as few sendmmsg calls as the kernel allows
// and returns how many it took; when wait is false a full queue ends the
// call early (the steady-state loop just sends the next batch).
func (t *TxSocket) Send(frames [][]byte, wait bool) (int, error) {
	n := len(frames)
	for i, f := range frames {
		t.iovs[i].Base = &f[0]
		t.iovs[i].SetLen(len(f))
	}
	sent := 0
	for sent < n {
		k, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(t.fd), uintptr(unsafe.Pointer(&t.msgs[sent])), uintptr(n-sent), unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
			sent += int(k)
		case unix.EINTR:
		case unix.EAGAIN, unix.ENOBUFS:
			if !wait {
				return sent, nil
			}
			runtime.Gosched()
		default:
			return sent, fmt.Errorf("sendmmsg: %w", e)
		}
	}
	return sent, nil
}
