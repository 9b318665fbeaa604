// Package backer is gvs's counterpart of Open vSwitch's ofproto-dpif
// backer: it implements ovsdb/bridge's Switch (and its optional
// interfaces: ports, global and conntrack configuration, mirrors, flow
// export, BFD status) over the userspace datapaths.
//
// It owns:
//   - one datapath per type (datapaths.go), created on first use with the
//     switch-wide settings of Open_vSwitch.other_config (restorewait.go:
//     flow-restore-wait, max-idle, flow-limit, bundle-idle-timeout);
//   - the bridges' devices and OpenFlow port numbers, allocated as Open
//     vSwitch does (an ofport_request if free, else a rotating cursor
//     that does not reuse a freed number at once), and each bridge's
//     ofproto/ofswitch.Bridge;
//   - the upcall router: each datapath's misses go to the bridge owning
//     the packet's in_port (upcallMux), recirculation ids per datapath;
//   - patch ports (peers resolved across the bridges of one datapath),
//     tunnel vports shared per datapath (tunnels.go) and native
//     tunnelling's routes and neighbours (tnlenv.go);
//   - BFD sessions and port liveness (bfd.go), the datapath ID and
//     bridge MAC (dpid.go), mirrors, flow export, conntrack zones and
//     timeout policies (ctzones.go), and the per-interface error log
//     (portwarn.go).
//
// Naming: Open vSwitch's three "bridges" are, in gvs, ovsdb/bridge (the
// database rows and their reconciliation), ofproto/ofswitch.Bridge (the
// OpenFlow switch of one bridge) and this package's dpBridge (one
// bridge's datapath side: its ports, port numbers and MAC table).
//
// It does not import cmd/ (commands reach it through its exported
// accessors and register the appctl commands themselves), nor ovsdb
// beyond ovsdb/bridge's configuration types; it reaches a datapath's
// conntrack through dpnetdev.Datapath.Conntrack, only to apply zone
// limits and timeout policies.
package backer
