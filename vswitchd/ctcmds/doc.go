// Package ctcmds holds Open vSwitch's conntrack unixctl commands
// (dpctl.c's dpctl/dump-conntrack, flush-conntrack, ct-stats-show,
// ct-get/set-maxconns, ct-*-tcp-seq-chk and ct-set/del/get-limits) over
// the userspace datapath's connection tracker, with their output and
// error texts. Datapath arguments are resolved by the caller
// (vswitchd/dpctl).
//
// It imports datapath/conntrack and datapath/dpnetdev and the unixctl
// registry's types; never ofproto nor vswitchd/backer.
package ctcmds
