package tests

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gvs-project/gvs/cmd/vswitchd"
	"github.com/gvs-project/gvs/internal/nstest"
)

// startOVSDBServerWithManagers starts Open vSwitch's ovsdb-server the way
// ovs-ctl does: the database on a unix socket plus the remotes named by
// Open_vSwitch.manager_options, with the SSL table's files. ovs-vsctl
// must be run with --no-wait against it (no ovs-vswitchd).
func startOVSDBServerWithManagers(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir, "OVS_SYSCONFDIR="+dir)
	db := filepath.Join(dir, "conf.db")
	run(t, env, "ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema")
	pid := filepath.Join(dir, "ovsdb-server.pid")
	run(t, env, "ovsdb-server", "--remote=punix:"+filepath.Join(dir, "db.sock"),
		"--remote=db:Open_vSwitch,Open_vSwitch,manager_options",
		"--private-key=db:Open_vSwitch,SSL,private_key", "--certificate=db:Open_vSwitch,SSL,certificate",
		"--ca-cert=db:Open_vSwitch,SSL,ca_cert",
		"--pidfile="+pid, "--log-file="+filepath.Join(dir, "ovsdb-server.log"), "--no-chdir", "--detach", db)
	t.Cleanup(func() {
		b, err := os.ReadFile(pid)
		var n int
		if err == nil {
			fmt.Sscan(string(b), &n)
		}
		if n > 0 {
			syscall.Kill(n, syscall.SIGTERM)
		}
	})
	return env
}

func requireManagerTools(t *testing.T) {
	t.Helper()
	for _, b := range []string{"ovs-vsctl", "ovsdb-client"} {
		nstest.RequireBinary(t, b, "openvswitch-switch")
	}
}

// vsctlTry runs ovs-vsctl and returns its output and whether it
// succeeded.
func vsctlTry(env []string, args ...string) (string, bool) {
	c := exec.Command("ovs-vsctl", append([]string{"--timeout=5"}, args...)...)
	c.Env = env
	out, err := c.CombinedOutput()
	return string(out), err == nil
}

var (
	statusNumRE = regexp.MustCompile(`(bound_port|sec_since_connect|sec_since_disconnect)="?\d+"?`)
	uuidLineRE  = regexp.MustCompile(`(?m)^[0-9a-f]{8}-[0-9a-f-]{27}$`)
)

// maskStatus hides the numbers that differ between runs (ports and
// seconds) but keeps which keys are present.
func maskStatus(s string) string {
	return statusNumRE.ReplaceAllString(s, "$1=N")
}

// managerRow returns one Manager row's is_connected and status.
func managerRow(t *testing.T, env []string, target string) string {
	t.Helper()
	out, _ := vsctlTry(env, "--no-wait", "--columns=is_connected,status", "find", "manager", "target="+`"`+target+`"`)
	return strings.TrimSpace(out)
}

func waitRow(t *testing.T, env []string, target string, cond func(string) bool) string {
	t.Helper()
	var last string
	end := time.Now().Add(15 * time.Second)
	for time.Now().Before(end) {
		if last = managerRow(t, env, target); cond(last) {
			return last
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("Manager %s never reached the expected state; last:\n%s", target, last)
	return ""
}

func boundPort(t *testing.T, env []string, target string) string {
	t.Helper()
	row := waitRow(t, env, target, func(s string) bool { return strings.Contains(s, "bound_port=") })
	m := regexp.MustCompile(`bound_port="(\d+)"`).FindStringSubmatch(row)
	if m == nil {
		t.Fatalf("no bound port in %q", row)
	}
	return m[1]
}

// passiveManagerSession drives set-manager ptcp:, clients over TCP,
// bad targets and del-manager, returning a transcript.
func passiveManagerSession(t *testing.T, env []string) []string {
	var tr []string
	const target = "ptcp:0:127.0.0.1"
	run(t, env, "ovs-vsctl", "--no-wait", "init")
	run(t, env, "ovs-vsctl", "--no-wait", "set-manager", target)
	port := boundPort(t, env, target)
	db := "--db=tcp:127.0.0.1:" + port
	out, ok := vsctlTry(env, db, "show")
	out = regexp.MustCompile(`(?m)^\s*is_connected: true\n`).ReplaceAllString(out, "")
	out = regexp.MustCompile(`ovs_version: "[^"]*"`).ReplaceAllString(out, "") // gvs writes its own version
	tr = append(tr, fmt.Sprintf("show over tcp ok=%v\n%s", ok, strings.TrimRight(uuidLineRE.ReplaceAllString(out, "UUID"), " \n")))
	tr = append(tr, "idle: "+maskStatus(managerRow(t, env, target)))

	// Two clients that stay connected.
	for range 2 {
		startTool(t, env, "ovsdb-client", "monitor", "tcp:127.0.0.1:"+port, "Open_vSwitch", "Manager")
	}
	row := waitRow(t, env, target, func(s string) bool { return strings.Contains(s, `n_connections="2"`) })
	tr = append(tr, "two clients: "+maskStatus(row))

	// Bad targets are reported, never fatal.
	for _, bad := range []string{"garbage:xyz", "ptcp:notaport"} {
		run(t, env, "ovs-vsctl", "--no-wait", "--", "--id=@m", "create", "manager", `target="`+bad+`"`,
			"--", "add", "open_vswitch", ".", "manager_options", "@m")
		tr = append(tr, bad+": "+waitRow(t, env, bad, func(s string) bool { return strings.Contains(s, "BACKOFF") }))
	}
	out, ok = vsctlTry(env, db, "get-manager")
	tr = append(tr, fmt.Sprintf("get-manager over tcp ok=%v\n%s", ok, strings.TrimSpace(out)))

	run(t, env, "ovs-vsctl", "--no-wait", "del-manager")
	end := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
		if err != nil {
			tr = append(tr, "after del-manager: connection refused")
			break
		}
		c.Close()
		if time.Now().After(end) {
			tr = append(tr, "after del-manager: still listening")
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return tr
}

func diffTranscripts(t *testing.T, gvs, ovs []string) {
	t.Helper()
	if len(gvs) != len(ovs) {
		t.Fatalf("transcripts differ in length:\ngvs:\n%s\nOpen vSwitch:\n%s", strings.Join(gvs, "\n"), strings.Join(ovs, "\n"))
	}
	for i := range gvs {
		if gvs[i] != ovs[i] {
			t.Errorf("step %d differs:\ngvs:\n%s\nOpen vSwitch:\n%s", i, gvs[i], ovs[i])
		}
	}
}

// TestSetManagerPtcpServesTheDatabaseLikeOpenVSwitch: with gvs's default
// remotes, `ovs-vsctl set-manager ptcp:...` opens a TCP listener that
// serves the database, Manager.is_connected and status read as
// ovsdb-server writes them (bound_port, n_connections, BACKOFF for
// targets that cannot work), and del-manager closes the listener.
func TestSetManagerPtcpServesTheDatabaseLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	requireManagerTools(t)
	nstest.RequireBinary(t, "ovsdb-server", "openvswitch-switch")
	nstest.RequireBinary(t, "ovsdb-tool", "openvswitch-common")
	_, env := startDaemon(t)
	gvs := passiveManagerSession(t, env)
	ovs := passiveManagerSession(t, startOVSDBServerWithManagers(t))
	t.Logf("gvs transcript:\n%s", strings.Join(gvs, "\n"))
	diffTranscripts(t, gvs, ovs)
	if !strings.Contains(gvs[0], `Manager "ptcp:0:127.0.0.1"`) || !strings.Contains(gvs[0], "ok=true") {
		t.Errorf("show over tcp: %s", gvs[0])
	}
}

// jsonrpcPeer is the far end of an active remote: it sends requests to
// the server that connected to it.
type jsonrpcPeer struct {
	c   net.Conn
	dec *json.Decoder
}

func (p *jsonrpcPeer) listDBs(t *testing.T) []string {
	t.Helper()
	p.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(p.c, `{"id":1,"method":"list_dbs","params":[]}`); err != nil {
		t.Fatal(err)
	}
	for {
		var m struct {
			ID     any      `json:"id"`
			Method string   `json:"method"`
			Result []string `json:"result"`
		}
		if err := p.dec.Decode(&m); err != nil {
			t.Fatalf("reading list_dbs reply: %v", err)
		}
		if m.Method == "" && m.ID != nil {
			return m.Result
		}
	}
}

func acceptPeer(t *testing.T, l net.Listener) *jsonrpcPeer {
	t.Helper()
	type accepted struct {
		c   net.Conn
		err error
	}
	ch := make(chan accepted, 1)
	go func() {
		c, err := l.Accept()
		ch <- accepted{c, err}
	}()
	var c net.Conn
	select {
	case a := <-ch:
		if a.err != nil {
			t.Fatalf("accepting the switch's connection: %v", a.err)
		}
		c = a.c
	case <-time.After(15 * time.Second):
		l.Close()
		t.Fatal("the switch never connected")
	}
	t.Cleanup(func() { c.Close() })
	return &jsonrpcPeer{c: c, dec: json.NewDecoder(bufio.NewReader(c))}
}

// activeManagerSession makes the database server connect out to a
// listener of the test's, uses the connection, drops it and waits for
// the reconnection.
func activeManagerSession(t *testing.T, env []string) []string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	target := "tcp:" + l.Addr().String()
	var tr []string
	run(t, env, "ovs-vsctl", "--no-wait", "init")
	run(t, env, "ovs-vsctl", "--no-wait", "set-manager", target)
	p := acceptPeer(t, l)
	tr = append(tr, fmt.Sprintf("list_dbs: %v", p.listDBs(t)))
	row := waitRow(t, env, target, func(s string) bool { return strings.Contains(s, "ACTIVE") })
	tr = append(tr, "connected: "+maskStatus(row))
	p.c.Close()
	p = acceptPeer(t, l)
	tr = append(tr, fmt.Sprintf("reconnected, list_dbs: %v", p.listDBs(t)))
	row = waitRow(t, env, target, func(s string) bool {
		return strings.Contains(s, "sec_since_disconnect") && strings.Contains(s, "ACTIVE")
	})
	tr = append(tr, "reconnected: "+maskStatus(row))
	return tr
}

// TestActiveManagerConnectsOutAndServesTheDatabase: a Manager target
// tcp:IP:PORT makes the switch connect out and serve the database on
// that connection, reconnecting when it drops, with the status
// ovsdb-server reports.
func TestActiveManagerConnectsOutAndServesTheDatabase(t *testing.T) {
	t.Parallel()
	requireManagerTools(t)
	nstest.RequireBinary(t, "ovsdb-server", "openvswitch-switch")
	nstest.RequireBinary(t, "ovsdb-tool", "openvswitch-common")
	_, env := startDaemon(t)
	gvs := activeManagerSession(t, env)
	ovs := activeManagerSession(t, startOVSDBServerWithManagers(t))
	t.Logf("gvs transcript:\n%s", strings.Join(gvs, "\n"))
	diffTranscripts(t, gvs, ovs)
	if gvs[0] != "list_dbs: [Open_vSwitch _Server]" && gvs[0] != "list_dbs: [_Server Open_vSwitch]" {
		t.Errorf("list_dbs over the active connection: %s", gvs[0])
	}
}

// pki is a certificate authority made by Open vSwitch's ovs-pki, with
// certificates from its switch CA and one from its controller CA.
type pki struct {
	dir, ca, otherCA string
}

func (p *pki) key(name string) string  { return filepath.Join(p.dir, name+"-privkey.pem") }
func (p *pki) cert(name string) string { return filepath.Join(p.dir, name+"-cert.pem") }

// sslFlags are a tool's options for a certificate.
func (p *pki) sslFlags(name string) []string {
	return []string{"--private-key=" + p.key(name), "--certificate=" + p.cert(name), "--ca-cert=" + p.ca}
}

// makePKI signs "switch" and "client" with the switch CA and "stranger"
// with the controller CA (another CA).
func makePKI(t *testing.T) *pki {
	t.Helper()
	nstest.RequireBinary(t, "ovs-pki", "openvswitch-common")
	dir := t.TempDir()
	p := &pki{dir: dir, ca: filepath.Join(dir, "pki", "switchca", "cacert.pem"),
		otherCA: filepath.Join(dir, "pki", "controllerca", "cacert.pem")}
	pk := func(args ...string) {
		c := exec.Command("ovs-pki", append([]string{"-d", filepath.Join(dir, "pki"), "-l", filepath.Join(dir, "pki.log")}, args...)...)
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("ovs-pki %v: %v\n%s", args, err, out)
		}
	}
	pk("init")
	pk("req+sign", "switch", "switch")
	pk("req+sign", "client", "switch")
	pk("req+sign", "stranger", "controller")
	return p
}

// sslManagerSession configures the SSL table and a pssl: manager, then
// connects with a certificate from the CA, one from another CA, and
// without TLS.
func sslManagerSession(t *testing.T, env []string, p *pki) []string {
	const target = "pssl:0:127.0.0.1"
	var tr []string
	run(t, env, "ovs-vsctl", "--no-wait", "init")
	run(t, env, "ovs-vsctl", "--no-wait", "set-ssl", p.key("switch"), p.cert("switch"), p.ca)
	run(t, env, "ovs-vsctl", "--no-wait", "set-manager", target)
	port := boundPort(t, env, target)
	db := "--db=ssl:127.0.0.1:" + port
	// A client that does not speak TLS is dropped; the listener lives on.
	if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
		io.WriteString(c, `{"id":1,"method":"list_dbs","params":[]}`)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 512)
		n, _ := c.Read(buf)
		tr = append(tr, fmt.Sprintf("plain JSON-RPC on pssl: answered=%v", strings.Contains(string(buf[:n]), "result")))
		c.Close()
	}
	out, ok := vsctlTry(env, append(p.sslFlags("client"), db, "get-manager")...)
	tr = append(tr, fmt.Sprintf("client of the CA: ok=%v %s", ok, strings.TrimSpace(out)))
	_, ok = vsctlTry(env, "--private-key="+p.key("stranger"), "--certificate="+p.cert("stranger"), "--ca-cert="+p.ca, db, "get-manager")
	tr = append(tr, fmt.Sprintf("client of another CA: ok=%v", ok))
	_, ok = vsctlTry(env, "--private-key="+p.key("client"), "--certificate="+p.cert("client"), "--ca-cert="+p.otherCA, db, "get-manager")
	tr = append(tr, fmt.Sprintf("client trusting another CA: ok=%v", ok))
	_, ok = vsctlTry(env, "--db=tcp:127.0.0.1:"+port, "get-manager")
	tr = append(tr, fmt.Sprintf("plain tcp client: ok=%v", ok))
	out, ok = vsctlTry(env, append(p.sslFlags("client"), db, "show")...)
	tr = append(tr, fmt.Sprintf("still serving: ok=%v %v", ok, strings.Contains(out, `Manager "pssl:0:127.0.0.1"`)))
	return tr
}

// TestSSLManagerAcceptsOnlyCertificatesFromItsCA: with the SSL table set
// (`ovs-vsctl set-ssl`, certificates from Open vSwitch's ovs-pki) a
// pssl: manager serves ovs-vsctl --db=ssl: with a certificate from the
// CA and refuses one from another CA, a client that trusts another CA
// and a client without TLS, like ovsdb-server.
func TestSSLManagerAcceptsOnlyCertificatesFromItsCA(t *testing.T) {
	t.Parallel()
	requireManagerTools(t)
	nstest.RequireBinary(t, "ovsdb-server", "openvswitch-switch")
	nstest.RequireBinary(t, "ovsdb-tool", "openvswitch-common")
	p := makePKI(t)
	_, env := startDaemon(t)
	gvs := sslManagerSession(t, env, p)
	ovs := sslManagerSession(t, startOVSDBServerWithManagers(t), p)
	t.Logf("gvs transcript:\n%s", strings.Join(gvs, "\n"))
	diffTranscripts(t, gvs, ovs)
	want := []string{
		"plain JSON-RPC on pssl: answered=false",
		"client of the CA: ok=true pssl:0:127.0.0.1",
		"client of another CA: ok=false",
		"client trusting another CA: ok=false",
		"plain tcp client: ok=false",
		"still serving: ok=true true",
	}
	if strings.Join(gvs, "\n") != strings.Join(want, "\n") {
		t.Errorf("gvs:\n%s\nwant:\n%s", strings.Join(gvs, "\n"), strings.Join(want, "\n"))
	}
}

// tlsListener listens with a certificate from p, requiring the peer's
// certificate to chain to p's CA.
func tlsListener(t *testing.T, p *pki, name string) net.Listener {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(p.cert(name), p.key(name))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(p.ca)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestActiveSSLManagerPresentsItsCertificate: a Manager target
// ssl:IP:PORT connects out with the SSL table's certificate, verifies
// the peer against its CA, and serves the database over TLS.
func TestActiveSSLManagerPresentsItsCertificate(t *testing.T) {
	requireManagerTools(t)
	p := makePKI(t)
	_, env := startDaemon(t)
	l := tlsListener(t, p, "client")
	target := "ssl:" + l.Addr().String()
	run(t, env, "ovs-vsctl", "--no-wait", "set-ssl", p.key("switch"), p.cert("switch"), p.ca)
	run(t, env, "ovs-vsctl", "--no-wait", "set-manager", target)
	peer := acceptPeer(t, l)
	// tls.Listen's Accept does not handshake: a failure shows here.
	if err := peer.c.(*tls.Conn).Handshake(); err != nil {
		t.Fatalf("TLS handshake with the switch: %v", err)
	}
	if got := fmt.Sprint(peer.listDBs(t)); got != "[Open_vSwitch _Server]" && got != "[_Server Open_vSwitch]" {
		t.Fatalf("list_dbs over ssl: %s", got)
	}
	row := waitRow(t, env, target, func(s string) bool { return strings.Contains(s, "ACTIVE") })
	if got := maskStatus(row); got != "is_connected        : true\nstatus              : {sec_since_connect=N, state=ACTIVE}" {
		t.Errorf("Manager row:\n%s", got)
	}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// TestOpenFlowOverSSLToAndFromTheBridge: a bridge's pssl: controller
// target serves ovs-ofctl over TLS (certificates from the SSL table,
// clients verified against its CA), and an ssl: controller target
// connects out with the bridge's certificate and says hello.
func TestOpenFlowOverSSLToAndFromTheBridge(t *testing.T) {
	requireManagerTools(t)
	nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	p := makePKI(t)
	_, env := startDaemon(t)
	vsctl := func(args ...string) string {
		return run(t, env, append([]string{"ovs-vsctl", "--timeout=20"}, args...)...)
	}
	vsctl("set-ssl", p.key("switch"), p.cert("switch"), p.ca)
	vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	port := freePort(t)
	vsctl("set-controller", "br0", "pssl:"+port+":127.0.0.1")
	ofctl := func(name string, args ...string) (string, error) {
		c := exec.Command("ovs-ofctl", append([]string{"--timeout=5", "--private-key=" + p.key(name),
			"--certificate=" + p.cert(name), "--ca-cert=" + p.ca}, args...)...)
		c.Env = env
		out, err := c.CombinedOutput()
		return string(out), err
	}
	var out string
	var err error
	end := time.Now().Add(10 * time.Second)
	for {
		if out, err = ofctl("client", "show", "ssl:127.0.0.1:"+port); err == nil || time.Now().After(end) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || !strings.Contains(out, "OFPT_FEATURES_REPLY") || !strings.Contains(out, "LOCAL(br0)") {
		t.Fatalf("ovs-ofctl show ssl: %v\n%s", err, out)
	}
	if out, err := ofctl("stranger", "show", "ssl:127.0.0.1:"+port); err == nil {
		t.Errorf("a certificate from another CA was accepted:\n%s", out)
	}
	// gvs-ofctl speaks ssl: too, with ovs-ofctl's -p/-c/-C, and prints the same.
	gvsOfctl := func(name string, args ...string) (string, error) {
		c := exec.Command(gvsOfctlBinary(t), append([]string{"-p", p.key(name), "-c", p.cert(name), "-C", p.ca}, args...)...)
		c.Env = env
		b, err := c.CombinedOutput()
		return string(b), err
	}
	if got, err := gvsOfctl("client", "show", "ssl:127.0.0.1:"+port); err != nil || got != out {
		t.Errorf("gvs-ofctl show ssl: %v\n%s\n--- ovs-ofctl:\n%s", err, got, out)
	}
	if got, err := gvsOfctl("stranger", "show", "ssl:127.0.0.1:"+port); err == nil {
		t.Errorf("gvs-ofctl with a certificate from another CA was accepted:\n%s", got)
	}

	// Active: the bridge connects to a controller of the test's.
	l := tlsListener(t, p, "client")
	vsctl("set-controller", "br0", "ssl:"+l.Addr().String())
	c := acceptPeer(t, l).c
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var hdr [8]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		t.Fatalf("reading the bridge's hello over TLS: %v", err)
	}
	if hdr[1] != 0 || binary.BigEndian.Uint16(hdr[2:]) < 8 {
		t.Errorf("first message is not OFPT_HELLO: % x", hdr)
	}
}

// TestRemoteFlagReplacesTheDefaultRemotes: --remote serves the database
// on the remotes given, as ovsdb-server's --remote does, and only those:
// without db:Open_vSwitch,Open_vSwitch,manager_options among them,
// Manager rows open nothing.
func TestRemoteFlagReplacesTheDefaultRemotes(t *testing.T) {
	requireManagerTools(t)
	dir := t.TempDir()
	port := freePort(t)
	cfg := &vswitchd.Config{
		Program: "gvs-vswitchd", RunDir: dir, DBDir: dir, LogDir: dir, DBFile: filepath.Join(dir, "conf.db"),
		Remotes: []string{"ptcp:" + port + ":127.0.0.1", "punix:" + filepath.Join(dir, "extra.sock")},
	}
	d, err := vswitchd.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	for _, db := range []string{"tcp:127.0.0.1:" + port, "unix:" + filepath.Join(dir, "extra.sock")} {
		if out := run(t, env, "ovs-vsctl", "--db="+db, "list-br"); out != "br0\n" {
			t.Errorf("list-br over %s: %q", db, out)
		}
	}
	mgr := freePort(t)
	run(t, env, "ovs-vsctl", "--timeout=20", "set-manager", "ptcp:"+mgr+":127.0.0.1")
	time.Sleep(300 * time.Millisecond)
	if c, err := net.Dial("tcp", "127.0.0.1:"+mgr); err == nil {
		c.Close()
		t.Error("a Manager row opened a listener although --remote replaced the default")
	}
}

// TestSSLProtocolsFlagLimitsTheVersions: with --ssl-protocols=TLSv1.2 a
// pssl: remote serves Open vSwitch's ovs-vsctl over TLS 1.2 and refuses a
// client that will speak only TLS 1.3; with TLSv1.3 it is the other way
// round for a TLS 1.2-only client.
func TestSSLProtocolsFlagLimitsTheVersions(t *testing.T) {
	requireManagerTools(t)
	p := makePKI(t)
	for _, tc := range []struct {
		protocols        string
		refused, allowed uint16 // client max versions
	}{
		{"TLSv1.2", 0, tls.VersionTLS12},
		{"TLSv1.3", tls.VersionTLS12, tls.VersionTLS13},
	} {
		dir := t.TempDir()
		port := freePort(t)
		cfg := &vswitchd.Config{
			Program: "gvs-vswitchd", RunDir: dir, DBDir: dir, LogDir: dir, DBFile: filepath.Join(dir, "conf.db"),
			Remotes:    []string{"pssl:" + port + ":127.0.0.1"},
			PrivateKey: p.key("switch"), Certificate: p.cert("switch"), CACert: p.ca,
			SSLProtocols: tc.protocols,
		}
		d, err := vswitchd.Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := tls.LoadX509KeyPair(p.cert("client"), p.key("client"))
		if err != nil {
			t.Fatal(err)
		}
		dial := func(min, max uint16) (uint16, error) {
			c, err := tls.Dial("tcp", "127.0.0.1:"+port, &tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true, MinVersion: min, MaxVersion: max})
			if err != nil {
				return 0, err
			}
			defer c.Close()
			return c.ConnectionState().Version, nil
		}
		var v uint16
		waitFor(t, "the pssl remote", func() bool { v, err = dial(tls.VersionTLS12, tc.allowed); return err == nil })
		if v != tc.allowed {
			t.Errorf("--ssl-protocols=%s: negotiated %x, want %x", tc.protocols, v, tc.allowed)
		}
		if tc.refused != 0 {
			if v, err := dial(tc.refused, tc.refused); err == nil {
				t.Errorf("--ssl-protocols=%s: a client limited to %x was served (%x)", tc.protocols, tc.refused, v)
			}
		} else if v, err := dial(tls.VersionTLS13, tls.VersionTLS13); err == nil {
			t.Errorf("--ssl-protocols=%s: a TLS 1.3-only client was served (%x)", tc.protocols, v)
		}
		if tc.protocols == "TLSv1.2" {
			env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
			vsctl := append([]string{"ovs-vsctl", "--timeout=10", "--db=ssl:127.0.0.1:" + port}, p.sslFlags("client")...)
			run(t, env, append(vsctl, "--no-wait", "add-br", "brssl")...)
			if out := run(t, env, append(vsctl, "list-br")...); out != "brssl\n" {
				t.Errorf("ovs-vsctl list-br over TLS 1.2: %q", out)
			}
		}
		d.Close()
	}
}
