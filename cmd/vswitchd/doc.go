// Package vswitchd is gvs-vswitchd's composition root: it parses the
// command line (gvs's own flags and ovs-vswitchd's, so that a link named
// ovs-vswitchd stands in for Open vSwitch's daemon in scripts), sets up
// the run, database and log directories, the pidfile and the unixctl
// control socket, runs the embedded OVSDB server (or connects to an
// external one), creates the backer (vswitchd/backer) and registers the
// appctl commands of every layer below (dpctl/*, dpif/*, netdev-dummy/*),
// so that the datapath and ofproto never import appctl.
//
// The embedded server also listens and connects on the remotes of
// --remote (ovsdb-server's syntax), by default the Manager rows of
// Open_vSwitch.manager_options, and writes their connection status back
// as ovsdb-server does (ovsdb/server/remote; remotes.go starts it);
// pssl:/ssl: remotes and OpenFlow connections share the SSL table's files.
//
// The switch itself (datapaths, bridges, ports, upcall routing, BFD,
// tunnels) is vswitchd/backer; this package creates it and registers its
// commands (bfdcmds.go: bfd/show, bfd/set-forwarding).
//
// With --handover it starts by taking over from the running daemon
// instead (handover.go: every daemon listens on RUNDIR/PROGRAM.handover
// and implements vswitchd/handover's Source; the successor serves the
// handed sockets, adopts the handed ports and applies the state before
// it forwards).
//
// It is the only package that imports every layer.
package vswitchd
