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
// Open vSwitch. ValidateOfpacts applies the checks that need the match.
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
