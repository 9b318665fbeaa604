package ovsoracle

import (
	"regexp"
	"slices"
	"strings"
)

// The normalizers below hide, in the output of Open vSwitch's tools
// (ovs-vsctl, ovs-ofctl, ovs-appctl), what legitimately differs between
// two switches or two runs of one, so that a diff test can require the
// rest to be identical. Each names what it hides; its comment says why
// the value cannot be compared. A test applies the same normalizers to
// both transcripts, so the placeholders only need to be stable.

var (
	durationRE       = regexp.MustCompile(`duration[=:]?[0-9.]+s`)
	ageRE            = regexp.MustCompile(`(idle_age|hard_age)=[0-9]+`)
	usedRE           = regexp.MustCompile(`used:(never|[0-9.]+s)`)
	dpidRE           = regexp.MustCompile(`dpid:[0-9a-f]{16}`)
	portMACRE        = regexp.MustCompile(`addr:[0-9a-f:]{17}`)
	quotedMACRE      = regexp.MustCompile(`"[0-9a-f]{2}(:[0-9a-f]{2}){5}"`)
	uuidRE           = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	xidRE            = regexp.MustCompile(` \(xid=0x[0-9a-fA-F]+\)`)
	recircIDRE       = regexp.MustCompile(`recirc(\(|_id=)(0x[0-9a-f]+|[0-9]+)`)
	megaflowStatsRE  = regexp.MustCompile(`packets:[0-9]+, bytes:[0-9]+`)
	portErrCountRE   = regexp.MustCompile(`(drop|errs|frame|over|crc|coll)=(\?|[0-9]+)`)
	logPrefixRE      = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT[0-9:.]+Z\|\d+\|`)
	logLineRE        = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT[0-9:.]+Z\|.*\n`)
	defaultLogDirRE  = regexp.MustCompile(`The default log directory is ".*"`)
	unixConnectionRE = regexp.MustCompile(`unix#[0-9]+:`)
)

// MaskDurations hides a flow's, meter's or connection's age in seconds
// ("duration=1.234s", "duration:1.2s", "duration1.2s"): it is how long
// ago the test created it, which depends on the machine's speed.
func MaskDurations(s string) string { return durationRE.ReplaceAllString(s, "duration:<t>") }

// MaskAges hides a flow's idle_age and hard_age (whole seconds since it
// was last used or changed): timing, like durations.
func MaskAges(s string) string { return ageRE.ReplaceAllString(s, "$1=<t>") }

// MaskUsed hides when a megaflow last matched ("used:0.312s", or
// "used:never" before its first packet is counted): timing.
func MaskUsed(s string) string { return usedRE.ReplaceAllString(s, "used:<t>") }

// MaskDPIDs hides "dpid:" followed by a datapath ID in ovs-ofctl show
// output: unless configured it derives from a random local-port MAC.
func MaskDPIDs(s string) string { return dpidRE.ReplaceAllString(s, "dpid:<dpid>") }

// MaskPortMACs hides ports' "addr:" MACs in ovs-ofctl output: Open
// vSwitch picks random MACs for local, internal and patch ports.
func MaskPortMACs(s string) string { return portMACRE.ReplaceAllString(s, "addr:<mac>") }

// MaskQuotedMACs hides quoted MACs in OVSDB output (mac_in_use and the
// like): random, or per-process sequence numbers for dummy ports;
// whether one is there is compared, not its value.
func MaskQuotedMACs(s string) string { return quotedMACRE.ReplaceAllString(s, `"<mac>"`) }

// MaskUUIDs hides OVSDB row UUIDs (and UUIDs OVN derives from them):
// random per database.
func MaskUUIDs(s string) string { return uuidRE.ReplaceAllString(s, "<uuid>") }

// MaskXIDs removes " (xid=0x...)" from ovs-ofctl's message headings:
// transaction IDs count the client's requests and the switch's own
// asynchronous messages, which differ by implementation.
func MaskXIDs(s string) string { return xidRE.ReplaceAllString(s, "") }

// MaskRecircIDs hides recirculation IDs ("recirc_id=0x2"; "recirc(0x2)"
// becomes "recirc_id=<id>)"): the datapath allocates them in the order
// it meets recirculations.
func MaskRecircIDs(s string) string { return recircIDRE.ReplaceAllString(s, "recirc_id=<id>") }

// MaskMegaflowCounters hides a megaflow's packet and byte counts in
// dpctl/dump-flows: Open vSwitch executes a miss's first packet outside
// the megaflow and gvs inside it; the OpenFlow rules' counters agree
// and are compared.
func MaskMegaflowCounters(s string) string {
	return megaflowStatsRE.ReplaceAllString(s, "packets:<n>, bytes:<n>")
}

// MaskPortErrorCounters hides a port's drop/error counters in
// dump-ports: a dummy port reports none ("?") or zero depending on the
// netdev class.
func MaskPortErrorCounters(s string) string { return portErrCountRE.ReplaceAllString(s, "$1=<n>") }

// StripLogPrefixes removes the "2026-12-05T03:14:15.123Z|00042|" prefix
// of Open vSwitch log lines that ovs-ofctl prints on errors: a time and a
// per-process sequence number. The rest of the line is compared.
func StripLogPrefixes(s string) string { return logPrefixRE.ReplaceAllString(s, "") }

// DropLogLines removes whole Open vSwitch log lines (a client's vlog
// chatter on stderr, such as reconnection notices, whose number
// depends on timing).
func DropLogLines(s string) string { return logLineRE.ReplaceAllString(s, "") }

// MaskDefaultLogDir hides the log directory ovs-vsctl --help prints: it
// is each test's own directory.
func MaskDefaultLogDir(s string) string {
	return defaultLogDirRE.ReplaceAllString(s, `The default log directory is "<dir>"`)
}

// MaskUnixConnections hides "unix#N:" connection numbers in vconn log
// lines: the switch numbers its connections since it started.
func MaskUnixConnections(s string) string { return unixConnectionRE.ReplaceAllString(s, "unix:") }

// SortLines sorts the lines of s after the first head lines (headings):
// flows, groups, megaflows, connections and tunnel ports are listed in
// hash order, which differs between implementations and runs, so they
// are compared as a set. s keeps one trailing newline.
func SortLines(s string, head int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	head = min(head, len(lines))
	slices.Sort(lines[head:])
	return strings.Join(lines, "\n") + "\n"
}

// SortRecords sorts the blank-line-separated records of ovs-vsctl list
// and find: rows come in the hash order of their random UUIDs.
func SortRecords(s string) string {
	recs := strings.Split(strings.TrimSuffix(s, "\n"), "\n\n")
	slices.Sort(recs)
	return strings.Join(recs, "\n\n") + "\n"
}
