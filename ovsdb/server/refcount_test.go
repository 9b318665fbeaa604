package server

import (
	"fmt"
	"maps"
	"testing"

	"github.com/gvs-project/gvs/ovsdb/model"
)

// checkRefBookkeeping recomputes the reference counts and weak-referrer
// index from scratch and reports any difference from the incrementally
// maintained ones.
func checkRefBookkeeping(db *Database) error {
	fresh := NewDatabase(db.Schema)
	for _, t := range db.tables {
		for _, r := range t.Rows {
			fresh.updateRefs(t, nil, r)
		}
	}
	if !maps.Equal(fresh.strongRefs, db.strongRefs) {
		return fmt.Errorf("strong reference counts %v, recomputed %v", db.strongRefs, fresh.strongRefs)
	}
	if !maps.EqualFunc(fresh.weakReferrers, db.weakReferrers, maps.Equal) {
		return fmt.Errorf("weak referrers %v, recomputed %v", db.weakReferrers, fresh.weakReferrers)
	}
	return nil
}

// portUUID returns the UUID of the port named name.
func portUUID(db *Database, name string) string {
	t := db.tables["Port"]
	c, _ := t.Schema.Column("name")
	for id, r := range t.Rows {
		if r.Data[c.Index].Keys[0] == name {
			return id.String()
		}
	}
	return ""
}

// commitVisitsFor runs the transaction ops(db) against a database of n
// ports and returns how many rows the commit path examined and whether the
// transaction succeeded.
func commitVisitsFor(t *testing.T, n int, ops func(*Database) string) (int, bool) {
	t.Helper()
	db := benchDB(t, n)
	if err := checkRefBookkeeping(db); err != nil {
		t.Fatal(err)
	}
	v, err := model.DecodeJSON([]byte(ops(db)))
	if err != nil {
		t.Fatal(err)
	}
	db.commitVisits = 0
	tx := newTxn(db, nil)
	_, ok := tx.execute(v.([]any))
	if ok {
		tx.apply()
	}
	if err := checkRefBookkeeping(db); err != nil {
		t.Fatal(err)
	}
	return db.commitVisits, ok
}

func TestCommitWorkDoesNotGrowWithDatabaseSize(t *testing.T) {
	fixed := func(s string) func(*Database) string { return func(*Database) string { return s } }
	cases := []struct {
		name string
		ops  func(*Database) string
		ok   bool
	}{
		{"insert port and interface", fixed(`[
			{"op":"insert","table":"Port","uuid-name":"p","row":{"name":"new","interfaces":["named-uuid","i"]}},
			{"op":"insert","table":"Interface","uuid-name":"i","row":{"name":"new"}},
			{"op":"mutate","table":"Bridge","where":[["name","==","br-int"]],"mutations":[["ports","insert",["named-uuid","p"]]]}]`), true},
		{"remove port from bridge (collects port and interface)", func(db *Database) string {
			return `[{"op":"mutate","table":"Bridge","where":[["name","==","br-int"]],"mutations":[["ports","delete",["uuid","` + portUUID(db, "p3") + `"]]]}]`
		}, true},
		{"delete referenced port is rejected", fixed(`[{"op":"delete","table":"Port","where":[["name","==","p3"]]}]`), false},
		{"update interface", fixed(`[{"op":"update","table":"Interface","where":[["name","==","p7"]],"row":{"ofport":8}}]`), true},
		{"mutate bridge external_ids", fixed(`[{"op":"mutate","table":"Bridge","where":[["name","==","br-int"]],"mutations":[["external_ids","insert",["map",[["a","b"]]]]]}]`), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			small, okSmall := commitVisitsFor(t, 10, c.ops)
			large, okLarge := commitVisitsFor(t, 1000, c.ops)
			if okSmall != c.ok || okLarge != c.ok {
				t.Fatalf("transaction succeeded %v (10 ports), %v (1000 ports); want %v", okSmall, okLarge, c.ok)
			}
			if small == 0 || small != large {
				t.Fatalf("commit examined %d rows with 10 ports but %d with 1000", small, large)
			}
		})
	}
}
