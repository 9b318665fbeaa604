package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/sockprobe"
	"github.com/gvs-project/gvs/ovsdb/storage"
)

// rawProbe sends data on a new connection and returns what came back
// within wait, followed by "<EOF>" if the server closed the connection
// or "<open>" if it did not.
func rawProbe(t *testing.T, sock string, data []byte, wait time.Duration) string {
	t.Helper()
	out, err := sockprobe.Exchange(sock, data, wait)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHostileStringsAndFramingAsOvsdbServer sends, on raw sockets, the
// inputs no Open vSwitch client produces and compares gvs's answer with
// Debian's ovsdb-server's byte for byte: a \u0000 or unescaped control
// character, unbalanced JSON or a bad number closes the connection at
// once (and the valid request behind it is never answered); invalid
// UTF-8 in a string atom is a "constraint violation" naming the bytes;
// a reply to an id the server never used closes the connection; lock
// names must be <id>s.
func TestHostileStringsAndFramingAsOvsdbServer(t *testing.T) {
	dir := shortDir(t)
	ovs := startOVS(t, dir)
	_, gvs := startGVS(t, dir, filepath.Join(dir, "gvs.db"))
	tx := func(v string) []byte {
		return []byte(`{"id":1,"method":"transact","params":["Open_vSwitch",{"op":"insert","table":"Open_vSwitch","row":{"external_ids":["map",[["k","` + v + `"]]]}}]}`)
	}
	echo2 := `{"method":"echo","params":[],"id":2}`
	for _, in := range [][]byte{
		tx(`a\u0000b`),
		tx("a\x01b"),
		tx("a\xffb"),
		tx("a\xc3b"),
		tx("\xe0\x80\x80"),
		tx("\xf4\x90\x80\x80"),
		[]byte(`{"method":"echo","params":[}` + echo2),
		[]byte(`{"method":"echo","params":[1,]}` + echo2),
		[]byte(`{"method":"echo","params":[01],"id":3}` + echo2),
		[]byte(`{"method":"echo","params":["\ud800"],"id":3}` + echo2),
		[]byte(`[1]`),
		[]byte(`{"result":[],"error":null,"id":77}` + echo2),
		[]byte(`{"error":"x","id":"echo"}` + echo2),
		[]byte(`{"result":[],"error":null,"id":"echo"}` + echo2),
		[]byte(`{"method":"lock","params":["a b"],"id":3}`),
		[]byte(`{"method":"lock","params":["9a"],"id":3}`),
		[]byte(`{"method":"steal","params":["a-b"],"id":3}`),
		[]byte(`{"method":"unlock","params":["a.b"],"id":3}`),
		[]byte(`{"method":"lock","params":["ok_1"],"id":3}`),
		[]byte(`{"method":"lock","params":[],"id":3}`),
	} {
		want := rawProbe(t, ovs, in, 300*time.Millisecond)
		got := rawProbe(t, gvs, in, 300*time.Millisecond)
		if got != want {
			t.Errorf("%q:\n gvs: %s\n ovs: %s", in, got, want)
		}
	}
	// Nothing reached either database.
	sel := []byte(`{"id":9,"method":"transact","params":["Open_vSwitch",{"op":"select","table":"Open_vSwitch","where":[],"columns":["external_ids"]}]}`)
	if got, want := rawProbe(t, gvs, sel, 300*time.Millisecond), rawProbe(t, ovs, sel, 300*time.Millisecond); got != want || !strings.Contains(got, `"rows":[]`) {
		t.Errorf("after the probes: gvs %s, ovs %s", got, want)
	}
}

// TestSecondServerOnOneFileIsRefused: the file's lock refuses a second
// server (gvs or Debian's ovsdb-server) with ovsdb-server's words, in
// both directions, and leaves the file as it was.
func TestSecondServerOnOneFileIsRefused(t *testing.T) {
	requireBins(t, "ovsdb-server", "ovsdb-tool")
	dir := shortDir(t)
	path := filepath.Join(dir, "conf.db")
	srv, sock := startGVS(t, dir, path)
	before, _ := os.ReadFile(path)
	if _, _, err := OpenDatabaseFile(path); err == nil || !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("second open: err = %v, want ErrLocked", err)
	}
	_, errOut, err := runErr("ovsdb-server", "--remote=punix:"+filepath.Join(dir, "o.sock"),
		"--unixctl="+filepath.Join(dir, "o.ctl"), "--no-chdir", "-vconsole:off", path)
	if err == nil || !strings.Contains(errOut, "failed to lock lockfile (Resource temporarily unavailable)") {
		t.Fatalf("ovsdb-server on gvs's file: err %v, stderr %q", err, errOut)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the database file changed")
	}
	if got := rawProbe(t, sock, []byte(`{"method":"echo","params":[],"id":1}`), 200*time.Millisecond); got != `{"id":1,"result":[],"error":null}<open>` {
		t.Errorf("first server after the refusals: %s", got)
	}
	srv.Close()
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), ".conf.db.~lock~")); err != nil {
		t.Errorf("lock file: %v", err)
	}
	// Once released, another may open it.
	db, _, err := OpenDatabaseFile(path)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	db.Close()
}

// TestReadingStopsWhileTheBacklogIsOverTheLimit: a client that pipelines
// requests whose replies it never reads is read from only while its
// queued output is under ReadBacklog, so the server holds at most one
// reply more than that for it; once it goes, the backlog is gone.
func TestReadingStopsWhileTheBacklogIsOverTheLimit(t *testing.T) {
	dir := shortDir(t)
	srv, sock := startGVS(t, dir, filepath.Join(dir, "gvs.db"))
	srv.SetLimits(Limits{ReadBacklog: 32 << 10})
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	c.(*net.UnixConn).SetReadBuffer(4096)
	big := strings.Repeat("y", 50<<10)
	fmt.Fprintf(c, `{"id":0,"method":"transact","params":["Open_vSwitch",{"op":"insert","table":"Open_vSwitch","row":{"external_ids":["map",[["k","%s"]]]}}]}`, big)
	sent := make(chan int)
	go func() {
		n := 0
		for ; n < 1000; n++ {
			c.SetWriteDeadline(time.Now().Add(2 * time.Second))
			if _, err := fmt.Fprintf(c, `{"id":%d,"method":"echo","params":["%s"]}`, n+1, big); err != nil {
				break
			}
		}
		sent <- n
	}()
	n := <-sent
	if n == 1000 {
		t.Fatal("the server read every request while nothing was read back")
	}
	if b := srv.Backlog(); b > 32<<10+60<<10 {
		t.Errorf("backlog %d bytes, want at most the limit plus one reply", b)
	}
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for srv.Backlog() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if b := srv.Backlog(); b != 0 {
		t.Errorf("backlog %d bytes after the client went", b)
	}
}

// TestUpdatesForAClientBehindAreMerged: while a monitor's client is
// behind, the server keeps one merged change per row (the row before the
// first and after the last transaction) instead of an update per
// transaction, and sends it when the client catches up; a client stuck
// for StallTimeout is dropped and counted.
func TestUpdatesForAClientBehindAreMerged(t *testing.T) {
	dir := shortDir(t)
	srv, sock := startGVS(t, dir, filepath.Join(dir, "gvs.db"))
	srv.SetLimits(Limits{ReadBacklog: 1, StallTimeout: time.Minute})
	var logged []string
	var lmu sync.Mutex
	srv.SetErrorHook(func(err error) { lmu.Lock(); logged = append(logged, err.Error()); lmu.Unlock() })
	w, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	dec := json.NewDecoder(w)
	txn := func(id int, ops string) {
		fmt.Fprintf(w, `{"id":%d,"method":"transact","params":["Open_vSwitch",%s]}`, id, ops)
		var reply struct{ ID int }
		if err := dec.Decode(&reply); err != nil || reply.ID != id {
			t.Fatalf("reply %+v, %v", reply, err)
		}
	}
	txn(1, `{"op":"insert","table":"Open_vSwitch","row":{}}`)

	slow, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprint(slow, `{"id":"m","method":"monitor","params":["Open_vSwitch","m",{"Open_vSwitch":{"columns":["external_ids"]}}]}`)
	time.Sleep(100 * time.Millisecond)
	// Fill the slow client's socket so that its output backs up.
	big := strings.Repeat("z", 256<<10)
	for i := 0; i < 20; i++ {
		txn(10+i, fmt.Sprintf(`{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["external_ids","insert",["map",[["k%d","%s"]]]]]}`, i, big))
	}
	srv.mu.Lock()
	var held int
	for _, e := range srv.dbs {
		for m := range e.monitors {
			for _, chs := range m.behind {
				held += len(chs)
			}
		}
	}
	srv.mu.Unlock()
	if held != 1 {
		t.Errorf("the monitor holds %d merged row changes, want 1 (one row changed 20 times)", held)
	}
	srv.SetLimits(Limits{ReadBacklog: 1, StallTimeout: 500 * time.Millisecond})
	time.Sleep(700 * time.Millisecond)
	txn(100, `{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["external_ids","delete",["set",["k0"]]]]}`)
	if got := srv.SlowClientsDropped(); got != 1 {
		t.Errorf("SlowClientsDropped = %d, want 1", got)
	}
	lmu.Lock()
	if len(logged) == 0 || !strings.Contains(logged[len(logged)-1], "monitor client made no progress for 500ms with updates pending, disconnecting") {
		t.Errorf("logged %q", logged)
	}
	lmu.Unlock()
}

// TestRecordWithNulIsDroppedWithTheRestAsOpenVSwitch: a database file an
// older gvs wrote with a NUL in a string opens; as in Open vSwitch, that
// record and every one after it are ignored (and cut from the file, so
// that ovsdb-tool reads it again).
func TestRecordWithNulIsDroppedWithTheRestAsOpenVSwitch(t *testing.T) {
	dir := shortDir(t)
	path := filepath.Join(dir, "conf.db")
	db, err := CreateDatabaseFile(path, mustSchemaJSON())
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	const row = "6f2b3a4e-9b1d-4b3a-8f57-2c1d0e9a7b11"
	var tail []byte
	for _, v := range []string{`"a"`, `"a\u0000b"`, `"c"`} {
		tail = storage.AppendRecord(tail, []byte(`{"Open_vSwitch":{"`+row+`":{"external_ids":["map",[["k",`+v+`]]]}},"_date":1}`))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(tail)
	f.Close()
	db, info, err := OpenDatabaseFile(path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer db.Close()
	if info.Dropped != 2 {
		t.Errorf("Dropped = %d, want 2", info.Dropped)
	}
	if got := string(db.snapshot()); !strings.Contains(got, `["k","a"]`) || strings.Contains(got, `\u0000`) || strings.Contains(got, `"c"`) {
		t.Errorf("snapshot %s", got)
	}
	if _, err := exec.LookPath("ovsdb-tool"); err == nil {
		if out, errOut, err := runErr("ovsdb-tool", "show-log", path); err != nil || !strings.Contains(out, "record 1:") || strings.Contains(out, "record 2:") {
			t.Errorf("ovsdb-tool show-log: %v\n%s%s", err, out, errOut)
		}
	}
}
