//go:build linux

package router

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Kernel reads routes, links and addresses of the network namespace it was
// opened in over rtnetlink, and watches for route and link changes.
type Kernel struct {
	watch int // multicast notifications
	seq   atomic.Uint32

	mu    sync.Mutex // serialises dumps on fd
	fd    int        // dump requests
	buf   []byte     // dump replies; guarded by mu
	dumps atomic.Uint64

	// addrs caches every device's addresses, read in one dump at the
	// first Addrs after a route dump, as Open vSwitch caches device
	// address lists between routing-table resets. A route dump inserts
	// one route per device and looks up each one's addresses: reading
	// them per device made every re-sync cost a links and an address
	// dump per device (quadratic in the devices, a gigabyte of garbage
	// while ovn-controller added 50 ports).
	addrMu sync.Mutex
	addrs  map[string][]netip.Prefix // guarded by addrMu; nil until read
}

// OpenKernel opens rtnetlink sockets in the calling thread's network
// namespace; they keep that namespace for their lifetime.
func OpenKernel() (*Kernel, error) {
	fd, err := openRtnl(0)
	if err != nil {
		return nil, err
	}
	w, err := openRtnl(unix.RTMGRP_IPV4_ROUTE | unix.RTMGRP_IPV6_ROUTE | unix.RTMGRP_LINK)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Kernel{fd: fd, watch: w}, nil
}

func openRtnl(groups uint32) (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return -1, fmt.Errorf("router: rtnetlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: groups}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("router: rtnetlink bind: %w", err)
	}
	// A dump whose answer never comes must fail, not hold the socket's
	// lock (and everyone waiting for it) forever.
	tv := unix.NsecToTimeval((2 * time.Second).Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("router: rtnetlink timeout: %w", err)
	}
	return fd, nil
}

// Close releases the sockets.
func (k *Kernel) Close() error {
	return errors.Join(unix.Close(k.fd), unix.Close(k.watch))
}

// dump sends a dump request of type typ with body and calls fn for every
// reply message.
func (k *Kernel) dump(typ uint16, body []byte, fn func(m *syscall.NetlinkMessage) error) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	seq := k.seq.Add(1)
	req := make([]byte, unix.NLMSG_HDRLEN+len(body))
	h := (*unix.NlMsghdr)(unsafe.Pointer(&req[0]))
	*h = unix.NlMsghdr{Len: uint32(len(req)), Type: typ, Flags: unix.NLM_F_REQUEST | unix.NLM_F_DUMP, Seq: seq}
	copy(req[unix.NLMSG_HDRLEN:], body)
	if err := unix.Sendto(k.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("router: rtnetlink dump %d: %w", typ, err)
	}
	k.dumps.Add(1)
	if k.buf == nil {
		k.buf = make([]byte, 1<<16)
	}
	buf := k.buf
	for {
		n, _, err := unix.Recvfrom(k.fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("router: rtnetlink dump %d: %w", typ, err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return fmt.Errorf("router: rtnetlink dump %d: %w", typ, err)
		}
		for i := range msgs {
			m := &msgs[i]
			if m.Header.Seq != seq {
				continue
			}
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return nil
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if e := *(*int32)(unsafe.Pointer(&m.Data[0])); e != 0 {
						return fmt.Errorf("router: rtnetlink dump %d: %w", typ, unix.Errno(-e))
					}
				}
				return nil
			}
			if err := fn(m); err != nil {
				return err
			}
		}
	}
}

// Links returns interface index to name.
func (k *Kernel) Links() (map[int32]string, error) {
	links := make(map[int32]string)
	body := make([]byte, unix.SizeofIfInfomsg)
	err := k.dump(unix.RTM_GETLINK, body, func(m *syscall.NetlinkMessage) error {
		if m.Header.Type != unix.RTM_NEWLINK || len(m.Data) < unix.SizeofIfInfomsg {
			return nil
		}
		ifi := (*unix.IfInfomsg)(unsafe.Pointer(&m.Data[0]))
		attrs, err := syscall.ParseNetlinkRouteAttr(m)
		if err != nil {
			return nil
		}
		for _, a := range attrs {
			if a.Attr.Type == unix.IFLA_IFNAME {
				links[ifi.Index] = cString(a.Value)
			}
		}
		return nil
	})
	return links, err
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func ipFrom(b []byte) (netip.Addr, bool) {
	switch len(b) {
	case 4:
		return netip.AddrFrom4([4]byte(b)), true
	case 16:
		return netip.AddrFrom16([16]byte(b)), true
	}
	return netip.Addr{}, false
}

// Routes dumps the IPv4 and IPv6 unicast and local routes of every table,
// in kernel order, keeping those Open vSwitch 3.1 keeps: scope not
// "nowhere", type unicast or local, output interface known.
func (k *Kernel) Routes() ([]KernelRoute, error) {
	k.addrMu.Lock()
	k.addrs = nil
	k.addrMu.Unlock()
	links, err := k.Links()
	if err != nil {
		return nil, err
	}
	var out []KernelRoute
	body := make([]byte, unix.SizeofRtMsg) // family AF_UNSPEC: IPv4 and IPv6
	err = k.dump(unix.RTM_GETROUTE, body, func(m *syscall.NetlinkMessage) error {
		if kr, ok := parseRouteMsg(m, links); ok {
			out = append(out, kr)
		}
		return nil
	})
	return out, err
}

func parseRouteMsg(m *syscall.NetlinkMessage, links map[int32]string) (KernelRoute, bool) {
	if m.Header.Type != unix.RTM_NEWROUTE || len(m.Data) < unix.SizeofRtMsg {
		return KernelRoute{}, false
	}
	rtm := (*unix.RtMsg)(unsafe.Pointer(&m.Data[0]))
	if rtm.Family != unix.AF_INET && rtm.Family != unix.AF_INET6 {
		return KernelRoute{}, false
	}
	if rtm.Scope == unix.RT_SCOPE_NOWHERE || (rtm.Type != unix.RTN_UNICAST && rtm.Type != unix.RTN_LOCAL) {
		return KernelRoute{}, false
	}
	attrs, err := syscall.ParseNetlinkRouteAttr(m)
	if err != nil {
		return KernelRoute{}, false
	}
	kr := KernelRoute{Local: rtm.Type == unix.RTN_LOCAL}
	dst := netip.IPv4Unspecified()
	if rtm.Family == unix.AF_INET6 {
		dst = netip.IPv6Unspecified()
	}
	for _, a := range attrs {
		switch a.Attr.Type {
		case unix.RTA_DST:
			if ip, ok := ipFrom(a.Value); ok {
				dst = ip
			}
		case unix.RTA_GATEWAY:
			if ip, ok := ipFrom(a.Value); ok {
				kr.Gateway = ip
			}
		case unix.RTA_OIF:
			if len(a.Value) == 4 {
				idx := *(*int32)(unsafe.Pointer(&a.Value[0]))
				name, ok := links[idx]
				if !ok {
					return KernelRoute{}, false
				}
				kr.Dev = name
			}
		case unix.RTA_MARK:
			if len(a.Value) == 4 {
				kr.Mark = *(*uint32)(unsafe.Pointer(&a.Value[0]))
			}
		}
	}
	maxBits := 32
	if dst.Is6() {
		maxBits = 128
	}
	if int(rtm.Dst_len) > maxBits {
		return KernelRoute{}, false
	}
	kr.Dst = netip.PrefixFrom(dst, int(rtm.Dst_len))
	return kr, true
}

// Addrs returns the addresses of device dev, in kernel order. Every
// device's are read with one RTM_GETADDR dump and cached until the next
// Routes. Errors and unknown devices yield nil, like a device without
// addresses.
func (k *Kernel) Addrs(dev string) []netip.Prefix {
	k.addrMu.Lock()
	defer k.addrMu.Unlock()
	if k.addrs == nil {
		k.addrs = k.readAddrs()
	}
	return k.addrs[dev]
}

// readAddrs returns every device's addresses (an empty map when the
// dumps fail, so that the failure is not retried per lookup).
func (k *Kernel) readAddrs() map[string][]netip.Prefix {
	out := make(map[string][]netip.Prefix)
	links, err := k.Links()
	if err != nil {
		return out
	}
	body := make([]byte, unix.SizeofIfAddrmsg)
	_ = k.dump(unix.RTM_GETADDR, body, func(m *syscall.NetlinkMessage) error {
		if m.Header.Type != unix.RTM_NEWADDR || len(m.Data) < unix.SizeofIfAddrmsg {
			return nil
		}
		ifa := (*unix.IfAddrmsg)(unsafe.Pointer(&m.Data[0]))
		dev, ok := links[int32(ifa.Index)]
		if !ok {
			return nil
		}
		attrs, err := syscall.ParseNetlinkRouteAttr(m)
		if err != nil {
			return nil
		}
		// Like getifaddrs: IFA_LOCAL, when present, is the interface's own
		// address (IFA_ADDRESS is then the peer's on point-to-point links).
		var addr, local netip.Addr
		for _, a := range attrs {
			switch a.Attr.Type {
			case unix.IFA_ADDRESS:
				addr, _ = ipFrom(a.Value)
			case unix.IFA_LOCAL:
				local, _ = ipFrom(a.Value)
			}
		}
		if local.IsValid() {
			addr = local
		}
		if addr.IsValid() {
			out[dev] = append(out[dev], netip.PrefixFrom(addr, int(ifa.Prefixlen)))
		}
		return nil
	})
	return out
}

// Sync replaces t's cached routes with a fresh dump of the kernel's.
func (t *Table) Sync(k *Kernel) error {
	routes, err := k.Routes()
	if err != nil {
		return err
	}
	t.ReplaceCached(routes)
	return nil
}

// Watch syncs t with the kernel, then re-syncs after every route or link
// notification (or lost notifications) until ctx ends. It returns ctx's
// error or the first netlink failure.
func (t *Table) Watch(ctx context.Context, k *Kernel) error {
	if err := t.Sync(k); err != nil {
		return err
	}
	buf := make([]byte, 1<<16)
	stale := false // a notification whose re-dump has not succeeded yet
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		fds := []unix.PollFd{{Fd: int32(k.watch), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 100)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("router: poll rtnetlink: %w", err)
		}
		for n > 0 {
			_, _, err := unix.Recvfrom(k.watch, buf, unix.MSG_DONTWAIT)
			if err == unix.EAGAIN || err == unix.EWOULDBLOCK {
				break
			}
			if err == unix.EINTR {
				continue
			}
			if err != nil && err != unix.ENOBUFS {
				return fmt.Errorf("router: read rtnetlink: %w", err)
			}
			stale = true
		}
		if stale {
			// A failed re-dump (a timeout under load, say) is retried
			// at the next poll: the table must not stay without the
			// route the notification announced until the next one.
			stale = t.Sync(k) != nil
		}
	}
}
