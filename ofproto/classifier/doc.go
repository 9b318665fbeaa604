// Package classifier owns the ofproto flow classifier: a priority
// classifier over mf.Flow with wildcards, versions, un-wildcarding, staged
// lookup, prefix tries and conjunctive matches, after Open vSwitch's
// lib/classifier. The rule payload is generic; OpenFlow tables store their
// rules' actions and counters in it.
//
// # Overview
//
// A Rule is a match (value and mask over mf.Flow), a priority (higher
// wins) and optionally a list of Conjunction clauses. Rules that share a
// mask live in one subtable, a hash table keyed by the masked flow (tuple
// space search). Subtables are kept in decreasing order of the highest
// priority they hold, so Lookup stops at the first subtable that cannot
// beat the best match found so far.
//
// Un-wildcarding. Lookup(v, flow, wc) ORs into wc every bit it examined:
// every flow that agrees with flow in the bits of wc gets the same result,
// so translation can install the megaflow (flow & wc). Three mechanisms
// keep wc narrow, as in Open vSwitch, because its megaflow tests check the
// masks exactly:
//
//   - Staged lookup. A subtable's mask is split into stages (metadata, L2,
//     L3, L4, with the fields assigned as in Open vSwitch's struct flow).
//     For every stage but the last the subtable keeps the hashes of its
//     rules' stages so far; a miss in a stage un-wildcards only the stages
//     checked.
//   - Prefix tries on up to three address fields (default ip_dst, ip_src,
//     as Open vSwitch's Flow_Table prefixes; see SetPrefixFields). Before
//     a stage holding a tracked field, one trie lookup per classifier
//     lookup tells which prefix lengths have a rule matching the flow's
//     address and how many leading address bits that took; a subtable
//     whose prefix length is not among them is skipped, un-wildcarding
//     only those bits.
//   - A ports trie per subtable: when the last stage holds only tp_src and
//     tp_dst bits and misses, only the port bits up to the first
//     difference are un-wildcarded.
//
// Conjunctive matches. A rule with conjunctions is a clause, not a result.
// When clause rules match with a higher priority than any plain rule, and
// at the highest such priority every clause of some conjunction ID has a
// matching rule, the flow is looked up again with conj_id set to that ID
// and that result is returned; otherwise lower-priority rules with the
// same match as the clauses are considered, exactly as Open vSwitch's
// classifier_lookup__.
//
// # Invariants
//
//   - A false 0-bit in the wildcards returned by Lookup is a bug: the
//     tests check every result against a naive linear model and check the
//     megaflow property on random flows inside each returned megaflow.
//   - A rule is visible in versions [AddVersion, RemoveVersion). Lookups
//     take a version and see exactly the rules visible in it.
//   - Tries and stage indices may over-approximate the rule set (they
//     count invisible rules too), never under-approximate it.
//
// # Life cycle
//
// NewRule, then Insert at a version (usually the next, unpublished one),
// Remove at a version to hide it from that version on, Publish the
// version; then, once no reader can still use an older version, Sweep (or
// Delete) to free the removed rules. A bundle that aborts undoes its
// Removes with RestoreVisibility and its Inserts with Remove at their add
// version. Replace swaps an identical rule immediately (no versioning).
//
// # Thread-safety
//
// Lookup, FindExact, CheckOverlap, Rules, Version and PrefixFields never
// block: readers load immutable snapshots (the subtable order, the trie
// roots, hash chains) published with atomic pointers. All other methods
// are writers and are serialized by a mutex. Writers change structures a
// reader may be walking only by publishing new ones.
//
// # Differences from Open vSwitch
//
//   - Subtables with equal maximum priority are ordered oldest first
//     (Open vSwitch's order among them is unspecified); when one of them
//     matches at that priority, the others are not examined, so their
//     order can change a megaflow.
//   - The ports trie is used only when the last stage has nothing but
//     port bits (Open vSwitch uses it whenever the subtable has port
//     bits, which can leave a final-stage field such as ct_tp_dst
//     wildcarded although it decided the miss).
//   - Prefix fields are named by their mf names; mf has no exported way to
//     locate a field in mf.Flow, so the trie field table is local.
//
// # Imports
//
// classifier imports datapath/flow and ofproto/mf only.
package classifier
