// Package ctstate keeps the userspace datapaths' connection tracking
// state across a planned restart (--conntrack-state, docs/reliability.md):
// it reads the state file once at start (removing it, or renaming a
// refused one FILE.refused), restores each datapath's connections as the
// datapath is created, writes every datapath's state at a planned stop,
// and registers dpctl/ct-save and dpctl/ct-restore.
//
// It frames conntrack's own encoding in internal/statefile; it must not
// import ofproto, ovsdb nor vswitchd/backer (the daemon hands it the
// datapaths).
package ctstate
