// Package bond is a bonded port's member policy as Open vSwitch 3.1's
// ofproto/bond.c keeps it: the three modes (active-backup, balance-slb,
// balance-tcp), which members are enabled (carrier and LACP's may_enable,
// with bond_updelay and bond_downdelay), the active member (bond-primary,
// the last active member's MAC from Port.bond_active_slave, else the
// first enabled one), the admissibility of a received packet, the 256
// hash buckets of a balanced bond with their load and rebalancing, the
// settings read from the Port row with Open vSwitch's defaults and
// warnings, and the texts and replies of bond/list, bond/show,
// bond/migrate, bond/set-active-member, bond/enable-member,
// bond/disable-member and bond/hash.
//
// Its caller owns the I/O and translation: it registers members, reports
// their carrier and LACP's verdict, calls Run at WakeTime with the LACP
// status, asks Admit for each packet received on a member and Output for
// the member a packet leaves by (given the packet's bucket hash, Hash),
// accounts bytes per bucket and calls Rebalance.
//
// Time comes from a Clock in milliseconds. It imports ofproto/lacp (for
// the status), internal/ovshash and internal/logrl; nothing of the
// datapath, translation or OVSDB.
package bond
