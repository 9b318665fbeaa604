package ofconn_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// testCA is a certificate authority whose certificates are written as
// PEM files in a test directory.
type testCA struct {
	t    *testing.T
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // the CA certificate's PEM file
}

func randSerial(t *testing.T) *big.Int {
	n, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: randSerial(t), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{t: t, dir: t.TempDir(), cert: cert, key: key}
	ca.file = ca.write(name+"-cacert.pem", "CERTIFICATE", der)
	return ca
}

func (ca *testCA) write(name, typ string, der []byte) string {
	p := filepath.Join(ca.dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		ca.t.Fatal(err)
	}
	return p
}

// issue signs a certificate for name and returns files for it, trusting
// trust's CA certificate.
func (ca *testCA) issue(name string, trust *testCA) ofconn.TLSFiles {
	ca.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		ca.t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: randSerial(ca.t), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		ca.t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		ca.t.Fatal(err)
	}
	return ofconn.TLSFiles{
		PrivateKey:  ca.write(name+"-privkey.pem", "EC PRIVATE KEY", kder),
		Certificate: ca.write(name+"-cert.pem", "CERTIFICATE", der),
		CACert:      trust.file,
	}
}

func settings(f ofconn.TLSFiles) *ofconn.TLSSettings {
	s := &ofconn.TLSSettings{}
	s.Set(f)
	return s
}

// startTLSServer serves pssl on a free port and returns its ssl: target.
func startTLSServer(t *testing.T, f ofconn.TLSFiles) (string, *ofconn.Server) {
	t.Helper()
	srv := &ofconn.Server{Handler: ofconn.HandlerFunc(func(s ofconn.Sender, m *ofp.Msg) {})}
	l, err := srv.ListenTarget("pssl:0:127.0.0.1", settings(f))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return "ssl:" + l.Addr().String(), srv
}

func dialTLS(target string, f ofconn.TLSFiles) (*ofconn.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return ofconn.DialTarget(ctx, target, settings(f), ofconn.Config{}, ofconn.HandlerFunc(func(ofconn.Sender, *ofp.Msg) {}))
}

func TestTLSListenerAcceptsOnlyPeersOfItsCA(t *testing.T) {
	ca, other := newTestCA(t, "switchca"), newTestCA(t, "otherca")
	target, _ := startTLSServer(t, ca.issue("switch", ca))

	c, err := dialTLS(target, ca.issue("controller", ca))
	if err != nil {
		t.Fatalf("a peer of the CA was refused: %v", err)
	}
	if c.Version() == 0 {
		t.Error("no OpenFlow version negotiated over TLS")
	}
	c.Close()

	if c, err := dialTLS(target, other.issue("stranger", ca)); err == nil {
		// TLS 1.3 reports the server's refusal of a client certificate
		// on the first read, after the handshake.
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Error("a certificate from another CA was accepted")
		}
		c.Close()
	}
	if _, err := dialTLS(target, ca.issue("doubter", other)); err == nil {
		t.Error("a client that trusts another CA accepted the server")
	}
}

func TestTLSListenerSurvivesPlainTextAndGarbage(t *testing.T) {
	ca := newTestCA(t, "switchca")
	target, _ := startTLSServer(t, ca.issue("switch", ca))
	addr := target[len("ssl:"):]
	for _, junk := range [][]byte{
		{0x04, 0x00, 0x00, 0x08, 0, 0, 0, 1}, // an OpenFlow hello without TLS
		bytes.Repeat([]byte{0x16, 0x03, 0x01, 0xff, 0xff}, 20),
		{},
	} {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.Write(junk)
		nc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		buf := make([]byte, 64)
		n, _ := nc.Read(buf)
		if n >= 8 && buf[0] >= 1 && buf[0] <= 6 && buf[1] == 0 {
			t.Errorf("plain-text peer got an OpenFlow hello: % x", buf[:n])
		}
		nc.Close()
	}
	c, err := dialTLS(target, ca.issue("controller", ca))
	if err != nil {
		t.Fatalf("the listener stopped serving after bad peers: %v", err)
	}
	c.Close()
}

func TestTLSNeedsSettingsAndFiles(t *testing.T) {
	srv := &ofconn.Server{Handler: ofconn.HandlerFunc(func(ofconn.Sender, *ofp.Msg) {})}
	defer srv.Close()
	if _, err := srv.ListenTarget("pssl:0:127.0.0.1", nil); err == nil {
		t.Error("pssl without settings: no error")
	}
	if _, err := srv.ListenTarget("pssl:x:127.0.0.1", &ofconn.TLSSettings{}); err == nil {
		t.Error("pssl with a bad port: no error")
	}
	ctx := context.Background()
	h := ofconn.HandlerFunc(func(ofconn.Sender, *ofp.Msg) {})
	if _, err := ofconn.DialTarget(ctx, "ssl:127.0.0.1:1", nil, ofconn.Config{}, h); err == nil {
		t.Error("ssl without settings: no error")
	}
	if _, err := ofconn.DialTarget(ctx, "ssl:127.0.0.1:1", &ofconn.TLSSettings{}, ofconn.Config{}, h); err == nil {
		t.Error("ssl without files: no error")
	}
}

func TestBootstrapCACertNeedsThePeersCA(t *testing.T) {
	ca := newTestCA(t, "switchca")
	target, _ := startTLSServer(t, ca.issue("switch", ca)) // sends no CA certificate
	f := ca.issue("controller", ca)
	f.CACert = filepath.Join(t.TempDir(), "bootstrapped-cacert.pem")
	f.BootstrapCACert = true
	if c, err := dialTLS(target, f); err == nil {
		c.Close()
		t.Fatal("bootstrapped from a peer that sent no CA certificate")
	}
	if _, err := os.Stat(f.CACert); err == nil {
		t.Error("a CA certificate was saved")
	}
}

func TestBootstrapCACertTrustsAndSavesThePeersCA(t *testing.T) {
	ca := newTestCA(t, "switchca")
	// A server for bootstrapping sends its CA certificate after its own
	// (Open vSwitch's --peer-ca-cert).
	sf := ca.issue("switch", ca)
	leaf, _ := os.ReadFile(sf.Certificate)
	caPEM, _ := os.ReadFile(ca.file)
	if err := os.WriteFile(sf.Certificate, append(leaf, caPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	target, _ := startTLSServer(t, sf)
	f := ca.issue("controller", ca)
	f.CACert = filepath.Join(t.TempDir(), "bootstrapped-cacert.pem")
	f.BootstrapCACert = true
	c, err := dialTLS(target, f)
	if err != nil {
		t.Fatalf("bootstrap connection: %v", err)
	}
	c.Close()
	got, err := os.ReadFile(f.CACert)
	if err != nil {
		t.Fatalf("the CA certificate was not saved: %v", err)
	}
	want, _ := os.ReadFile(ca.file)
	if !bytes.Equal(got, want) {
		t.Errorf("saved CA certificate:\n%s\nwant:\n%s", got, want)
	}
	// Once saved it is used like any CA file.
	if c, err := dialTLS(target, f); err != nil {
		t.Errorf("connection with the saved CA: %v", err)
	} else {
		c.Close()
	}
}

func TestIsPassive(t *testing.T) {
	for target, want := range map[string]bool{
		"pssl:6653": true, "ptcp:6653:127.0.0.1": true, "punix:/x": true,
		"ssl:1.2.3.4:6653": false, "tcp:1.2.3.4": false, "unix:/x": false, "garbage": false, "": false,
	} {
		if got := ofconn.IsPassive(target); got != want {
			t.Errorf("IsPassive(%q) = %v, want %v", target, got, want)
		}
	}
}
