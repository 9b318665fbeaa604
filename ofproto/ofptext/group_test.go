package ofptext

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// groupsGoldenFile holds, per case of testdata/groups.txt, what Debian's
// ovs-ofctl printed and sent to a fake switch (testdata/gen-groups.py).
const groupsGoldenFile = "testdata/groups_golden.json"

// GroupCase is one golden case: an ovs-ofctl group or meter command, its
// output and exit status, the messages it sent (hex) and ovs-ofctl
// ofp-print's text for each.
type groupCase struct {
	Cmd    string   `json:"cmd"`
	Opts   []string `json:"opts"`
	Arg    *string  `json:"arg"`
	RC     int      `json:"rc"`
	Stdout string   `json:"stdout"`
	Stderr string   `json:"stderr"`
	Sent   []string `json:"sent"`
	Print  []string `json:"print"`
}

func loadGroupCases(t *testing.T) []groupCase {
	t.Helper()
	b, err := os.ReadFile(groupsGoldenFile)
	if err != nil {
		t.Fatal(err)
	}
	var cs []groupCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// parsedMods parses a case's argument the way its command does and
// returns the mods in order; err is the first parse error with the
// file-line prefix ovs-ofctl adds.
func (c *groupCase) parsedMods() (mods []ofp.Message, texts []string, isMeter bool, err error) {
	arg := ""
	if c.Arg != nil {
		arg = *c.Arg
	}
	group := func(s string, cmd int) error {
		gm, _, err := ParseGroupMod(s, cmd)
		if err == nil {
			mods, texts = append(mods, gm), append(texts, s)
		}
		return err
	}
	meter := func(s string, cmd int) error {
		mm, err := ParseMeterMod(s, cmd)
		if err == nil {
			mods, texts = append(mods, mm), append(texts, s)
		}
		return err
	}
	mayCreate := strings.Contains(strings.Join(c.Opts, " "), "--may-create")
	switch c.Cmd {
	case "add-group":
		err = group(arg, ofp.GroupAdd)
	case "mod-group":
		cmd := ofp.GroupModify
		if mayCreate {
			cmd = ofp.GroupAddOrMod
		}
		err = group(arg, cmd)
	case "del-groups":
		err = group(arg, ofp.GroupDelete)
	case "dump-group-stats":
		_, _, err = ParseGroupMod(arg, ofp.GroupDelete)
	case "insert-buckets":
		err = group(arg, ofp.GroupInsertBucket)
	case "remove-buckets":
		err = group(arg, ofp.GroupRemoveBucket)
	case "add-groups":
		n := 0
		for i, l := range strings.Split(arg, `\n`) {
			if j := strings.IndexByte(l, '#'); j >= 0 {
				l = l[:j]
			}
			if l = strings.TrimSpace(l); l == "" {
				continue
			}
			n++
			if err = group(l, GroupFromText); err != nil {
				err = errf("FILE:%d: %v", i+1, err)
				break
			}
		}
	case "add-meter", "mod-meter", "del-meter", "del-meters", "dump-meters", "meter-stats":
		isMeter = true
		cmd := map[string]int{"add-meter": ofp.MeterAdd, "mod-meter": ofp.MeterModify, "del-meter": ofp.MeterDelete,
			"del-meters": ofp.MeterDelete, "dump-meters": MeterSelect, "meter-stats": MeterSelect}[c.Cmd]
		if c.Arg == nil { // ovs-ofctl's default: every meter
			if cmd != MeterSelect {
				mods = append(mods, &ofp.MeterMod{Command: uint16(cmd), MeterID: ofp.MeterAll})
			}
			return mods, nil, true, nil
		}
		if cmd == MeterSelect {
			_, err = ParseMeterMod(arg, cmd)
		} else {
			err = meter(arg, cmd)
		}
	}
	return mods, texts, isMeter, err
}

// TestGroupAndMeterTextParsesEncodesAndPrintsAsOVSOfctl checks, for each
// golden case, that a parse error is ovs-ofctl's message, that parsing
// and encoding in the version and with the transaction ID ovs-ofctl used
// gives the bytes it sent, and that formatting what they decode to gives
// ovs-ofctl ofp-print's text.
func TestGroupAndMeterTextParsesEncodesAndPrintsAsOVSOfctl(t *testing.T) {
	compared := 0
	defer func() {
		if compared < 60 {
			t.Errorf("only %d messages compared", compared)
		}
	}()
	for _, c := range loadGroupCases(t) {
		name := c.Cmd + " " + strings.Join(c.Opts, " ")
		if c.Arg != nil {
			name += " " + *c.Arg
		}
		if c.Cmd == "dump-groups" {
			continue // its argument is a bare number, not the group syntax
		}
		mods, _, _, err := c.parsedMods()
		if err != nil {
			if want := "ovs-ofctl: " + err.Error() + "\n"; c.RC == 0 || c.Stderr != want {
				t.Errorf("%s: parse error %q; ovs-ofctl exited %d with %q", name, err, c.RC, c.Stderr)
			}
			continue
		}
		var sentMods []string
		var prints []string
		for i, h := range c.Sent {
			b, _ := hex.DecodeString(h)
			if len(b) > 1 && (b[1] == 15 && b[0] > 1 || b[1] == 29 || b[0] == 1 && b[1] == 4) {
				sentMods, prints = append(sentMods, h), append(prints, c.Print[i])
			}
		}
		if len(sentMods) > len(mods) {
			t.Errorf("%s: parsed %d mods, ovs-ofctl sent %d", name, len(mods), len(sentMods))
			continue
		}
		if len(sentMods) < len(mods) && c.RC == 0 {
			t.Errorf("%s: parsed %d mods, ovs-ofctl sent %d and succeeded", name, len(mods), len(sentMods))
			continue
		}
		for i, h := range sentMods {
			b, _ := hex.DecodeString(h)
			hdr, err := ofp.ParseHeader(b)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, err := ofp.Encode(nil, hdr.Version, hdr.XID, mods[i])
			if err != nil {
				t.Errorf("%s: encoding for version %d: %v", name, hdr.Version, err)
				continue
			}
			compared++
			if hex.EncodeToString(got) != h {
				t.Errorf("%s: encoded\n%x\novs-ofctl sent\n%s", name, got, h)
			}
			if strings.Contains(prints[i], "decode error") {
				continue
			}
			m, err := ofp.Decode(b)
			if err != nil {
				t.Errorf("%s: decoding what ovs-ofctl sent: %v", name, err)
				continue
			}
			var text string
			switch body := m.Body.(type) {
			case *ofp.GroupMod:
				text = "\n " + FormatGroupMod(body, m.Version)
			case *ofp.MeterMod:
				text = " " + FormatMeterMod(body)
			}
			_, want, _ := strings.Cut(prints[i], ":")
			if text+"\n" != want {
				t.Errorf("%s: formatted\n%q\novs-ofctl ofp-print\n%q", name, text+"\n", want)
			}
		}
	}
}

func TestGroupVersionsFollowOVSOfctlUsableProtocols(t *testing.T) {
	for _, c := range []struct {
		in  string
		cmd int
		vs  Versions
	}{
		{"group_id=1,type=all,bucket=output:1", ofp.GroupAdd, AllVersions},
		{"group_id=1,type=select,selection_method=hash", ofp.GroupAdd, 1<<mf.OF10 | 1<<mf.OF15},
		// A bucket's action parse resets the set, as in ovs-ofctl.
		{"group_id=1,type=select,selection_method=hash,bucket=output:1", ofp.GroupAdd, AllVersions},
		{"group_id=1,command_bucket_id=1", ofp.GroupRemoveBucket, 1<<mf.OF10 | 1<<mf.OF15},
		{"group_id=1,command_bucket_id=1,bucket=output:1", ofp.GroupInsertBucket, AllVersions},
		{"", ofp.GroupDelete, AllVersions},
	} {
		_, vs, err := ParseGroupMod(c.in, c.cmd)
		if err != nil || vs != c.vs {
			t.Errorf("ParseGroupMod(%q, %d) versions = %#x, %v; want %#x", c.in, c.cmd, vs, err, c.vs)
		}
	}
}

func TestKeyValuesSplitAsOVSOfctl(t *testing.T) {
	got := []string{}
	for kv := range keyValues(" a=1,b:2 c(3,(4)),d(x)->y,e, ,f=(g,h),i") {
		got = append(got, kv.key+"|"+kv.value)
	}
	want := []string{"a|1", "b|2", "c|3,(4)", "d|x)->y", "e|", "f|(g,h)", "i|"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("keyValues = %q; want %q", got, want)
	}
}

func TestFormatMeterConfigPrintsAsDumpMeters(t *testing.T) {
	mc := &ofp.MeterConfig{MeterID: 2, Flags: ofp.MeterFlagKbps | ofp.MeterFlagBurst | 0x10,
		Bands: []ofp.MeterBand{{Type: ofp.MeterBandDrop, Rate: 5, BurstSize: 7}, {Type: ofp.MeterBandDSCPRemark, Rate: 1, PrecLevel: 2}, {Type: 9, Rate: 3}}}
	want := "meter=2 kbps burst flags:0x10 bands=\ntype=drop rate=5 burst_size=7\ntype=dscp_remark rate=1 burst_size=0 prec_level=2\ntype=9 rate=3 burst_size=0"
	if got := FormatMeterConfig(mc); got != want {
		t.Errorf("FormatMeterConfig = %q; want %q", got, want)
	}
	// Without the burst flag, Open vSwitch's switch still reports a
	// burst size; ovs-ofctl does not print it.
	mc = &ofp.MeterConfig{MeterID: 1, Flags: ofp.MeterFlagKbps, Bands: []ofp.MeterBand{{Type: ofp.MeterBandDrop, Rate: 100, BurstSize: 100}}}
	if got, want := FormatMeterConfig(mc), "meter=1 kbps bands=\ntype=drop rate=100"; got != want {
		t.Errorf("FormatMeterConfig = %q; want %q", got, want)
	}
}
