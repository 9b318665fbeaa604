package main

import "golang.org/x/sys/unix"

// peerHungUp reports whether the peer of socket fd has closed it, from
// poll's POLLHUP/POLLRDHUP without reading any data.
func peerHungUp(fd int) bool {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
	n, err := unix.Poll(p, 0)
	return err == nil && n > 0 && p[0].Revents&(unix.POLLHUP|unix.POLLRDHUP|unix.POLLERR) != 0
}
