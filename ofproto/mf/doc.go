// Package mf owns the meta-flow field registry: one table (table.go) that
// describes every OpenFlow match field gvs knows — its names and aliases,
// width, maskability, prerequisites, NXM and OXM headers with the OpenFlow
// version each header appeared in, and its text format kind — and typed
// accessors from a field to where its bits live in a Flow.
//
// # Overview
//
// Flow is the ofproto-side flow: the datapath flow.Key plus the state that
// exists only during OpenFlow translation (registers, metadata, conj_id,
// actset_output) or that the datapath does not extract (ERSPAN and GTP-U
// tunnel options, the NSH header: flows can match and set them, and the
// table features list them, but packets always read zero). Match is a Flow with a mask Flow, as Open vSwitch's
// struct match. Every Field reads and writes its bits through the table's
// location description (offset, storage size, shift, bit mask), so the wire
// codec (ofproto/ofp), the text syntax and the classifier share one view of
// each field.
//
// # Invariants
//
//   - The table is immutable after package initialisation; Fields are
//     shared by pointer and never modified.
//   - Field values and masks cross the API in network byte order, Bytes()
//     long (tun_metadata fields: the mapped length).
//   - A field's value bits outside its storage bits are invalid
//     (ErrBadValue), as Open vSwitch's mf_is_value_valid.
//   - In a Match, value bits are always a subset of mask bits.
//
// # Imports
//
// mf imports only datapath/flow (and the standard library). It must not
// import ofproto/ofp or any other ofproto package: they import it.
package mf
