// Table features (OFPMP_TABLE_FEATURES) as ovs-ofctl reads and prints
// them: each table's properties are reduced to sets (instructions,
// actions, fields) and consecutive tables that agree are abbreviated.

package ofprint

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// tfFieldSet is a set of field IDs.
type tfFieldSet [(mf.NumIDs + 63) / 64]uint64

func (s *tfFieldSet) add(id mf.ID)      { s[id/64] |= 1 << (id % 64) }
func (s *tfFieldSet) has(id mf.ID) bool { return s[id/64]&(1<<(id%64)) != 0 }
func (s *tfFieldSet) empty() bool       { return *s == tfFieldSet{} }

func (s tfFieldSet) and(o tfFieldSet) tfFieldSet {
	for i := range s {
		s[i] &= o[i]
	}
	return s
}

func (s tfFieldSet) or(o tfFieldSet) tfFieldSet {
	for i := range s {
		s[i] |= o[i]
	}
	return s
}

func (s tfFieldSet) not() tfFieldSet {
	for i := range s {
		s[i] = ^s[i]
	}
	return s
}

// tableSet is a set of table IDs 0..254 (next tables).
type tableSet [4]uint64

func (s *tableSet) has(t int) bool { return s[t/64]&(1<<(t%64)) != 0 }

// tfActions is what Write-Actions or Apply-Actions can do: action kinds
// (bits in tfActionNames order) and the fields set_field may write.
type tfActions struct {
	acts      uint64
	setFields tfFieldSet
}

func (a *tfActions) empty() bool { return a.acts == 0 && a.setFields.empty() }

// tfInstructions is one of a table's two instruction sets (for table
// misses and for other flows).
type tfInstructions struct {
	next         tableSet
	insts        uint32 // bits in tfInstNames order
	write, apply tfActions
}

func (t *tfInstructions) empty() bool {
	return t.next == tableSet{} && t.insts == 0 && t.write.empty() && t.apply.empty()
}

// tfTable is one table's features reduced to comparable sets.
type tfTable struct {
	id                           int
	name                         string
	command                      uint8
	metadataMatch, metadataWrite uint64
	eviction, vacancy            int // -1: not said (before OpenFlow 1.4)
	missConfig                   int // index in tfMissConfigs; 0: default
	maxEntries                   uint32
	nonmiss, miss                tfInstructions
	match, mask, wildcard        tfFieldSet
}

// tfInstNames are the instructions in printing order with their
// OFPIT_* types.
var tfInstNames = []struct {
	name string
	typ  uint16
}{
	{"meter", ofp.InstMeter}, {"apply_actions", ofp.InstApplyActions}, {"clear_actions", ofp.InstClearActions},
	{"write_actions", ofp.InstWriteActions}, {"write_metadata", ofp.InstWriteMetadata}, {"goto_table", ofp.InstGotoTable},
}

// tfActionNames are the action kinds table features and OpenFlow 1.1
// and 1.2 table stats can name, in printing order, with their OFPAT_*
// types in OpenFlow 1.1 and in 1.2+ (-1: none).
var tfActionNames = []struct {
	name         string
	typ11, typ12 int
}{
	{"output", 0, 0}, {"group", 22, 22}, {"set_field", -1, 25}, {"set_vlan_vid", 1, -1}, {"set_vlan_pcp", 2, -1},
	{"strip_vlan", 18, 18}, {"push_vlan", 17, 17}, {"mod_dl_src", 3, -1}, {"mod_dl_dst", 4, -1},
	{"mod_nw_src", 5, -1}, {"mod_nw_dst", 6, -1}, {"mod_nw_tos", 7, -1}, {"mod_nw_ecn", 8, -1},
	{"mod_nw_ttl", 23, 23}, {"mod_tp_src", 9, -1}, {"mod_tp_dst", 10, -1}, {"dec_ttl", 24, 24},
	{"set_mpls_label", 13, -1}, {"set_mpls_tc", 14, -1}, {"set_mpls_ttl", 15, 15}, {"dec_mpls_ttl", 16, 16},
	{"push_mpls", 19, 19}, {"pop_mpls", 20, 20}, {"set_queue", 21, 21},
}

// tfActionSet converts a bitmap of OFPAT_* types of version v into
// tfActionNames bits.
func tfActionSet(types uint32, v uint8) uint64 {
	var acts uint64
	for i, a := range tfActionNames {
		t := a.typ12
		if v == mf.OF11 {
			t = a.typ11
		}
		if t >= 0 && types&(1<<t) != 0 {
			acts |= 1 << i
		}
	}
	return acts
}

// Property types every table must list (OpenFlow 1.3 and 1.4 always,
// OpenFlow 1.5 when it lists any).
const tfRequired = 1<<ofp.TFPInstructions | 1<<ofp.TFPNextTables | 1<<ofp.TFPWriteActions |
	1<<ofp.TFPApplyActions | 1<<ofp.TFPMatch | 1<<ofp.TFPWildcards | 1<<ofp.TFPWriteSetfield | 1<<ofp.TFPApplySetfield

func tfErr(code ofp.ErrCode, format string, a ...any) error {
	return &ofp.Error{Code: code, Err: fmt.Errorf(format, a...)}
}

// tfIDs walks a list of 4-byte-or-longer type/length items (instruction
// or action IDs), packed without padding.
func tfIDs(b []byte, each func(typ uint16)) error {
	for len(b) > 0 {
		if len(b) < 4 {
			return tfErr(ofp.OFPBPC_BAD_LEN, "%d-byte ID", len(b))
		}
		n := int(binary.BigEndian.Uint16(b[2:]))
		if n < 4 || n > len(b) {
			return tfErr(ofp.OFPBPC_BAD_LEN, "ID of length %d with %d bytes left", n, len(b))
		}
		each(binary.BigEndian.Uint16(b))
		b = b[n:]
	}
	return nil
}

// tfFields reads a list of OXM headers into exact and masked sets;
// unknown fields are skipped, as a controller does.
func tfFields(b []byte, exact, masked *tfFieldSet) error {
	for len(b) > 0 {
		if len(b) < 4 {
			return tfErr(ofp.OFPBMC_BAD_LEN, "%d-byte OXM header", len(b))
		}
		h := binary.BigEndian.Uint32(b)
		class, field, hasMask, n := uint16(h>>16), uint8(h>>9&0x7f), h&0x100 != 0, int(h&0xff)
		var exp uint32
		size := 4
		if class == mf.ClassExperimenter {
			if len(b) < 8 {
				return tfErr(ofp.OFPBMC_BAD_LEN, "%d-byte experimenter OXM header", len(b))
			}
			if n < 4 {
				return tfErr(ofp.OFPBMC_BAD_LEN, "experimenter OXM header of length %d", n)
			}
			exp, size = binary.BigEndian.Uint32(b[4:]), 8
		}
		b = b[size:]
		f := mf.Std.ByHeader(class, field, exp)
		if f == nil {
			continue
		}
		switch {
		case hasMask && masked == nil:
			return tfErr(ofp.OFPBMC_BAD_MASK, "%s masked", f.Name)
		case hasMask:
			masked.add(f.ID)
		case exact == nil:
			return tfErr(ofp.OFPBMC_BAD_MASK, "%s not masked", f.Name)
		default:
			exact.add(f.ID)
		}
	}
	return nil
}

func tfActionsOf(b []byte, acts *uint64) error {
	var types uint32
	err := tfIDs(b, func(t uint16) {
		if t < 32 {
			types |= 1 << t
		}
	})
	*acts = tfActionSet(types, mf.OF13)
	return err
}

func tfInstructionsOf(b []byte, insts *uint32) error {
	return tfIDs(b, func(t uint16) {
		for i, in := range tfInstNames {
			if in.typ == t {
				*insts |= 1 << i
			}
		}
	})
}

func tfNextTables(b []byte, next *tableSet) error {
	for _, t := range b {
		if t == 255 {
			return tfErr(ofp.OFPBPC_BAD_VALUE, "next table 255")
		}
		next[t/64] |= 1 << (t % 64)
	}
	return nil
}

// reduceTableFeatures turns one decoded table into sets as ovs-ofctl
// does, with its checks (table 255, bad commands, duplicate or missing
// properties).
func reduceTableFeatures(v uint8, tf *ofp.TableFeatures) (*tfTable, error) {
	t := &tfTable{id: int(tf.TableID), name: tf.Name, metadataMatch: tf.MetadataMatch, metadataWrite: tf.MetadataWrite,
		eviction: -1, vacancy: -1, maxEntries: tf.MaxEntries}
	if v >= mf.OF15 {
		if tf.Command > 3 {
			return nil, tfErr(ofp.OFPTFFC_BAD_COMMAND, "command %d", tf.Command)
		}
		t.command = tf.Command
	}
	if tf.TableID == 255 {
		return nil, tfErr(ofp.OFPTFFC_BAD_TABLE, "table 255")
	}
	if v >= mf.OF14 {
		t.eviction, t.vacancy = int(tf.Capabilities&1), int(tf.Capabilities>>3&1)
	}
	var seen uint32
	for _, p := range tf.Props {
		if p.Type < 32 {
			if seen&(1<<p.Type) != 0 {
				return nil, tfErr(ofp.OFPTFFC_BAD_FEATURES, "property %d twice", p.Type)
			}
			seen |= 1 << p.Type
		}
		var err error
		switch p.Type {
		case ofp.TFPInstructions:
			err = tfInstructionsOf(p.Data, &t.nonmiss.insts)
		case ofp.TFPInstructions + 1:
			err = tfInstructionsOf(p.Data, &t.miss.insts)
		case ofp.TFPNextTables:
			err = tfNextTables(p.Data, &t.nonmiss.next)
		case ofp.TFPNextTables + 1:
			err = tfNextTables(p.Data, &t.miss.next)
		case ofp.TFPWriteActions:
			err = tfActionsOf(p.Data, &t.nonmiss.write.acts)
		case ofp.TFPWriteActions + 1:
			err = tfActionsOf(p.Data, &t.miss.write.acts)
		case ofp.TFPApplyActions:
			err = tfActionsOf(p.Data, &t.nonmiss.apply.acts)
		case ofp.TFPApplyActions + 1:
			err = tfActionsOf(p.Data, &t.miss.apply.acts)
		case ofp.TFPMatch:
			err = tfFields(p.Data, &t.match, &t.mask)
		case ofp.TFPWildcards:
			err = tfFields(p.Data, &t.wildcard, nil)
		case ofp.TFPWriteSetfield:
			err = tfFields(p.Data, &t.nonmiss.write.setFields, nil)
		case ofp.TFPWriteSetfield + 1:
			err = tfFields(p.Data, &t.miss.write.setFields, nil)
		case ofp.TFPApplySetfield:
			err = tfFields(p.Data, &t.nonmiss.apply.setFields, nil)
		case ofp.TFPApplySetfield + 1:
			err = tfFields(p.Data, &t.miss.apply.setFields, nil)
		}
		if err != nil {
			return nil, err
		}
	}
	anyProps := len(tf.Props) > 0
	if seen&tfRequired != tfRequired && (anyProps || v < mf.OF15) {
		return nil, tfErr(ofp.OFPTFFC_BAD_FEATURES, "table %d lacks required properties", tf.TableID)
	}
	if anyProps {
		// A missing _MISS property means "same as for other flows".
		if seen&(1<<(ofp.TFPInstructions+1)) == 0 {
			t.miss.insts = t.nonmiss.insts
		}
		if seen&(1<<(ofp.TFPNextTables+1)) == 0 {
			t.miss.next = t.nonmiss.next
		}
		if seen&(1<<(ofp.TFPWriteActions+1)) == 0 {
			t.miss.write.acts = t.nonmiss.write.acts
		}
		if seen&(1<<(ofp.TFPApplyActions+1)) == 0 {
			t.miss.apply.acts = t.nonmiss.apply.acts
		}
		if seen&(1<<(ofp.TFPWriteSetfield+1)) == 0 {
			t.miss.write.setFields = t.nonmiss.write.setFields
		}
		if seen&(1<<(ofp.TFPApplySetfield+1)) == 0 {
			t.miss.apply.setFields = t.nonmiss.apply.setFields
		}
	}
	// Maskable fields are matchable and wildcardable; only matchable
	// fields are wildcardable.
	t.match = t.match.or(t.mask)
	t.wildcard = t.wildcard.or(t.mask).and(t.match)
	return t, nil
}

// nextEqual compares next-table sets of tables ta and tb, ignoring that
// a table cannot go to itself: table N listing N+1 equals table N+1
// not listing it.
func nextEqual(a *tableSet, ta int, b *tableSet, tb int) bool {
	if ta == tb+1 {
		a, ta, b, tb = b, tb, a, ta
	}
	if tb == ta+1 && tb < 255 && a.has(tb) && !b.has(tb) {
		d := *a
		d[tb/64] &^= 1 << (tb % 64)
		return d == *b
	}
	return *a == *b
}

func (a *tfInstructions) equal(ta int, b *tfInstructions, tb int) bool {
	return nextEqual(&a.next, ta, &b.next, tb) && a.insts == b.insts && a.write == b.write && a.apply == b.apply
}

func (a *tfTable) sameFeatures(b *tfTable) bool {
	return a.metadataMatch == b.metadataMatch && a.metadataWrite == b.metadataWrite &&
		a.missConfig == b.missConfig && a.eviction == b.eviction && a.vacancy == b.vacancy && a.maxEntries == b.maxEntries &&
		a.nonmiss.equal(a.id, &b.nonmiss, b.id) && a.miss.equal(a.id, &b.miss, b.id) && a.match == b.match
}

func (a *tfTable) empty() bool {
	return a.metadataMatch == 0 && a.metadataWrite == 0 && a.missConfig == 0 && a.eviction < 0 && a.vacancy < 0 && a.maxEntries == 0 &&
		a.nonmiss.empty() && a.miss.empty() && a.match.empty()
}

// tfPrinter prints tables one after another, folding runs of unnamed
// tables equal to their predecessor into one "ditto" line.
type tfPrinter struct {
	sb                    strings.Builder
	prev                  *tfTable
	prevStats             *tfStats
	firstDitto, lastDitto int
}

// tfStats are a table's counters (table stats replies only).
type tfStats struct {
	active          uint32
	lookup, matched uint64
}

// tfMissConfigs name what a table does on a miss (OpenFlow 1.1 and 1.2).
var tfMissConfigs = []string{"default", "controller", "continue", "drop"}

func newTFPrinter() *tfPrinter { return &tfPrinter{firstDitto: -1, lastDitto: -1} }

var tfCommands = []string{"replace", "modify", "enable", "disable"}

func (p *tfPrinter) add(t *tfTable) { p.addStats(t, nil) }

// addStats adds a table with its counters (nil: features only).
func (p *tfPrinter) addStats(t *tfTable, st *tfStats) {
	s := &p.sb
	prev, prevStats := p.prev, p.prevStats
	p.prev, p.prevStats = t, st
	if prev == nil && t.command != 0 {
		name := "***bad command***"
		if int(t.command) < len(tfCommands) {
			name = tfCommands[t.command]
		}
		fmt.Fprintf(s, "\n  command: %s", name)
	}
	sameStats := st == nil || prevStats != nil && *st == *prevStats
	sameFeatures := prev != nil && t.sameFeatures(prev)
	same := sameStats && sameFeatures
	if same && t.name == "" {
		if p.firstDitto < 0 {
			p.firstDitto = t.id
		}
		p.lastDitto = t.id
		return
	}
	p.finishDitto()
	fmt.Fprintf(s, "\n  table %d", t.id)
	if t.name != "" {
		fmt.Fprintf(s, " (\"%s\")", t.name)
	}
	s.WriteByte(':')
	if same {
		s.WriteString(" ditto")
		return
	}
	s.WriteByte('\n')
	if st != nil {
		fmt.Fprintf(s, "    active=%d, lookup=%d, matched=%d\n", st.active, st.lookup, st.matched)
	}
	if sameFeatures {
		if !t.empty() {
			s.WriteString("    (same features)\n")
		}
		return
	}
	if t.metadataMatch != 0 || t.metadataWrite != 0 {
		fmt.Fprintf(s, "    metadata: match=%s write=%s\n", hex0x(t.metadataMatch), hex0x(t.metadataWrite))
	}
	if t.missConfig != 0 {
		fmt.Fprintf(s, "    config=%s\n", tfMissConfigs[t.missConfig])
	}
	supported := func(what string, v int) {
		if v >= 0 {
			not := "not "
			if v != 0 {
				not = ""
			}
			fmt.Fprintf(s, "    %s: %ssupported\n", what, not)
		}
	}
	supported("eviction", t.eviction)
	supported("vacancy events", t.vacancy)
	if t.maxEntries != 0 {
		fmt.Fprintf(s, "    max_entries=%d\n", t.maxEntries)
	}
	var prevNon, prevMiss *tfInstructions
	if prev != nil {
		prevNon, prevMiss = &prev.nonmiss, &prev.miss
	}
	switch {
	case prev != nil && t.nonmiss.equal(t.id, prevNon, prev.id) && t.miss.equal(t.id, prevMiss, prev.id):
		if !t.nonmiss.empty() {
			s.WriteString("    (same instructions)\n")
		}
	case !t.nonmiss.equal(t.id, &t.miss, t.id):
		s.WriteString("    instructions (other than table miss):\n")
		printTFInstructions(s, &t.nonmiss, prevNon)
		s.WriteString("    instructions (table miss):\n")
		printTFInstructions(s, &t.miss, prevMiss)
	case !t.nonmiss.empty():
		s.WriteString("    instructions (table miss and others):\n")
		printTFInstructions(s, &t.nonmiss, prevNon)
	}
	if !t.match.empty() {
		if prev != nil && t.match == prev.match {
			s.WriteString("    (same matching)\n")
		} else {
			s.WriteString("    matching:\n")
			for _, m := range []struct {
				mask, wild tfFieldSet
				title      string
			}{
				{t.mask, t.wildcard, "arbitrary mask"},
				{t.mask.not(), t.wildcard, "exact match or wildcard"},
				{t.mask.not(), t.wildcard.not(), "must exact match"},
			} {
				bm := t.match.and(m.mask).and(m.wild)
				if !bm.empty() {
					fmt.Fprintf(s, "      %s:", m.title)
					printFieldSet(s, &bm)
					s.WriteByte('\n')
				}
			}
		}
	}
}

// finishDitto ends a pending run of "ditto" tables.
func (p *tfPrinter) finishDitto() {
	if p.firstDitto < 0 {
		return
	}
	if p.firstDitto == p.lastDitto {
		fmt.Fprintf(&p.sb, "\n  table %d: ditto\n", p.firstDitto)
	} else {
		fmt.Fprintf(&p.sb, "\n  tables %d...%d: ditto\n", p.firstDitto, p.lastDitto)
	}
	p.firstDitto = -1
}

// hex0x is C's %#x: zero has no prefix.
func hex0x(v uint64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%#x", v)
}

func printTFInstructions(s *strings.Builder, t, prev *tfInstructions) {
	if t.next != (tableSet{}) {
		s.WriteString("      next tables: ")
		var parts []string
		for start := 0; start < 255; start++ {
			if !t.next.has(start) {
				continue
			}
			end := start + 1
			for end < 255 && t.next.has(end) {
				end++
			}
			if end == start+1 {
				parts = append(parts, strconv.Itoa(start))
			} else {
				parts = append(parts, fmt.Sprintf("%d-%d", start, end-1))
			}
			start = end
		}
		s.WriteString(strings.Join(parts, ","))
		s.WriteByte('\n')
	}
	if t.insts != 0 {
		if prev != nil && t.insts == prev.insts {
			s.WriteString("      (same instructions)\n")
		} else {
			var names []string
			for i, in := range tfInstNames {
				if t.insts&(1<<i) != 0 {
					names = append(names, in.name)
				}
			}
			s.WriteString("      instructions: " + strings.Join(names, " ") + "\n")
		}
	}
	switch {
	case prev != nil && t.write == prev.write && t.apply == prev.apply && !t.write.setFields.empty():
		s.WriteString("      (same actions)\n")
	case t.write != t.apply:
		s.WriteString("      Write-Actions features:\n")
		printTFActions(s, &t.write)
		s.WriteString("      Apply-Actions features:\n")
		printTFActions(s, &t.apply)
	case !t.write.empty():
		s.WriteString("      Write-Actions and Apply-Actions features:\n")
		printTFActions(s, &t.write)
	}
}

func printTFActions(s *strings.Builder, a *tfActions) {
	if a.acts != 0 {
		var names []string
		for i, an := range tfActionNames {
			if a.acts&(1<<i) != 0 {
				names = append(names, an.name)
			}
		}
		s.WriteString("        actions: " + strings.Join(names, " ") + "\n")
	}
	if !a.setFields.empty() {
		s.WriteString("        supported on Set-Field:")
		printFieldSet(s, &a.setFields)
		s.WriteByte('\n')
	}
}

// printFieldSet writes " " and the set's field names, abbreviated.
func printFieldSet(s *strings.Builder, fs *tfFieldSet) {
	var names []string
	for id := mf.ID(0); id < mf.NumIDs; id++ {
		if fs.has(id) {
			names = append(names, mf.ByID(id).Name)
		}
	}
	if len(names) > 0 {
		s.WriteByte(' ')
		abbreviateNames(s, names, 0)
	}
}

// abbreviateNames writes names (all sharing their first skip bytes,
// which are left out) separated by spaces at the top level and commas
// inside braces, folding runs of numbered names ("reg0...reg15") and of
// names with a common prefix up to an underscore ("eth_{src,dst}").
func abbreviateNames(s *strings.Builder, names []string, skip int) {
	for group := 0; len(names) > 0; group++ {
		if group > 0 {
			if skip > 0 {
				s.WriteByte(',')
			} else {
				s.WriteByte(' ')
			}
		}
		prefixRun, extra := commonPrefixRun(names, skip)
		seqRun := sequentialRun(names)
		run := max(prefixRun, seqRun)
		if seqRun >= prefixRun {
			s.WriteString(names[0][skip:])
			if run > 1 {
				s.WriteString("..." + names[run-1][skip:])
			}
		} else {
			s.WriteString(names[0][skip:skip+extra] + "{")
			abbreviateNames(s, names[:run], skip+extra)
			s.WriteByte('}')
		}
		names = names[run:]
	}
}

// underscorePrefix is the length of the longest common prefix of a and b
// that ends in "_" (0 if none).
func underscorePrefix(a, b string) int {
	n := 0
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '_' {
			n = i + 1
		}
	}
	return n
}

// commonPrefixRun counts the names at the start sharing an extra
// underscore-ended prefix beyond skip, and that prefix's length.
func commonPrefixRun(names []string, skip int) (run, extra int) {
	if len(names) < 2 {
		return len(names), 0
	}
	extra = underscorePrefix(names[0][skip:], names[1][skip:])
	if extra == 0 {
		return 1, 0
	}
	i := 2
	for ; i < len(names); i++ {
		n := underscorePrefix(names[0][skip:], names[i][skip:])
		if n == 0 {
			break
		}
		extra = min(extra, n)
	}
	return i, extra
}

// sequentialRun counts names at the start numbered one after another
// ("reg0 reg1 reg2"); a run of two counts as one.
func sequentialRun(names []string) int {
	i := 1
	for i < len(names) && sequential(names[i-1], names[i]) {
		i++
	}
	if i == 2 {
		return 1
	}
	return i
}

// sequential reports whether b is a with its numeric suffix plus one.
func sequential(a, b string) bool {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) && i == len(b) {
		return false
	}
	na, nb := a[i:], b[i:]
	if !allDigits(na) || !allDigits(nb) || len(na) >= 10 || len(nb) >= 10 {
		return false
	}
	x, _ := strconv.Atoi(na)
	y, _ := strconv.Atoi(nb)
	return x+1 == y
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// tableFeaturesOf returns the tables and flags of a table features
// request or reply, or ok false for any other message.
func tableFeaturesOf(m *ofp.Msg) (tables []ofp.TableFeatures, flags uint16, name string, ok bool) {
	switch b := m.Body.(type) {
	case *ofp.TableFeaturesRequest:
		return b.Tables, b.Flags, "OFPST_TABLE_FEATURES request", true
	case *ofp.TableFeaturesReply:
		return b.Tables, b.Flags, "OFPST_TABLE_FEATURES reply", true
	}
	return nil, 0, "", false
}

// printTableFeaturesMsg prints a table features request or reply as
// ovs-ofctl's ofp-print does; raw is the whole message, dumped after a
// decode error or at verbosity 5 and up.
func printTableFeaturesMsg(w *bufio.Writer, m *ofp.Msg, raw []byte, verbosity int) {
	tables, flags, name, _ := tableFeaturesOf(m)
	printTableFeatures(w, m, name, flags, tables, nil, raw, verbosity)
}

// printTableFeaturesPartial prints a table features message that ofp
// cannot decode as a whole: the tables before the first bad one, then
// the error, as ovs-ofctl (which decodes table by table) does. It
// reports whether raw was such a message.
func printTableFeaturesPartial(w *bufio.Writer, raw []byte, verbosity int) bool {
	if len(raw) < 16 || raw[0] < mf.OF13 || raw[1] != 18 && raw[1] != 19 ||
		binary.BigEndian.Uint16(raw[8:]) != 12 || int(binary.BigEndian.Uint16(raw[2:])) != len(raw) {
		return false
	}
	m := &ofp.Msg{Version: raw[0], XID: binary.BigEndian.Uint32(raw[4:]), Raw: ofp.RawOFPST13_TABLE_FEATURES_REPLY}
	name := "OFPST_TABLE_FEATURES reply"
	if raw[1] == 18 {
		m.Raw, name = ofp.RawOFPST13_TABLE_FEATURES_REQUEST, "OFPST_TABLE_FEATURES request"
	}
	tables, err := splitTableFeatures(raw)
	if err == nil {
		return false
	}
	printTableFeatures(w, m, name, binary.BigEndian.Uint16(raw[10:]), tables, err, raw, verbosity)
	return true
}

// splitTableFeatures decodes a table features message (whose header ofp
// accepted) table by table: the tables before the first bad one, and
// that one's error.
func splitTableFeatures(raw []byte) ([]ofp.TableFeatures, error) {
	var tables []ofp.TableFeatures
	for body := raw[16:]; len(body) > 0; {
		n := 0
		if len(body) >= 64 {
			n = int(binary.BigEndian.Uint16(body))
		}
		if n < 64 || n%8 != 0 || n > len(body) {
			return tables, tfErr(ofp.OFPBPC_BAD_LEN, "table features entry of length %d in %d bytes", n, len(body))
		}
		one := append(append([]byte(nil), raw[:16]...), body[:n]...)
		binary.BigEndian.PutUint16(one[2:], uint16(len(one)))
		dm, err := ofp.Decode(one)
		if err != nil {
			return tables, err
		}
		t, _, _, _ := tableFeaturesOf(dm)
		tables = append(tables, t...)
		body = body[n:]
	}
	return tables, nil
}

// printTableFeatures prints the header line and tables, then decodeErr
// (an error found after the tables) if any.
func printTableFeatures(w *bufio.Writer, m *ofp.Msg, name string, flags uint16, tables []ofp.TableFeatures, decodeErr error, raw []byte, verbosity int) {
	header(w, name, m)
	printStatsFlags(w, flags, m.Raw == ofp.RawOFPST13_TABLE_FEATURES_REQUEST, m.Version)
	p := newTFPrinter()
	err := decodeErr
	for i := range tables {
		t, terr := reduceTableFeatures(m.Version, &tables[i])
		if terr != nil {
			err = terr
			break
		}
		p.add(t)
	}
	p.finishDitto()
	body := p.sb.String()
	w.WriteString(body)
	if err != nil {
		// Something printed after the header line ends with a newline,
		// else the error follows the header line.
		if body == "" && flags == 0 {
			w.WriteByte(' ')
		} else if !strings.HasSuffix(body, "\n") {
			w.WriteByte('\n')
		}
		fmt.Fprintf(w, "***decode error: %s***\n", ofp.CodeOf(err))
	} else if !strings.HasSuffix(body, "\n") {
		w.WriteByte('\n')
	}
	if verbosity >= 5 || err != nil {
		HexDump(w, raw)
	}
}

// printStatsFlags prints a multipart message's flags as ovs-ofctl does.
func printStatsFlags(w *bufio.Writer, flags uint16, request bool, v uint8) {
	if flags == 0 {
		return
	}
	w.WriteString(" flags=")
	if (!request || v >= mf.OF13) && flags&ofp.StatsReplyMore != 0 {
		w.WriteString("[more]")
		flags &^= ofp.StatsReplyMore
	}
	if flags != 0 {
		fmt.Fprintf(w, "[***unknown flags 0x%04x***]", flags)
	}
}

// of11MatchFields are OpenFlow 1.1's OFPFMF11_* bits (match and
// wildcards in table stats) with the field each stands for.
var of11MatchFields = []struct {
	bit  uint
	name string
}{
	{0, "in_port"}, {1, "vlan_vid"}, {2, "vlan_pcp"}, {3, "eth_type"}, {4, "nw_tos"}, {5, "nw_proto"},
	{6, "tcp_src"}, {7, "tcp_dst"}, {8, "mpls_label"}, {9, "mpls_tc"}, {11, "eth_src"}, {12, "eth_dst"},
	{13, "ip_src"}, {14, "ip_dst"}, {15, "metadata"},
}

// legacyFields converts an OpenFlow 1.1 OFPFMF11_* bitmap or an
// OpenFlow 1.2 bitmap of basic OXM field numbers into fields.
func legacyFields(bm uint64, v uint8) tfFieldSet {
	var fs tfFieldSet
	if v == mf.OF11 {
		for _, m := range of11MatchFields {
			if f := mf.ByName(m.name); f != nil && bm&(1<<m.bit) != 0 {
				fs.add(f.ID)
			}
		}
		return fs
	}
	fields := mf.Std.Fields()
	for i := range fields {
		h, ok := fields[i].HeaderFor(v)
		if ok && h.Version <= v && h.Class == mf.ClassOpenFlow && h.Field < 64 && bm&(1<<h.Field) != 0 {
			fs.add(fields[i].ID)
		}
	}
	return fs
}

// of10WildcardFields are OpenFlow 1.0's OFPFW10_* wildcard bits (the
// address ones are 6-bit prefix lengths) with the field each stands for.
var of10WildcardFields = []struct {
	mask uint32
	name string
}{
	{1 << 0, "in_port"}, {1 << 1, "vlan_vid"}, {1 << 2, "eth_src"}, {1 << 3, "eth_dst"}, {1 << 4, "eth_type"},
	{1 << 5, "nw_proto"}, {1 << 6, "tcp_src"}, {1 << 7, "tcp_dst"}, {0x3f << 8, "ip_src"}, {0x3f << 14, "ip_dst"},
	{1 << 20, "vlan_pcp"}, {1 << 21, "nw_tos"},
}

// statsTable reduces a table stats entry as ovs-ofctl does: OpenFlow
// 1.0 carries the matchable fields, 1.1 and 1.2 the table's features,
// 1.3 and later counters only.
func statsTable(ts *ofp.TableStats, v uint8) *tfTable {
	switch v {
	case mf.OF10:
		t := &tfTable{id: int(ts.TableID), name: ts.Name, maxEntries: ts.MaxEntries, eviction: -1, vacancy: -1}
		for _, f := range of10WildcardFields {
			if fd := mf.ByName(f.name); fd != nil && uint32(ts.Wildcards)&f.mask != 0 {
				t.wildcard.add(fd.ID)
			}
		}
		t.match = t.wildcard
		return t
	case mf.OF11, mf.OF12:
		return legacyTable(ts, v)
	}
	return &tfTable{id: int(ts.TableID), name: ts.Name, eviction: -1, vacancy: -1}
}

// legacyTable reduces an OpenFlow 1.1 or 1.2 table stats entry (which
// carries the table's features) as ovs-ofctl does.
func legacyTable(ts *ofp.TableStats, v uint8) *tfTable {
	t := &tfTable{id: int(ts.TableID), name: ts.Name, maxEntries: ts.MaxEntries, eviction: -1, vacancy: -1,
		missConfig: [4]int{1, 2, 3, 1}[ts.Config&3]}
	for i, in := range tfInstNames {
		if in.typ != ofp.InstMeter && ts.Instructions&(1<<in.typ) != 0 {
			t.nonmiss.insts |= 1 << i
		}
	}
	t.nonmiss.write.acts = tfActionSet(ts.WriteActions, v)
	// Open vSwitch reads OpenFlow 1.1's apply actions from the write
	// actions column.
	t.nonmiss.apply.acts = t.nonmiss.write.acts
	if v == mf.OF12 {
		t.nonmiss.apply.acts = tfActionSet(ts.ApplyActions, v)
		t.nonmiss.write.setFields = legacyFields(ts.WriteSetfields, v)
		t.nonmiss.apply.setFields = legacyFields(ts.ApplySetfields, v)
		t.metadataMatch, t.metadataWrite = ts.MetadataMatch, ts.MetadataWrite
	}
	t.miss = t.nonmiss
	t.wildcard = legacyFields(ts.Wildcards, v)
	t.match = legacyFields(ts.Match, v).or(t.wildcard)
	return t
}

// TableStatsReply prints a table stats reply as ovs-ofctl does:
// counters (and before OpenFlow 1.3 features) per table, runs of tables
// like the one before folded into "ditto".
func TableStatsReply(w *bufio.Writer, m *ofp.Msg, r *ofp.TableStatsReply) {
	header(w, "OFPST_TABLE reply", m)
	printStatsFlags(w, r.Flags, false, m.Version)
	p := newTFPrinter()
	for i := range r.Stats {
		ts := &r.Stats[i]
		p.addStats(statsTable(ts, m.Version), &tfStats{ts.ActiveCount, ts.LookupCount, ts.MatchedCount})
	}
	p.finishDitto()
	body := p.sb.String()
	w.WriteString(body)
	if !strings.HasSuffix(body, "\n") {
		w.WriteByte('\n')
	}
}

// TableFeaturesList prints the tables of every part of a table features
// reply as one list, as dump-table-features does, so that runs of equal
// tables fold across parts.
type TableFeaturesList struct{ p *tfPrinter }

// NewTableFeaturesList returns an empty list.
func NewTableFeaturesList() *TableFeaturesList { return &TableFeaturesList{newTFPrinter()} }

// Add adds the tables of one reply part; raw is its bytes. A part that
// ofp refused whole adds the tables before the bad one first, then fails
// with "decode error", as ovs-ofctl does.
func (l *TableFeaturesList) Add(m *ofp.Msg, raw []byte) error {
	tables, _, _, ok := tableFeaturesOf(m)
	var derr error
	if _, unknown := m.Body.(*ofp.Unknown); unknown && len(raw) >= 16 && raw[1] == 19 && binary.BigEndian.Uint16(raw[8:]) == 12 {
		// ofp refused the whole message: print the tables before
		// the bad one first, as ovs-ofctl does.
		tables, derr = splitTableFeatures(raw)
	} else if !ok || m.Raw != ofp.RawOFPST13_TABLE_FEATURES_REPLY {
		return fmt.Errorf("received bad reply: %s", m.Raw)
	}
	for i := range tables {
		t, err := reduceTableFeatures(m.Version, &tables[i])
		if err != nil {
			derr = err
			break
		}
		l.p.add(t)
	}
	if derr != nil {
		return fmt.Errorf("decode error: %s", ofp.CodeOf(derr))
	}
	return nil
}

// String is the list as dump-table-features prints it, without the
// final newline.
func (l *TableFeaturesList) String() string {
	l.p.finishDitto()
	return strings.TrimPrefix(l.p.sb.String(), "\n")
}
