package vswitchd

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ovsdb/server/remote"
)

func TestRemoteAndSSLFlagsAreParsed(t *testing.T) {
	cfg := parseConfig(t)
	if cfg.Remotes != nil || cfg.PrivateKey != "" {
		t.Errorf("defaults: remotes %q, private key %q", cfg.Remotes, cfg.PrivateKey)
	}
	cfg = parseConfig(t, "--remote=ptcp:6640", "--remote", DefaultRemote, "--private-key=db:Open_vSwitch,SSL,private_key",
		"--certificate=/c.pem", "--ca-cert=/ca.pem")
	if strings.Join(cfg.Remotes, " ") != "ptcp:6640 "+DefaultRemote || cfg.Certificate != "/c.pem" || cfg.CACert != "/ca.pem" {
		t.Errorf("parsed %+v", cfg)
	}
	d := &Daemon{cfg: cfg}
	if f := d.sslFiles(remote.SSLFiles{}, ofconn.TLSOptions{}); !reflect.DeepEqual(f, ofconn.TLSFiles{Certificate: "/c.pem", CACert: "/ca.pem"}) {
		t.Errorf("files from flags: %+v", f)
	}
}

func TestStartFailsOnABadRemoteFlag(t *testing.T) {
	for _, bad := range []string{"ptcp:notaport", "db:Open_vSwitch,Nope,target"} {
		cfg := testConfig(t)
		cfg.Remotes = []string{bad}
		if d, err := Start(cfg); err == nil {
			d.Close()
			t.Errorf("--remote=%s: started", bad)
		}
	}
}
