package server

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ovsdb/jsonrpc"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

// TestMain doubles as a standalone server when the durability test
// re-executes the test binary as a child process.
func TestMain(m *testing.M) {
	if dbPath := os.Getenv("GVS_OVSDB_CHILD_DB"); dbPath != "" {
		os.Exit(childServer(dbPath, os.Getenv("GVS_OVSDB_CHILD_SOCK")))
	}
	os.Exit(m.Run())
}

func childServer(dbPath, sock string) int {
	var db *Database
	var err error
	if _, statErr := os.Stat(dbPath); statErr == nil {
		db, _, err = OpenDatabaseFile(dbPath)
	} else {
		db, err = CreateDatabaseFile(dbPath, vswitch.SchemaJSON)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	db.SetCompactMinSize(64 << 10) // compact now and then during the test
	srv := New()
	srv.AddDatabase(db)
	os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := srv.Serve(l); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func startChild(t *testing.T, dbPath, sock string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GVS_OVSDB_CHILD_DB="+dbPath, "GVS_OVSDB_CHILD_SOCK="+sock)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 500; i++ {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return cmd
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Kill()
	t.Fatal("child server did not start")
	return nil
}

// syncCall sends one request and waits for its reply.
func syncCall(c *jsonrpc.Conn, id int, method, params string) (json.RawMessage, error) {
	idb, _ := json.Marshal(id)
	if err := c.Send(&jsonrpc.Message{Kind: jsonrpc.KindRequest, Method: method, Params: json.RawMessage(params), ID: idb}); err != nil {
		return nil, err
	}
	for {
		m, err := c.Recv()
		if err != nil {
			return nil, err
		}
		if m.Kind == jsonrpc.KindReply && string(m.ID) == string(idb) {
			return m.Result, nil
		}
	}
}

// TestKill9KeepsAcknowledgedTransactions kills a child server with
// SIGKILL at random points in a stream of transactions, restarts it on the
// same file, and checks that every acknowledged transaction survived.
func TestKill9KeepsAcknowledgedTransactions(t *testing.T) {
	if testing.Short() {
		t.Skip("ovsdb/server: durability test skipped in -short mode")
	}
	dir := shortDir(t)
	dbPath := filepath.Join(dir, "conf.db")
	sock := filepath.Join(dir, "k.sock")
	acked := 0
	const rounds = 50
	for round := 0; round < rounds; round++ {
		cmd := startChild(t, dbPath, sock)
		raw, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		c := jsonrpc.NewConn(raw)
		// Everything acknowledged so far must be there.
		res, err := syncCall(c, 0, "transact", `["Open_vSwitch",{"op":"select","table":"QoS","where":[],"columns":["type"]}]`)
		if err != nil {
			t.Fatalf("round %d: select: %v", round, err)
		}
		have := strings.Count(string(res), `"type"`)
		if have < acked || have > acked+1 {
			t.Fatalf("round %d: %d QoS rows after restart, %d acknowledged", round, have, acked)
		}
		acked = have
		killAt := time.Now().Add(time.Duration(rand.IntN(30)) * time.Millisecond)
		go func() {
			time.Sleep(time.Until(killAt))
			cmd.Process.Signal(syscall.SIGKILL)
		}()
		for i := 1; ; i++ {
			params := fmt.Sprintf(`["Open_vSwitch",{"op":"insert","table":"QoS","row":{"type":"q%d","other_config":["map",[["pad","%s"]]]}},{"op":"comment","comment":"round %d"}]`,
				acked, strings.Repeat("x", rand.IntN(2000)), round)
			res, err := syncCall(c, i, "transact", params)
			if err != nil {
				break
			}
			if strings.Contains(string(res), "error") {
				t.Fatalf("round %d: %s", round, res)
			}
			acked++
		}
		cmd.Wait()
		raw.Close()
	}
	if acked < rounds {
		t.Errorf("only %d transactions acknowledged in %d rounds", acked, rounds)
	}
	if _, err := exec.LookPath("ovsdb-tool"); err == nil {
		run(t, "ovsdb-tool", "show-log", dbPath)
	}
}
