// Package upcall owns the datapath side of one OpenFlow bridge: the
// handler that turns datapath misses into megaflows, the revalidator that
// keeps them consistent with the flow tables and pushes their statistics
// back to the rules, the dynamic flow limit, learn's side effects,
// patch port counters and flow-restore-wait, as Open vSwitch's
// ofproto-dpif-upcall.c (one udpif per bridge here; the flow limit is
// shared per datapath).
//
// # Misses
//
// Handler implements dpif.UpcallHandler; the daemon routes each upcall
// to the Handler of the bridge that owns its input port. Miss translates
// the packet's key (ofproto/xlate), answers with the actions and the
// translation's mask, and records a ukey: the key it was translated
// from, mask, actions, and everything the translation went through
// (rules, table lookups, groups, patch ports, mirrors, learn actions,
// fin_timeouts, BFD sessions). Over the dynamic flow limit, or when a
// translation is transient (a tunnel neighbour being resolved), the
// packet is executed without a megaflow. The packet of the miss itself
// is credited to its rules at once (the datapath does not count it in
// the megaflow). Userspace handles the upcalls of userspace() actions:
// controller actions (packet-ins, from the state frozen in the cookie or
// by translating again), and hands sampling and slow-path ones to the
// switch.
//
// # Revalidation
//
// Every committed table change and every port or setting change the
// switch makes calls Changed, which bumps a sequence number and wakes the
// revalidator. A round (at once after a change, coalesced over 5 ms,
// else every RevalidateInterval) dumps the datapath's megaflows and, for
// each ukey: credits the megaflow's new packets and bytes to the rules,
// groups, patch ports, mirrors and tables it went through; deletes it if
// the datapath is over the flow limit and it is idle; and if the tables
// changed since the ukey was made, translates the key again: a
// translation that needs no more than the installed mask keeps the
// megaflow, its actions modified in place if they differ (Open vSwitch's
// UKEY_MODIFY); any other is deleted and the next packet makes a new one.
// A ukey whose megaflow is missing from two dumps is forgotten.
// Megaflows without a ukey (added with dpctl) are left alone.
// WaitRevalidated lets a barrier wait until a round covered every change
// made before it.
//
// # The switch
//
// What a translation leaves to the OpenFlow switch goes through the
// Switch interface the switch implements: packet-ins, applying learned
// flows, BFD and sampling upcalls, NetFlow accounting. The handler is the
// translator's xlate.Owner, so that a translation crossing a patch port
// into another bridge of the datapath credits that bridge's patch
// counters and sends its packet-ins to that bridge's controllers.
//
// # Concurrency
//
// Miss and Userspace run on datapath worker goroutines, concurrently; the
// revalidator on its own goroutine; Revalidate may also be called
// directly (revalidator/wait). Rounds are serialized; the ukey map has
// its own mutex; counters are atomic.
//
// # Imports
//
// upcall imports datapath/{dpif,flow,odp,packet} and
// ofproto/{xlate,oftable,ofp,mf,bfd}. It must not import ofproto/ofswitch
// (the switch implements Switch), OpenFlow connections (ofproto/ofconn),
// OVSDB packages or the datapath implementation (dpnetdev, conntrack).
package upcall
