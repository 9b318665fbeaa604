package server

import (
	"github.com/gvs-project/gvs/ovsdb/model"
)

// serverSchema is the schema of ovsdb-server's _Server database (version
// 1.2.0), which clients read to learn which databases exist and whether
// they are connected.
const serverSchema = `{"name":"_Server","version":"1.2.0","cksum":"3009684573 744","tables":{"Database":{"columns":{
"name":{"type":"string"},
"model":{"type":{"key":{"type":"string","enum":["set",["clustered","relay","standalone"]]}}},
"connected":{"type":"boolean"},
"leader":{"type":"boolean"},
"schema":{"type":{"key":"string","min":0}},
"sid":{"type":{"key":"uuid","min":0}},
"cid":{"type":{"key":"uuid","min":0}},
"index":{"type":{"key":"integer","min":0}}},"isRoot":true}}}`

// ServerDatabaseName is the name of the reserved database describing the
// server's databases.
const ServerDatabaseName = "_Server"

func newServerDatabase() *Database {
	s, err := model.ParseSchema([]byte(serverSchema))
	if err != nil {
		panic("ovsdb/server: built-in _Server schema: " + err.Error())
	}
	db := NewDatabase(s)
	db.readOnly = true
	return db
}

// serverRow builds the _Server.Database row describing db.
func serverRow(sdb *Database, id model.UUID, db *Database) *row {
	t := sdb.tables["Database"]
	r := newRow(t.Schema, id)
	set := func(col string, a model.Atom) {
		c, _ := t.Schema.Column(col)
		r.Data[c.Index] = model.Scalar(a)
	}
	set("name", db.Schema.Name)
	set("model", "standalone")
	set("connected", true)
	set("leader", true)
	set("schema", string(db.Schema.Raw))
	return r
}
