// Package ofp is the OpenFlow 1.0–1.5 wire codec with the Nicira and ONF
// extensions: message framing, the raw message-type table, errors, and the
// match formats (OpenFlow 1.0 ofp_match, OpenFlow 1.1's standard match,
// NXM, OXM), all driven by tables.
//
// # Overview
//
// raw_table.go lists every message type Open vSwitch knows (version range,
// type or multipart/experimenter number, body layout) and errors_table.go
// every error (name and its (type, code) or experimenter encoding per
// version). Decode identifies a message from its headers through the raw
// table and checks its length against the table before reading any body
// field, then decodes the body into a version-independent value (FlowMod,
// Hello, ...). Messages gvs does not decode yet come back as *Unknown with
// their bytes, so every recognised message round-trips.
//
// Actions and instructions (actions*.go) decode into the version-independent
// Action (Open vSwitch's ofpact): every action Open vSwitch knows has a
// typed kind (encap/decap and sample with a field-sourced domain stay
// ActRaw with their bytes). DecodeOfpacts turns a flow's action or
// instruction list into one list (instructions become actions of their
// own kinds, in Open vSwitch's order); AppendOfpacts encodes such a list
// for any version, each action in the wire form it came in when the
// version has it, else in the form Open vSwitch chooses for that version
// (set_field vs reg_load, OF1.0 set actions vs set_field, ...), so decoded
// lists re-encode byte for byte and flows move between versions as in
// Open vSwitch; an ActionEncoder does the same with buffers it reuses (a
// kind's forms append to it), so that a flow dump encoding every rule
// with one allocates nothing per action. ValidateOfpacts applies the
// checks that need the match.
//
// # Actions: one file per family
//
// Each action belongs to a family, and each family has one file of the
// same name in each package that handles actions: here (wire),
// ofproto/ofptext (ovs-ofctl text) and ofproto/xlate (translation):
//
//	family    actions
//	output    output, output_reg, output_trunc, enqueue, set_queue, pop_queue, controller, group
//	field     set_field, load, move, delete_field
//	set       mod_dl_src/dst, mod_nw_src/dst, mod_nw_tos/ecn/ttl, mod_tp_src/dst, set_tunnel, dec_ttl
//	vlan      push_vlan, strip_vlan/pop_vlan, mod_vlan_vid, mod_vlan_pcp
//	mpls      push_mpls, pop_mpls, set_mpls_label/tc/ttl, dec_mpls_ttl, dec_nsh_ttl (encap/decap: text only)
//	ct        ct, ct_clear, nat
//	learn     learn, fin_timeout
//	bundle    bundle, bundle_load, multipath
//	stack     push, pop
//	pipeline  resubmit, goto_table, write_metadata, clear_actions, write_actions, meter, exit
//	misc      note, sample, clone, check_pkt_larger, conjunction, debug_slow, debug_recirc
//
// ofp/actions_FAMILY.go registers, from an init function, each raw action
// (wire encoding) of the family with the kind it decodes to, its decoder
// and its encoder (registerRaws), and each kind with its wire forms per
// version, its checks against the flow's match, its canonical encodings
// and whether the action set may hold it (registerKinds). Its comment
// says which Action fields each kind uses (the union fields Port, Arg,
// Arg2, Data mean something else per kind; the ActionType list repeats
// it). ofptext/actions_FAMILY.go registers the ovs-ofctl names the family
// parses and how each kind prints; xlate/actions_FAMILY.go the
// translation hook of each kind and its properties (its place in an
// action set, whether a clone can undo it, whether it needs the L3 header
// a pop_mpls exposed). Outside these tables, kinds are named only where a
// rule spans a few of them: the instruction order (instOrder here,
// instIndex in ofptext) and the writes ct's exec may hold.
//
// # Adding an action
//
//  1. Add its ActionType (actions.go: the constant with the fields it
//     uses, and its name in actionTypeNames) and its raw encodings
//     (action_table.go: the RawAction, its name, and its instances with
//     vendor, number, versions and lengths, from Open vSwitch's
//     ofp-actions.c).
//  2. In its family's ofp/actions_FAMILY.go: the decoder and encoder,
//     registered by registerRaws; the kind's forms, check and canonical
//     raws, registered by registerKinds.
//  3. In ofptext/actions_FAMILY.go: its parser under each of its names
//     and its formatter.
//  4. In xlate/actions_FAMILY.go: its translation hook (registerHooks)
//     and properties (registerProps).
//
// A kind missing from a table falls back to: decoding as ActRaw with its
// bytes, the first canonical raw the version has (defaultForms), no
// check, printing as "<RAW_NAME>", and failing translation with
// xlate.ErrUnsupported. The golden tests (actions_golden_test.go here and
// in ofptext) and the Open vSwitch oracle tests show the wire and text
// forms; add the action's cases there.
//
// Matches decode into mf.Match through the mf field registry; encoding
// emits fields in Open vSwitch's canonical order (nx_put_raw), so a match
// that ovs-ofctl encoded re-encodes to the same bytes.
//
// # Errors
//
// Every decoding failure is an *Error carrying an ErrCode (Open vSwitch's
// enum ofperr, e.g. OFPBRC_BAD_LEN, OFPBMC_BAD_PREREQ) and wrapping its
// cause; ErrCode.Encode gives the (type, code) or experimenter triple for a
// wire version. The decoder never panics on any input.
//
// # Imports
//
// ofp does no I/O and no logging. It imports ofproto/mf and datapath/flow
// only; it must not import ofproto's switch, channel or text packages.
package ofp
