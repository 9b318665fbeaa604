// Package ofswitch owns the OpenFlow switch of one bridge: its ports as
// OpenFlow sees them, its flow tables (ofproto/oftable), groups, meters
// and bundles, flow_mod and packet-out processing, the meaning of every
// OpenFlow message (roles, async config, flow monitors, asynchronous
// messages to send), and flow export, as Open vSwitch's ofproto.c. Two
// packages hold the rest of one bridge: ofproto/connmgr its OpenFlow
// connections (the <bridge>.mgmt listener, controllers, probes, packet-in
// rate limits, snoop), as Open vSwitch's connmgr.c, and ofproto/upcall
// the datapath side (misses, revalidation, flow limit), one
// upcall.Handler per bridge (Bridge.Upcalls), as Open vSwitch's
// ofproto-dpif-upcall.c.
//
// # Overview
//
// A Bridge is created by the daemon for each Bridge row. The daemon tells
// it its ports (SetPorts) and settings (SetConfig) and routes datapath
// upcalls whose in_port belongs to it to its upcall handler. The
// connection manager hands every OpenFlow message to serveConn, on the
// connection's goroutine, with the connection's state (connState: the
// manager's plus the switch's connExt, its bundles and flow monitors);
// flow_mods are applied through
// oftable transactions (bundles stage several), and every committed change
// tells the upcall handler (upcall.Handler.Changed), whose revalidator
// re-translates the megaflows made before: one whose actions changed
// under the same mask is modified in place, one that now needs a finer
// mask is deleted (see ofproto/upcall). A barrier reply waits until a
// revalidation round has covered the changes before it.
//
// The Bridge keeps the settings of the switch (fail mode, controllers,
// fragment handling, role generation ids), serves each message
// (handler.go, session.go) and owns the parts that do the work, each a
// type of its own given only what it needs of the bridge (the
// translator, the tables, the upcall handler, callbacks), never the
// Bridge itself:
//   - portTable (ports.go, portmod.go): the ports as OpenFlow sees them,
//     port_mod's configuration and the tunnel TLV table, published to
//     translation as one snapshot; port desc, port and queue stats, TLV
//     table requests.
//   - notifier (async.go, reqforward.go): every asynchronous message to
//     the connections, each as its async configuration asks (packet-in
//     and continuations, port status, flow removed and the deletes of
//     delete_learned, request forwarding), and whether table misses make
//     packet-ins.
//   - fmDecoder (flowmod.go, actions.go): wire flow_mods into oftable's
//     form, with each version's cookie and table rules and the checks of
//     actions, groups and meters.
//   - executor (packetout.go, bfd.go): packets run outside the datapath's
//     upcalls: packet-outs, NXT_RESUME, slow-path (CFM, BFD, LACP)
//     upcalls and the switch's own CCMs and BFD packets (SendPacket).
//   - bundler (bundle.go): OpenFlow bundles (open, add, close, discard,
//     idle timeout) and their all-or-nothing commit; each connection's
//     bundles are in its connExt.
//   - tracer (trace.go, traceflow.go): ofproto/trace reports.
//   - groupTable (groups.go) and meterTable (meters.go), which share the
//     bridge's gmu so that group and meter changes and bundle commits are
//     serialized; tableSet (tablefeatures.go: table names, table_mod
//     settings, Flow_Table limits and prefixes); monitorSet
//     (flowmonitor.go); and flowExport (flowexport.go).
//
// The bridge implements upcall.Switch (upcallsw.go) for the work a
// translation of an upcall leaves to it: packet-ins to its controllers,
// learned flows applied to its tables, BFD and sampling upcalls, NetFlow
// accounting.
//
// # Flow export
//
// SetFlowExport gives the bridge its NetFlow, sFlow and IPFIX exporters
// (ofproto/flowexport/...) and tells translation which sampling actions
// to compose. The upcall handler hands the sampling upcalls (sFlow, IPFIX
// and flow_sample cookies) to the exporters, and the slow-path ones
// (slow_path(cfm), slow_path(bfd)) to the input port's CFM maintenance
// point or BFD session (bfd.go, which also sends the switch's own
// control packets: SendPacket), through
// upcall.Switch; its revalidator accounts megaflow statistics to NetFlow
// and a deleted megaflow expires its NetFlow flow; a ticker runs the
// exporters once a second.
//
// # Flow monitors
//
// NXST/ONFST13/OFPMP flow monitors (flowmonitor.go) see every committed
// change through oftable's OnCommit hook, whatever made it (flow_mods of
// any connection, bundles, learn, expiry, group and meter deletes), and
// queue updates per connection; a backlog over 128 KiB pauses monitoring
// until it drains, as Open vSwitch's connmgr.c.
//
// # Concurrency
//
// The upcall handler's Switch calls come on datapath worker goroutines
// and its revalidator's; messages are served on each connection's
// goroutine; the rule expiry on its own. Translation reads an immutable
// snapshot and the published table version. The connection set is guarded
// by its own mutex; flow table writers are serialized by oftable.
//
// # Imports
//
// ofswitch imports ofproto/{upcall,connmgr,ofconn,ofp,oftable,xlate,mf,classifier},
// ofproto/flowexport/{netflow,ipfix,sflow} and
// datapath/{dpif,flow,odp,packet}. It must not import OVSDB packages (the
// bridge layer in ovsdb/bridge configures it through the daemon) or the
// datapath implementation.
package ofswitch
