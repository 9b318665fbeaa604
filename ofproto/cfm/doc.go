// Package cfm is Connectivity Fault Management (IEEE 802.1ag continuity
// check messages) as Open vSwitch 3.1's lib/cfm.c runs it on an
// interface: one maintenance point per interface configured from
// Interface.cfm_mpid and the cfm_* keys of Interface.other_config,
// including Open vSwitch's extended mode (64-bit MPIDs, any interval in
// milliseconds, the operational state bit) and demand mode.
//
// It owns:
//   - the CCM codec (CCM, Decode, Encode) and the frame the switch sends
//     (to 01:80:c2:00:00:30, or 01:23:20:00:00:30 in extended mode,
//     EtherType 0x8902, with an optional 802.1Q tag from cfm_ccm_vlan and
//     cfm_ccm_pcp);
//   - the settings as Open vSwitch reads them from the database
//     (ParseSettings);
//   - the session (Session): transmission and fault-check timers, remote
//     maintenance points, fault reasons (recv, rdi, maid, loopback,
//     overflow, override), health, flap counting, demand mode and the
//     manual fault override (cfm/set-fault);
//   - the texts: cfm/show (Registry.ShowCommand), the Interface cfm_*
//     columns' values (Status) and the "cfm" log module's lines, in Open
//     vSwitch's words.
//
// Time comes from a Clock (milliseconds), so tests drive sessions without
// sleeping. The package does no I/O: the switch asks ShouldSend, sends
// what Compose builds, hands received frames that ShouldProcess
// recognised in translation to Process, and calls Run at WakeTime. It
// imports only the standard library and internal leaves: no datapath or
// OpenFlow package.
package cfm
