package ovsoracle

import "testing"

// Each normalizer hides exactly what it names and leaves the rest.
func TestNormalizersHideOnlyWhatTheyName(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(string) string
		in   string
		want string
	}{
		{"durations", MaskDurations, " cookie=0x0, duration=1.234s, table=0, duration:0.5s duration12.1s", " cookie=0x0, duration:<t>, table=0, duration:<t> duration:<t>"},
		{"ages", MaskAges, "idle_age=3, hard_age=12, n_packets=4", "idle_age=<t>, hard_age=<t>, n_packets=4"},
		{"used", MaskUsed, "used:0.312s, used:never, flags:S", "used:<t>, used:<t>, flags:S"},
		{"dpids", MaskDPIDs, "OFPT_FEATURES_REPLY (xid=0x2): dpid:0000aabbccddeeff", "OFPT_FEATURES_REPLY (xid=0x2): dpid:<dpid>"},
		{"port MACs", MaskPortMACs, " 1(p1): addr:aa:55:aa:55:00:01", " 1(p1): addr:<mac>"},
		{"quoted MACs", MaskQuotedMACs, `mac_in_use: "aa:55:aa:55:00:01" mac: []`, `mac_in_use: "<mac>" mac: []`},
		{"UUIDs", MaskUUIDs, "_uuid: 0b1a2c3d-4e5f-6071-8293-a4b5c6d7e8f9", "_uuid: <uuid>"},
		{"xids", MaskXIDs, "OFPT_PORT_STATUS (OF1.3) (xid=0x0): ADD", "OFPT_PORT_STATUS (OF1.3): ADD"},
		{"recirc IDs", MaskRecircIDs, "recirc_id(0),actions:ct(zone=1),recirc(0x2) recirc_id=17", "recirc_id(0),actions:ct(zone=1),recirc_id=<id>) recirc_id=<id>"},
		{"megaflow counters", MaskMegaflowCounters, "in_port(1), packets:3, bytes:318, used:0.1s", "in_port(1), packets:<n>, bytes:<n>, used:0.1s"},
		{"port error counters", MaskPortErrorCounters, "rx pkts=1, bytes=60, drop=?, errs=0, frame=?", "rx pkts=1, bytes=60, drop=<n>, errs=<n>, frame=<n>"},
		{"log prefixes", StripLogPrefixes, "2026-12-05T03:14:15.123Z|00042|vconn|WARN|refused\nplain\n", "vconn|WARN|refused\nplain\n"},
		{"log lines", DropLogLines, "2026-12-05T03:14:15.123Z|00042|vconn|WARN|refused\nplain\n", "plain\n"},
		{"log directory", MaskDefaultLogDir, `The default log directory is "/tmp/x".`, `The default log directory is "<dir>".`},
		{"unix connections", MaskUnixConnections, "br0<->unix#12: sent", "br0<->unix: sent"},
	} {
		if got := tc.f(tc.in); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestSortLinesKeepsHeadingsAndSortsTheRest(t *testing.T) {
	in := "NXST_FLOW reply (xid=0x4):\n b=2\n a=1\n"
	if got, want := SortLines(in, 1), "NXST_FLOW reply (xid=0x4):\n a=1\n b=2\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := SortLines("b\na", 5), "b\na\n"; got != want {
		t.Errorf("more headings than lines: got %q, want %q", got, want)
	}
}

func TestSortRecordsSortsBlankLineSeparatedRows(t *testing.T) {
	in := "name: p2\nofport: 2\n\nname: p1\nofport: 1\n"
	if got, want := SortRecords(in), "name: p1\nofport: 1\n\nname: p2\nofport: 2\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
