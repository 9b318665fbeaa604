package remote

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/gvs-project/gvs/internal/unixsock"
	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/model"
	"github.com/gvs-project/gvs/ovsdb/server"
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

// SSLFiles are the SSL row's files (the row Open_vSwitch.ssl names, or
// the only SSL row): "" when a column is empty.
type SSLFiles struct {
	PrivateKey, Certificate, CACert string
	BootstrapCACert                 bool
}

// Config is what a Manager serves and where it reports.
type Config struct {
	// Server is the embedded server the remotes serve; nil with an
	// external database, whose own server has the remotes (the Manager
	// then only follows the SSL settings).
	Server *server.Server
	// Remotes are --remote's targets: punix:, ptcp:, pssl:, unix:, tcp:,
	// ssl: and db:DB,TABLE,COLUMN; nil means DefaultRemote alone.
	Remotes []string
	// RunDir is where relative punix:/unix: paths are; SocketPerm the
	// mode and group of punix: sockets.
	RunDir     string
	SocketPerm unixsock.Perm
	// TLS configures pssl: listeners and ssl: connections.
	TLS TLS
	// SSL receives the SSL row's files at start and on each change.
	SSL func(SSLFiles)
	Log *slog.Logger
}

// Manager keeps the embedded server's remotes and the SSL settings in
// step with the flags and the database: it is a client of the database
// like the bridge layer, and writes Manager.is_connected and status back
// as ovsdb-server does.
type Manager struct {
	log *slog.Logger
	ssl func(SSLFiles)
	set *remoteSet // nil with an external database: its server has the remotes
	db  *client.Client
	rep *client.Replica

	static map[string]remoteOptions
	specs  []dbRemote
	// written is the status last written per row (encoded).
	written map[model.UUID]string
}

// managedRow is a row whose connection status is written back.
type managedRow struct {
	table  string
	id     model.UUID
	target string
}

// Start checks the remotes, monitors the columns they and the SSL
// settings are read from over c (which the Manager owns from then on,
// even on error), and applies the first snapshot; Run keeps them in step.
func Start(ctx context.Context, c *client.Client, cfg Config) (*Manager, error) {
	rm := &Manager{log: cfg.Log, ssl: cfg.SSL, db: c, static: map[string]remoteOptions{}, written: map[model.UUID]string{}}
	if rm.ssl == nil {
		rm.ssl = func(SSLFiles) {}
	}
	if cfg.Server != nil {
		rm.set = newRemoteSet(ctx, cfg.Server, cfg.TLS, cfg.RunDir, rm.log)
		rm.set.perm = cfg.SocketPerm
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	schema, err := c.GetSchema(ctx, "Open_vSwitch")
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("remotes: %w", err)
	}
	cols := map[string][]string{
		"Open_vSwitch": {"ssl"},
		"SSL":          {"private_key", "certificate", "ca_cert", "bootstrap_ca_cert"},
	}
	if rm.set != nil {
		remotes := cfg.Remotes
		if remotes == nil {
			remotes = []string{DefaultRemote}
		}
		for _, r := range remotes {
			if !strings.HasPrefix(r, "db:") {
				if _, err := parseRemote(r, cfg.RunDir); err != nil {
					c.Close()
					return nil, err
				}
				rm.static[r] = remoteOptions{InactivityProbe: probeDefault}
				continue
			}
			spec, err := parseDBRemote(r, schema)
			if err != nil {
				c.Close()
				return nil, err
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
		return nil, fmt.Errorf("remotes: monitoring: %w", err)
	}
	rm.configure(rm.rep.Snapshot())
	return rm, nil
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

// Run applies the database's changes and writes the remotes' status
// until ctx ends; then it stops the remotes and closes the connection.
func (rm *Manager) Run(ctx context.Context) {
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
func (rm *Manager) configure(snap *client.Snapshot) []managedRow {
	rm.ssl(sslFiles(snap))
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

// sslFiles returns the files of the SSL row that Open_vSwitch.ssl names
// (or of the only SSL row).
func sslFiles(snap *client.Snapshot) SSLFiles {
	var f SSLFiles
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
	return f
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
func (rm *Manager) writeStatus(ctx context.Context, snap *client.Snapshot, rows []managedRow) {
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
