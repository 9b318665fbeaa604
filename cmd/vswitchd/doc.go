// Package vswitchd is gvs-vswitchd's composition root: it parses the
// command line (gvs's own flags and ovs-vswitchd's, so that a link named
// ovs-vswitchd stands in for Open vSwitch's daemon in scripts), sets up
// the run, database and log directories, the pidfile and the unixctl
// control socket, runs the embedded OVSDB server (or connects to an
// external one), creates the userspace datapaths and registers the
// appctl commands of every layer below (dpctl/*, dpif/*, netdev-dummy/*),
// so that the datapath and ofproto never import appctl.
//
// It is the only package that imports every layer.
package vswitchd
