package remote

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/server"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

func TestParseRemoteAcceptsOpenVSwitchTargets(t *testing.T) {
	for target, want := range map[string]remoteTarget{
		"ptcp:6640":                {passive: true, network: "tcp", addr: ":6640"},
		"ptcp:":                    {passive: true, network: "tcp", addr: ":6640"},
		"ptcp:0:127.0.0.1":         {passive: true, network: "tcp", addr: "127.0.0.1:0"},
		"pssl:6641:[::1]":          {passive: true, tls: true, network: "tcp", addr: "[::1]:6641"},
		"pssl:6641:::1":            {passive: true, tls: true, network: "tcp", addr: "[::1]:6641"},
		"tcp:10.0.0.1":             {network: "tcp", addr: "10.0.0.1:6640"},
		"tcp:10.0.0.1:7000":        {network: "tcp", addr: "10.0.0.1:7000"},
		"ssl:[fe80::1]:7000":       {tls: true, network: "tcp", addr: "[fe80::1]:7000"},
		"ssl:[fe80::1]":            {tls: true, network: "tcp", addr: "[fe80::1]:6640"},
		"punix:/run/x.sock":        {passive: true, network: "unix", addr: "/run/x.sock"},
		"punix:db2.sock":           {passive: true, network: "unix", addr: "/rundir/db2.sock"},
		"unix:/var/run/other.sock": {network: "unix", addr: "/var/run/other.sock"},
	} {
		got, err := parseRemote(target, "/rundir")
		if err != nil || got != want {
			t.Errorf("parseRemote(%q) = %+v, %v; want %+v", target, got, err, want)
		}
	}
}

func TestParseRemoteRejectsGarbage(t *testing.T) {
	for _, target := range []string{
		"", "garbage", "garbage:xyz", "ptcp:notaport", "ptcp:70000", "ptcp:-1", "ptcp:6640:not-an-ip",
		"tcp:", "tcp::6640", "tcp:1.2.3.4:port", "ssl:[::1", "ssl:[::1]x", "punix:", "unix:", "ptcp:+80",
		"db:Open_vSwitch,Open_vSwitch,manager_options", // db: remotes are not targets
	} {
		if got, err := parseRemote(target, "/rundir"); err == nil {
			t.Errorf("parseRemote(%q) = %+v, want an error", target, got)
		}
	}
}

func FuzzParseRemote(f *testing.F) {
	for _, s := range []string{"ptcp:6640:127.0.0.1", "ssl:[::1]:6640", "punix:x", "tcp:a:b:c", "pssl:[", "\x00:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rt, err := parseRemote(s, "/r")
		if err == nil && rt.network != "tcp" && rt.network != "unix" {
			t.Fatalf("parseRemote(%q) gave network %q", s, rt.network)
		}
	})
}

func TestParseDBRemoteChecksTheSchema(t *testing.T) {
	schema, err := vswitch.Schema()
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseDBRemote(DefaultRemote, schema)
	if err != nil || r != (dbRemote{table: "Open_vSwitch", column: "manager_options", ref: "Manager"}) {
		t.Errorf("default remote: %+v, %v", r, err)
	}
	r, err = parseDBRemote("db:Open_vSwitch,Manager,target", schema)
	if err != nil || r != (dbRemote{table: "Manager", column: "target"}) {
		t.Errorf("string column: %+v, %v", r, err)
	}
	for _, bad := range []string{
		"db:", "db:Open_vSwitch", "db:Open_vSwitch,Open_vSwitch", "db:Other,Open_vSwitch,manager_options",
		"db:Open_vSwitch,NoTable,x", "db:Open_vSwitch,Open_vSwitch,nocolumn", "db:Open_vSwitch,Open_vSwitch,bridges",
		"db:Open_vSwitch,Open_vSwitch,other_config", "db:Open_vSwitch,Open_vSwitch,next_cfg", "db:,,",
	} {
		if _, err := parseDBRemote(bad, schema); err == nil {
			t.Errorf("parseDBRemote(%q): no error", bad)
		}
	}
}

func TestRemoteStatusReadsLikeOvsdbServer(t *testing.T) {
	now := time.Unix(1000, 0)
	cases := []struct {
		name string
		r    *remote
		conn bool
		want string
	}{
		{"listening idle", &remote{state: stateListening, boundPort: 6640}, false,
			"bound_port=6640,sec_since_connect=0,sec_since_disconnect=0"},
		{"listening on a unix socket", &remote{state: stateListening}, false,
			"sec_since_connect=0,sec_since_disconnect=0"},
		{"listening, two sessions", &remote{state: stateListening, boundPort: 1, conns: map[*trackedConn]struct{}{{}: {}, {}: {}}}, true,
			"bound_port=1,n_connections=2,sec_since_connect=0,sec_since_disconnect=0"},
		{"listening, one session", &remote{state: stateListening, boundPort: 1, conns: map[*trackedConn]struct{}{{}: {}}}, true,
			"bound_port=1,sec_since_connect=0,sec_since_disconnect=0"},
		{"never connected", &remote{state: stateBackoff}, false, "state=BACKOFF"},
		{"connected", &remote{state: stateActive, connected: now.Add(-3500 * time.Millisecond)}, true,
			"sec_since_connect=3,state=ACTIVE"},
		{"reconnecting", &remote{state: stateConnecting, connected: now.Add(-10 * time.Second), disconnected: now.Add(-time.Second)}, false,
			"sec_since_connect=10,sec_since_disconnect=1,state=CONNECTING"},
	}
	for _, c := range cases {
		conn, st := c.r.status(now)
		var kv []string
		for _, k := range sortedKeys(st) {
			kv = append(kv, k+"="+st[k])
		}
		if conn != c.conn || strings.Join(kv, ",") != c.want {
			t.Errorf("%s: %v {%s}, want %v {%s}", c.name, conn, strings.Join(kv, ","), c.conn, c.want)
		}
	}
}

// noTLS has no SSL files: every handshake fails.
type noTLS struct{}

func (noTLS) ServerConfig() *tls.Config {
	return &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		return nil, errors.New("no SSL files")
	}}
}

func (noTLS) ClientConfig() (*tls.Config, error) { return nil, errors.New("no SSL files") }

// testRemoteSet is a remote set over a server holding only _Server.
func testRemoteSet(t *testing.T) *remoteSet {
	t.Helper()
	srv := server.New()
	ctx, cancel := context.WithCancel(context.Background())
	rs := newRemoteSet(ctx, srv, noTLS{}, t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { rs.stopAll(); cancel(); srv.Close() })
	return rs
}

func waitStatus(t *testing.T, rs *remoteSet, target string, cond func(bool, map[string]string) bool) map[string]string {
	t.Helper()
	end := time.Now().Add(10 * time.Second)
	for {
		if r := rs.lookup(target); r != nil {
			conn, st := r.status(time.Now())
			if cond(conn, st) {
				return st
			}
			if time.Now().After(end) {
				t.Fatalf("%s: status %v %v never matched", target, conn, st)
			}
		} else if time.Now().After(end) {
			t.Fatalf("%s is not running", target)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPassiveRemoteServesUntilRemoved(t *testing.T) {
	rs := testRemoteSet(t)
	const target = "ptcp:0:127.0.0.1"
	rs.apply(map[string]remoteOptions{target: {}, "garbage:xyz": {}})
	st := waitStatus(t, rs, target, func(_ bool, st map[string]string) bool { return st["bound_port"] != "" })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "tcp:127.0.0.1:"+st["bound_port"], client.Options{NoReconnect: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dbs, err := c.ListDBs(ctx)
	if err != nil || len(dbs) != 1 || dbs[0] != "_Server" {
		t.Fatalf("list_dbs over the remote: %v, %v", dbs, err)
	}
	waitStatus(t, rs, target, func(conn bool, _ map[string]string) bool { return conn })
	waitStatus(t, rs, "garbage:xyz", func(conn bool, st map[string]string) bool { return !conn && st["state"] == "BACKOFF" })

	// Removing the remote closes its listener and its sessions.
	rs.apply(nil)
	if rs.lookup(target) != nil {
		t.Fatal("removed remote still running")
	}
	if nc, err := net.Dial("tcp", "127.0.0.1:"+st["bound_port"]); err == nil {
		nc.Close()
		t.Error("listener still open after removal")
	}
	if err := c.Echo(ctx); err == nil {
		t.Error("session of a removed remote still served")
	}
}

func TestPunixRemoteIsUnderTheRunDirAndRemovedWithIt(t *testing.T) {
	rs := testRemoteSet(t)
	rs.apply(map[string]remoteOptions{"punix:extra.sock": {}})
	path := filepath.Join(rs.runDir, "extra.sock")
	waitStatus(t, rs, "punix:extra.sock", func(_ bool, st map[string]string) bool { return st["sec_since_connect"] == "0" })
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	rs.apply(nil)
	if _, err := os.Stat(path); err == nil {
		t.Error("socket file left behind")
	}
}

func TestActiveRemoteConnectsAndReconnects(t *testing.T) {
	rs := testRemoteSet(t)
	path := filepath.Join(t.TempDir(), "mgr.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	target := "unix:" + path
	rs.apply(map[string]remoteOptions{target: {MaxBackoff: time.Second}})
	for round := range 2 {
		nc, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(nc, `{"id":7,"method":"list_dbs","params":[]}`)
		var reply struct {
			ID     int      `json:"id"`
			Result []string `json:"result"`
		}
		if err := json.NewDecoder(nc).Decode(&reply); err != nil || reply.ID != 7 || len(reply.Result) != 1 {
			t.Fatalf("round %d: list_dbs over the active remote: %+v, %v", round, reply, err)
		}
		st := waitStatus(t, rs, target, func(conn bool, _ map[string]string) bool { return conn })
		if _, ok := st["sec_since_disconnect"]; ok != (round == 1) {
			t.Errorf("round %d: status %v", round, st)
		}
		nc.Close()
		waitStatus(t, rs, target, func(conn bool, st map[string]string) bool { return !conn && st["sec_since_disconnect"] != "" })
	}
}

func TestPsslRemoteDropsClientsWithoutTLS(t *testing.T) {
	rs := testRemoteSet(t) // no SSL files: every handshake fails
	const target = "pssl:0:127.0.0.1"
	rs.apply(map[string]remoteOptions{target: {}})
	st := waitStatus(t, rs, target, func(_ bool, st map[string]string) bool { return st["bound_port"] != "" })
	for range 3 {
		nc, err := net.Dial("tcp", "127.0.0.1:"+st["bound_port"])
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(nc, `{"id":1,"method":"list_dbs","params":[]}`)
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(nc)
		if strings.Contains(string(b), "result") {
			t.Errorf("plain-text client answered: %q", b)
		}
		nc.Close()
	}
	waitStatus(t, rs, target, func(conn bool, st map[string]string) bool { return !conn && st["bound_port"] != "" })
}

func TestActiveRemoteDropsAPeerThatIgnoresProbes(t *testing.T) {
	rs := testRemoteSet(t)
	path := filepath.Join(t.TempDir(), "mgr.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rs.apply(map[string]remoteOptions{"unix:" + path: {InactivityProbe: 50 * time.Millisecond}})
	nc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(nc) // the echo request, then the end of the connection
	if err != nil || !strings.Contains(string(b), `"method":"echo"`) {
		t.Errorf("read %q, %v; want an echo request then EOF", b, err)
	}
}

func TestProbeDefaultsLikeOpenVSwitch(t *testing.T) {
	tcp, unix := remoteTarget{network: "tcp"}, remoteTarget{network: "unix"}
	for _, c := range []struct {
		o    remoteOptions
		t    remoteTarget
		want time.Duration
	}{
		{remoteOptions{InactivityProbe: probeDefault}, tcp, 5 * time.Second},
		{remoteOptions{InactivityProbe: probeDefault}, unix, 0},
		{remoteOptions{InactivityProbe: 0}, tcp, 0},
		{remoteOptions{InactivityProbe: 30 * time.Second}, unix, 30 * time.Second},
	} {
		if got := c.o.probe(c.t); got != c.want {
			t.Errorf("%+v on %s: %v, want %v", c.o, c.t.network, got, c.want)
		}
	}
}
