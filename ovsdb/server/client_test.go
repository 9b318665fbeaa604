package server

import (
	"path/filepath"
	"strings"
	"testing"
)

// badTransactions are rejected by ovsdb-server; gvs must reject them with
// the same error and leave the database unchanged.
var badTransactions = []string{
	// maxRows of Open_vSwitch is 1.
	`["Open_vSwitch",{"op":"insert","table":"Open_vSwitch","row":{}}]`,
	// Strong reference to a row that does not exist.
	`["Open_vSwitch",{"op":"insert","table":"Bridge","row":{"name":"x","ports":["uuid","5a7b23dd-c3b0-4f29-8b2e-9466beb79de1"]}}]`,
	// Deleting a row that is still referenced.
	`["Open_vSwitch",{"op":"delete","table":"Port","where":[]}]`,
	// Range constraint.
	`["Open_vSwitch",{"op":"update","table":"Interface","where":[],"row":{"ofport_request":0}}]`,
	// Enum constraint.
	`["Open_vSwitch",{"op":"update","table":"Bridge","where":[],"row":{"fail_mode":"bogus"}}]`,
	// Immutable column.
	`["Open_vSwitch",{"op":"update","table":"Bridge","where":[],"row":{"name":"q"}}]`,
	// Unique index: a second bridge named br0.
	`["Open_vSwitch",{"op":"insert","table":"Bridge","row":{"name":"br0"},"uuid-name":"b"},{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["bridges","insert",["named-uuid","b"]]]}]`,
	// Set too large.
	`["Open_vSwitch",{"op":"update","table":"Bridge","where":[],"row":{"fail_mode":["set",["secure","standalone"]]}}]`,
	// Type errors and unknown names.
	`["Open_vSwitch",{"op":"insert","table":"Bridge","row":{"name":5}}]`,
	`["Open_vSwitch",{"op":"insert","table":"Bridge","row":{"namex":"a"}}]`,
	`["Open_vSwitch",{"op":"select","table":"Bridgex","where":[]},{"op":"comment","comment":"x"}]`,
	`["Open_vSwitch",{"op":"frob"}]`,
	`["Open_vSwitch",{"op":"insert","table":"Bridge","row":{"name":"a"},"uuid-name":"x"},{"op":"insert","table":"Bridge","row":{"name":"b"},"uuid-name":"x"}]`,
	`["Open_vSwitch",{"op":"select","table":"Bridge","where":[["name","<","br0"]]}]`,
	// Map with a duplicate key.
	`["Open_vSwitch",{"op":"update","table":"Bridge","where":[],"row":{"other_config":["map",[["a","b"],["a","c"]]]}}]`,
	// Lock not held, abort, failed wait.
	`["Open_vSwitch",{"op":"assert","lock":"foo"}]`,
	`["Open_vSwitch",{"op":"update","table":"Bridge","where":[],"row":{"fail_mode":"secure"}},{"op":"abort"}]`,
	`["Open_vSwitch",{"op":"wait","timeout":0,"table":"Bridge","where":[],"columns":["name"],"until":"==","rows":[]}]`,
	// Mutation out of range, and a mutation that empties a min-1 column.
	`["Open_vSwitch",{"op":"mutate","table":"Interface","where":[["name","==","p1"]],"mutations":[["ofport_request","+=",70000]]}]`,
	`["Open_vSwitch",{"op":"mutate","table":"Port","where":[],"mutations":[["interfaces","delete",["set",[]]],["name","insert","x"]]}]`,
	// Malformed operations.
	`["Open_vSwitch",{"op":"insert","table":"Bridge","row":{"name":"a"},"uuid":"5a7b23dd-c3b0-4f29-8b2e-9466beb79de0"},{"op":"insert","table":"Bridge","row":{"name":"b"},"uuid":"5a7b23dd-c3b0-4f29-8b2e-9466beb79de0"}]`,
	`["Open_vSwitch",{"op":"update","table":"Bridge","where":[["name","==",1]],"row":{}}]`,
	`["Open_vSwitch",{"op":"select","table":"Bridge","where":[],"columns":["nope"]}]`,
	`["Open_vSwitch",{"op":"update","table":"Bridge","where":[]}]`,
	`["Open_vSwitch",{"op":"select","table":"Bridge","where":[],"extra":1}]`,
	`["Open_vSwitch",{"op":"wait","table":"Bridge","where":[],"until":"==","rows":[],"timeout":-1}]`,
	`["Open_vSwitch",{"op":"wait","table":"Bridge","where":[],"until":"<","rows":[],"timeout":0}]`,
	`["Open_vSwitch",{"op":"select","table":"Bridge","where":[["name","frob","x"]]}]`,
	`["Open_vSwitch",{"op":"mutate","table":"Bridge","where":[],"mutations":[["external_ids","frob",1]]}]`,
	`["Open_vSwitch",{"op":"commit"}]`,
	`["Open_vSwitch",{"op":"comment"}]`,
	`["Open_vSwitch",{"table":"Bridge"}]`,
	// Deleting a port still referenced by its bridge, with the interface.
	`["Open_vSwitch",{"op":"delete","table":"Interface","where":[]},{"op":"delete","table":"Port","where":[]}]`,
	// Writes to _Server are refused.
	`["_Server",{"op":"insert","table":"Database","row":{"name":"x","model":"standalone"}}]`,
}

// goodTransaction exercises every successful operation, including
// named-uuid references and garbage collection of an unreferenced row.
const goodTransaction = `["Open_vSwitch",
 {"op":"insert","table":"Port","row":{"name":"p9","interfaces":["named-uuid","i9"]},"uuid-name":"p9"},
 {"op":"insert","table":"Interface","row":{"name":"p9","type":"dummy","ofport_request":9},"uuid-name":"i9"},
 {"op":"mutate","table":"Bridge","where":[["name","==","br0"]],"mutations":[["ports","insert",["set",[["named-uuid","p9"]]]],["external_ids","insert",["map",[["k","v"]]]]]},
 {"op":"insert","table":"Interface","row":{"name":"orphan"}},
 {"op":"update","table":"Interface","where":[["name","==","p9"]],"row":{"options":["map",[["pcap","x.pcap"]]]}},
 {"op":"select","table":"Interface","where":[["name","includes","p9"]],"columns":["name","type","ofport_request","options"]},
 {"op":"wait","timeout":0,"table":"Bridge","where":[["name","==","br0"]],"columns":["name"],"until":"==","rows":[{"name":"br0"}]},
 {"op":"comment","comment":"good transaction"},
 {"op":"commit","durable":true}]`

func setupBridge(t *testing.T, sock string) {
	t.Helper()
	for _, args := range [][]string{{"init"}, {"add-br", "br0"}, {"add-port", "br0", "p1"}} {
		run(t, "ovs-vsctl", append([]string{"--db=unix:" + sock, "--no-wait"}, args...)...)
	}
}

func errorOf(t *testing.T, out string) string {
	t.Helper()
	out = uuidRE.ReplaceAllString(out, "<uuid>")
	return out
}

// TestBadTransactionsMatchOVSDBServer sends each bad transaction to both
// servers with ovsdb-client and compares the complete replies (UUIDs
// masked), then checks that neither database changed.
func TestBadTransactionsMatchOVSDBServer(t *testing.T) {
	requireBins(t, "ovs-vsctl", "ovsdb-client", "ovsdb-server", "ovsdb-tool")
	dir := shortDir(t)
	_, gsock := startGVS(t, dir, filepath.Join(dir, "gvs.db"))
	osock := startOVS(t, dir)
	setupBridge(t, gsock)
	setupBridge(t, osock)
	before := dump(t, gsock)
	for _, txn := range badTransactions {
		g, gerr, _ := runErr("ovsdb-client", "transact", "unix:"+gsock, txn)
		o, oerr, _ := runErr("ovsdb-client", "transact", "unix:"+osock, txn)
		if errorOf(t, g+gerr) != errorOf(t, o+oerr) {
			t.Errorf("transaction %s:\n gvs: %s%s\n ovs: %s%s", txn, g, gerr, o, oerr)
		}
	}
	if after := dump(t, gsock); after != before {
		t.Errorf("bad transactions changed the database:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	g := run(t, "ovsdb-client", "transact", "unix:"+gsock, goodTransaction)
	o := run(t, "ovsdb-client", "transact", "unix:"+osock, goodTransaction)
	if errorOf(t, g) != errorOf(t, o) {
		t.Errorf("good transaction:\n gvs: %s\n ovs: %s", g, o)
	}
	if gd, od := normDump(dump(t, gsock)), normDump(dump(t, osock)); gd != od {
		t.Errorf("dump differs:\n gvs:\n%s\n ovs:\n%s", gd, od)
	}
}

func dump(t *testing.T, sock string) string {
	return run(t, "ovsdb-client", "dump", "unix:"+sock, "Open_vSwitch")
}

// normDump masks UUIDs and sorts lines, since row order follows UUIDs.
func normDump(s string) string {
	lines := strings.Split(uuidRE.ReplaceAllString(s, "<uuid>"), "\n")
	sortStrings(lines)
	return strings.Join(lines, "\n")
}
