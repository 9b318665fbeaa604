// Package oftable owns a bridge's OpenFlow flow tables (0-254): the rules
// with their actions, cookies, timeouts and counters, and the semantics of
// flow_mod (add, modify, modify_strict, delete, delete_strict with cookie
// masks, out_port/out_group filters, check_overlap, reset_counts) applied
// in versioned transactions, as Open vSwitch's ofproto.c.
//
// # Versions
//
// Every table is an ofproto/classifier.Classifier. A Txn stages its changes
// at the next version (rules added there, old rules removed there) and
// Commit publishes that version in every table at once, so a multi-flow
// flow_mod batch or a bundle is atomic for packets: a translation that
// loaded the version before sees none of the changes, one after sees all.
// Abort undoes the staged changes; nothing was visible.
//
// A modified rule is a new Rule that replaces the old one at the commit
// version and inherits its counters (unless reset_counts), so readers of
// the old version still find a complete rule.
//
// # Limits and eviction
//
// SetLimit gives a table a flow limit (Open vSwitch's Flow_Table
// flow_limit). An add of a new flow to a full table fails with
// OFPFMFC_TABLE_FULL unless eviction is on (overflow_policy=evict, or the
// OpenFlow 1.4 table_mod bit via SetOpenFlowEviction); then a rule with a
// timeout is removed in the same transaction with reason OFPRR_EVICTION:
// from the largest fairness group (Limit.Groups), the least important,
// then the one that would expire first. Replacing or modifying a flow
// needs no room. Shrinking the limit evicts down to it.
//
// # Change reports
//
// OnCommit registers a hook that every commit that changed a table (and
// expiry) calls, under the writer lock, with the transaction's Tag and its
// changes in flow_mod order: rules added (with the rule an add replaced),
// modified (with the old rule) and removed (with the flow_removed reason).
// The switch's flow monitors are built on it (changes.go).
//
// # Concurrency
//
// Lookups (Lookup, Version) never block. Writers (Begin/Apply/Commit,
// Expire, Sweep) are serialized by the Tables mutex. Rule counters are
// atomics updated by the revalidator and the upcall handler.
//
// # Imports
//
// oftable imports ofproto/classifier, ofproto/mf and ofproto/ofp. It must
// not import the datapath, ofconn or the switch: it knows no ports or
// packets.
package oftable
