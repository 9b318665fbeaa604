// Package vswitchd names the layer between gvs-vswitchd's composition
// root (cmd/vswitchd) and the layers it composes: the packages under it
// are library code of the switch daemon that must see both sides of the
// dpif boundary — ofproto and the userspace datapath (datapath/dpnetdev,
// its conntrack) — which ofproto itself may not import.
//
// Import direction: cmd -> vswitchd -> ovsdb/bridge, ofproto, datapath.
// Nothing under ovsdb, ofproto or datapath imports vswitchd, and nothing
// under vswitchd imports cmd (tests/deps_test.go).
package vswitchd
