// Package vswitch holds the Open_vSwitch database schema that gvs serves:
// the vswitch.ovsschema of Open vSwitch 3.1 (schema version 8.3.1), as
// Debian's openvswitch-common ships it, embedded unchanged.
//
// # Imports
//
// Only ovsdb/model and the standard library.
package vswitch

import (
	_ "embed"

	"github.com/gvs-project/gvs/ovsdb/model"
)

// SchemaJSON is the Open_vSwitch schema text.
//
//go:embed vswitch.ovsschema
var SchemaJSON []byte

// DatabaseName is the name the schema gives its database.
const DatabaseName = "Open_vSwitch"

// Schema parses SchemaJSON. It returns a new value on every call, so
// callers cannot disturb each other.
func Schema() (*model.DatabaseSchema, error) {
	return model.ParseSchema(SchemaJSON)
}
