// Package ofswitch owns the OpenFlow switch of one bridge: its ports as
// OpenFlow sees them, its flow tables (ofproto/oftable), its OpenFlow
// connections (the <bridge>.mgmt listener and controllers, over
// ofproto/ofconn, and the <bridge>.snoop listener whose connections get a
// copy of one controller connection's traffic, see snoop.go), the upcall handler that translates datapath misses
// (ofproto/xlate) into megaflows, and the revalidator that keeps installed
// megaflows consistent with the tables and pushes their statistics back to
// the rules, as Open vSwitch's ofproto.c, connmgr.c and
// ofproto-dpif-upcall.c.
//
// # Overview
//
// A Bridge is created by the daemon for each Bridge row. The daemon tells
// it its ports (SetPorts) and settings (SetConfig) and routes datapath
// upcalls whose in_port belongs to it to Miss and Userspace. OpenFlow
// messages are served by ServeOpenFlow: flow_mods are applied through
// oftable transactions (bundles stage several), and every committed change
// bumps a sequence number that wakes the revalidator.
//
// # Megaflows and revalidation
//
// Miss translates the packet's key, installs the megaflow (key under the
// translation's mask) with a UFID derived from it, and records a ukey:
// the full key it was translated from, its mask and actions and the rules
// it went through. The revalidator dumps the datapath's megaflows every
// round (at most every RevalidateInterval, at once after a change),
// credits each megaflow's new packets and bytes to its rules (so
// dump-flows counters are right), and, if the tables changed since the
// ukey was made, translates the key again: a megaflow whose actions or
// mask changed is deleted (the next packet makes a new one). Megaflows
// without a ukey (added with dpctl) are left alone.
//
// The number of megaflows is bounded by a dynamic flow limit (FlowLimit,
// one per datapath), adjusted after every round from its duration as
// Open vSwitch's revalidator does: a miss with the datapath at the limit
// is executed without a megaflow, and a datapath over it loses its idle
// megaflows after 100 ms (all of them over twice the limit).
//
// # Flow export
//
// SetFlowExport gives the bridge its NetFlow, sFlow and IPFIX exporters
// (ofproto/flowexport/...) and tells translation which sampling actions
// to compose. Userspace hands the sampling upcalls (sFlow, IPFIX and
// flow_sample cookies) to the exporters, and the slow-path ones
// (slow_path(bfd)) to the input port's BFD session (bfd.go, which also
// sends the switch's own control packets: SendPacket); pushStats accounts megaflow
// statistics to NetFlow and a deleted megaflow expires its NetFlow flow;
// a ticker runs the exporters once a second.
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
// Miss and Userspace run on datapath worker goroutines; ServeOpenFlow on
// each connection's goroutine; the revalidator and the rule expiry on
// their own. Translation reads an immutable snapshot and the published
// table version. The ukey map and connection set are guarded by their own
// mutexes; flow table writers are serialized by oftable.
//
// # Imports
//
// ofswitch imports ofproto/{ofconn,ofp,oftable,xlate,mf,classifier},
// ofproto/flowexport/{netflow,ipfix,sflow} and
// datapath/{dpif,flow,odp,packet}. It must not import OVSDB packages (the
// bridge layer in ovsdb/bridge configures it through the daemon) or the
// datapath implementation.
package ofswitch
