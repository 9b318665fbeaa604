package server

import (
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ovsdb/jsonrpc"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

// rpcClient is a minimal JSON-RPC peer for protocol tests.
type rpcClient struct {
	t    *testing.T
	conn *jsonrpc.Conn
	msgs chan *jsonrpc.Message
	next int
}

func dialRPC(t *testing.T, sock string) *rpcClient {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	rc := &rpcClient{t: t, conn: jsonrpc.NewConn(c), msgs: make(chan *jsonrpc.Message, 100)}
	go func() {
		defer close(rc.msgs)
		for {
			m, err := rc.conn.Recv()
			if err != nil {
				return
			}
			rc.msgs <- m
		}
	}()
	t.Cleanup(func() { rc.conn.Close() })
	return rc
}

// call sends a request and returns its id.
func (rc *rpcClient) call(method string, params string) string {
	rc.t.Helper()
	rc.next++
	id, _ := json.Marshal(rc.next)
	m := &jsonrpc.Message{Kind: jsonrpc.KindRequest, Method: method, Params: json.RawMessage(params), ID: id}
	if err := rc.conn.Send(m); err != nil {
		rc.t.Fatal(err)
	}
	return string(id)
}

// recv returns the next message as compact text: "reply <id> <result>",
// "error <id> <error>" or "<method> <params>".
func (rc *rpcClient) recv() string {
	rc.t.Helper()
	select {
	case m, ok := <-rc.msgs:
		if !ok {
			return "closed"
		}
		switch m.Kind {
		case jsonrpc.KindReply:
			return "reply " + string(m.ID) + " " + string(m.Result)
		case jsonrpc.KindError:
			return "error " + string(m.ID) + " " + string(m.Error)
		}
		return m.Method + " " + string(m.Params)
	case <-time.After(5 * time.Second):
		rc.t.Fatal("no message within 5s")
	}
	return ""
}

// expectNone checks that nothing arrives for a short while.
func (rc *rpcClient) expectNone() {
	rc.t.Helper()
	select {
	case m := <-rc.msgs:
		rc.t.Fatalf("unexpected message %s %s %s", m.Method, m.Result, m.Params)
	case <-time.After(50 * time.Millisecond):
	}
}

func startMem(t *testing.T) (*Server, string) {
	t.Helper()
	s, err := vswitch.Schema()
	if err != nil {
		t.Fatal(err)
	}
	srv := New()
	if err := srv.AddDatabase(NewDatabase(s)); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(shortDir(t), "m.sock")
	go srv.Serve(listenUnix(t, sock))
	t.Cleanup(func() { srv.Close() })
	return srv, sock
}

func mask(s string) string {
	return uuidRE.ReplaceAllStringFunc(s, func(u string) string {
		if u == "00000000-0000-0000-0000-000000000000" {
			return u
		}
		return "U"
	})
}

func TestLockStealUnlockNotifications(t *testing.T) {
	_, sock := startMem(t)
	a, b := dialRPC(t, sock), dialRPC(t, sock)
	a.call("lock", `["L"]`)
	if got := a.recv(); got != `reply 1 {"locked":true}` {
		t.Fatalf("a lock: %s", got)
	}
	b.call("lock", `["L"]`)
	if got := b.recv(); got != `reply 1 {"locked":false}` {
		t.Fatalf("b lock: %s", got)
	}
	b.call("transact", `["Open_vSwitch",{"op":"assert","lock":"L"}]`)
	if got := b.recv(); got != `reply 2 [{"details":"Asserted lock L not held.","error":"not owner"}]` {
		t.Fatalf("b assert: %s", got)
	}
	a.call("transact", `["Open_vSwitch",{"op":"assert","lock":"L"}]`)
	if got := a.recv(); got != `reply 2 [{}]` {
		t.Fatalf("a assert: %s", got)
	}
	a.call("unlock", `["L"]`)
	if got := a.recv(); got != `reply 3 {}` {
		t.Fatalf("a unlock: %s", got)
	}
	if got := b.recv(); got != `locked ["L"]` {
		t.Fatalf("b after unlock: %s", got)
	}
	c := dialRPC(t, sock)
	c.call("steal", `["L"]`)
	if got := c.recv(); got != `reply 1 {"locked":true}` {
		t.Fatalf("c steal: %s", got)
	}
	if got := b.recv(); got != `stolen ["L"]` {
		t.Fatalf("b after steal: %s", got)
	}
	b.call("lock", `["L"]`)
	if got := b.recv(); got != `error 3 {"syntax":"[\"L\"]","details":"must issue \"unlock\" before new \"lock\"","error":"syntax error"}` {
		t.Fatalf("b relock: %s", got)
	}
	a.call("unlock", `["L"]`)
	if got := a.recv(); got != `error 4 {"syntax":"[\"L\"]","details":"unlock: \"unlock\" without \"lock\" or \"steal\"","error":"syntax error"}` {
		t.Fatalf("a unlock again: %s", got)
	}
	// Closing the thief's connection hands the lock back.
	c.conn.Close()
	if got := b.recv(); got != `locked ["L"]` {
		t.Fatalf("b after thief left: %s", got)
	}
}

func TestMonitorCondSinceSendsUpdate3BeforeReply(t *testing.T) {
	_, sock := startMem(t)
	c := dialRPC(t, sock)
	c.call("monitor_cond_since", `["Open_vSwitch","m",{"Bridge":[{"columns":["name","external_ids"],"where":[["name","==","br0"]]}]},"00000000-0000-0000-0000-000000000000"]`)
	if got := c.recv(); got != `reply 1 [false,"00000000-0000-0000-0000-000000000000",{}]` {
		t.Fatalf("monitor_cond_since reply: %s", got)
	}
	c.call("transact", `["Open_vSwitch",
		{"op":"insert","table":"Open_vSwitch","row":{"bridges":["set",[["named-uuid","b0"],["named-uuid","b1"]]]}},
		{"op":"insert","table":"Bridge","uuid-name":"b0","row":{"name":"br0"}},
		{"op":"insert","table":"Bridge","uuid-name":"b1","row":{"name":"br1"}}]`)
	steps := []struct{ want string }{
		{`update3 ["m","00000000-0000-0000-0000-000000000000",{"Bridge":{"U":{"insert":{"name":"br0"}}}}]`},
		{`reply 2 [{"uuid":["uuid","U"]},{"uuid":["uuid","U"]},{"uuid":["uuid","U"]}]`},
	}
	for _, s := range steps {
		if got := mask(c.recv()); got != s.want {
			t.Fatalf("got %s\nwant %s", got, s.want)
		}
	}
	c.call("transact", `["Open_vSwitch",{"op":"mutate","table":"Bridge","where":[],"mutations":[["external_ids","insert",["map",[["a","1"]]]]]}]`)
	if got := c.recv(); got != `update3 ["m","00000000-0000-0000-0000-000000000000",{"Bridge":{`+mustBridge(t, c, sock)+`:{"modify":{"external_ids":["map",[["a","1"]]]}}}}]` {
		t.Fatalf("modify: %s", got)
	}
	if got := c.recv(); got != `reply 3 [{"count":2}]` {
		t.Fatalf("mutate reply: %s", got)
	}
	// Renaming is not allowed (name is immutable), so leave the condition by
	// deleting: the row disappears from the monitor.
	c.call("transact", `["Open_vSwitch",{"op":"update","table":"Open_vSwitch","where":[],"row":{"bridges":["set",[]]}}]`)
	if got := mask(c.recv()); got != `update3 ["m","00000000-0000-0000-0000-000000000000",{"Bridge":{"U":{"delete":null}}}]` {
		t.Fatalf("delete: %s", got)
	}
	if got := c.recv(); got != `reply 4 [{"count":1}]` {
		t.Fatalf("update reply: %s", got)
	}
	c.call("monitor_cancel", `["m"]`)
	if got := c.recv(); got != `reply 5 {}` {
		t.Fatalf("cancel: %s", got)
	}
	c.call("monitor_cancel", `["m"]`)
	if got := c.recv(); got != `error 6 "unknown monitor"` {
		t.Fatalf("cancel again: %s", got)
	}
}

// mustBridge returns the JSON-quoted UUID of bridge br0 via a second
// connection.
func mustBridge(t *testing.T, _ *rpcClient, sock string) string {
	t.Helper()
	o := dialRPC(t, sock)
	o.call("transact", `["Open_vSwitch",{"op":"select","table":"Bridge","where":[["name","==","br0"]],"columns":["_uuid"]}]`)
	got := o.recv()
	u := uuidRE.FindString(got)
	if u == "" {
		t.Fatalf("select br0: %s", got)
	}
	return `"` + u + `"`
}

func TestMonitorV1ArrayFormAndServerDatabase(t *testing.T) {
	_, sock := startMem(t)
	c := dialRPC(t, sock)
	c.call("monitor", `["Open_vSwitch",null,{"Open_vSwitch":[{"columns":["ovs_version"]},{"columns":["cur_cfg"],"select":{"initial":false}}]}]`)
	if got := c.recv(); got != `reply 1 {}` {
		t.Fatalf("monitor reply: %s", got)
	}
	c.call("transact", `["Open_vSwitch",{"op":"insert","table":"Open_vSwitch","row":{"cur_cfg":3}}]`)
	if got := mask(c.recv()); got != `update [null,{"Open_vSwitch":{"U":{"new":{"cur_cfg":3,"ovs_version":["set",[]]}}}}]` {
		t.Fatalf("update: %s", got)
	}
	c.recv()
	c.call("transact", `["Open_vSwitch",{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["cur_cfg","+=",1]]}]`)
	if got := mask(c.recv()); got != `update [null,{"Open_vSwitch":{"U":{"new":{"cur_cfg":4,"ovs_version":["set",[]]},"old":{"cur_cfg":3}}}}]` {
		t.Fatalf("update: %s", got)
	}
	c.recv()
	c.call("monitor_cond", `["_Server",["db"],{"Database":[{"columns":["name","model","connected","leader","cid","index"]}]}]`)
	got := mask(c.recv())
	for _, want := range []string{
		`"U":{"initial":{"connected":true,"leader":true,"model":"standalone","name":"Open_vSwitch"}}`,
		`"U":{"initial":{"connected":true,"leader":true,"model":"standalone","name":"_Server"}}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("_Server monitor reply %s lacks %s", got, want)
		}
	}
	c.call("list_dbs", `[]`)
	if got := c.recv(); got != `reply 5 ["Open_vSwitch","_Server"]` {
		t.Errorf("list_dbs: %s", got)
	}
	c.call("get_schema", `["nope"]`)
	if got := c.recv(); got != `error 6 {"syntax":"[\"nope\"]","details":"get_schema request specifies unknown database nope","error":"unknown database"}` {
		t.Errorf("get_schema nope: %s", got)
	}
	c.call("echo", `["x",1]`)
	if got := c.recv(); got != `reply 7 ["x",1]` {
		t.Errorf("echo: %s", got)
	}
	c.call("set_db_change_aware", `[true]`)
	if got := c.recv(); got != `reply 8 {}` {
		t.Errorf("set_db_change_aware: %s", got)
	}
	c.call("frobnicate", `[]`)
	if got := c.recv(); got != `error 9 "unknown method"` {
		t.Errorf("unknown method: %s", got)
	}
}

func TestWaitBlocksUntilConditionOrTimeout(t *testing.T) {
	_, sock := startMem(t)
	a, b := dialRPC(t, sock), dialRPC(t, sock)
	// Blocks until a row with cur_cfg 7 exists.
	a.call("transact", `["Open_vSwitch",{"op":"wait","timeout":10000,"table":"Open_vSwitch","where":[],"columns":["cur_cfg"],"until":"==","rows":[{"cur_cfg":7}]},{"op":"comment","comment":"woke"}]`)
	a.expectNone()
	b.call("transact", `["Open_vSwitch",{"op":"insert","table":"Open_vSwitch","row":{"cur_cfg":7}}]`)
	b.recv()
	if got := a.recv(); got != `reply 1 [{},{}]` {
		t.Fatalf("woken wait: %s", got)
	}
	// Times out.
	a.call("transact", `["Open_vSwitch",{"op":"wait","timeout":30,"table":"Open_vSwitch","where":[],"columns":["cur_cfg"],"until":"!=","rows":[{"cur_cfg":7}]}]`)
	if got := a.recv(); got != `reply 2 [{"details":"\"where\" clause test failed","error":"timed out"}]` {
		t.Fatalf("timed-out wait: %s", got)
	}
	// Canceled.
	a.call("transact", `["Open_vSwitch",{"op":"wait","table":"Open_vSwitch","where":[],"columns":["cur_cfg"],"until":"!=","rows":[{"cur_cfg":7}]}]`)
	a.expectNone()
	n, _ := jsonrpc.NewNotify("cancel", []any{3})
	a.conn.Send(n)
	if got := a.recv(); got != `error 3 "canceled"` {
		t.Fatalf("canceled wait: %s", got)
	}
}

func TestWeakReferencesAndGarbageCollection(t *testing.T) {
	_, sock := startMem(t)
	c := dialRPC(t, sock)
	c.call("transact", `["Open_vSwitch",
		{"op":"insert","table":"Open_vSwitch","row":{"bridges":["named-uuid","b"]}},
		{"op":"insert","table":"Bridge","uuid-name":"b","row":{"name":"br0","ports":["named-uuid","p"],"mirrors":["named-uuid","m"]}},
		{"op":"insert","table":"Port","uuid-name":"p","row":{"name":"p1","interfaces":["named-uuid","i"]}},
		{"op":"insert","table":"Interface","uuid-name":"i","row":{"name":"p1"}},
		{"op":"insert","table":"Mirror","uuid-name":"m","row":{"name":"m0","select_src_port":["named-uuid","p"]}}]`)
	if got := c.recv(); strings.Contains(got, "error") {
		t.Fatal(got)
	}
	// Dropping the port from the bridge garbage-collects Port and Interface
	// and removes the mirror's weak reference.
	c.call("transact", `["Open_vSwitch",{"op":"update","table":"Bridge","where":[],"row":{"ports":["set",[]]}}]`)
	if got := c.recv(); got != `reply 2 [{"count":1}]` {
		t.Fatal(got)
	}
	c.call("transact", `["Open_vSwitch",
		{"op":"select","table":"Port","where":[],"columns":["name"]},
		{"op":"select","table":"Interface","where":[],"columns":["name"]},
		{"op":"select","table":"Mirror","where":[],"columns":["name","select_src_port"]}]`)
	if got := c.recv(); got != `reply 3 [{"rows":[]},{"rows":[]},{"rows":[{"name":"m0","select_src_port":["set",[]]}]}]` {
		t.Fatal(got)
	}
}

func TestMalformedInputNeverPanics(t *testing.T) {
	_, sock := startMem(t)
	bad := []string{
		`["Open_vSwitch",{"op":"insert","table":"Bridge","row":{"name":["set",[1,2]]}}]`,
		`["Open_vSwitch",{"op":"insert","table":"Bridge","row":{"ports":["uuid","nope"]}}]`,
		`["Open_vSwitch",{"op":"select","table":"Bridge","where":[["name"]]}]`,
		`["Open_vSwitch",{"op":"select","table":"Bridge","where":[["name","==",["map",[]]]]}]`,
		`["Open_vSwitch",{"op":"mutate","table":"Bridge","where":[],"mutations":[["name","+=",1]]}]`,
		`["Open_vSwitch",{"op":"wait","table":"Bridge","where":[],"until":"<","rows":[]}]`,
		`["Open_vSwitch",{"op":"insert","table":"Bridge","row":{"name":"x"},"uuid-name":"1bad"}]`,
		`["Open_vSwitch",{"op":"insert","table":"Bridge","row":{"name":"x"},"uuid":"zz"}]`,
		`["Open_vSwitch",null,1,"x",[]]`,
		`[]`,
		`[1]`,
	}
	c := dialRPC(t, sock)
	for _, p := range bad {
		c.call("transact", p)
		if got := c.recv(); !strings.Contains(got, "error") {
			t.Errorf("transact %s: %s", p, got)
		}
	}
	for _, m := range []string{"monitor", "monitor_cond", "monitor_cond_since", "get_schema", "lock", "unlock", "steal", "monitor_cancel", "set_db_change_aware"} {
		for _, p := range []string{`[]`, `[null]`, `["Open_vSwitch",1,2,3,4]`, `["Open_vSwitch",1,{"Nope":{}}]`, `["Open_vSwitch",1,{"Bridge":5}]`} {
			c.call(m, p)
			if got := c.recv(); got == "closed" {
				t.Fatalf("%s %s closed the connection", m, p)
			}
		}
	}
	// A deeply nested message ends the connection, not the server.
	d := dialRPC(t, sock)
	raw, _ := net.Dial("unix", sock)
	raw.Write([]byte(`{"method":"echo","params":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `,"id":1}`))
	buf := make([]byte, 10)
	raw.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := raw.Read(buf); err == nil {
		t.Errorf("deep nesting answered %q", buf[:n])
	}
	raw.Close()
	d.call("echo", `[]`)
	if got := d.recv(); got != `reply 1 []` {
		t.Errorf("server unusable after bad peer: %s", got)
	}
}

func TestInvalidTransactionChangesNothing(t *testing.T) {
	srv, sock := startMem(t)
	c := dialRPC(t, sock)
	c.call("transact", `["Open_vSwitch",
		{"op":"insert","table":"Open_vSwitch","row":{"cur_cfg":1}},
		{"op":"insert","table":"Open_vSwitch","row":{"cur_cfg":2}}]`)
	if got := mask(c.recv()); got != `reply 1 [{"uuid":["uuid","U"]},{"uuid":["uuid","U"]},{"details":"transaction causes \"Open_vSwitch\" table to contain 2 rows, greater than the schema-defined limit of 1 row(s)","error":"constraint violation"}]` {
		t.Fatal(got)
	}
	srv.mu.Lock()
	n := len(srv.dbs["Open_vSwitch"].db.tables["Open_vSwitch"].Rows)
	srv.mu.Unlock()
	if n != 0 {
		t.Errorf("rejected transaction left %d rows", n)
	}
}

func TestMonitorCondChangeMatchesOVSDBServer(t *testing.T) {
	_, sock := startMem(t)
	c := dialRPC(t, sock)
	c.call("transact", `["Open_vSwitch",{"op":"insert","table":"Open_vSwitch","row":{"bridges":["named-uuid","b"]}},{"op":"insert","table":"Bridge","uuid-name":"b","row":{"name":"br0","fail_mode":"secure"}}]`)
	c.recv()
	c.call("monitor_cond", `["Open_vSwitch","m1",{"Bridge":[{"columns":["name","fail_mode","datapath_type"]}]}]`)
	if got := mask(c.recv()); got != `reply 2 {"Bridge":{"U":{"initial":{"fail_mode":"secure","name":"br0"}}}}` {
		t.Fatal(got)
	}
	// Optional columns travel as values, not as set differences.
	c.call("transact", `["Open_vSwitch",{"op":"update","table":"Bridge","where":[],"row":{"fail_mode":"standalone","datapath_type":"x"}}]`)
	if got := mask(c.recv()); got != `update2 ["m1",{"Bridge":{"U":{"modify":{"datapath_type":"x","fail_mode":"standalone"}}}}]` {
		t.Fatal(got)
	}
	c.recv()
	steps := []struct{ params, note, reply string }{
		{`["m1","m2",{"Bridge":[{"where":[["name","==","nope"]]}]}]`, `update2 ["m2",{"Bridge":{"U":{"delete":null}}}]`, `reply 4 {}`},
		{`["m2","m3",{"Bridge":[{"where":[true]}]}]`, `update2 ["m3",{"Bridge":{"U":{"insert":{"datapath_type":"x","fail_mode":"standalone","name":"br0"}}}}]`, `reply 5 {}`},
		{`["m3","m3",{"Bridge":[{"where":[false]}]}]`, `update2 ["m3",{"Bridge":{"U":{"delete":null}}}]`, `reply 6 {}`},
	}
	for _, s := range steps {
		c.call("monitor_cond_change", s.params)
		if got := mask(c.recv()); got != s.note {
			t.Fatalf("%s: got %s, want %s", s.params, got, s.note)
		}
		if got := c.recv(); got != s.reply {
			t.Fatalf("%s: got %s, want %s", s.params, got, s.reply)
		}
	}
	c.call("monitor_cond_change", `["m1","m4",{}]`)
	if got := c.recv(); got != `error 7 "unknown monitor"` {
		t.Fatal(got)
	}
}
