package tests

import (
	"net"
	"os/exec"
	"sync"
	"testing"
)

// rootDevices are network devices with fixed names in this network
// namespace: the tap devices of netdev and system bridges (gvs-vswitchd
// run in-process, Open vSwitch's netdev datapath) and the internal ports
// moved into the VIF namespaces. The tests that create them run in
// parallel with the others but one at a time among those that create the
// same.
type rootDevices struct {
	sync.Mutex
	// names are the persistent devices a test may leave behind when a
	// daemon it runs is stopped by a signal (taps outlive their process,
	// in Open vSwitch as in gvs).
	names []string
}

var (
	// brIntDevices: OVN's br-int and br-ex on this chassis and its VIFs
	// vm1, vm2, vm3.
	brIntDevices = rootDevices{names: []string{"br-int", "br-ex", "ovs-netdev"}}
	// br0Devices: br0 as a netdev or system bridge.
	br0Devices = rootDevices{names: []string{"br0", "ovs-netdev"}}
)

// parallelHolding marks t parallel and then waits for devices, which it
// holds until t's cleanup has removed what it created: the daemons' own
// cleanups first, then any of the devices' persistent names that did not
// exist when t took them (a test never deletes a device it found).
func parallelHolding(t *testing.T, devices *rootDevices) {
	t.Helper()
	t.Parallel()
	devices.Lock()
	var found []bool
	for _, n := range devices.names {
		_, err := net.InterfaceByName(n)
		found = append(found, err == nil)
	}
	// Registered first, so run last: after the daemons and devices
	// that later cleanups stop and delete.
	t.Cleanup(func() {
		defer devices.Unlock()
		for i, n := range devices.names {
			if _, err := net.InterfaceByName(n); err == nil && !found[i] {
				if out, err := exec.Command("ip", "link", "del", n).CombinedOutput(); err != nil {
					t.Logf("removing leftover %s: %v: %s", n, err, out)
				}
			}
		}
	})
}
