package vswitchd

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/server/remote"
)

// DefaultRemote is the embedded server's remote when no --remote is
// given (remote.DefaultRemote).
const DefaultRemote = remote.DefaultRemote

// TLS returns the SSL settings in force (the SSL table, overridden by
// --private-key, --certificate and --ca-cert) for OpenFlow connections
// and the database's pssl:/ssl: remotes.
func (d *Daemon) TLS() *ofconn.TLSSettings { return &d.tls }

// startRemotes starts the remote manager (ovsdb/server/remote): called
// after the database is served and before the bridges start (they use
// its TLS settings).
func (d *Daemon) startRemotes() error {
	log := d.logs.Logger("remotes")
	opts := parseTLSOptions(d.cfg, log)
	d.tls.Set(d.sslFiles(remote.SSLFiles{}, opts))
	cfg := remote.Config{
		Remotes: d.cfg.Remotes, RunDir: d.cfg.RunDir, SocketPerm: d.sockPerm, TLS: &d.tls, Log: log,
		SSL: func(f remote.SSLFiles) { d.tls.Set(d.sslFiles(f, opts)) },
	}
	target := d.cfg.Database
	if target == "" {
		target = "unix:" + d.dbSock
		cfg.Server = d.db
	} else if len(d.cfg.Remotes) > 0 {
		log.Warn("--remote ignored: the database is served by " + target)
	}
	ctx, cancel := context.WithTimeout(d.ctx, 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, target)
	if err != nil {
		if d.cfg.Database != "" {
			// An external database not reachable yet: startBridges
			// retries and then starts the remotes (remotesPending).
			d.remotesPending = true
			return nil
		}
		return fmt.Errorf("remotes: connecting to %s: %w", target, err)
	}
	m, err := remote.Start(d.ctx, c, cfg)
	if err != nil {
		return err
	}
	d.wg.Add(1)
	go func() { defer d.wg.Done(); m.Run(d.ctx) }()
	return nil
}

// sslFiles are the SSL row's files with each flag given as a path
// winning over the row, and --ssl-protocols/--ssl-ciphers.
func (d *Daemon) sslFiles(row remote.SSLFiles, opts ofconn.TLSOptions) ofconn.TLSFiles {
	f := ofconn.TLSFiles{PrivateKey: row.PrivateKey, Certificate: row.Certificate, CACert: row.CACert, BootstrapCACert: row.BootstrapCACert}
	for _, o := range []struct {
		flag string
		dst  *string
	}{{d.cfg.PrivateKey, &f.PrivateKey}, {d.cfg.Certificate, &f.Certificate}, {d.cfg.CACert, &f.CACert}} {
		if o.flag != "" && !strings.HasPrefix(o.flag, "db:") {
			*o.dst = o.flag
		}
	}
	f.Options = opts
	return f
}

// parseTLSOptions reads --ssl-protocols and --ssl-ciphers. As in Open
// vSwitch, a value that cannot be used is logged as an error and the
// defaults stay in force.
func parseTLSOptions(cfg *Config, log *slog.Logger) ofconn.TLSOptions {
	var o ofconn.TLSOptions
	if cfg.SSLProtocols != "" {
		lo, hi, err := ofconn.ParseSSLProtocols(cfg.SSLProtocols)
		if err != nil {
			log.Error(fmt.Sprintf("--ssl-protocols %s: %v; using the defaults", cfg.SSLProtocols, err))
		} else {
			o.MinVersion, o.MaxVersion = lo, hi
		}
	}
	if cfg.SSLCiphers != "" {
		ids, err := ofconn.ParseSSLCiphers(cfg.SSLCiphers)
		if err != nil {
			log.Error(fmt.Sprintf("--ssl-ciphers %s: %v; using the defaults", cfg.SSLCiphers, err))
		} else {
			o.CipherSuites = ids
		}
	}
	return o
}
