package model

import (
	"encoding/json"
	"fmt"
	"sort"
)

// DatabaseSchema is a parsed <database-schema>.
type DatabaseSchema struct {
	Name    string
	Version string
	Cksum   string
	Tables  map[string]*TableSchema
	// Raw is the schema's JSON text, served by get_schema and written to
	// the log as it was read.
	Raw json.RawMessage
}

// TableSchema is a parsed <table-schema>.
type TableSchema struct {
	Name string
	// Columns lists the user columns sorted by name; a row's data are
	// stored in this order.
	Columns []*ColumnSchema
	byName  map[string]*ColumnSchema
	MaxRows int // 0 means no limit
	IsRoot  bool
	// Indexes lists each index as column indexes into Columns.
	Indexes [][]int
}

// ColumnSchema is a parsed <column-schema>.
type ColumnSchema struct {
	Name      string
	Index     int // position in TableSchema.Columns; -1 for _uuid, -2 for _version
	Type      ColumnType
	Ephemeral bool
	Mutable   bool
}

// Implicit column indexes.
const (
	ColUUID    = -1
	ColVersion = -2
)

var uuidColumnType = ColumnType{Key: newBaseType(TypeUUID), Min: 1, Max: 1}

var (
	uuidColumn    = &ColumnSchema{Name: "_uuid", Index: ColUUID, Type: uuidColumnType}
	versionColumn = &ColumnSchema{Name: "_version", Index: ColVersion, Type: uuidColumnType}
)

// Column returns the named column, including _uuid and _version.
func (t *TableSchema) Column(name string) (*ColumnSchema, bool) {
	switch name {
	case "_uuid":
		return uuidColumn, true
	case "_version":
		return versionColumn, true
	}
	c, ok := t.byName[name]
	return c, ok
}

// ParseSchema parses a database schema from JSON.
func ParseSchema(raw []byte) (*DatabaseSchema, error) {
	v, err := DecodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema: not a JSON object")
	}
	s := &DatabaseSchema{Tables: map[string]*TableSchema{}}
	s.Name, _ = o["name"].(string)
	s.Version, _ = o["version"].(string)
	s.Cksum, _ = o["cksum"].(string)
	if !validID(s.Name) {
		return nil, fmt.Errorf("schema: invalid database name %q", s.Name)
	}
	tables, ok := o["tables"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema %s: missing tables", s.Name)
	}
	anyRoot := false
	for name, tv := range tables {
		t, root, err := parseTable(name, tv)
		if err != nil {
			return nil, fmt.Errorf("schema %s: table %s: %w", s.Name, name, err)
		}
		anyRoot = anyRoot || root
		s.Tables[name] = t
	}
	// A schema that marks no table as root predates isRoot: every table is
	// then a root, as ovsdb-server treats it.
	if !anyRoot {
		for _, t := range s.Tables {
			t.IsRoot = true
		}
	}
	for _, t := range s.Tables {
		for _, c := range t.Columns {
			for _, bt := range []*BaseType{&c.Type.Key, c.Type.Value} {
				if bt != nil && bt.RefTable != "" && s.Tables[bt.RefTable] == nil {
					return nil, fmt.Errorf("schema %s: table %s column %s refers to undefined table %s",
						s.Name, t.Name, c.Name, bt.RefTable)
				}
			}
		}
	}
	var buf []byte
	if err := json.Unmarshal(raw, new(json.RawMessage)); err == nil {
		buf = compactJSON(raw)
	}
	s.Raw = buf
	return s, nil
}

func compactJSON(raw []byte) []byte {
	v, err := DecodeJSON(raw)
	if err != nil {
		return raw
	}
	b, err := marshalNoEscape(v)
	if err != nil {
		return raw
	}
	return b
}

func parseTable(name string, v any) (*TableSchema, bool, error) {
	o, ok := v.(map[string]any)
	if !ok || !validID(name) {
		return nil, false, fmt.Errorf("invalid table")
	}
	t := &TableSchema{Name: name, byName: map[string]*ColumnSchema{}}
	cols, ok := o["columns"].(map[string]any)
	if !ok || len(cols) == 0 {
		return nil, false, fmt.Errorf("missing columns")
	}
	for cn, cv := range cols {
		if !validID(cn) || cn[0] == '_' {
			return nil, false, fmt.Errorf("invalid column name %q", cn)
		}
		co, ok := cv.(map[string]any)
		if !ok {
			return nil, false, fmt.Errorf("column %s: not an object", cn)
		}
		ct, err := ParseColumnType(co["type"])
		if err != nil {
			return nil, false, fmt.Errorf("column %s: %w", cn, err)
		}
		c := &ColumnSchema{Name: cn, Type: ct, Mutable: true}
		if e, ok := co["ephemeral"].(bool); ok {
			c.Ephemeral = e
		}
		if m, ok := co["mutable"].(bool); ok {
			c.Mutable = m
		}
		t.Columns = append(t.Columns, c)
		t.byName[cn] = c
	}
	sort.Slice(t.Columns, func(i, j int) bool { return t.Columns[i].Name < t.Columns[j].Name })
	for i, c := range t.Columns {
		c.Index = i
	}
	if mr, ok := o["maxRows"]; ok {
		n, err := schemaInt(mr)
		if err != nil || n < 1 {
			return nil, false, fmt.Errorf("maxRows must be a positive integer")
		}
		t.MaxRows = int(n)
	}
	root := false
	if r, ok := o["isRoot"].(bool); ok {
		t.IsRoot, root = r, r
	}
	if idx, ok := o["indexes"].([]any); ok {
		for _, iv := range idx {
			names, ok := iv.([]any)
			if !ok || len(names) == 0 {
				return nil, false, fmt.Errorf("invalid index")
			}
			var cols []int
			for _, nv := range names {
				n, _ := nv.(string)
				c, ok := t.byName[n]
				if !ok {
					return nil, false, fmt.Errorf("index refers to unknown column %q", n)
				}
				cols = append(cols, c.Index)
			}
			t.Indexes = append(t.Indexes, cols)
		}
	}
	return t, root, nil
}
