package server

import (
	"bytes"
	"testing"

	"github.com/gvs-project/gvs/ovsdb/model"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

// seedDB returns a vswitch database holding one bridge with one port.
func seedDB(t testing.TB, s *model.DatabaseSchema) *Database {
	db := NewDatabase(s)
	ops, _ := model.DecodeJSON([]byte(`[
		{"op":"insert","table":"Open_vSwitch","row":{"bridges":["named-uuid","b"]}},
		{"op":"insert","table":"Bridge","uuid-name":"b","row":{"name":"br0","ports":["named-uuid","p"]}},
		{"op":"insert","table":"Port","uuid-name":"p","row":{"name":"p1","interfaces":["named-uuid","i"]}},
		{"op":"insert","table":"Interface","uuid-name":"i","row":{"name":"p1","type":"dummy"}}]`))
	tx := newTxn(db, nil)
	if res, ok := tx.execute(ops.([]any)); !ok {
		t.Fatalf("seed: %s", rawArray(res))
	}
	tx.apply()
	return db
}

// snapshotText renders the committed state without the volatile date.
func snapshotText(db *Database) []byte {
	b := db.snapshot()
	return b[:bytes.LastIndex(b, []byte(`"_date"`))]
}

// FuzzTransact executes arbitrary operation arrays against a small
// database: no input may panic, a rejected transaction must change nothing
// and a committed one must leave every invariant intact (checked by
// re-running precommit on an empty transaction's view).
func FuzzTransact(f *testing.F) {
	for _, s := range []string{
		`[{"op":"select","table":"Bridge","where":[]}]`,
		`[{"op":"insert","table":"Port","row":{"name":"p2","interfaces":["named-uuid","i"]},"uuid-name":"p"},{"op":"insert","table":"Interface","uuid-name":"i","row":{"name":"p2"}},{"op":"mutate","table":"Bridge","where":[],"mutations":[["ports","insert",["named-uuid","p"]]]}]`,
		`[{"op":"delete","table":"Port","where":[]}]`,
		`[{"op":"update","table":"Bridge","where":[["name","==","br0"]],"row":{"ports":["set",[]]}}]`,
		`[{"op":"mutate","table":"Interface","where":[],"mutations":[["ofport_request","insert",5],["options","insert",["map",[["a","b"]]]]]}]`,
		`[{"op":"wait","timeout":0,"table":"Bridge","where":[],"columns":["name"],"until":"!=","rows":[]},{"op":"comment","comment":"c"},{"op":"commit","durable":false}]`,
		`[{"op":"insert","table":"Bridge","row":{"name":"br0"}}]`,
		`[{"op":"insert","table":"Open_vSwitch","row":{}}]`,
		`[{"op":"abort"}]`,
	} {
		f.Add([]byte(s))
	}
	schema, err := vswitch.Schema()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := model.DecodeJSON(data)
		if err != nil {
			return
		}
		ops, ok := v.([]any)
		if !ok {
			return
		}
		db := seedDB(t, schema)
		before := snapshotText(db)
		tx := newTxn(db, func(string) bool { return false })
		tx.expired = true
		results, ok := tx.execute(ops)
		if results == nil {
			t.Fatalf("no results for %s", data)
		}
		if !ok {
			if after := snapshotText(db); !bytes.Equal(before, after) {
				t.Fatalf("rejected transaction changed the database: %s", data)
			}
			return
		}
		tx.apply()
		// The committed state must satisfy every invariant: re-checking it
		// with a transaction that touches every row must succeed.
		check := newTxn(db, nil)
		for _, tbl := range db.tables {
			for _, r := range tbl.Rows {
				check.modify(tbl, r)
			}
		}
		if err := checkRefBookkeeping(db); err != nil {
			t.Fatalf("after %s: %v", data, err)
		}
		if err := check.checkStrongRefs(check.strongDelta()); err != nil {
			t.Fatalf("after %s: %v", data, err)
		}
		if err := check.checkMaxRows(); err != nil {
			t.Fatalf("after %s: %v", data, err)
		}
		if err := check.checkIndexes(); err != nil {
			t.Fatalf("after %s: %v", data, err)
		}
	})
}
