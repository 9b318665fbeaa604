// Package dpnetdev owns the userspace datapath: the implementation of
// dpif.Datapath over netdev ports. It runs poll-mode workers (one
// goroutine per configured core, locked to an OS thread), each owning a
// set of receive queues, a packet pool, an exact-match cache and its own
// megaflow classifier, as Open vSwitch's dpif-netdev PMD threads do. A
// miss becomes a synchronous upcall into the registered
// dpif.UpcallHandler; recirculation re-enters the worker's pipeline with a
// bounded depth; megaflow counters are written only by the worker that
// owns the megaflow. A saturated worker with megaflow hits waiting spends
// at most a share of its time on upcalls and drops (and counts) the other
// misses (missbudget.go).
//
// Lock order: Datapath.mu (ports, flow index, configuration) is taken
// before any classifier's internal writer lock. Workers never take
// Datapath.mu on the packet path: they read atomic snapshots (ports,
// handler, rx queue assignment) and their own classifier.
//
// It imports only datapath/* packages and golang.org/x/sys.
package dpnetdev
