package ofptext

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// groupSeeds adds the arguments of testdata/groups.txt whose command
// parses with the given prefix ("add-group", "add-meter", ...).
func groupSeeds(f *testing.F, prefix string, add func(string)) {
	fh, err := os.Open("testdata/groups.txt")
	if err != nil {
		f.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "|", 3)
		if len(parts) == 3 && strings.HasPrefix(parts[0], prefix) {
			add(parts[2])
		}
	}
}

// roundTripGroup encodes gm in OpenFlow 1.5 and formats what that
// decodes to ("" when the switch-side checks refuse it).
func roundTripGroup(t *testing.T, gm *ofp.GroupMod) string {
	b, err := ofp.Encode(nil, mf.OF15, 1, gm)
	if err != nil {
		return ""
	}
	m, err := ofp.Decode(b)
	if err != nil {
		return ""
	}
	got, ok := m.Body.(*ofp.GroupMod)
	if !ok {
		t.Fatalf("%x decodes to %T", b, m.Body)
	}
	return FormatGroupDesc(&ofp.GroupDesc{Type: got.Type, GroupID: got.GroupID, Buckets: got.Buckets,
		SelectionMethod: got.SelectionMethod, SelectionParam: got.SelectionParam, Fields: got.Fields, FieldOrder: got.FieldOrder}, mf.OF15)
}

// FuzzParseGroupMod checks that no input panics and that a group that
// survives an OpenFlow 1.5 encoding prints as text that parses back to
// the same group.
func FuzzParseGroupMod(f *testing.F) {
	groupSeeds(f, "add-group", func(s string) { f.Add(s, int8(ofp.GroupAdd)) })
	groupSeeds(f, "insert-buckets", func(s string) { f.Add(s, int8(ofp.GroupInsertBucket)) })
	groupSeeds(f, "remove-buckets", func(s string) { f.Add(s, int8(ofp.GroupRemoveBucket)) })
	groupSeeds(f, "del-groups", func(s string) { f.Add(s, int8(ofp.GroupDelete)) })
	groupSeeds(f, "add-groups", func(s string) {
		for _, l := range strings.Split(s, `\n`) {
			f.Add(l, int8(GroupFromText))
		}
	})
	f.Fuzz(func(t *testing.T, s string, cmd int8) {
		gm, _, err := ParseGroupMod(s, int(cmd))
		if err != nil {
			return
		}
		_ = FormatGroupMod(gm, mf.OF10)
		if gm.Command != ofp.GroupAdd {
			return
		}
		text := roundTripGroup(t, gm)
		if text == "" {
			return
		}
		again, _, err := ParseGroupMod(text, ofp.GroupAdd)
		if err != nil {
			t.Fatalf("%q prints as %q, which does not parse: %v", s, text, err)
		}
		if text2 := roundTripGroup(t, again); text2 != text {
			t.Fatalf("%q prints as %q, which prints as %q", s, text, text2)
		}
	})
}

// FuzzParseMeterMod checks that no input panics and that a parsed meter
// prints as text that parses back to the same meter.
func FuzzParseMeterMod(f *testing.F) {
	for _, cmd := range []string{"add-meter", "mod-meter", "del-meter", "dump-meters", "meter-stats"} {
		groupSeeds(f, cmd, func(s string) {
			for _, c := range []int{ofp.MeterAdd, ofp.MeterDelete, MeterSelect} {
				f.Add(s, int8(c))
			}
		})
	}
	f.Fuzz(func(t *testing.T, s string, cmd int8) {
		mm, err := ParseMeterMod(s, int(cmd))
		if err != nil || int(cmd) != ofp.MeterAdd {
			return
		}
		text := FormatMeterConfig(&ofp.MeterConfig{Flags: mm.Flags, MeterID: mm.MeterID, Bands: mm.Bands})
		again, err := ParseMeterMod(text, ofp.MeterAdd)
		if err != nil {
			t.Fatalf("%q prints as %q, which does not parse: %v", s, text, err)
		}
		if text2 := FormatMeterConfig(&ofp.MeterConfig{Flags: again.Flags, MeterID: again.MeterID, Bands: again.Bands}); text2 != text {
			t.Fatalf("%q prints as %q, which prints as %q", s, text, text2)
		}
	})
}
