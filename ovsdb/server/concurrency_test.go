package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWritersAndMonitorReplica has several clients commit at once
// while a monitor_cond_since client keeps a replica from update3
// notifications; the replica must end equal to the database.
func TestConcurrentWritersAndMonitorReplica(t *testing.T) {
	_, sock := startMem(t)
	mon := dialRPC(t, sock)
	mon.call("monitor_cond_since", `["Open_vSwitch","r",{"QoS":[{"columns":["type","external_ids"]}]},"00000000-0000-0000-0000-000000000000"]`)
	if got := mon.recv(); !strings.HasPrefix(got, "reply 1 [false,") {
		t.Fatal(got)
	}
	const writers, each = 4, 50
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		c := dialRPC(t, sock)
		wg.Add(1)
		go func(w int, c *rpcClient) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				c.call("transact", fmt.Sprintf(`["Open_vSwitch",{"op":"insert","table":"QoS","row":{"type":"w%d-%d"}},{"op":"mutate","table":"QoS","where":[["type","==","w%d-%d"]],"mutations":[["external_ids","insert",["map",[["n","%d"]]]]]}]`, w, i, w, i, i))
				if got := c.recv(); strings.Contains(got, "error") {
					t.Errorf("writer %d: %s", w, got)
					return
				}
			}
		}(w, c)
	}
	wg.Wait()
	replica := map[string]string{}
	for len(replica) < writers*each {
		got := mon.recv()
		var params []json.RawMessage
		if !strings.HasPrefix(got, "update3 ") || json.Unmarshal([]byte(got[len("update3 "):]), &params) != nil || len(params) != 3 {
			t.Fatalf("unexpected %s", got)
		}
		var upd map[string]map[string]map[string]struct {
			Type        string          `json:"type"`
			ExternalIDs json.RawMessage `json:"external_ids"`
		}
		if err := json.Unmarshal(params[2], &upd); err != nil {
			t.Fatal(err)
		}
		for id, u := range upd["QoS"] {
			ins, ok := u["insert"]
			if !ok {
				t.Fatalf("row %s: want one insert per transaction, got %s", id, params[2])
			}
			replica[id] = ins.Type + " " + string(ins.ExternalIDs)
		}
	}
	mon.expectNone()
	probe := dialRPC(t, sock)
	probe.call("transact", `["Open_vSwitch",{"op":"select","table":"QoS","where":[],"columns":["_uuid","type","external_ids"]}]`)
	var res []struct {
		Rows []struct {
			UUID        []string        `json:"_uuid"`
			Type        string          `json:"type"`
			ExternalIDs json.RawMessage `json:"external_ids"`
		} `json:"rows"`
	}
	got := probe.recv()
	if err := json.Unmarshal([]byte(strings.SplitN(got, " ", 3)[2]), &res); err != nil {
		t.Fatal(err)
	}
	if len(res[0].Rows) != len(replica) {
		t.Fatalf("database has %d rows, replica %d", len(res[0].Rows), len(replica))
	}
	for _, r := range res[0].Rows {
		if want := r.Type + " " + string(r.ExternalIDs); replica[r.UUID[1]] != want {
			t.Errorf("row %s: replica %q, database %q", r.UUID[1], replica[r.UUID[1]], want)
		}
	}
}
