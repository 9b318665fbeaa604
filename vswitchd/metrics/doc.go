// Package metrics serves gvs-vswitchd's Prometheus endpoint (/metrics)
// and Go's profiler (/debug/pprof/) on --metrics-address: per-port
// counters, datapath cache hits, misses, upcalls and flow counts,
// conntrack connections and zone limits, MAC learning tables, OpenFlow
// table sizes and the embedded database's sessions and backlog, read on
// each scrape (nothing is cached between scrapes).
//
// It reads the switch through vswitchd/backer and the database through
// ovsdb/server's counters; it must not import cmd/ and configures
// nothing.
package metrics
