// Package backer is gvs's counterpart of Open vSwitch's ofproto-dpif
// backer: it implements ovsdb/bridge's Switch (and its optional
// interfaces: ports, global and conntrack configuration, mirrors, flow
// export, BFD status) over the userspace datapaths.
//
// The Backer keeps the bridges (dpBridge: devices, OpenFlow port
// numbers allocated as Open vSwitch does, an ofport_request if free, else
// a rotating cursor that does not reuse a freed number at once; each
// bridge's ofproto/ofswitch.Bridge) under its mu, adds and deletes them
// and their ports, and owns, each in a type of its own given only what
// it needs:
//   - datapathSet (datapaths.go): one datapath per type, created on first
//     use with the switch-wide settings of Open_vSwitch.other_config
//     (restorewait.go: flow-restore-wait, max-idle, flow-limit,
//     bundle-idle-timeout);
//   - upcallMux: each datapath's misses go to the bridge owning the
//     packet's in_port; recirculation ids per datapath;
//   - devices (devices.go): the interfaces' network devices by type under
//     the test modes (dummy, AF_PACKET, tap, AF_XDP: afxdp.go reads
//     Open vSwitch's afxdp options and logs and reports as it does);
//   - vportTable (tunnels.go): the tunnel vports shared per datapath;
//     tunnelEnv (tnlenv.go): native tunnelling's routes and neighbours;
//   - bfdMonitor (bfd.go): the BFD sessions, their send loop and port
//     liveness, over the bridges it is given;
//   - cfmMonitor (cfm.go): the CFM maintenance points, their CCMs, fault
//     checks and port liveness (with BFD's), on a clock time/stop freezes
//     and time/warp moves step by step; ListTunnels (listtunnels.go) is
//     ofproto/list-tunnels;
//   - portErrors (portwarn.go): the per-interface error log;
//   - View (view.go): what the appctl commands and the metrics exporter
//     read of the bridges (Backer.View), read-only under the backer's
//     lock.
//
// The Backer itself also resolves patch ports (peers across the bridges
// of one datapath) and applies the datapath ID and bridge MAC (dpid.go),
// mirrors, flow export and conntrack zones and timeout policies
// (ctzones.go).
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
