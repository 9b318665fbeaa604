// Package dpif owns the boundary between the OpenFlow layer and the
// datapath: the Datapath interface (ports, megaflows by UFID, execute,
// upcall registration, stats), the Upcall and FlowPut types, and the
// handler interface the OpenFlow layer implements for misses and
// userspace actions. It is Open vSwitch's lib/dpif.h with one provider.
//
// A datapath has "no intelligence of its own": it holds flow keys, masks
// and datapath actions (package odp), and asks its UpcallHandler when a
// packet matches no megaflow.
//
// It imports only datapath/{packet,flow,odp,netdev}.
package dpif
