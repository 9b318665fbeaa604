package client

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ovsdb/model"
)

func TestListDBsSchemaAndEcho(t *testing.T) {
	servers(t, func(t *testing.T, s dbServer) {
		c := dial(t, s.Sock())
		ctx := testCtx(t)
		dbs, err := c.ListDBs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(dbs, "Open_vSwitch") || !slices.Contains(dbs, "_Server") {
			t.Errorf("list_dbs = %v, want Open_vSwitch and _Server", dbs)
		}
		schema, err := c.GetSchema(ctx, "Open_vSwitch")
		if err != nil {
			t.Fatal(err)
		}
		if schema.Name != "Open_vSwitch" || schema.Version != "8.3.1" || schema.Tables["Bridge"] == nil {
			t.Errorf("schema %s %s, Bridge table %v", schema.Name, schema.Version, schema.Tables["Bridge"] != nil)
		}
		if err := c.Echo(ctx); err != nil {
			t.Errorf("echo: %v", err)
		}
		_, err = c.GetSchema(ctx, "nope")
		if ErrorName(err) != "unknown database" {
			t.Errorf("get_schema nope: %v, want unknown database", err)
		}
	})
}

func TestReplicaFollowsVsctl(t *testing.T) {
	servers(t, func(t *testing.T, s dbServer) {
		c := dial(t, s.Sock())
		ctx := testCtx(t)
		rec := &recorder{}
		r, err := c.Monitor(ctx, "Open_vSwitch", vswitchTables, MonitorOptions{OnChange: rec.add})
		if err != nil {
			t.Fatal(err)
		}
		if m := r.Method(); m != "monitor_cond_since" {
			t.Errorf("method %q, want monitor_cond_since", m)
		}
		seq0 := r.Seq()
		if seq0 != 1 {
			t.Errorf("seq after initial contents = %d, want 1", seq0)
		}

		vsctl(t, s.Sock(), "init")
		if got := rec.take(t, 1); !equalStrings(got, []string{"insert Open_vSwitch"}) {
			t.Errorf("after init: %q", got)
		}

		vsctl(t, s.Sock(), "add-br", "br0")
		want := []string{"insert Bridge br0", "insert Interface br0", "modify Open_vSwitch", "insert Port br0"}
		if got := rec.take(t, 4); !equalStrings(got, want) {
			t.Errorf("after add-br:\n got %q\nwant %q", got, want)
		}

		vsctl(t, s.Sock(), "add-port", "br0", "p1", "--", "set", "Interface", "p1", "type=dummy", "ofport_request=5")
		want = []string{"modify Bridge br0", "insert Interface p1", "insert Port p1"}
		if got := rec.take(t, 3); !equalStrings(got, want) {
			t.Errorf("after add-port:\n got %q\nwant %q", got, want)
		}

		vsctl(t, s.Sock(), "set", "Bridge", "br0", "other_config:hwaddr=00:11:22:33:44:55", "fail_mode=secure")
		vsctl(t, s.Sock(), "set", "Interface", "p1", "ofport_request=7")
		want = []string{"modify Bridge br0", "modify Interface p1"}
		if got := rec.take(t, 2); !equalStrings(got, want) {
			t.Errorf("after set:\n got %q\nwant %q", got, want)
		}

		snap := r.Snapshot()
		p1 := snap.Find("Interface", func(r *Row) bool { return str(r.Get("name")) == "p1" })[0]
		if str(p1.Get("type")) != "dummy" || p1.Get("ofport_request").String() != "7" {
			t.Errorf("p1 type %v ofport_request %v", p1.Get("type"), p1.Get("ofport_request"))
		}
		vsctl(t, s.Sock(), "clear", "Interface", "p1", "ofport_request")
		if got := rec.take(t, 1); !equalStrings(got, []string{"modify Interface p1"}) {
			t.Errorf("after clear: %q", got)
		}
		snap = r.Snapshot()
		if d := snap.Row("Interface", p1.UUID).Get("ofport_request"); d.Len() != 0 {
			t.Errorf("ofport_request after clear %v", d)
		}
		if snap.Seq <= seq0 {
			t.Errorf("seq %d did not grow from %d", snap.Seq, seq0)
		}
		if got := names(snap, "Bridge"); !equalStrings(got, []string{"br0"}) {
			t.Errorf("bridges %q", got)
		}
		if got := names(snap, "Port"); !equalStrings(got, []string{"br0", "p1"}) {
			t.Errorf("ports %q", got)
		}
		br := snap.Find("Bridge", func(r *Row) bool { return str(r.Get("name")) == "br0" })[0]
		if v, _ := br.Get("other_config").Lookup("hwaddr"); v != "00:11:22:33:44:55" {
			t.Errorf("br0 other_config %v", br.Get("other_config"))
		}
		if fm := br.Get("fail_mode"); fm.Len() != 1 || fm.Keys[0] != "secure" {
			t.Errorf("br0 fail_mode %v", fm)
		}
		// Bridge.ports refers to exactly the two Port rows.
		ports := br.Get("ports")
		if ports.Len() != 2 {
			t.Fatalf("br0 ports %v", ports)
		}
		for _, k := range ports.Keys {
			if snap.Row("Port", k.(model.UUID)) == nil {
				t.Errorf("br0 port %v not in the replica", k)
			}
		}
		// vsctl's view agrees with the replica's UUIDs.
		if got := vsctl(t, s.Sock(), "get", "Bridge", "br0", "_uuid"); got != br.UUID.String() {
			t.Errorf("vsctl br0 uuid %s, replica %s", got, br.UUID)
		}
		ovs := snap.Rows("Open_vSwitch")
		if len(ovs) != 1 || !ovs[0].Get("bridges").Equal(model.Scalar(br.UUID)) {
			t.Errorf("Open_vSwitch rows %d bridges %v", len(ovs), ovs[0].Get("bridges"))
		}

		vsctl(t, s.Sock(), "del-br", "br0")
		want = []string{"delete Bridge br0", "delete Interface br0", "delete Interface p1",
			"modify Open_vSwitch", "delete Port br0", "delete Port p1"}
		got := rec.take(t, 6)
		// Rows of one table arrive in UUID order; compare per table.
		slices.Sort(got)
		slices.Sort(want)
		if !equalStrings(got, want) {
			t.Errorf("after del-br:\n got %q\nwant %q", got, want)
		}
		if n := len(r.Snapshot().Rows("Interface")); n != 0 {
			t.Errorf("%d interfaces left", n)
		}
	})
}

// TestChangesCarryOldAndNewRows checks a modify callback's rows.
func TestChangesCarryOldAndNewRows(t *testing.T) {
	servers(t, func(t *testing.T, s dbServer) {
		c := dial(t, s.Sock())
		ctx := testCtx(t)
		vsctl(t, s.Sock(), "init", "--", "add-br", "br0")
		var got []Change
		done := make(chan struct{}, 16)
		r, err := c.Monitor(ctx, "Open_vSwitch", []MonitorTable{{Table: "Bridge", Columns: []string{"name", "external_ids"}}},
			MonitorOptions{OnChange: func(ch Change) { got = append(got, ch); done <- struct{}{} }})
		if err != nil {
			t.Fatal(err)
		}
		<-done
		vsctl(t, s.Sock(), "br-set-external-id", "br0", "k", "v1")
		<-done
		vsctl(t, s.Sock(), "br-set-external-id", "br0", "k", "v2")
		<-done
		if len(got) != 3 || got[0].Kind != Insert || got[1].Kind != Modify || got[2].Kind != Modify {
			t.Fatalf("changes %+v", got)
		}
		m := got[2]
		if v, _ := m.Old.Get("external_ids").Lookup("k"); v != "v1" {
			t.Errorf("old external_ids %v", m.Old.Get("external_ids"))
		}
		if v, _ := m.New.Get("external_ids").Lookup("k"); v != "v2" {
			t.Errorf("new external_ids %v", m.New.Get("external_ids"))
		}
		if m.Seq != r.Seq() || got[1].Seq != m.Seq-1 {
			t.Errorf("seqs %d %d, replica %d", got[1].Seq, m.Seq, r.Seq())
		}
		if got[0].Old != nil || got[0].New.Get("name").String() != "br0" {
			t.Errorf("insert %+v", got[0])
		}
	})
}

// addBridgeTxn builds what ovs-vsctl add-br does, with verify on the
// Open_vSwitch row read from the replica.
func addBridgeTxn(c *Client, ovs *Row, name string) *Txn {
	return c.Txn("Open_vSwitch").
		Verify(ovs, "bridges").
		Insert("Interface", "iface", map[string]any{"name": name, "type": "internal"}).
		Insert("Port", "port", map[string]any{"name": name, "interfaces": NamedUUID("iface")}).
		Insert("Bridge", "br", map[string]any{"name": name, "ports": NamedUUID("port"),
			"other_config": map[string]string{"disable-in-band": "true"}, "fail_mode": "secure"}).
		SetInsert("Open_vSwitch", ovs.UUID, "bridges", NamedUUID("br")).
		Comment("gvs client test: add-br " + name)
}

func TestCommitInsertsBridgeWithNamedUUIDs(t *testing.T) {
	servers(t, func(t *testing.T, s dbServer) {
		c := dial(t, s.Sock())
		ctx := testCtx(t)
		vsctl(t, s.Sock(), "init")
		r, err := c.Monitor(ctx, "Open_vSwitch", vswitchTables)
		if err != nil {
			t.Fatal(err)
		}
		ovs := r.Snapshot().Rows("Open_vSwitch")[0]
		res, err := addBridgeTxn(c, ovs, "br-int").Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Ops) != 6 || len(res.UUIDs) != 3 || res.Ops[4].Count != 1 {
			t.Fatalf("result %+v", res)
		}
		if res.Ops[1].UUID != res.UUIDs["iface"] || res.Ops[3].UUID != res.UUIDs["br"] {
			t.Errorf("insert results %+v vs %v", res.Ops, res.UUIDs)
		}
		// The server sends the updates before the reply, so the replica
		// already has the bridge.
		snap := r.Snapshot()
		br := snap.Row("Bridge", res.UUIDs["br"])
		if br == nil {
			t.Fatal("replica lacks the new bridge after Commit returned")
		}
		if !br.Get("ports").Equal(model.Scalar(res.UUIDs["port"])) {
			t.Errorf("bridge ports %v, want %v", br.Get("ports"), res.UUIDs["port"])
		}
		if got := vsctl(t, s.Sock(), "list-br"); got != "br-int" {
			t.Errorf("list-br %q", got)
		}
		if got := vsctl(t, s.Sock(), "--bare", "--columns=_uuid", "list", "Bridge", "br-int"); got != res.UUIDs["br"].String() {
			t.Errorf("vsctl bridge uuid %q, want %s", got, res.UUIDs["br"])
		}
		if got := vsctl(t, s.Sock(), "get", "Bridge", "br-int", "other_config:disable-in-band", "fail_mode"); got != "\"true\"\nsecure" {
			t.Errorf("vsctl get %q", got)
		}
		if got := vsctl(t, s.Sock(), "list-ifaces", "br-int"); got != "" {
			t.Errorf("list-ifaces %q", got) // the bridge's own interface is not listed
		}

		// Map helpers: set, replace, delete by key.
		id := res.UUIDs["br"]
		if _, err := c.Txn("Open_vSwitch").MapSet("Bridge", id, "external_ids", map[string]string{"a": "1", "b": "2"}).Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Txn("Open_vSwitch").MapSet("Bridge", id, "external_ids", map[string]string{"a": "3"}).
			MapDelete("Bridge", id, "external_ids", []string{"b"}).Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if got := vsctl(t, s.Sock(), "get", "Bridge", "br-int", "external_ids"); got != `{a="3"}` {
			t.Errorf("external_ids %s", got)
		}
		// A select reads back typed values.
		res, err = c.Txn("Open_vSwitch").Select("Bridge", []string{"_uuid", "name", "external_ids"}, Where("name", "==", "br-int")).Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rows := res.Ops[0].Rows
		if len(rows) != 1 || rows[0].UUID != id || str(rows[0].Get("name")) != "br-int" || rows[0].Get("external_ids").String() != "{a=\"3\"}" {
			t.Errorf("select rows %+v", rows)
		}
	})
}

func TestVerifyConflictAndServerErrors(t *testing.T) {
	servers(t, func(t *testing.T, s dbServer) {
		c := dial(t, s.Sock())
		ctx := testCtx(t)
		vsctl(t, s.Sock(), "init")
		r, err := c.Monitor(ctx, "Open_vSwitch", vswitchTables)
		if err != nil {
			t.Fatal(err)
		}
		stale := r.Snapshot().Rows("Open_vSwitch")[0]
		vsctl(t, s.Sock(), "add-br", "br0")
		if _, err := r.WaitFor(ctx, func(s *Snapshot) bool { return len(s.Rows("Bridge")) == 1 }); err != nil {
			t.Fatal(err)
		}
		_, err = addBridgeTxn(c, stale, "br1").Commit(ctx)
		var te *TxnError
		if !errors.As(err, &te) || te.Index != 0 || te.Op != "wait" || te.Err.Name != "timed out" {
			t.Fatalf("commit with stale verify: %v, want timed out in operation 0", err)
		}
		if got := vsctl(t, s.Sock(), "list-br"); got != "br0" {
			t.Errorf("list-br %q after a failed transaction", got)
		}
		// Retrying with the fresh row succeeds.
		fresh := r.Snapshot().Rows("Open_vSwitch")[0]
		if _, err := addBridgeTxn(c, fresh, "br1").Commit(ctx); err != nil {
			t.Fatal(err)
		}

		// A constraint violation names the operation and the server's words.
		_, err = c.Txn("Open_vSwitch").Insert("Bridge", "", map[string]any{"name": "bad", "fail_mode": "sideways"}).Commit(ctx)
		if !errors.As(err, &te) || te.Index != 0 || te.Err.Name != "constraint violation" ||
			!strings.Contains(te.Err.Details, "sideways") {
			t.Errorf("bad enum: %v", err)
		}
		// A dangling strong reference fails at commit (the extra result).
		_, err = c.Txn("Open_vSwitch").
			Insert("Bridge", "", map[string]any{"name": "dangling", "ports": model.NewUUID()}).Commit(ctx)
		if !errors.As(err, &te) || te.Op != "commit" || te.Index != 1 || te.Err.Name != "referential integrity violation" {
			t.Errorf("dangling ref: %v", err)
		}
		// Values are checked against the schema before anything is sent.
		_, err = c.Txn("Open_vSwitch").Insert("Bridge", "", map[string]any{"name": 5}).Commit(ctx)
		if err == nil || !strings.Contains(err.Error(), "int given for a string") {
			t.Errorf("type mismatch: %v", err)
		}
		// A wait that can never be satisfied with a timeout gives up.
		start := time.Now()
		_, err = c.Txn("Open_vSwitch").Wait("Bridge", []Condition{Where("name", "==", "nope")}, []string{"name"}, "==",
			[]map[string]any{{"name": "nope"}}, 100*time.Millisecond).Commit(ctx)
		if ErrorName(err) != "timed out" || time.Since(start) < 90*time.Millisecond {
			t.Errorf("wait with timeout: %v after %v", err, time.Since(start))
		}
	})
}

func TestLockStealAndAssert(t *testing.T) {
	servers(t, func(t *testing.T, s dbServer) {
		a, b := dial(t, s.Sock()), dial(t, s.Sock())
		ctx := testCtx(t)
		vsctl(t, s.Sock(), "init")
		la, err := a.Lock(ctx, "ovs_vswitchd")
		if err != nil || !la.Held() {
			t.Fatalf("a lock: %v held=%v", err, la != nil && la.Held())
		}
		if _, err := a.Lock(ctx, "ovs_vswitchd"); err == nil {
			t.Error("second lock request on one client accepted")
		}
		lb, err := b.Lock(ctx, "ovs_vswitchd")
		if err != nil || lb.Held() {
			t.Fatalf("b lock: %v held=%v", err, lb.Held())
		}
		assertTxn := func(c *Client) error {
			_, err := c.Txn("Open_vSwitch").Assert("ovs_vswitchd").
				Mutate("Open_vSwitch", []Mutation{{"other_config", "insert", map[string]string{"who": "x"}}}).Commit(ctx)
			return err
		}
		if err := assertTxn(b); ErrorName(err) != "not owner" {
			t.Errorf("b assert while a holds: %v, want not owner", err)
		}
		if err := assertTxn(a); err != nil {
			t.Errorf("a assert: %v", err)
		}
		// b steals; a is told.
		changed := la.Changed()
		lb2 := lb
		if err := lb.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if lb2, err = b.Steal(ctx, "ovs_vswitchd"); err != nil || !lb2.Held() {
			t.Fatalf("steal: %v", err)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatal("a never heard stolen")
		}
		if la.Held() {
			t.Error("a still holds the lock after stolen")
		}
		if err := assertTxn(a); ErrorName(err) != "not owner" {
			t.Errorf("a assert after stolen: %v", err)
		}
		// When b releases, the lock returns to a, which is still queued.
		if err := lb2.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := la.Wait(ctx); err != nil {
			t.Fatalf("a never got the lock back: %v", err)
		}
		if err := assertTxn(a); err != nil {
			t.Errorf("a assert after regaining: %v", err)
		}
	})
}

// TestReconnectResyncs stops the server, changes the database behind the
// client's back, serves it again on the same socket, and checks that the
// replica catches up with callbacks for what changed, including rows that
// disappeared, and that locks are requested again.
func TestReconnectResyncs(t *testing.T) {
	servers(t, func(t *testing.T, s dbServer) {
		vsctl(t, s.Sock(), "init", "--", "add-br", "br0", "--", "add-br", "br1")
		c := dial(t, s.Sock(), Options{MinBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
		ctx := testCtx(t)
		rec := &recorder{}
		r, err := c.Monitor(ctx, "Open_vSwitch", vswitchTables, MonitorOptions{OnChange: rec.add})
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.take(t, 7); len(got) != 7 {
			t.Fatalf("initial changes %q", got)
		}
		lock, err := c.Lock(ctx, "ovs_vswitchd")
		if err != nil || !lock.Held() {
			t.Fatalf("lock: %v", err)
		}
		seq := r.Seq()

		s.Stop(t)
		waitDisconnected(t, c)
		if lock.Held() {
			t.Error("lock still held while disconnected")
		}
		if _, err := c.ListDBs(ctx); !errors.Is(err, ErrNotConnected) {
			t.Errorf("call while disconnected: %v", err)
		}
		// Change the database on another socket, unseen by the client.
		side := s.Sock() + "2"
		s.Start(t, side)
		vsctl(t, side, "del-br", "br1", "--", "add-br", "br2", "--", "set", "Bridge", "br0", "fail_mode=standalone")
		s.Stop(t)
		s.Start(t, s.Sock())

		if err := c.WaitConnected(ctx); err != nil {
			t.Fatal(err)
		}
		snap, err := r.WaitFor(ctx, func(s *Snapshot) bool { return equalStrings(names(s, "Bridge"), []string{"br0", "br2"}) })
		if err != nil {
			t.Fatalf("replica after reconnect: bridges %q: %v", names(snap, "Bridge"), err)
		}
		if snap.Seq <= seq {
			t.Errorf("seq %d not past %d", snap.Seq, seq)
		}
		got := rec.take(t, 8)
		want := []string{"delete Bridge br1", "delete Interface br1", "delete Port br1",
			"insert Bridge br2", "insert Interface br2", "insert Port br2",
			"modify Bridge br0", "modify Open_vSwitch"}
		slices.Sort(got)
		slices.Sort(want)
		if !equalStrings(got, want) {
			t.Errorf("changes after reconnect:\n got %q\nwant %q", got, want)
		}
		if err := lock.Wait(ctx); err != nil {
			t.Errorf("lock not regained: %v", err)
		}
		// The replica keeps following the new connection.
		vsctl(t, s.Sock(), "add-br", "br3")
		if _, err := r.WaitFor(ctx, func(s *Snapshot) bool { return len(s.Rows("Bridge")) == 3 }); err != nil {
			t.Errorf("no updates after reconnect: %v", err)
		}
	})
}

func waitDisconnected(t *testing.T, c *Client) {
	t.Helper()
	for i := 0; i < 1000 && c.Connected(); i++ {
		time.Sleep(5 * time.Millisecond)
	}
	if c.Connected() {
		t.Fatal("client still connected after the server stopped")
	}
}

// TestDisconnectWithoutChangesIsQuiet checks that a reconnect to an
// unchanged database bumps the sequence number once and reports no
// changes.
func TestDisconnectWithoutChangesIsQuiet(t *testing.T) {
	servers(t, func(t *testing.T, s dbServer) {
		vsctl(t, s.Sock(), "init", "--", "add-br", "br0")
		c := dial(t, s.Sock(), Options{MinBackoff: 10 * time.Millisecond})
		ctx := testCtx(t)
		rec := &recorder{}
		r, err := c.Monitor(ctx, "Open_vSwitch", vswitchTables, MonitorOptions{OnChange: rec.add})
		if err != nil {
			t.Fatal(err)
		}
		rec.take(t, 4)
		before := r.Snapshot()
		changed := r.Changed()
		c.Disconnect()
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatal("no resync after Disconnect")
		}
		after := r.Snapshot()
		if after.Seq != before.Seq+1 {
			t.Errorf("seq %d -> %d, want one step", before.Seq, after.Seq)
		}
		if got := rec.take(t, 0); len(got) != 0 {
			t.Errorf("changes after a quiet reconnect: %q", got)
		}
		// Unchanged rows keep their identity across the resync.
		for _, row := range before.Rows("Bridge") {
			if after.Row("Bridge", row.UUID) != row {
				t.Errorf("row %s replaced by an equal copy", row.UUID)
			}
		}
	})
}
