package vswitchd

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/model"
)

// statusInterval is how often connection times in Manager.status are
// refreshed (a change of state is written at once).
const statusInterval = 2500 * time.Millisecond

// dbRemote is a "db:DB,TABLE,COLUMN" remote: the targets are the
// strings in COLUMN of every TABLE row or, when COLUMN refers to rows of
// another table (Open_vSwitch.manager_options to Manager), the target
// columns of the rows it names.
type dbRemote struct {
	table, column string
	ref           string // referenced table; "" when COLUMN holds strings
}

// parseDBRemote parses "db:DB,TABLE,COLUMN" against the schema of the
// served database.
func parseDBRemote(spec string, schema *model.DatabaseSchema) (dbRemote, error) {
	parts := strings.Split(strings.TrimPrefix(spec, "db:"), ",")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return dbRemote{}, fmt.Errorf("remote %q: want db:DATABASE,TABLE,COLUMN", spec)
	}
	if parts[0] != schema.Name {
		return dbRemote{}, fmt.Errorf("remote %q: no database %s", spec, parts[0])
	}
	ts, ok := schema.Tables[parts[1]]
	if !ok {
		return dbRemote{}, fmt.Errorf("remote %q: no table %s", spec, parts[1])
	}
	col, ok := ts.Column(parts[2])
	if !ok {
		return dbRemote{}, fmt.Errorf("remote %q: no column %s in table %s", spec, parts[2], parts[1])
	}
	r := dbRemote{table: parts[1], column: parts[2]}
	switch {
	case col.Type.Key.Type == model.TypeString && !col.Type.IsMap():
	case col.Type.Key.Type == model.TypeUUID && col.Type.Key.RefTable != "" && !col.Type.IsMap():
		r.ref = col.Type.Key.RefTable
		rt := schema.Tables[r.ref]
		if rt == nil {
			return dbRemote{}, fmt.Errorf("remote %q: no table %s", spec, r.ref)
		}
		if c, ok := rt.Column("target"); !ok || c.Type.Key.Type != model.TypeString {
			return dbRemote{}, fmt.Errorf("remote %q: table %s has no string column target", spec, r.ref)
		}
	default:
		return dbRemote{}, fmt.Errorf("remote %q: column %s is neither strings nor references", spec, parts[2])
	}
	return r, nil
}

// remoteManager keeps the embedded server's remotes and the SSL
// settings in step with the flags and the database: it is a client of
// the database like the bridge layer, and writes Manager.is_connected
// and status back as ovsdb-server does.
type remoteManager struct {
	cfg *Config
	log *slog.Logger
	tls ofconn.TLSSettings
	set *remoteSet // nil with an external database: its server has the remotes
	db  *client.Client
	rep *client.Replica

	static map[string]remoteOptions
	specs  []dbRemote
	// tlsOpts are --ssl-protocols and --ssl-ciphers, parsed once.
	tlsOpts ofconn.TLSOptions
	// written is the status last written per row (encoded).
	written map[model.UUID]string
}

// managedRow is a row whose connection status is written back.
type managedRow struct {
	table  string
	id     model.UUID
	target string
}

// TLS returns the SSL settings in force (the SSL table, overridden by
// --private-key, --certificate and --ca-cert) for OpenFlow connections.
func (d *Daemon) TLS() *ofconn.TLSSettings {
	if d.rm == nil {
		return nil
	}
	return &d.rm.tls
}

// startRemotes starts the remote manager: called after the database
// is served and before the bridges start (they use its TLS settings).
func (d *Daemon) startRemotes() error {
	rm := &remoteManager{cfg: d.cfg, log: d.logs.Logger("remotes"), static: map[string]remoteOptions{}, written: map[model.UUID]string{}}
	rm.tlsOpts = parseTLSOptions(d.cfg, rm.log)
	rm.tls.Set(rm.sslFiles(nil))
	d.rm = rm
	target := d.cfg.Database
	if target == "" {
		target = "unix:" + d.dbSock
		rm.set = newRemoteSet(d.ctx, d.db, &rm.tls, d.cfg.RunDir, rm.log)
		rm.set.perm = d.sockPerm
	} else if len(d.cfg.Remotes) > 0 {
		rm.log.Warn("--remote ignored: the database is served by " + target)
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
	rm.db = c
	schema, err := c.GetSchema(ctx, "Open_vSwitch")
	if err != nil {
		c.Close()
		return fmt.Errorf("remotes: %w", err)
	}
	cols := map[string][]string{
		"Open_vSwitch": {"ssl"},
		"SSL":          {"private_key", "certificate", "ca_cert", "bootstrap_ca_cert"},
	}
	if rm.set != nil {
		remotes := d.cfg.Remotes
		if remotes == nil {
			remotes = []string{DefaultRemote}
		}
		for _, r := range remotes {
			if !strings.HasPrefix(r, "db:") {
				if _, err := parseRemote(r, d.cfg.RunDir); err != nil {
					c.Close()
					return err
				}
				rm.static[r] = remoteOptions{InactivityProbe: probeDefault}
				continue
			}
			spec, err := parseDBRemote(r, schema)
			if err != nil {
				c.Close()
				return err
			}
			rm.specs = append(rm.specs, spec)
			cols[spec.table] = append(cols[spec.table], spec.column)
			if spec.ref != "" {
				rt := schema.Tables[spec.ref]
				for _, name := range []string{"target", "inactivity_probe", "max_backoff"} {
					if _, ok := rt.Column(name); ok {
						cols[spec.ref] = append(cols[spec.ref], name)
					}
				}
			}
		}
	}
	var tables []client.MonitorTable
	for _, t := range sortedKeys(cols) {
		tables = append(tables, client.MonitorTable{Table: t, Columns: dedupe(cols[t])})
	}
	rm.rep, err = c.Monitor(ctx, "Open_vSwitch", tables)
	if err != nil {
		c.Close()
		return fmt.Errorf("remotes: monitoring: %w", err)
	}
	rm.configure(rm.rep.Snapshot())
	d.wg.Add(1)
	go func() { defer d.wg.Done(); rm.run(d.ctx) }()
	return nil
}

func dedupe(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func (rm *remoteManager) run(ctx context.Context) {
	defer rm.db.Close()
	tick := time.NewTicker(statusInterval)
	defer tick.Stop()
	var kick chan struct{}
	if rm.set != nil {
		kick = rm.set.kick
		defer rm.set.stopAll()
	}
	for {
		ch := rm.rep.Changed()
		snap := rm.rep.Snapshot()
		rows := rm.configure(snap)
		rm.writeStatus(ctx, snap, rows)
		select {
		case <-ctx.Done():
			return
		case <-ch:
		case <-kick:
		case <-tick.C:
		}
	}
}

// configure applies a snapshot: the SSL settings and the set of remotes.
// It returns the rows whose status is written back.
func (rm *remoteManager) configure(snap *client.Snapshot) []managedRow {
	rm.tls.Set(rm.sslFiles(snap))
	if rm.set == nil {
		return nil
	}
	want := make(map[string]remoteOptions, len(rm.static))
	for t, o := range rm.static {
		want[t] = o
	}
	var rows []managedRow
	for _, spec := range rm.specs {
		for _, row := range snap.Rows(spec.table) {
			for _, k := range row.Get(spec.column).Keys {
				if spec.ref == "" {
					if s, ok := k.(string); ok {
						want[s] = remoteOptions{InactivityProbe: probeDefault}
					}
					continue
				}
				id, ok := k.(model.UUID)
				if !ok {
					continue
				}
				ref := snap.Row(spec.ref, id)
				if ref == nil {
					continue
				}
				target := firstString(ref.Get("target"))
				if target == "" {
					continue
				}
				o := remoteOptions{
					MaxBackoff:      time.Duration(firstInt(ref.Get("max_backoff"))) * time.Millisecond,
					InactivityProbe: probeDefault,
				}
				if p := ref.Get("inactivity_probe"); len(p.Keys) == 1 {
					o.InactivityProbe = time.Duration(firstInt(p)) * time.Millisecond
				}
				want[target] = o
				rows = append(rows, managedRow{table: spec.ref, id: id, target: target})
			}
		}
	}
	rm.set.apply(want)
	return rows
}

// sslFiles returns the SSL files: each flag given as a path wins over the
// SSL row that Open_vSwitch.ssl names (or the only SSL row).
func (rm *remoteManager) sslFiles(snap *client.Snapshot) ofconn.TLSFiles {
	var f ofconn.TLSFiles
	if snap != nil {
		var ssl *client.Row
		for _, ovs := range snap.Rows("Open_vSwitch") {
			for _, k := range ovs.Get("ssl").Keys {
				if id, ok := k.(model.UUID); ok {
					ssl = snap.Row("SSL", id)
				}
			}
		}
		if all := snap.Rows("SSL"); ssl == nil && len(all) == 1 {
			ssl = all[0]
		}
		if ssl != nil {
			f.PrivateKey = firstString(ssl.Get("private_key"))
			f.Certificate = firstString(ssl.Get("certificate"))
			f.CACert = firstString(ssl.Get("ca_cert"))
			d := ssl.Get("bootstrap_ca_cert")
			f.BootstrapCACert = len(d.Keys) == 1 && d.Keys[0] == true
		}
	}
	for _, o := range []struct {
		flag string
		dst  *string
	}{{rm.cfg.PrivateKey, &f.PrivateKey}, {rm.cfg.Certificate, &f.Certificate}, {rm.cfg.CACert, &f.CACert}} {
		if o.flag != "" && !strings.HasPrefix(o.flag, "db:") {
			*o.dst = o.flag
		}
	}
	f.Options = rm.tlsOpts
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

func firstString(d model.Datum) string {
	if len(d.Keys) > 0 {
		if s, ok := d.Keys[0].(string); ok {
			return s
		}
	}
	return ""
}

func firstInt(d model.Datum) int64 {
	if len(d.Keys) > 0 {
		if n, ok := d.Keys[0].(int64); ok {
			return n
		}
	}
	return 0
}

// writeStatus writes is_connected and status to the rows whose values
// changed since last written, in one transaction.
func (rm *remoteManager) writeStatus(ctx context.Context, snap *client.Snapshot, rows []managedRow) {
	now := time.Now()
	txn := rm.db.Txn("Open_vSwitch")
	pending := map[model.UUID]string{}
	live := map[model.UUID]bool{}
	for _, mr := range rows {
		live[mr.id] = true
		r := rm.set.lookup(mr.target)
		if r == nil {
			continue
		}
		conn, st := r.status(now)
		key := encodeStatus(conn, st)
		if rm.written[mr.id] == key {
			continue
		}
		ts := rm.rep.Schema().Tables[mr.table]
		_, hasConn := ts.Column("is_connected")
		_, hasStatus := ts.Column("status")
		if !hasConn || !hasStatus {
			continue
		}
		txn.SetColumns(mr.table, mr.id, map[string]any{"is_connected": conn, "status": st})
		pending[mr.id] = key
	}
	for id := range rm.written {
		if !live[id] {
			delete(rm.written, id)
		}
	}
	if txn.Len() == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := txn.Commit(ctx); err != nil {
		if ctx.Err() == nil {
			rm.log.Debug("writing remote status", "err", err)
		}
		return
	}
	for id, k := range pending {
		rm.written[id] = k
	}
}

func encodeStatus(conn bool, st map[string]string) string {
	var b strings.Builder
	fmt.Fprint(&b, conn)
	for _, k := range sortedKeys(st) {
		b.WriteString("," + k + "=" + st[k])
	}
	return b.String()
}
