package client

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gvs-project/gvs/ovsdb/jsonrpc"
	"github.com/gvs-project/gvs/ovsdb/model"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

// testSchema is parsed once: schemas are read-only after parsing.
var testSchema = sync.OnceValues(vswitch.Schema)

func testReplica(t testing.TB, onChange func(Change)) *Replica {
	t.Helper()
	schema, err := testSchema()
	if err != nil {
		t.Fatal(err)
	}
	r, err := newReplica(nil, "Open_vSwitch", schema, vswitchTables, MonitorOptions{OnChange: onChange})
	if err != nil {
		t.Fatal(err)
	}
	go r.dispatch()
	t.Cleanup(r.stop)
	return r
}

const (
	uuidA = "aaaaaaaa-0000-0000-0000-000000000000"
	uuidB = "bbbbbbbb-0000-0000-0000-000000000000"
)

func mustUUID(s string) model.UUID {
	u, err := model.ParseUUID(s)
	if err != nil {
		panic(err)
	}
	return u
}

func TestApplyUpdate2Diffs(t *testing.T) {
	r := testReplica(t, nil)
	steps := []struct {
		upd  string
		want string // Interface A: type options ofport_request
	}{
		{`{"Interface":{"` + uuidA + `":{"insert":{"name":"p","type":"dummy","options":["map",[["a","1"],["b","2"]]],"ofport_request":3}}}}`,
			`dummy {a="1", b="2"} 3`},
		// Maps: a removed (same value), b replaced, c added. Optional: new value.
		{`{"Interface":{"` + uuidA + `":{"modify":{"options":["map",[["a","1"],["b","9"],["c","3"]]],"ofport_request":4}}}}`,
			`dummy {b="9", c="3"} 4`},
		// Optional cleared: ovsdb-server sends the new, empty value.
		{`{"Interface":{"` + uuidA + `":{"modify":{"ofport_request":["set",[]],"type":""}}}}`,
			` {b="9", c="3"} []`},
	}
	for i, st := range steps {
		if err := r.apply(json.RawMessage(st.upd), 2, false, ""); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		row := r.Snapshot().Row("Interface", mustUUID(uuidA))
		got := fmt.Sprintf("%s %s %s", str(row.Get("type")), row.Get("options"), row.Get("ofport_request"))
		if got != st.want {
			t.Errorf("step %d: %q, want %q", i, got, st.want)
		}
		if r.Seq() != uint64(i+1) {
			t.Errorf("step %d: seq %d", i, r.Seq())
		}
	}
	// Sets toggle the elements of the diff.
	upds := []string{
		`{"Port":{"` + uuidB + `":{"insert":{"name":"p","interfaces":["uuid","` + uuidA + `"]}}}}`,
		`{"Port":{"` + uuidB + `":{"modify":{"interfaces":["set",[["uuid","` + uuidA + `"],["uuid","` + uuidB + `"]]]}}}}`,
	}
	for _, u := range upds {
		if err := r.apply(json.RawMessage(u), 2, false, ""); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.Snapshot().Row("Port", mustUUID(uuidB)).Get("interfaces"); !got.Equal(model.Scalar(mustUUID(uuidB))) {
		t.Errorf("interfaces %v", got)
	}
}

func TestApplyRejectsBadUpdatesWithoutChangingReplica(t *testing.T) {
	r := testReplica(t, nil)
	if err := r.apply(json.RawMessage(`{"Bridge":{"`+uuidA+`":{"insert":{"name":"br0"}}}}`), 2, false, ""); err != nil {
		t.Fatal(err)
	}
	before := r.Snapshot()
	for _, bad := range []string{
		`[]`,
		`{"QoS":{}}`,
		`{"Bridge":{"x":{"delete":null}}}`,
		`{"Bridge":{"` + uuidB + `":{"modify":{"name":"b"}}}}`,
		`{"Bridge":{"` + uuidA + `":{"modify":{"nope":1}}}}`,
		`{"Bridge":{"` + uuidA + `":{"modify":{"name":5}}}}`,
		`{"Bridge":{"` + uuidA + `":{"insert":{},"delete":null}}}`,
		`{"Bridge":{"` + uuidA + `":{"modify":{"fail_mode":["set",["a","b"]]}}}}`,
		// A 36-character string with an extra dash once panicked ParseUUID.
		`{"Bridge":{"` + uuidA + `":{"modify":{"ports":["set",[["uuid","2Cb181b0-00B2-a101-1A00-102808-10098"]]]}}}}`,
	} {
		if err := r.apply(json.RawMessage(bad), 2, false, ""); err == nil {
			t.Errorf("apply(%s) succeeded", bad)
		}
		if r.Snapshot() != before {
			t.Errorf("apply(%s) changed the replica", bad)
		}
	}
}

// FuzzApplyUpdate feeds arbitrary update notifications and monitor
// replies to a replica: no panic, and a rejected update leaves the
// snapshot as it was.
func FuzzApplyUpdate(f *testing.F) {
	for _, s := range []string{
		`{"Bridge":{"` + uuidA + `":{"insert":{"name":"br0","ports":["set",[["uuid","` + uuidB + `"]]],"other_config":["map",[["a","b"]]]}}}}`,
		`{"Bridge":{"` + uuidA + `":{"modify":{"ports":["uuid","` + uuidB + `"],"fail_mode":"secure"}}}}`,
		`{"Bridge":{"` + uuidA + `":{"new":{"name":"br0"},"old":{"name":"x"}}}}`,
		`{"Interface":{"` + uuidA + `":{"initial":{"ofport_request":5,"options":["map",[]]}}}}`,
		`[true,"` + uuidA + `",{"Port":{"` + uuidB + `":{"delete":null}}}]`,
		`{"Open_vSwitch":{"` + uuidB + `":{"modify":{"bridges":["set",[]]}}}}`,
	} {
		f.Add([]byte(s), uint8(2))
		f.Add([]byte(s), uint8(1))
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		r := testReplica(t, func(Change) {})
		_ = r.apply(json.RawMessage(`{"Bridge":{"`+uuidA+`":{"insert":{"name":"br0"}}}}`), 2, false, "")
		before := r.Snapshot()
		var err error
		switch mode % 4 {
		case 0:
			err = r.apply(data, 1, false, "")
		case 1:
			err = r.apply(data, 2, false, "")
		case 2:
			err = r.applyReply(3, data)
		case 3:
			err = r.applyNotification("update3", []json.RawMessage{json.RawMessage(`"m"`), json.RawMessage(`"` + uuidB + `"`), data})
		}
		after := r.Snapshot()
		if err != nil && after != before {
			t.Fatalf("rejected update changed the snapshot")
		}
		if err == nil && after.Seq != before.Seq+1 {
			t.Fatalf("seq %d after %d", after.Seq, before.Seq)
		}
		for _, n := range r.names {
			for id, row := range after.Table(n) {
				if row.UUID != id || len(row.Data) != len(r.tables[n].cols) {
					t.Fatalf("bad row %v in %s", row, n)
				}
			}
		}
		r.stop()
	})
}

// BenchmarkApplyModify measures one update2 modify of one Interface in a
// replica of 1000 interfaces (copy-on-write of that table).
func BenchmarkApplyModify(b *testing.B) {
	r := testReplica(b, nil)
	var sb strings.Builder
	sb.WriteString(`{"Interface":{`)
	for i := 0; i < 1000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"%08x-0000-0000-0000-000000000000":{"insert":{"name":"p%d","type":"dummy"}}`, i, i)
	}
	sb.WriteString(`}}`)
	if err := r.apply(json.RawMessage(sb.String()), 2, false, ""); err != nil {
		b.Fatal(err)
	}
	upd := json.RawMessage(`{"Interface":{"00000007-0000-0000-0000-000000000000":{"modify":{"external_ids":["map",[["ovn-installed","true"]]]}}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := r.apply(upd, 2, false, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzNotification feeds arbitrary JSON-RPC messages to the client's
// notification handler with one replica registered: no panic.
func FuzzNotification(f *testing.F) {
	for _, s := range []string{
		`{"id":null,"method":"update3","params":["m","` + uuidB + `",{"Bridge":{"` + uuidA + `":{"insert":{"name":"br0"}}}}]}`,
		`{"id":null,"method":"update2","params":["m",{"Bridge":{"` + uuidA + `":{"modify":{"name":"x"}}}}]}`,
		`{"id":null,"method":"update","params":["m",{"Bridge":{"` + uuidA + `":{"old":{"name":"x"}}}}]}`,
		`{"id":null,"method":"locked","params":["ovs_vswitchd"]}`,
		`{"id":null,"method":"stolen","params":["ovs_vswitchd"]}`,
		`{"id":null,"method":"update3","params":["m"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := jsonrpc.Decode(data)
		if err != nil || m.Kind != jsonrpc.KindNotify {
			return
		}
		c := newClient("", nil)
		s := &session{done: make(chan struct{}), pending: map[uint64]*pendingCall{}}
		r := testReplica(t, func(Change) {})
		r.id = "m"
		c.sess = s
		c.monitors["m"] = r
		c.locks["ovs_vswitchd"] = &Lock{c: c, name: "ovs_vswitchd", changed: make(chan struct{})}
		before := r.Snapshot()
		if err := c.handleNotify(s, m); err != nil && r.Snapshot() != before {
			t.Fatal("a rejected notification changed the replica")
		}
	})
}
