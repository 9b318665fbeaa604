// Package dpif is the boundary between the OpenFlow layer and the
// datapath, as Open vSwitch's lib/dpif.h with one provider. It owns the
// Datapath interface (ports, megaflows by UFID, execute, upcall
// registration, counters), the types that cross the boundary (Flow,
// FlowPut, Upcall, MissReply, Stats, Config) and the UpcallHandler
// interface the OpenFlow layer implements. The implementation is
// datapath/dpnetdev; datapath/dpif/dpiftest is a fake for unit tests of
// the layer above.
//
// # What crosses
//
// Nothing of OpenFlow crosses. The datapath knows flow keys
// (datapath/flow: every header field, metadata and tunnel field a packet
// can be matched on, in one fixed layout), masks over them, and datapath
// actions (datapath/odp: output, set, push/pop, recirc, ct, userspace,
// tnl_push, ...). A megaflow is a Match (a key under a mask) with a list
// of actions, named by a 128-bit UFID; a packet that matches no megaflow
// is a miss. Ports are datapath port numbers (odp ports), which the
// OpenFlow layer maps to and from OpenFlow port numbers; the datapath's
// local port is PortLocal (0).
//
// # Who calls whom
//
// Downward, the OpenFlow layer (ofproto/upcall, ofproto/ofswitch) and the
// daemon call Datapath: the daemon adds and removes ports and sets the
// configuration; the upcall layer installs, modifies, dumps and deletes
// megaflows; the switch executes packet-outs. Upward, the datapath calls
// the one UpcallHandler registered with SetUpcallHandler (the daemon
// registers a router that hands each upcall to the bridge that owns its
// input port). There are two kinds of upcall:
//
//   - Miss (UpcallMiss): no megaflow matched the packet. The handler
//     translates the packet's key through the OpenFlow tables and fills a
//     MissReply: the actions to run on this packet and, if Install, the
//     mask (and UFID) of the megaflow to cache. The datapath installs the
//     megaflow itself, with the packet's key under the reply's mask, so
//     the next packets of the same megaflow never leave the datapath.
//   - Userspace (UpcallUserspace): an installed megaflow's userspace()
//     action ran (a controller action, sFlow/IPFIX sampling, a slow-path
//     packet such as BFD). The cookie in Action.Userspace.Userdata says
//     what for; the datapath has already run, or will run, the megaflow's
//     other actions.
//
// The datapath never calls back into the handler for anything else, and
// the handler never holds a datapath lock when it calls Datapath methods.
//
// # On which goroutine
//
// Upcalls are synchronous and run on the datapath worker goroutine that
// received the packet (Upcall.Worker says which), as dpif-netdev calls its
// upcall callback from the PMD thread: the worker waits for the reply, so
// a handler must not block for long, and several workers may be in Miss
// or Userspace at once. A packet being executed (Execute) that
// recirculates and misses, or reaches a userspace() action, makes its
// upcall on the caller's goroutine, with Worker -1; its miss installs no
// megaflow. The datapath holds no lock of its flow index or ports while it
// calls the handler, so Datapath methods may be called from inside an
// upcall (a learn action's flow_mod commits, a tunnel neighbour request
// executes a packet), with one exception: executes are serialized, so a
// handler must not call Execute from an upcall that an Execute made.
// FlowPut, FlowDel, FlowFlush and installs from misses take the flow
// index's lock; FlowDump copies the flows under it and calls its callback
// without it.
//
// # Ownership of packets and keys
//
// An Upcall's Packet and Key belong to the datapath and are valid only
// during the call: a handler that keeps either (a packet-in's data, a
// ukey's key) copies it. The MissReply's Actions are kept by the datapath
// (installed in the megaflow): the handler must not modify them after
// returning. Execute consumes its packet: the caller must not touch it
// afterwards. A FlowPut's Match and Actions are copied or kept as given;
// the caller must not modify them after the call. Flows passed to a
// FlowDump callback are copies, valid after the callback returns.
//
// # Misses, puts and UFIDs
//
// The datapath always matches the presence of VLAN tags (a mask's
// VLAN-presence bits are set before installation: Mask.MatchVLANPresence)
// and stores the key masked (Match.Normalize). A megaflow's UFID is the
// handler's (MissReply.UFID, FlowPut.UFID) or, if zero, derived from the
// normalized match with UFIDFromMatch, so that a put and the miss that
// made the same megaflow agree. FlowPut with PutCreate adds a megaflow
// (ErrExists if the UFID is taken, ErrFlowLimit over the configured
// limit); with PutModify it changes the actions of an existing one in
// place, keeping its statistics unless PutZeroStats, which is how
// revalidation changes a megaflow without a window in which packets miss.
// The packet of a miss is executed on its own with the reply's actions and
// is not counted in the megaflow's statistics: the handler credits it to
// its rules itself.
//
// # Revalidation and statistics
//
// The datapath does not know when a megaflow went stale: the OpenFlow
// layer's revalidator (ofproto/upcall) dumps the megaflows (FlowDump)
// every round, pushes each megaflow's packet and byte counters (FlowStats,
// cumulative since installation or the last zeroing) to the OpenFlow
// rules it went through, re-translates the megaflows made before the last
// table change, modifies in place those whose actions changed and deletes
// (FlowDel, which returns the final counters) those that need a different
// mask. The datapath expires, on its own, megaflows idle for longer than
// Config.MaxIdle; the revalidator forgets what it knew of a megaflow
// missing from its dumps. FlowCount is cheap enough to call on every miss
// (the OpenFlow layer's dynamic flow limit is applied against it);
// ConfiguredFlowLimit is the configured ceiling of that limit. Stats are
// datapath-wide counters (hits, misses, lost upcalls, megaflows, masks).
//
// # Imports
//
// dpif imports only datapath/{packet,flow,odp,netdev}. It must not import
// the implementation (dpnetdev, conntrack) or anything of ofproto.
package dpif
