// Package mcsnoop is a bridge's multicast snooping database, as Open
// vSwitch 3.1 keeps it when Bridge.mcast_snooping_enable is true.
//
// It owns:
//   - the groups learned from IGMP and MLD membership reports, per VLAN,
//     each with the ports that joined it and when each joined (aging,
//     other_config:mcast-snooping-aging-time), bounded by
//     mcast-snooping-table-size with the least recently used group
//     dropped first;
//   - the multicast router ports learned from queries, per VLAN, which
//     age out after 180 seconds;
//   - the ports configured to get every multicast packet
//     (mcast-snooping-flood) and every report (mcast-snooping-flood-reports);
//   - the decoding of IGMP (v1, v2, v3) and MLD (v1, v2) messages, with
//     their checksums, into updates (Decode*, Apply);
//   - the text of mdb/show.
//
// Ports are named by their Port row (Open vSwitch's bundle), so that a
// bond is one port. Time is passed in as milliseconds (the switch's clock,
// which time/warp moves), and the package does no I/O. It must not import
// the datapath, translation or database layers: translation asks it where
// a packet goes, the switch feeds it packets and configuration.
package mcsnoop
