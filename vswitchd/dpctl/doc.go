// Package dpctl holds the userspace datapath's unixctl commands as Open
// vSwitch's dpctl.c, dpif-netdev.c and netdev-dummy.c register them:
// dpif/show, dpif/dump-dps, dpctl/* (show, dump-flows, add/mod/del-flow,
// add-dp, add-if, ..., with their output and error texts),
// dpif-netdev/pmd-stats-show and pmd-rxq-show, upcall/show,
// netdev-dummy/receive and set-admin-state. It resolves datapath
// arguments (Find, DPName) for the other command sets and owns the
// datapaths dpctl/add-dp creates (no bridge uses them; Close).
//
// It reads the bridges' datapaths through vswitchd/backer. It must not
// import ovsdb/server (the commands configure nothing persistent) nor
// cmd/vswitchd; it imports the unixctl registry's types only.
package dpctl
