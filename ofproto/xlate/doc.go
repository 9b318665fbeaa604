// Package xlate owns translation: it runs a flow through a bridge's
// OpenFlow tables and turns the OpenFlow actions it meets into datapath
// actions, together with the megaflow mask of every bit it consulted, as
// Open vSwitch's ofproto-dpif-xlate.
//
// # Overview
//
// Translate is a function of its inputs: the tables (read at one
// published version), an immutable Snapshot of the bridge's ports and
// settings, the recirculation state table, and the flow. It returns the
// datapath actions, the wildcard mask (flow.Mask, datapath numbering), the
// rules it matched (for statistics) and, when the caller lets it have side
// effects (a real packet, not revalidation), the packet-ins to send.
//
// Header changes made by set_field, load and move are kept in the
// translated flow and committed as datapath set actions (masked where the
// mask is partial) just before an action that needs the packet as the
// pipeline sees it (output, ct, recirculation, controller), as
// commit_odp_actions does. Registers, metadata and the field stack exist
// only here.
//
// ct(table=N) and other recirculations freeze the pipeline state
// (registers, metadata, table to resume at) in the recirculation table
// under an id; the datapath re-injects the packet with recirc_id=id and
// the next miss resumes from the frozen state.
//
// doActions runs each OpenFlow action through the translation hook its
// family file (actions_FAMILY.go, one per family as in package ofp; see
// its "Adding an action") registers for its kind; a kind without a hook
// fails the translation with ErrUnsupported. The same files register the
// kinds' properties that the action set, clone and MPLS recirculation
// consult (kindProps).
//
// MPLS (mpls.go): push_mpls, pop_mpls, set_mpls_*, dec_mpls_ttl as Open
// vSwitch translates them; a pop that exposes an L3 header the pipeline
// has not seen recirculates before anything that would look at it.
//
// Packets the switch handles itself (special.go, Open vSwitch's
// process_special): a CCM on a port with a CFM maintenance point
// (Port.CFM), a LACPDU on a LACP bond's member, a BFD control packet on
// a port with a session (Port.BFD) run no pipeline; the translation
// names the point or session (Out.CFM, Out.LACP, Out.BFD) and its
// megaflow is the slow-path userspace action.
//
// NORMAL translates as Open vSwitch's xlate_normal, one megaflow per MAC
// address pair, while the bridge's MAC table is small (normal.go), and
// beyond that into the datapath's mac_learn action over the table (see
// datapath/l2fib): one megaflow serves any number of MAC addresses. Patch
// ports take part in the action through recirculation into the peer
// bridge (vlan.go).
//
// With flow export configured (SetSampling), translation composes Open
// vSwitch's sampling actions: sFlow and per-bridge IPFIX input samplers at
// the start, IPFIX output samplers before each output, the OpenFlow
// sample action as a flow_sample upcall (sample.go); with NetFlow the
// NetFlow key fields are made exact and the output port is reported.
//
// Port mirrors (SetMirrors, mirror.go) follow ofproto-dpif-mirror: a
// packet received on a source port, or output to a destination port, is
// also sent to each mirror's output port or output VLAN, once per mirror.
//
// # Who owns what
//
// Xlator is one bridge's translator and its published configuration;
// Snapshot its ports and TLV layout (and the field value helpers that
// read and write through that layout); RecircTable the frozen states.
// One translation is a ctx: the pipeline's flow, the packet as the
// datapath actions so far leave it (base), the megaflow mask (wc), the
// action lists being run and the output. ctx holds the parts of a
// translation that own state of their own, each in its file:
// tracer (xlate.go: the ofproto/trace recorder and its column),
// actionSet (actset.go), groupXlate (group.go), mplsXlate (mpls.go:
// the label stack below the outermost entry), tunnelXlate (tunnel.go:
// tunnel reception, output and termination, the raw Geneve options),
// mirrorXlate (mirror.go: the mirrors used) and sampleState (sample.go:
// flow export). Those with a c field reach the rest of the translation
// through it; ctx sets it when a translation starts. Actions that are
// only a hook are functions of the hook table (func(c *ctx, a
// *ofp.Action)) in their family's file, not methods.
//
// # Limits
//
// Translation depth 64 and 4,096 resubmits per translation, as Open
// vSwitch; past them the packet is dropped and the error is reported.
//
// # Imports
//
// xlate imports ofproto/{oftable,mf,ofp,classifier} and the protocols
// whose packets it recognises or whose members it chooses
// (ofproto/{bfd,cfm,lacp,bond}), datapath/{flow,odp,packet,dpif}. It must not import ofconn, the switch, the datapath
// implementation or OVSDB.
package xlate
