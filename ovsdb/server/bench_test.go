package server

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ovsdb/jsonrpc"
	"github.com/gvs-project/gvs/ovsdb/model"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

// benchDB builds a bridge with n ports, each with one interface.
func benchDB(b testing.TB, n int) *Database {
	s, err := vswitch.Schema()
	if err != nil {
		b.Fatal(err)
	}
	db := NewDatabase(s)
	var ops []string
	var ports []string
	for i := 0; i < n; i++ {
		ops = append(ops,
			fmt.Sprintf(`{"op":"insert","table":"Port","uuid-name":"p%d","row":{"name":"p%d","interfaces":["named-uuid","i%d"]}}`, i, i, i),
			fmt.Sprintf(`{"op":"insert","table":"Interface","uuid-name":"i%d","row":{"name":"p%d","type":"dummy"}}`, i, i))
		ports = append(ports, fmt.Sprintf(`["named-uuid","p%d"]`, i))
	}
	ops = append(ops,
		`{"op":"insert","table":"Open_vSwitch","row":{"bridges":["named-uuid","b"]}}`,
		`{"op":"insert","table":"Bridge","uuid-name":"b","row":{"name":"br-int","ports":["set",[`+strings.Join(ports, ",")+`]]}}`)
	v, _ := model.DecodeJSON([]byte("[" + strings.Join(ops, ",") + "]"))
	tx := newTxn(db, nil)
	if res, ok := tx.execute(v.([]any)); !ok {
		b.Fatalf("%s", rawArray(res))
	}
	tx.apply()
	return db
}

// BenchmarkTransactBridgeExternalIDs measures the transaction ovn-controller
// issues most: a map mutation on Bridge.external_ids of a bridge with many
// ports (its old row references every port, which must not make every
// commit walk the database).
func BenchmarkTransactBridgeExternalIDs(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("ports=%d", n), func(b *testing.B) {
			db := benchDB(b, n)
			v, _ := model.DecodeJSON([]byte(`[{"op":"mutate","table":"Bridge","where":[["name","==","br-int"]],"mutations":[["external_ids","insert",["map",[["ct-zone-x","5"]]]]]},{"op":"mutate","table":"Bridge","where":[["name","==","br-int"]],"mutations":[["external_ids","delete",["set",["ct-zone-x"]]]]}]`))
			ops := v.([]any)
			b.ReportAllocs()
			for b.Loop() {
				tx := newTxn(db, nil)
				if _, ok := tx.execute(ops); !ok {
					b.Fatal("transaction failed")
				}
				tx.apply()
			}
		})
	}
}

// BenchmarkTransactInterfaceUpdate measures the write-back ovs-vswitchd
// does for each port: update one Interface row found by name.
func BenchmarkTransactInterfaceUpdate(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("ports=%d", n), func(b *testing.B) {
			db := benchDB(b, n)
			v, _ := model.DecodeJSON([]byte(`[{"op":"update","table":"Interface","where":[["name","==","p7"]],"row":{"ofport":8,"link_state":"up"}}]`))
			ops := v.([]any)
			b.ReportAllocs()
			for b.Loop() {
				tx := newTxn(db, nil)
				if _, ok := tx.execute(ops); !ok {
					b.Fatal("transaction failed")
				}
				tx.apply()
			}
		})
	}
}

// BenchmarkTransactRoundTrip measures one transact request and reply over
// a unix socket, against an in-memory database and against a file-backed
// one (which appends and fsyncs every transaction before replying).
func BenchmarkTransactRoundTrip(b *testing.B) {
	for _, backing := range []string{"memory", "file"} {
		b.Run(backing, func(b *testing.B) {
			dir := b.TempDir()
			var db *Database
			if backing == "file" {
				var err error
				if db, err = CreateDatabaseFile(dir+"/conf.db", vswitch.SchemaJSON); err != nil {
					b.Fatal(err)
				}
			} else {
				s, err := vswitch.Schema()
				if err != nil {
					b.Fatal(err)
				}
				db = NewDatabase(s)
			}
			srv := New()
			srv.AddDatabase(db)
			sock := dir + "/b.sock"
			l, err := net.Listen("unix", sock)
			if err != nil {
				b.Fatal(err)
			}
			go srv.Serve(l)
			defer srv.Close()
			raw, err := net.Dial("unix", sock)
			if err != nil {
				b.Fatal(err)
			}
			c := jsonrpc.NewConn(raw)
			defer c.Close()
			if _, err := syncCall(c, 0, "transact", `["Open_vSwitch",{"op":"insert","table":"Open_vSwitch","row":{}}]`); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := syncCall(c, i, "transact", `["Open_vSwitch",{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["next_cfg","+=",1]]}]`); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTransactDelPort measures ovs-vsctl del-port on a bridge with
// many ports: the bridge drops the reference and garbage collection removes
// the Port and its Interface. Each iteration adds the port back first.
func BenchmarkTransactDelPort(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("ports=%d", n), func(b *testing.B) {
			db := benchDB(b, n)
			b.ReportAllocs()
			for b.Loop() {
				id := model.NewUUID()
				add, _ := model.DecodeJSON([]byte(`[{"op":"insert","table":"Port","uuid":"` + id.String() + `","row":{"name":"x","interfaces":["named-uuid","i"]}},{"op":"insert","table":"Interface","uuid-name":"i","row":{"name":"x"}},{"op":"mutate","table":"Bridge","where":[["name","==","br-int"]],"mutations":[["ports","insert",["uuid","` + id.String() + `"]]]}]`))
				del, _ := model.DecodeJSON([]byte(`[{"op":"mutate","table":"Bridge","where":[["name","==","br-int"]],"mutations":[["ports","delete",["uuid","` + id.String() + `"]]]}]`))
				for _, ops := range []any{add, del} {
					tx := newTxn(db, nil)
					if res, ok := tx.execute(ops.([]any)); !ok {
						b.Fatalf("%s", rawArray(res))
					}
					tx.apply()
				}
			}
			if len(db.tables["Port"].Rows) != n {
				b.Fatalf("%d ports left, want %d", len(db.tables["Port"].Rows), n)
			}
		})
	}
}

// BenchmarkTransactDelMirroredPort measures del-port of a port that a
// mirror selects: garbage collection removes the Port and the mirror's weak
// reference to it must be dropped, found without scanning the database.
func BenchmarkTransactDelMirroredPort(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("ports=%d", n), func(b *testing.B) {
			db := benchDB(b, n)
			b.ReportAllocs()
			for b.Loop() {
				id := model.NewUUID()
				add, _ := model.DecodeJSON([]byte(`[{"op":"insert","table":"Port","uuid":"` + id.String() + `","row":{"name":"x","interfaces":["named-uuid","i"]}},{"op":"insert","table":"Interface","uuid-name":"i","row":{"name":"x"}},{"op":"insert","table":"Mirror","uuid-name":"m","row":{"name":"m","select_src_port":["uuid","` + id.String() + `"]}},{"op":"mutate","table":"Bridge","where":[["name","==","br-int"]],"mutations":[["ports","insert",["uuid","` + id.String() + `"]],["mirrors","insert",["named-uuid","m"]]]}]`))
				del, _ := model.DecodeJSON([]byte(`[{"op":"mutate","table":"Bridge","where":[["name","==","br-int"]],"mutations":[["ports","delete",["uuid","` + id.String() + `"]]]}]`))
				clear, _ := model.DecodeJSON([]byte(`[{"op":"update","table":"Bridge","where":[["name","==","br-int"]],"row":{"mirrors":["set",[]]}}]`))
				for _, ops := range []any{add, del, clear} {
					tx := newTxn(db, nil)
					if res, ok := tx.execute(ops.([]any)); !ok {
						b.Fatalf("%s", rawArray(res))
					}
					tx.apply()
				}
			}
			if len(db.tables["Port"].Rows) != n || len(db.tables["Mirror"].Rows) != 0 {
				b.Fatalf("%d ports and %d mirrors left, want %d and 0", len(db.tables["Port"].Rows), len(db.tables["Mirror"].Rows), n)
			}
		})
	}
}
