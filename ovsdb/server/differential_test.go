package server

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomTxn builds a transaction over Bridge, Port, Interface, Mirror and
// QoS that exercises named UUIDs, strong and weak references, garbage
// collection, unique indexes, mutations and constraint errors.
func randomTxn(r *rand.Rand) string {
	name := func(prefix string) string { return fmt.Sprintf("%s%d", prefix, r.IntN(4)) }
	var ops []string
	for n := 1 + r.IntN(4); n > 0; n-- {
		switch r.IntN(12) {
		case 0: // a bridge with a port and an interface, attached
			b, p := name("br"), name("p")
			ops = append(ops,
				fmt.Sprintf(`{"op":"insert","table":"Bridge","uuid-name":"nb","row":{"name":%q,"ports":["named-uuid","np"]}}`, b),
				fmt.Sprintf(`{"op":"insert","table":"Port","uuid-name":"np","row":{"name":%q,"interfaces":["named-uuid","ni"]}}`, p),
				fmt.Sprintf(`{"op":"insert","table":"Interface","uuid-name":"ni","row":{"name":%q,"ofport_request":%d}}`, p, r.IntN(3)),
				`{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["bridges","insert",["named-uuid","nb"]]]}`)
		case 1: // a port added to an existing bridge
			p := name("q")
			ops = append(ops,
				fmt.Sprintf(`{"op":"insert","table":"Port","uuid-name":"np2","row":{"name":%q,"interfaces":["named-uuid","ni2"]}}`, p),
				fmt.Sprintf(`{"op":"insert","table":"Interface","uuid-name":"ni2","row":{"name":%q,"type":"dummy"}}`, p),
				fmt.Sprintf(`{"op":"mutate","table":"Bridge","where":[["name","==",%q]],"mutations":[["ports","insert",["named-uuid","np2"]]]}`, name("br")))
		case 2: // detach a bridge (garbage collects its ports)
			ops = append(ops, fmt.Sprintf(`{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["bridges","delete",["set",[]]]]},{"op":"delete","table":"Bridge","where":[["name","==",%q]]}`, name("br")))
		case 3: // empty a bridge's ports
			ops = append(ops, fmt.Sprintf(`{"op":"update","table":"Bridge","where":[["name","==",%q]],"row":{"ports":["set",[]]}}`, name("br")))
		case 4: // delete ports by name (referenced: integrity error)
			ops = append(ops, fmt.Sprintf(`{"op":"delete","table":"Port","where":[["name","==",%q]]}`, name("p")))
		case 5: // a mirror weakly selecting every port
			ops = append(ops, `{"op":"insert","table":"Mirror","uuid-name":"nm","row":{"name":"m"}}`,
				fmt.Sprintf(`{"op":"mutate","table":"Bridge","where":[["name","==",%q]],"mutations":[["mirrors","insert",["named-uuid","nm"]]]}`, name("br")))
		case 6:
			ops = append(ops, `{"op":"select","table":"Port","where":[],"columns":["name","interfaces"]}`)
		case 7: // map and set mutations, some out of range
			ops = append(ops, fmt.Sprintf(`{"op":"mutate","table":"Bridge","where":[],"mutations":[["other_config","insert",["map",[["k%d","v"]]]],["flood_vlans","insert",["set",[%d]]]]}`, r.IntN(3), r.IntN(5000)))
		case 8: // enum and range constraints
			modes := []string{`"secure"`, `"standalone"`, `["set",[]]`, `"bogus"`}
			ops = append(ops, fmt.Sprintf(`{"op":"update","table":"Bridge","where":[],"row":{"fail_mode":%s}}`, modes[r.IntN(len(modes))]))
		case 9: // a root-table row nobody references (kept) and a Queue
			ops = append(ops, `{"op":"insert","table":"QoS","row":{"type":"linux-noop","queues":["map",[[0,["named-uuid","nq"]]]]}}`,
				`{"op":"insert","table":"Queue","uuid-name":"nq","row":{"dscp":1}}`)
		case 10:
			ops = append(ops, `{"op":"delete","table":"QoS","where":[]}`)
		case 11:
			ops = append(ops, fmt.Sprintf(`{"op":"wait","timeout":0,"table":"Bridge","where":[["name","==",%q]],"columns":["name"],"until":"==","rows":[]}`, name("br")))
		}
	}
	return `["Open_vSwitch",` + strings.Join(ops, ",") + `]`
}

// errorNames reduces a transact result to its shape: per operation "ok",
// "null" or the error name.
func errorNames(t *testing.T, res string) string {
	// res is "reply <id> <json>".
	var items []map[string]any
	parts := strings.SplitN(res, " ", 3)
	if len(parts) != 3 || json.Unmarshal([]byte(parts[2]), &items) != nil {
		t.Fatalf("bad reply %s", res)
	}
	var out []string
	for _, it := range items {
		switch {
		case it == nil:
			out = append(out, "null")
		case it["error"] != nil:
			out = append(out, it["error"].(string))
		default:
			out = append(out, "ok")
		}
	}
	return strings.Join(out, ",")
}

// TestRandomTransactionsMatchOVSDBServer runs the same random transactions
// against gvs and Debian's ovsdb-server and compares each outcome and the
// final contents.
func TestRandomTransactionsMatchOVSDBServer(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { randomTransactions(t, seed) })
	}
}

func randomTransactions(t *testing.T, seed uint64) {
	requireBins(t, "ovs-vsctl", "ovsdb-client", "ovsdb-server", "ovsdb-tool")
	dir := shortDir(t)
	_, gsock := startGVS(t, dir, dir+"/gvs.db")
	osock := startOVS(t, dir)
	run(t, "ovs-vsctl", "--db=unix:"+gsock, "--no-wait", "init")
	run(t, "ovs-vsctl", "--db=unix:"+osock, "--no-wait", "init")
	g, o := dialRPC(t, gsock), dialRPC(t, osock)
	r := rand.New(rand.NewPCG(seed, 2))
	outcomes := map[string]int{}
	for i := 0; i < 400; i++ {
		txn := randomTxn(r)
		g.call("transact", txn)
		o.call("transact", txn)
		gr, or := g.recv(), o.recv()
		if errorNames(t, gr) != errorNames(t, or) {
			t.Fatalf("transaction %d %s:\n gvs: %s\n ovs: %s", i, txn, gr, or)
		}
		names := strings.Split(errorNames(t, gr), ",")
		outcomes[names[len(names)-1]]++
	}
	t.Logf("last-result outcomes: %v", outcomes)
	if gd, od := normDump(dump(t, gsock)), normDump(dump(t, osock)); gd != od {
		t.Errorf("contents differ:\n gvs:\n%s\n ovs:\n%s", gd, od)
	}
}
