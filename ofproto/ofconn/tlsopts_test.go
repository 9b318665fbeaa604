package ofconn_test

import (
	"crypto/tls"
	"slices"
	"testing"

	"github.com/gvs-project/gvs/ofproto/ofconn"
)

func TestParseSSLProtocolsSpansTheNamedVersions(t *testing.T) {
	for in, want := range map[string][2]uint16{
		"TLSv1.2":               {tls.VersionTLS12, tls.VersionTLS12},
		"TLSv1.2,TLSv1.3":       {tls.VersionTLS12, tls.VersionTLS13},
		"TLSv1,TLSv1.1,TLSv1.2": {tls.VersionTLS10, tls.VersionTLS12},
		" TLSv1.3 , TLSv1.2 ":   {tls.VersionTLS12, tls.VersionTLS13},
	} {
		lo, hi, err := ofconn.ParseSSLProtocols(in)
		if err != nil || lo != want[0] || hi != want[1] {
			t.Errorf("%q: %x-%x %v, want %x-%x", in, lo, hi, err, want[0], want[1])
		}
	}
	for _, in := range []string{"", "SSLv3", "TLSv1.2,TLSv9"} {
		if _, _, err := ofconn.ParseSSLProtocols(in); err == nil {
			t.Errorf("%q parsed", in)
		}
	}
}

func TestParseSSLCiphersNamesSuitesAndKeepsDefaultsForKeywords(t *testing.T) {
	got, err := ofconn.ParseSSLCiphers("ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384")
	if want := []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}; err != nil || !slices.Equal(got, want) {
		t.Errorf("named suites: %x %v", got, err)
	}
	// Open vSwitch's default list: keywords only, Go's defaults stay.
	if got, err := ofconn.ParseSSLCiphers("HIGH:!aNULL:!MD5"); err != nil || got != nil {
		t.Errorf("keywords: %x %v", got, err)
	}
	if _, err := ofconn.ParseSSLCiphers("NO-SUCH-CIPHER:OTHER-BOGUS"); err == nil {
		t.Error("a list of unknown suites parsed")
	}
}

// A listener restricted to TLS 1.3 refuses a client that offers at most
// TLS 1.2 and serves one that offers 1.3.
func TestSSLProtocolsRestrictTheListener(t *testing.T) {
	ca := newTestCA(t, "ca")
	sf := ca.issue("switch", ca)
	sf.Options = ofconn.TLSOptions{MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS13}
	target, _ := startTLSServer(t, sf)
	cf := ca.issue("controller", ca)
	cert, err := tls.LoadX509KeyPair(cf.Certificate, cf.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	dial := func(max uint16) (uint16, error) {
		c, err := tls.Dial("tcp", target[len("ssl:"):], &tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true, MaxVersion: max})
		if err != nil {
			return 0, err
		}
		defer c.Close()
		return c.ConnectionState().Version, nil
	}
	if v, err := dial(tls.VersionTLS12); err == nil {
		t.Errorf("a TLS 1.2 client was served (version %x)", v)
	}
	if v, err := dial(tls.VersionTLS13); err != nil || v != tls.VersionTLS13 {
		t.Errorf("TLS 1.3 client: version %x, %v", v, err)
	}
}
