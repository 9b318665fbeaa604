// Package vswitchd names the layer between gvs-vswitchd's composition
// root (cmd/vswitchd) and the layers it composes: the packages under it
// are library code of the switch daemon that must see both sides of the
// dpif boundary — ofproto and the userspace datapath (datapath/dpnetdev,
// its conntrack) — which ofproto itself may not import.
//
// Import direction: cmd -> vswitchd -> ovsdb/bridge, ofproto, datapath.
// Nothing under ovsdb, ofproto or datapath imports vswitchd, and nothing
// under vswitchd imports cmd/vswitchd or the CLI packages
// (tests/deps_test.go). The command sets (dpctl, ofcmds, ctcmds, ctstate)
// use the unixctl registry's types, cmd/appctl until that package
// leaves cmd/; the backer imports nothing of cmd/.
//
// Packages: backer (the ofproto-dpif backer: bridge.Switch over the
// datapaths), dpctl, ofcmds and ctcmds (unixctl command sets), ctstate
// (the conntrack state file across restarts), metrics (the Prometheus
// endpoint), heapgoal (the garbage collector's headroom).
package vswitchd
