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
// Who owns what: Datapath is the dpif.Datapath face and the composition
// (configuration, workers, sweeper, pause, conntrack, meters, MAC
// tables); portSet (ports.go) owns the ports and the assignment of their
// receive queues to workers; megaflows (megaflows.go) owns the flow index
// by UFID with each worker's copy, and puts, deletes, dumps and idle
// expiry; worker (worker.go) owns one poll-mode thread's classifier,
// cache, pool and counters.
//
// Locks: Datapath.mu guards the configuration; portSet.mu serialises port
// changes; megaflows.mu guards the flow index and is taken before any
// classifier's internal writer lock. None of them nests in another.
// Workers never take them on the packet path: they read atomic snapshots
// (ports, handler, rx queue assignment) and their own classifier.
//
// It imports only datapath/* packages and golang.org/x/sys.
package dpnetdev
