package ofconn

import (
	"crypto/tls"
	"fmt"
	"strings"
)

// TLSOptions are Open vSwitch's --ssl-protocols and --ssl-ciphers: which
// TLS versions and (TLS 1.2 and earlier) cipher suites connections may
// use. The zero value keeps gvs's defaults: TLS 1.2 and 1.3, Go's secure
// suites.
type TLSOptions struct {
	MinVersion, MaxVersion uint16
	// CipherSuites restricts TLS 1.0–1.2 suites (nil: Go's defaults).
	// TLS 1.3 suites are not configurable, as in Go.
	CipherSuites []uint16
}

// sslProtocols are the protocol names --ssl-protocols takes.
var sslProtocols = map[string]uint16{
	"TLSv1":   tls.VersionTLS10,
	"TLSv1.1": tls.VersionTLS11,
	"TLSv1.2": tls.VersionTLS12,
	"TLSv1.3": tls.VersionTLS13,
}

// ParseSSLProtocols parses a comma-separated --ssl-protocols list such as
// "TLSv1.2,TLSv1.3". Go enables a contiguous range of versions, so the
// result spans the lowest to the highest version named.
func ParseSSLProtocols(s string) (min, max uint16, err error) {
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		v, ok := sslProtocols[name]
		if !ok {
			return 0, 0, fmt.Errorf("ssl: protocol not recognized: %s", name)
		}
		if min == 0 || v < min {
			min = v
		}
		if v > max {
			max = v
		}
	}
	if min == 0 {
		return 0, 0, fmt.Errorf("ssl: no protocol in %q", s)
	}
	return min, max, nil
}

// ParseSSLCiphers parses an OpenSSL cipher list as --ssl-ciphers takes
// it ("ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384", names
// separated by colons, commas or spaces). Selection keywords and
// exclusions (HIGH, DEFAULT, !aNULL, ...) leave Go's secure defaults in
// place and give nil; explicitly named suites Go does not implement are
// skipped, and a list naming only such suites is an error, as OpenSSL's
// "no cipher match".
func ParseSSLCiphers(s string) ([]uint16, error) {
	byName := map[string]uint16{}
	for _, cs := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		byName[cs.Name] = cs.ID
	}
	var ids []uint16
	named := 0
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		id, ok := opensslCiphers[f]
		if !ok {
			id, ok = byName[f] // the IANA/Go name works too
		}
		switch {
		case ok:
			named++
			ids = append(ids, id)
		case strings.ContainsAny(f[:1], "!+-@") || strings.ToUpper(f) == f && !strings.Contains(f, "-"):
			// A keyword or a modifier: keep the defaults.
		default:
			named++
		}
	}
	if named > 0 && len(ids) == 0 {
		return nil, fmt.Errorf("ssl: no cipher match in %q", s)
	}
	return ids, nil
}

// opensslCiphers maps OpenSSL's names of the TLS 1.0–1.2 suites Go
// implements to their ids.
var opensslCiphers = map[string]uint16{
	"ECDHE-ECDSA-AES128-GCM-SHA256": tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-RSA-AES128-GCM-SHA256":   tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-ECDSA-AES256-GCM-SHA384": tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-RSA-AES256-GCM-SHA384":   tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-ECDSA-CHACHA20-POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-RSA-CHACHA20-POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-ECDSA-AES128-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
	"ECDHE-RSA-AES128-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
	"ECDHE-ECDSA-AES256-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
	"ECDHE-RSA-AES256-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
	"ECDHE-ECDSA-AES128-SHA256":     tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
	"ECDHE-RSA-AES128-SHA256":       tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,
	"AES128-GCM-SHA256":             tls.TLS_RSA_WITH_AES_128_GCM_SHA256,
	"AES256-GCM-SHA384":             tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
	"AES128-SHA":                    tls.TLS_RSA_WITH_AES_128_CBC_SHA,
	"AES256-SHA":                    tls.TLS_RSA_WITH_AES_256_CBC_SHA,
	"AES128-SHA256":                 tls.TLS_RSA_WITH_AES_128_CBC_SHA256,
	"DES-CBC3-SHA":                  tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA,
	"ECDHE-RSA-DES-CBC3-SHA":        tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA,
}

// apply sets o's versions and suites on c (zero fields keep c's).
func (o TLSOptions) apply(c *tls.Config) *tls.Config {
	if o.MinVersion != 0 {
		c.MinVersion = o.MinVersion
	}
	if o.MaxVersion != 0 {
		c.MaxVersion = o.MaxVersion
	}
	if o.CipherSuites != nil {
		c.CipherSuites = o.CipherSuites
	}
	return c
}
