package tests

import (
	"sync"
	"testing"
)

// Network devices with fixed names in this network namespace: the tap
// devices of netdev and system bridges (gvs-vswitchd run in-process, Open
// vSwitch's netdev datapath) and the internal ports moved into the VIF
// namespaces. The tests that create one run in parallel with the others
// but one at a time among those that create the same.
var (
	// brIntDevices: OVN's br-int and br-ex on this chassis and its VIFs
	// vm1, vm2, vm3.
	brIntDevices sync.Mutex
	// br0Devices: br0 as a netdev or system bridge.
	br0Devices sync.Mutex
)

// parallelHolding marks t parallel and then waits for devices, which it
// holds until t's cleanup has removed what it created.
func parallelHolding(t *testing.T, devices *sync.Mutex) {
	t.Helper()
	t.Parallel()
	devices.Lock()
	// Registered first, so run last: after the daemons and devices
	// that later cleanups stop and delete.
	t.Cleanup(devices.Unlock)
}
