// Package ofcmds holds ofproto-dpif's unixctl commands as Open vSwitch
// registers them in ofproto-dpif.c, ofproto-dpif-trace.c,
// ofproto-dpif-upcall.c, bfd.c, cfm.c, tunnel.c and timeval.c: ofproto/trace and
// trace-packet-out, ofproto/list, dpif/dump-flows, revalidator/wait,
// pause, resume and purge, upcall/disable-megaflows, enable-megaflows and
// set-flow-limit, fdb/show, flush, add, del and stats-*, bfd/show and
// set-forwarding, cfm/show and set-fault, ofproto/list-tunnels, and
// time/stop and time/warp (cfmcmds.go, timecmds.go), with their output
// and error texts.
//
// It reaches the bridges and their datapaths through vswitchd/backer; it
// must not import ovsdb/server nor cmd/vswitchd, and imports the unixctl
// registry's types only.
package ofcmds
