// Package model is the RFC 7047 data model as ovsdb-server implements it:
// atomic types and their constraints, UUIDs and named UUIDs, data (sets and
// maps), schemas, conditions, mutations, and the error objects that
// transactions return.
//
// # Overview
//
// An [Atom] is an int64, float64, bool, string or [UUID]. A [Datum] is a
// sorted, duplicate-free set of atoms, optionally paired with values to form
// a map; every column value, including a scalar, is a Datum. Values read
// from JSON are checked against their [ColumnType] the way ovsdb-server
// checks them, and failures are [*Error] values whose Name is the RFC 7047
// error string ("syntax error", "constraint violation", ...).
//
// # Invariants
//
//   - Datum.Keys is sorted by [CompareAtoms] and has no duplicates.
//   - Datum.Values is nil for sets and parallel to Keys for maps.
//   - Data are values: code that changes one copies it first.
//
// # Imports
//
// Only the standard library. The package must not import any other part of
// gvs.
package model
