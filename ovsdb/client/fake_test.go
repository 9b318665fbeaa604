package client

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ovsdb/jsonrpc"
	"github.com/gvs-project/gvs/ovsdb/model"
	"github.com/gvs-project/gvs/ovsdb/server"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

// fakeServer is a scripted peer on the far end of a net.Pipe.
type fakeServer struct {
	t    *testing.T
	conn *jsonrpc.Conn
}

func newFake(t *testing.T) (*Client, *fakeServer) {
	a, b := net.Pipe()
	c := NewClient(a)
	t.Cleanup(func() { c.Close(); b.Close() })
	return c, &fakeServer{t: t, conn: jsonrpc.NewConn(b)}
}

// expect reads the next message and checks its method.
func (f *fakeServer) expect(method string) *jsonrpc.Message {
	f.t.Helper()
	m, err := f.conn.Recv()
	if err != nil {
		f.t.Fatalf("fake server: waiting for %s: %v", method, err)
	}
	if m.Method != method {
		f.t.Fatalf("fake server: got %s %s, want %s", m.Method, m.Params, method)
	}
	return m
}

func (f *fakeServer) reply(m *jsonrpc.Message, result string) {
	r, _ := jsonrpc.NewReply(m.ID, json.RawMessage(result))
	if err := f.conn.Send(r); err != nil {
		f.t.Errorf("fake server: send: %v", err)
	}
}

func (f *fakeServer) replyError(m *jsonrpc.Message, errObj string) {
	r, _ := jsonrpc.NewError(m.ID, json.RawMessage(errObj))
	if err := f.conn.Send(r); err != nil {
		f.t.Errorf("fake server: send: %v", err)
	}
}

func (f *fakeServer) send(raw string) {
	m, err := jsonrpc.Decode([]byte(raw))
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.conn.Send(m); err != nil {
		f.t.Errorf("fake server: send: %v", err)
	}
}

const (
	fakeBr0 = "11111111-2222-3333-4444-555555555555"
	fakeBr1 = "66666666-2222-3333-4444-555555555555"
)

// TestMonitorFallsBackToPlainMonitor talks to a server that knows only
// "monitor" (version 1 updates) and also sends its own echo requests.
func TestMonitorFallsBackToPlainMonitor(t *testing.T) {
	c, f := newFake(t)
	ctx := testCtx(t)
	rec := &recorder{}
	type result struct {
		r   *Replica
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := c.Monitor(ctx, "Open_vSwitch", []MonitorTable{{Table: "Bridge", Columns: []string{"name", "fail_mode"}}},
			MonitorOptions{OnChange: rec.add})
		done <- result{r, err}
	}()
	f.reply(f.expect("get_schema"), string(vswitch.SchemaJSON))
	m := f.expect("monitor_cond_since")
	if want := `["Open_vSwitch","gvs-Open_vSwitch-0",{"Bridge":[{"columns":["fail_mode","name"]}]},"00000000-0000-0000-0000-000000000000"]`; string(m.Params) != want {
		t.Errorf("monitor_cond_since params\n got %s\nwant %s", m.Params, want)
	}
	f.replyError(m, `"unknown method"`)
	f.replyError(f.expect("monitor_cond"), `{"error":"unknown method"}`)
	m = f.expect("monitor")
	if want := `["Open_vSwitch","gvs-Open_vSwitch-0",{"Bridge":[{"columns":["fail_mode","name"]}]}]`; string(m.Params) != want {
		t.Errorf("monitor params\n got %s\nwant %s", m.Params, want)
	}
	f.reply(m, `{"Bridge":{"`+fakeBr0+`":{"new":{"name":"br0","fail_mode":["set",[]]}}}}`)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	r := res.r
	if r.Method() != "monitor" || r.Seq() != 1 {
		t.Errorf("method %s seq %d", r.Method(), r.Seq())
	}

	// The client answers the server's echo with the same id and params.
	f.send(`{"id":"echo","method":"echo","params":[]}`)
	if m, err := f.conn.Recv(); err != nil || m.Kind != jsonrpc.KindReply || string(m.ID) != `"echo"` || string(m.Result) != `[]` {
		t.Fatalf("echo reply %+v, %v", m, err)
	}
	// Unknown requests get an error rather than silence.
	f.send(`{"id":5,"method":"bogus","params":[]}`)
	if m, err := f.conn.Recv(); err != nil || m.Kind != jsonrpc.KindError || string(m.Error) != `"unknown method"` {
		t.Fatalf("bogus reply %+v, %v", m, err)
	}

	f.send(`{"id":null,"method":"update","params":["gvs-Open_vSwitch-0",{"Bridge":{` +
		`"` + fakeBr0 + `":{"new":{"name":"br0","fail_mode":"secure"},"old":{"fail_mode":["set",[]]}},` +
		`"` + fakeBr1 + `":{"new":{"name":"br1","fail_mode":["set",[]]}}}}]}`)
	f.send(`{"id":null,"method":"update","params":["gvs-Open_vSwitch-0",{"Bridge":{"` + fakeBr0 + `":{"old":{"name":"br0","fail_mode":"secure"}}}}]}`)
	// Updates for another monitor id are not ours.
	f.send(`{"id":null,"method":"update","params":["other",{"Bridge":{"` + fakeBr0 + `":{"new":{"name":"zz"}}}}]}`)
	want := []string{"insert Bridge br0", "modify Bridge br0", "insert Bridge br1", "delete Bridge br0"}
	if got := rec.take(t, 4); !equalStrings(got, want) {
		t.Errorf("changes\n got %q\nwant %q", got, want)
	}
	snap := r.Snapshot()
	if snap.Seq != 3 || !equalStrings(names(snap, "Bridge"), []string{"br1"}) {
		t.Errorf("seq %d bridges %q", snap.Seq, names(snap, "Bridge"))
	}
}

// TestTxnEncodesOperations checks the exact transact request and the
// mapping of the reply.
func TestTxnEncodesOperations(t *testing.T) {
	c, f := newFake(t)
	ctx := testCtx(t)
	ovs := &Row{Table: "Open_vSwitch", UUID: model.UUID{1}, Data: map[string]model.Datum{
		"bridges": {Keys: []model.Atom{model.UUID{2}}}}}
	txn := c.Txn("Open_vSwitch").
		Verify(ovs, "bridges").
		Insert("Bridge", "br", map[string]any{"name": "br-int", "other_config": map[string]string{"z": "1", "a": "<&>"}}).
		SetInsert("Open_vSwitch", ovs.UUID, "bridges", NamedUUID("br")).
		MapDelete("Bridge", model.UUID{3}, "external_ids", []string{"k"}).
		Mutate("Open_vSwitch", []Mutation{{"next_cfg", "+=", 1}}).
		Delete("Port", Where("name", "!=", "x")).
		Comment("hi").
		Assert("ovs_vswitchd")
	type result struct {
		r   *Result
		err error
	}
	done := make(chan result, 1)
	go func() { r, err := txn.Commit(ctx); done <- result{r, err} }()
	f.reply(f.expect("get_schema"), string(vswitch.SchemaJSON))
	m := f.expect("transact")
	want := `["Open_vSwitch",` +
		`{"op":"wait","table":"Open_vSwitch","columns":["bridges"],"until":"==","rows":[{"bridges":["set",[["uuid","02000000-0000-0000-0000-000000000000"]]]}],"timeout":0,"where":[["_uuid","==",["uuid","01000000-0000-0000-0000-000000000000"]]]},` +
		`{"op":"insert","table":"Bridge","row":{"name":"br-int","other_config":["map",[["a","<&>"],["z","1"]]]},"uuid-name":"br"},` +
		`{"op":"mutate","table":"Open_vSwitch","mutations":[["bridges","insert",["set",[["named-uuid","br"]]]]],"where":[["_uuid","==",["uuid","01000000-0000-0000-0000-000000000000"]]]},` +
		`{"op":"mutate","table":"Bridge","mutations":[["external_ids","delete",["set",["k"]]]],"where":[["_uuid","==",["uuid","03000000-0000-0000-0000-000000000000"]]]},` +
		`{"op":"mutate","table":"Open_vSwitch","mutations":[["next_cfg","+=",1]],"where":[]},` +
		`{"op":"delete","table":"Port","where":[["name","!=","x"]]},` +
		`{"op":"comment","comment":"hi"},` +
		`{"op":"assert","lock":"ovs_vswitchd"}]`
	if string(m.Params) != want {
		t.Errorf("transact params\n got %s\nwant %s", m.Params, want)
	}
	f.reply(m, `[{},{"uuid":["uuid","aaaaaaaa-0000-0000-0000-000000000000"]},{"count":1},{"count":0},{"count":1},{"count":2},{},{}]`)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if got := res.r.UUIDs["br"].String(); got != "aaaaaaaa-0000-0000-0000-000000000000" {
		t.Errorf("named uuid br = %s", got)
	}
	if res.r.Ops[5].Count != 2 || res.r.Ops[5].Op != "delete" || len(res.r.Ops) != 8 {
		t.Errorf("ops %+v", res.r.Ops)
	}

	// A failed operation: later results are null and the error names it.
	done2 := make(chan error, 1)
	go func() {
		_, err := c.Txn("Open_vSwitch").Comment("a").Assert("l").Comment("b").Commit(ctx)
		done2 <- err
	}()
	f.reply(f.expect("transact"), `[{},{"error":"not owner","details":"Asserted lock l not held."},null]`)
	err := <-done2
	te, ok := err.(*TxnError)
	if !ok || te.Index != 1 || te.Op != "assert" || te.Err.Name != "not owner" || te.Err.Details != "Asserted lock l not held." {
		t.Errorf("error %#v", err)
	}
}

// TestCallsFailWhenConnectionDrops checks that a call in flight returns
// ErrDisconnected and later calls ErrNotConnected on a NewClient client.
func TestCallsFailWhenConnectionDrops(t *testing.T) {
	a, b := net.Pipe()
	c := NewClient(a)
	defer c.Close()
	f := &fakeServer{t: t, conn: jsonrpc.NewConn(b)}
	ctx := testCtx(t)
	errc := make(chan error, 1)
	go func() { _, err := c.ListDBs(ctx); errc <- err }()
	f.expect("list_dbs")
	b.Close()
	if err := <-errc; !errors.Is(err, ErrDisconnected) {
		t.Errorf("in-flight call: %v", err)
	}
	waitDisconnected(t, c)
	if _, err := c.ListDBs(ctx); !errors.Is(err, ErrNotConnected) {
		t.Errorf("later call: %v", err)
	}
	c.Close()
	if _, err := c.ListDBs(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// TestProbeDropsSilentServer checks the inactivity probe: a server that
// never answers is disconnected; one that answers echo is kept.
func TestProbeDropsSilentServer(t *testing.T) {
	a, b := net.Pipe()
	c := NewClient(a, Options{ProbeInterval: 30 * time.Millisecond})
	defer c.Close()
	go func() { // read and ignore everything
		conn := jsonrpc.NewConn(b)
		for {
			if _, err := conn.Recv(); err != nil {
				return
			}
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for c.Connected() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if c.Connected() {
		t.Fatal("silent server not dropped")
	}

	g := startGVS(t)
	live := dial(t, g.Sock(), Options{ProbeInterval: 20 * time.Millisecond, NoReconnect: true})
	time.Sleep(200 * time.Millisecond)
	if !live.Connected() {
		t.Fatal("responsive server dropped by the probe")
	}
}

// TestNewClientOverPipeToEmbeddedServer runs the client over a net.Pipe
// to gvs's in-process server, as gvs-vswitchd does with its embedded
// database.
func TestNewClientOverPipeToEmbeddedServer(t *testing.T) {
	schema, err := vswitch.Schema()
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New()
	defer srv.Close()
	if err := srv.AddDatabase(server.NewDatabase(schema)); err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	srv.ServeConn(b)
	c := NewClient(a)
	defer c.Close()
	ctx := testCtx(t)
	r, err := c.Monitor(ctx, "Open_vSwitch", vswitchTables)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Txn("Open_vSwitch").Insert("Open_vSwitch", "ovs", nil).Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Snapshot().Row("Open_vSwitch", res.UUIDs["ovs"]) == nil {
		t.Fatal("replica lacks the inserted row")
	}
	ovs := r.Snapshot().Row("Open_vSwitch", res.UUIDs["ovs"])
	if _, err := addBridgeTxn(c, ovs, "br0").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := names(r.Snapshot(), "Interface"); !equalStrings(got, []string{"br0"}) {
		t.Errorf("interfaces %q", got)
	}
}

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct{ in, network, addr string }{
		{"unix:/run/openvswitch/db.sock", "unix", "/run/openvswitch/db.sock"},
		{"tcp:127.0.0.1:6640", "tcp", "127.0.0.1:6640"},
		{"tcp:[::1]:6640", "tcp", "[::1]:6640"},
		{"ssl:1.2.3.4:6640", "", ""},
		{"tcp:1.2.3.4", "", ""},
		{"unix:", "", ""},
		{"/run/db.sock", "", ""},
	} {
		n, a, err := ParseTarget(tc.in)
		if n != tc.network || a != tc.addr || (err == nil) != (tc.network != "") {
			t.Errorf("ParseTarget(%q) = %q, %q, %v", tc.in, n, a, err)
		}
	}
}

// TestDialTCPAndCancel dials gvs's server over TCP and checks that a
// cancelled monitor stops following the database.
func TestDialTCPAndCancel(t *testing.T) {
	schema, err := vswitch.Schema()
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New()
	defer srv.Close()
	if err := srv.AddDatabase(server.NewDatabase(schema)); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	ctx := testCtx(t)
	c, err := Dial(ctx, "tcp:"+l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	calls := make(chan Change, 10)
	r, err := c.Monitor(ctx, "Open_vSwitch", vswitchTables, MonitorOptions{OnChange: func(ch Change) { calls <- ch }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Txn("Open_vSwitch").Insert("Open_vSwitch", "ovs", nil).Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seq := r.Seq()
	if seq != 2 {
		t.Errorf("seq %d after initial contents and one insert, want 2", seq)
	}
	if ch := <-calls; ch.Kind != Insert || ch.Table != "Open_vSwitch" {
		t.Errorf("change %+v", ch)
	}
	if err := r.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Txn("Open_vSwitch").MapInsert("Open_vSwitch", res.UUIDs["ovs"], "other_config", map[string]string{"a": "b"}).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Echo(ctx); err != nil { // any update would have arrived before this reply
		t.Fatal(err)
	}
	if r.Seq() != seq || len(calls) != 0 {
		t.Errorf("cancelled replica moved: seq %d, %d more callbacks", r.Seq(), len(calls))
	}
}

// BenchmarkCommitEmbedded measures a map mutation committed over a
// net.Pipe to gvs's in-process server, with the replica following it.
func BenchmarkCommitEmbedded(b *testing.B) {
	schema, err := vswitch.Schema()
	if err != nil {
		b.Fatal(err)
	}
	srv := server.New()
	defer srv.Close()
	if err := srv.AddDatabase(server.NewDatabase(schema)); err != nil {
		b.Fatal(err)
	}
	x, y := net.Pipe()
	srv.ServeConn(y)
	c := NewClient(x)
	defer c.Close()
	ctx := context.Background()
	r, err := c.Monitor(ctx, "Open_vSwitch", vswitchTables)
	if err != nil {
		b.Fatal(err)
	}
	res, err := c.Txn("Open_vSwitch").Insert("Bridge", "br", map[string]any{"name": "br0"}).
		Insert("Open_vSwitch", "", map[string]any{"bridges": NamedUUID("br")}).Commit(ctx)
	if err != nil {
		b.Fatal(err)
	}
	id := res.UUIDs["br"]
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := c.Txn("Open_vSwitch").MapSet("Bridge", id, "external_ids", map[string]string{"n": strconv.Itoa(i)}).Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if r.Seq() < uint64(i) {
		b.Fatalf("replica seq %d after %d commits", r.Seq(), i)
	}
}

// TestReconnectResumesFromLastTxnID checks monitor_cond_since resumption:
// after a reconnect the client sends the last transaction id it saw, and
// a server that still has the history answers found=true with only the
// changes since, which are applied incrementally.
func TestReconnectResumesFromLastTxnID(t *testing.T) {
	dir := shortDir(t)
	sock := dir + "/fake.sock"
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := testCtx(t)
	accept := func() *fakeServer {
		nc, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		return &fakeServer{t: t, conn: jsonrpc.NewConn(nc)}
	}
	type result struct {
		c   *Client
		r   *Replica
		err error
	}
	rec := &recorder{}
	done := make(chan result, 1)
	go func() {
		c, err := Dial(ctx, "unix:"+sock, Options{MinBackoff: 10 * time.Millisecond})
		if err != nil {
			done <- result{err: err}
			return
		}
		r, err := c.Monitor(ctx, "Open_vSwitch", []MonitorTable{{Table: "Bridge", Columns: []string{"name"}}},
			MonitorOptions{OnChange: rec.add})
		done <- result{c, r, err}
	}()
	f := accept()
	f.reply(f.expect("get_schema"), string(vswitch.SchemaJSON))
	m := f.expect("monitor_cond_since")
	if !strings.HasSuffix(string(m.Params), `,"00000000-0000-0000-0000-000000000000"]`) {
		t.Errorf("first monitor_cond_since params %s", m.Params)
	}
	f.reply(m, `[false,"10000000-0000-0000-0000-000000000001",{"Bridge":{"`+fakeBr0+`":{"initial":{"name":"br0"}}}}]`)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	defer res.c.Close()
	r := res.r
	f.send(`{"id":null,"method":"update3","params":["gvs-Open_vSwitch-0","10000000-0000-0000-0000-000000000002",{"Bridge":{"` +
		fakeBr1 + `":{"insert":{"name":"br1"}}}}]}`)
	if got := rec.take(t, 2); !equalStrings(got, []string{"insert Bridge br0", "insert Bridge br1"}) {
		t.Errorf("changes %q", got)
	}
	if id := r.LastTxnID(); id != "10000000-0000-0000-0000-000000000002" {
		t.Errorf("last txn id %s", id)
	}

	f.conn.Close()
	f = accept()
	m = f.expect("monitor_cond_since")
	if !strings.HasSuffix(string(m.Params), `,"10000000-0000-0000-0000-000000000002"]`) {
		t.Errorf("resumed monitor_cond_since params %s", m.Params)
	}
	f.reply(m, `[true,"10000000-0000-0000-0000-000000000003",{"Bridge":{"`+fakeBr0+`":{"modify":{"name":"br0x"}}}}]`)
	if got := rec.take(t, 1); !equalStrings(got, []string{"modify Bridge br0x"}) {
		t.Errorf("changes after resume %q", got)
	}
	if got := names(r.Snapshot(), "Bridge"); !equalStrings(got, []string{"br0x", "br1"}) {
		t.Errorf("bridges after resume %q", got)
	}
	if id := r.LastTxnID(); id != "10000000-0000-0000-0000-000000000003" {
		t.Errorf("last txn id after resume %s", id)
	}
}
