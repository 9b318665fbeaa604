// Package tap is the "internal" port device: a Linux tap interface
// (/dev/net/tun, IFF_TAP|IFF_NO_PI) created under the bridge or port name
// and brought up, so the host stack can talk to the switch, as Open
// vSwitch's internal ports do in the userspace datapath.
//
// A tap has no batched system call: Recv reads frames one read(2) at a
// time on a non-blocking descriptor until the batch is full or the kernel
// has nothing more (EAGAIN); Send writes one frame per write(2). The tap
// disappears when the device is closed.
//
// It imports datapath/netdev, datapath/packet and golang.org/x/sys.
package tap
