// Package remote is ovsdb-server's remote logic for the embedded
// database server: it parses --remote targets (punix:, ptcp:, pssl:,
// unix:, tcp:, ssl:, and db:DB,TABLE,COLUMN naming rows such as the
// Manager rows of Open_vSwitch.manager_options), runs a listener per
// passive remote and a reconnecting connection per active one (Open
// vSwitch's backoff and inactivity probes), serves their sessions with
// ovsdb/server, and writes Manager.is_connected and status back as
// ovsdb-server does (managers.go). It reads the SSL row for the caller,
// which owns the TLS settings (the daemon shares them with OpenFlow).
//
// It imports ovsdb/server, ovsdb/client, ovsdb/model and
// internal/unixsock; never ofproto (TLS is an interface ofconn's
// settings satisfy), the datapath or cmd.
package remote
