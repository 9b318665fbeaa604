// Package vport is the tunnel port device of the userspace datapath, the
// equivalent of Open vSwitch's netdev-vport ports genev_sys_6081,
// vxlan_sys_4789, gre_sys, ip6gre_sys, erspan_sys, gtpu_sys_2152, ... on
// its netdev datapath (one per row of datapath/tnl's Types): a datapath
// port that stands for one tunnel type and UDP destination port (none
// for GRE and ERSPAN). A GRE port also counts the sequence numbers of the
// packets pushed through it. It has no receive queues
// (tunnel traffic arrives on a physical port and is decapsulated by
// tnl_pop(PORT), which names this port) and nothing can be sent to it
// directly (tnl_push(tnl_port(PORT),...) encapsulates and a following
// output sends): Send drops and counts.
//
// It imports datapath/netdev, datapath/packet and datapath/tnl.
package vport
