package ofconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"github.com/gvs-project/gvs/internal/unixsock"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// TLSFiles names the PEM files of an SSL configuration: Open vSwitch's
// SSL table and its --private-key, --certificate and --ca-cert options.
type TLSFiles struct {
	PrivateKey, Certificate, CACert string
	// BootstrapCACert: while CACert does not exist, an active connection
	// trusts the CA certificate its peer sends (the last of its chain)
	// and saves it to CACert, as Open vSwitch's bootstrap_ca_cert does.
	BootstrapCACert bool
	// Options are --ssl-protocols and --ssl-ciphers.
	Options TLSOptions
}

// TLSSettings holds the SSL configuration in force; it may change at any
// time (the SSL table was edited) and every new handshake reads the files
// again, so renewed certificates apply without a restart. Safe for
// concurrent use; the zero value has no files and every handshake fails.
type TLSSettings struct {
	cur atomic.Pointer[TLSFiles]
}

// Set replaces the configuration.
func (s *TLSSettings) Set(f TLSFiles) { s.cur.Store(&f) }

// Files returns the configuration in force.
func (s *TLSSettings) Files() TLSFiles {
	if s == nil {
		return TLSFiles{}
	}
	if f := s.cur.Load(); f != nil {
		return *f
	}
	return TLSFiles{}
}

// ServerConfig returns a configuration for listeners (pssl:): the
// certificate and key are loaded on each handshake and the peer must
// present a certificate that chains to CACert. As in Open vSwitch, host
// names are not checked: the CA is the authority.
func (s *TLSSettings) ServerConfig() *tls.Config {
	// The outer configuration decides the versions offered before the
	// per-handshake one is built, so it carries the options too.
	return s.Files().Options.apply(&tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			f := s.Files()
			cert, pool, err := f.load()
			if err != nil {
				return nil, err
			}
			return f.Options.apply(&tls.Config{
				MinVersion:            tls.VersionTLS12,
				Certificates:          []tls.Certificate{cert},
				ClientAuth:            tls.RequireAnyClientCert,
				VerifyPeerCertificate: verifyChain(pool),
			}), nil
		},
	})
}

// ClientConfig returns a configuration for one active connection (ssl:),
// presenting the certificate and verifying the peer's chain against
// CACert (or, with BootstrapCACert and no CACert file yet, trusting the
// peer's CA and saving it).
func (s *TLSSettings) ClientConfig() (*tls.Config, error) {
	f := s.Files()
	if f.BootstrapCACert && f.CACert != "" {
		if _, err := os.Stat(f.CACert); errors.Is(err, os.ErrNotExist) {
			cert, err := f.loadKeyPair()
			if err != nil {
				return nil, err
			}
			return f.Options.apply(&tls.Config{
				MinVersion:            tls.VersionTLS12,
				Certificates:          []tls.Certificate{cert},
				InsecureSkipVerify:    true, // verified by bootstrapCA
				VerifyPeerCertificate: f.bootstrapCA,
			}), nil
		}
	}
	cert, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	return f.Options.apply(&tls.Config{
		MinVersion:            tls.VersionTLS12,
		Certificates:          []tls.Certificate{cert},
		InsecureSkipVerify:    true, // host names are not checked; verifyChain checks the chain
		VerifyPeerCertificate: verifyChain(pool),
	}), nil
}

func (f TLSFiles) loadKeyPair() (tls.Certificate, error) {
	if f.PrivateKey == "" || f.Certificate == "" {
		return tls.Certificate{}, errors.New("ssl: private key and certificate must be configured")
	}
	cert, err := tls.LoadX509KeyPair(f.Certificate, f.PrivateKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("ssl: loading %s and %s: %w", f.Certificate, f.PrivateKey, err)
	}
	return cert, nil
}

func (f TLSFiles) load() (tls.Certificate, *x509.CertPool, error) {
	cert, err := f.loadKeyPair()
	if err != nil {
		return cert, nil, err
	}
	if f.CACert == "" {
		return cert, nil, errors.New("ssl: CA certificate must be configured")
	}
	pemBytes, err := os.ReadFile(f.CACert)
	if err != nil {
		return cert, nil, fmt.Errorf("ssl: reading CA certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		return cert, nil, fmt.Errorf("ssl: %s holds no PEM certificate", f.CACert)
	}
	return cert, pool, nil
}

// verifyChain checks that the peer's leaf certificate chains to a
// certificate in roots, for any key usage and without a host name.
func verifyChain(roots *x509.CertPool) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		certs, err := parseChain(raw)
		if err != nil {
			return err
		}
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		_, err = certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
		if err != nil {
			return fmt.Errorf("ssl: peer certificate: %w", err)
		}
		return nil
	}
}

func parseChain(raw [][]byte) ([]*x509.Certificate, error) {
	if len(raw) == 0 {
		return nil, errors.New("ssl: peer sent no certificate")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, r := range raw {
		c, err := x509.ParseCertificate(r)
		if err != nil {
			return nil, fmt.Errorf("ssl: peer certificate: %w", err)
		}
		certs[i] = c
	}
	return certs, nil
}

// bootstrapCA trusts the self-signed CA certificate at the end of the
// peer's chain, checks the chain against it and saves it to CACert.
func (f TLSFiles) bootstrapCA(raw [][]byte, _ [][]*x509.Certificate) error {
	certs, err := parseChain(raw)
	if err != nil {
		return err
	}
	ca := certs[len(certs)-1]
	if !ca.IsCA || ca.CheckSignatureFrom(ca) != nil {
		return errors.New("ssl: bootstrap: the peer's last certificate is not a self-signed CA certificate")
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if err := verifyChain(pool)(raw, nil); err != nil {
		return err
	}
	out := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	if err := os.WriteFile(f.CACert, out, 0o644); err != nil {
		return fmt.Errorf("ssl: bootstrap: saving CA certificate: %w", err)
	}
	return nil
}

// tlsHandshakeTimeout bounds an active connection's TLS handshake.
const tlsHandshakeTimeout = 10 * time.Second

// IsPassive reports whether target names a listener: punix:, ptcp: or
// pssl:.
func IsPassive(target string) bool {
	kind, _, _ := strings.Cut(target, ":")
	return kind == "punix" || kind == "ptcp" || kind == "pssl"
}

// ListenTarget is Listen that also accepts "pssl:[PORT][:IP]" (port 6653
// by default), whose connections are TLS with the settings in ts.
func (s *Server) ListenTarget(target string, ts *TLSSettings) (net.Listener, error) {
	rest, ok := strings.CutPrefix(target, "pssl:")
	if !ok {
		return s.Listen(target)
	}
	if ts == nil {
		return nil, fmt.Errorf("ofconn: %s: SSL is not configured", target)
	}
	_, addr, err := ParseListen("ptcp:" + rest)
	if err != nil {
		return nil, fmt.Errorf("ofconn: unsupported listen target %q", target)
	}
	l, err := unixsock.ListenTCP("tcp", addr, s.UnixPerm)
	if err != nil {
		return nil, fmt.Errorf("ofconn: listening on %s: %w", target, err)
	}
	tl := tls.NewListener(l, ts.ServerConfig())
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.Serve(tl)
	}()
	return tl, nil
}

// DialTarget is Dial that also accepts "ssl:IP[:PORT]" (port 6653 by
// default), using the settings in ts; the TLS handshake completes before
// the OpenFlow hello.
func DialTarget(ctx context.Context, target string, ts *TLSSettings, cfg Config, h Handler) (*Conn, error) {
	rest, ok := strings.CutPrefix(target, "ssl:")
	if !ok {
		return Dial(ctx, target, cfg, h)
	}
	if ts == nil {
		return nil, fmt.Errorf("ofconn: %s: SSL is not configured", target)
	}
	_, addr, err := ParseDial("tcp:" + rest)
	if err != nil {
		return nil, fmt.Errorf("ofconn: unsupported target %q", target)
	}
	tc, err := ts.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("ofconn: %s: %w", target, err)
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("ofconn: connecting to %s: %w", target, err)
	}
	tconn := tls.Client(nc, tc)
	hctx, cancel := context.WithTimeout(ctx, tlsHandshakeTimeout)
	err = tconn.HandshakeContext(hctx)
	cancel()
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("ofconn: %s: %w", target, err)
	}
	c, r, err := handshake(ctx, tconn, &cfg, h, target)
	if err != nil {
		tconn.Close()
		return nil, fmt.Errorf("ofconn: %s: %w", target, err)
	}
	go c.run(r)
	return c, nil
}
