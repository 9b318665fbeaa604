package ofswitch

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gvs-project/gvs/ofproto/classifier"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// Table features are described as Open vSwitch describes its tables:
// every table matches every field, masks the maskable ones, sets the
// writable ones and runs the same actions; the last table has no
// goto_table.

// OpenFlow 1.1+ action types a table supports (OFPAT_*), in wire order:
// output, set_mpls_ttl, dec_mpls_ttl, push_vlan, pop_vlan, push_mpls,
// pop_mpls, set_queue, group, set_nw_ttl, dec_nw_ttl, set_field.
var tableActionTypes = []uint16{0, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}

// Instruction types: goto_table, write_metadata, write_actions,
// apply_actions, clear_actions, and meter before OpenFlow 1.5.
var tableInstructions = []uint16{ofp.InstGotoTable, ofp.InstWriteMetadata, ofp.InstWriteActions, ofp.InstApplyActions, ofp.InstClearActions}

func appendTypeList(types []uint16) []byte {
	var b []byte
	for _, t := range types {
		b = binary.BigEndian.AppendUint16(b, t)
		b = binary.BigEndian.AppendUint16(b, 4)
	}
	return b
}

// appendOXMHeaders lists the fields (with their headers for version v)
// that keep(f) selects; with masked, maskable fields get the has-mask
// header (that is how a match property says "arbitrary mask").
func appendOXMHeaders(v uint8, masked bool, keep func(f *mf.Field) bool) []byte {
	var b []byte
	fields := mf.Std.Fields()
	for i := range fields {
		f := &fields[i]
		if !keep(f) {
			continue
		}
		h, ok := f.HeaderFor(v)
		if !ok {
			continue
		}
		n := f.Bytes
		hm := uint32(0)
		if masked && f.Maskable {
			n, hm = 2*n, 1<<8
		}
		if h.IsExperimenter() {
			n += 4
		}
		b = binary.BigEndian.AppendUint32(b, uint32(h.Class)<<16|uint32(h.Field)<<9|hm|uint32(n))
		if h.IsExperimenter() {
			b = binary.BigEndian.AppendUint32(b, h.Experimenter)
		}
	}
	return b
}

// tableSet is a bridge's per-table OpenFlow settings: names (from
// OpenFlow table features and OVSDB), OpenFlow 1.4 table configuration
// (table_mod, table desc), and the Flow_Table limits and prefixes it
// applies to the flow tables.
type tableSet struct {
	mu    sync.Mutex
	cfg   [254]tableConfig
	names [254]tableNameCfg
	// What table settings need of the bridge: the flow tables,
	// translation (table-miss behaviour), a way to revalidate megaflows
	// and to send flow_removed for evicted rules, and its name for logs.
	tables       *oftable.Tables
	xl           *xlate.Xlator
	changed      func()
	flowsRemoved func([]oftable.Removal)
	// vacancyOn starts the commit hook that checks vacancy events;
	// tableStatus sends one to the connections that want it.
	vacancyOn   func()
	tableStatus func(*ofp.TableStatus)
	name        string
	logf        func(format string, args ...any)
}

// tableFeatures describes every table for version v.
func (ts *tableSet) tableFeatures(v uint8) []ofp.TableFeatures {
	match := appendOXMHeaders(v, true, func(*mf.Field) bool { return true })
	wild := appendOXMHeaders(v, false, func(f *mf.Field) bool { return true })
	set := appendOXMHeaders(v, false, func(f *mf.Field) bool { return f.Writable })
	acts := appendTypeList(tableActionTypes)
	out := make([]ofp.TableFeatures, 0, 254)
	for t := 0; t < 254; t++ {
		ins := tableInstructions
		if t == 253 {
			ins = ins[1:]
		}
		if v < mf.OF15 {
			ins = append(ins[:len(ins):len(ins)], ofp.InstMeter)
		}
		insb := appendTypeList(ins)
		var next []byte
		for n := t + 1; n < 254; n++ {
			next = append(next, byte(n))
		}
		tf := ofp.TableFeatures{TableID: uint8(t), Name: ts.tableName(t), MetadataMatch: ^uint64(0), MetadataWrite: ^uint64(0),
			MaxEntries: ts.maxEntries(t)}
		tf.Props = []ofp.TableFeatureProp{
			{Type: ofp.TFPInstructions, Data: insb}, {Type: ofp.TFPInstructions + 1, Data: insb},
			{Type: ofp.TFPNextTables, Data: next}, {Type: ofp.TFPNextTables + 1, Data: next},
			{Type: ofp.TFPWriteActions, Data: acts}, {Type: ofp.TFPWriteActions + 1, Data: acts},
			{Type: ofp.TFPApplyActions, Data: acts}, {Type: ofp.TFPApplyActions + 1, Data: acts},
			{Type: ofp.TFPMatch, Data: match}, {Type: ofp.TFPWildcards, Data: wild},
			{Type: ofp.TFPWriteSetfield, Data: set}, {Type: ofp.TFPWriteSetfield + 1, Data: set},
			{Type: ofp.TFPApplySetfield, Data: set}, {Type: ofp.TFPApplySetfield + 1, Data: set},
		}
		out = append(out, tf)
	}
	return out
}

func (ts *tableSet) tableFeaturesReply(s ofconn.Sender, m *ofp.Msg, req *ofp.TableFeaturesRequest) error {
	if len(req.Tables) > 0 {
		if err := ts.changeTableFeatures(req.Tables); err != nil {
			return err
		}
	}
	return replyMultipart(s, m, &ofp.TableFeaturesReply{Tables: ts.tableFeatures(m.Version)})
}

// OpenFlow 1.5 table features commands (OFPTFC_*).
const (
	tfcReplace = 0
	tfcModify  = 1
)

// changeTableFeatures applies a table features request that lists
// tables, as Open vSwitch does: only the names may change (a name set
// through OVSDB cannot), every table must be described (OFPTFC_REPLACE;
// OpenFlow 1.5's OFPTFC_MODIFY keeps the unlisted ones), and max_entries
// is read-only. Other features are accepted unchanged, as Open vSwitch
// accepts any subset of what it supports.
func (ts *tableSet) changeTableFeatures(tables []ofp.TableFeatures) error {
	n := ts.numTables()
	var names [256]*string
	for i := range tables {
		tf := &tables[i]
		if names[tf.TableID] != nil {
			return &ofp.Error{Code: ofp.NXTFFC_DUP_TABLE, Err: fmt.Errorf("duplicate table %d", tf.TableID)}
		}
		if int(tf.TableID) >= n && tf.TableID != 0xff {
			// Open vSwitch's hidden last table.
			return &ofp.Error{Code: ofp.OFPTFFC_EPERM, Err: fmt.Errorf("can't modify hidden table %d", tf.TableID)}
		}
		names[tf.TableID] = &tf.Name
		if tf.MaxEntries != ts.maxEntries(int(tf.TableID)) {
			return &ofp.Error{Code: ofp.OFPTFFC_EPERM, Err: fmt.Errorf("can't change max_entries of table %d", tf.TableID)}
		}
	}
	switch tables[0].Command {
	case tfcReplace:
	case tfcModify:
		for t := range n {
			if names[t] == nil {
				name := ts.tableName(t)
				names[t] = &name
			}
		}
	default:
		return &ofp.Error{Code: ofp.OFPTFFC_EPERM, Err: fmt.Errorf("table features command %d", tables[0].Command)}
	}
	if names[0xff] != nil {
		return &ofp.Error{Code: ofp.OFPTFFC_TOO_MANY, Err: fmt.Errorf("table 255")}
	}
	for t := range n {
		if names[t] == nil {
			return &ofp.Error{Code: ofp.OFPTFFC_EPERM, Err: fmt.Errorf("can't disable table %d", t)}
		}
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for t := range n {
		cur := ts.names[t]
		if cur.level > nameLevelOpenFlow && cur.name != "" && *names[t] != cur.name {
			return &ofp.Error{Code: ofp.OFPTFFC_EPERM,
				Err: fmt.Errorf("can't change name of table %d to %s because it is already set to %s via OVSDB", t, *names[t], cur.name)}
		}
	}
	for t := range n {
		nc := &ts.names[t]
		if nc.level <= nameLevelOpenFlow {
			nc.name, nc.level = *names[t], nameLevelOpenFlow
		}
	}
	return nil
}

// TableSettings are one OpenFlow table's Flow_Table configuration.
type TableSettings struct {
	// Name is the table's name ("": none).
	Name string
	// MaxFlows is flow_limit (oftable.Unlimited when unset).
	MaxFlows int
	// Evict is overflow_policy=evict.
	Evict bool
	// Groups are the eviction fairness fields ("NXM_OF_IN_PORT[]").
	Groups []string
	// Prefixes are the prefix-trie fields as configured (nil: the
	// default ones, ip_dst and ip_src).
	Prefixes []string
}

// Table name sources: a name set through OVSDB overrides one set through
// OpenFlow, as Open vSwitch's name levels.
const (
	nameLevelOpenFlow = 1
	nameLevelOVSDB    = 2
)

// tableNameCfg is a table's name and who set it.
type tableNameCfg struct {
	name  string
	level int
}

// set names the table from source level; "" unsets a name the same
// source set (as oftable_set_name with a null name).
func (n *tableNameCfg) set(name string, level int) {
	switch {
	case level < n.level:
	case name != "":
		n.name, n.level = name, level
	case n.level == level:
		n.name, n.level = "", 0
	}
}

// SetTables applies the bridge's Flow_Table configuration by table id;
// tables it leaves out get the defaults (no name, no limit). Rules over a
// shrunk limit are evicted when the table evicts.
func (b *Bridge) SetTables(settings map[uint8]TableSettings) { b.tabs.set(settings) }

// set is SetTables.
func (ts *tableSet) set(settings map[uint8]TableSettings) {
	for t := 0; t < ts.numTables(); t++ {
		s, ok := settings[uint8(t)]
		if !ok {
			s = TableSettings{MaxFlows: oftable.Unlimited}
		}
		var groups []ofp.Subfield
		for _, g := range s.Groups {
			sf, err := parseSubfield(g)
			if err != nil {
				ts.logf("bridge %s table %d: error parsing 'groups' (%v)", ts.name, t, err)
				continue
			}
			groups = append(groups, sf)
		}
		ts.mu.Lock()
		ts.names[t].set(s.Name, nameLevelOVSDB)
		ts.mu.Unlock()
		ts.flowsRemoved(ts.tables.SetLimit(uint8(t), oftable.Limit{MaxFlows: s.MaxFlows, Evict: s.Evict, Groups: groups}))
		if err := ts.tables.SetPrefixFields(uint8(t), ts.prefixFields(t, s.Prefixes)); err != nil {
			ts.logf("bridge %s table %d: %v", ts.name, t, err)
		}
	}
}

// prefixFields reads a Flow_Table prefixes column as Open vSwitch's
// bridge does: "none" turns the tries off, fields that cannot be
// tracked and those past the third are left out with a warning, and
// without a usable field the defaults apply (nil).
func (ts *tableSet) prefixFields(t int, cfg []string) []string {
	var names []string
	useDefault := true
	for _, n := range cfg {
		if n == "none" {
			useDefault, names = false, []string{}
			break
		}
		name, ok := classifier.PrefixFieldName(n)
		switch {
		case !ok:
			ts.logf("bridge %s: 'prefixes' with incompatible field: %s", ts.name, n)
			continue
		case len(names) >= classifier.MaxPrefixFields:
			ts.logf("bridge %s: 'prefixes' with too many fields, field not used: %s", ts.name, n)
			continue
		case slices.Contains(names, name):
			continue
		}
		useDefault = false
		names = append(names, name)
	}
	if useDefault {
		return nil
	}
	return names
}

// tableName is table t's name: "" unless configured (Open vSwitch sends
// "table%d" then and ovs-ofctl does not print it).
func (ts *tableSet) tableName(t int) string {
	if t < 0 || t >= len(ts.names) {
		return ""
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.names[t].name
}

// maxEntries is table t's max_entries: Open vSwitch's 1000000, or the
// flow limit if lower.
func (ts *tableSet) maxEntries(t int) uint32 {
	const max = 1000000
	if n := ts.tables.MaxFlows(uint8(t)); n != oftable.Unlimited && n < max {
		return uint32(n)
	}
	return max
}

// parseSubfield parses "field[]", "field[n]", "field[a..b]" or a bare
// field name, as the Flow_Table groups column holds them.
func parseSubfield(s string) (ofp.Subfield, error) {
	name, rng, hasRange := strings.Cut(s, "[")
	f := mf.Lookup(name)
	if f == nil {
		return ofp.Subfield{}, fmt.Errorf("%s: unknown field `%s'", s, name)
	}
	sf := ofp.Subfield{Field: f, NBits: f.Bits}
	if !hasRange {
		return sf, nil
	}
	rng, ok := strings.CutSuffix(rng, "]")
	if !ok {
		return ofp.Subfield{}, fmt.Errorf("%s: missing ] looking for field name", s)
	}
	if rng == "" {
		return sf, nil
	}
	lo, hi, isRange := strings.Cut(rng, "..")
	if !isRange {
		hi = lo
	}
	start, err1 := strconv.Atoi(lo)
	end, err2 := strconv.Atoi(hi)
	switch {
	case err1 != nil || err2 != nil || start < 0 || end < 0:
		return ofp.Subfield{}, fmt.Errorf("%s: syntax error expecting bit number", s)
	case start > end || end >= f.Bits:
		return ofp.Subfield{}, fmt.Errorf("%s: bits %d..%d are not within the field's %d bits", s, start, end, f.Bits)
	}
	sf.Ofs, sf.NBits = start, end-start+1
	return sf, nil
}

// tableMod applies OFPT_TABLE_MOD: the table-miss behaviour of OpenFlow
// 1.1 and 1.2 (for one table or all). Of the 1.4+ bits, eviction turns
// eviction on in a table with a flow limit (Flow_Table flow_limit);
// vacancy turns on the table's vacancy events (vacancyCommit), armed for
// the direction the table's vacancy can next cross, as Open vSwitch's
// table_mod__.
func (ts *tableSet) tableMod(s ofconn.Sender, m *ofp.Msg, tm *ofp.TableMod) error {
	if tm.TableID != 255 && int(tm.TableID) >= ts.numTables() {
		return &ofp.Error{Code: ofp.OFPTMFC_BAD_TABLE, Err: fmt.Errorf("table %d", tm.TableID)}
	}
	if mc, ok := tm.MissConfig(m.Version); ok {
		miss := map[uint32]uint8{ofp.TableMissController: xlate.MissController, ofp.TableMissContinue: xlate.MissContinue, ofp.TableMissDrop: xlate.MissDrop}
		v, known := miss[mc]
		if !known {
			return &ofp.Error{Code: ofp.OFPTMFC_BAD_CONFIG, Err: fmt.Errorf("table-miss config %d", mc)}
		}
		if ts.xl.SetTableMiss(tm.TableID, v) {
			ts.changed()
		}
	}
	if m.Version >= mf.OF14 {
		if tm.Config&^(ofp.TableConfigEviction|ofp.TableConfigVacancyEvents) != 0 {
			return &ofp.Error{Code: ofp.OFPTMFC_BAD_CONFIG, Err: fmt.Errorf("table config %#x", tm.Config)}
		}
		on := tm.Config&ofp.TableConfigVacancyEvents != 0
		var vacancy [254]uint8 // now, of the tables whose events this turns on
		for t := range ts.cfg {
			if on && (tm.TableID == 255 || int(tm.TableID) == t) {
				vacancy[t] = vacancyOf(ts.tables.Stats(uint8(t)).Active, ts.tables.MaxFlows(uint8(t)))
			}
		}
		var th ofp.TableVacancy
		if tm.Vacancy != nil {
			th = *tm.Vacancy
		}
		ts.mu.Lock()
		for t := range ts.cfg {
			if tm.TableID != 255 && int(tm.TableID) != t {
				continue
			}
			tc := &ts.cfg[t]
			tc.eviction = tm.Config&ofp.TableConfigEviction != 0
			tc.down, tc.up = th.Down, th.Up
			switch {
			case !on:
				tc.event = 0
			case tc.event != 0: // already armed
			case vacancy[t] < tc.up:
				tc.event = ofp.TableReasonVacancyUp
			default:
				tc.event = ofp.TableReasonVacancyDown
			}
		}
		ts.mu.Unlock()
		if on {
			ts.vacancyOn()
		}
		for t := range ts.cfg {
			if tm.TableID == 255 || int(tm.TableID) == t {
				ts.tables.SetOpenFlowEviction(uint8(t), tm.Config&ofp.TableConfigEviction != 0)
			}
		}
	}
	return nil
}

// tableConfig is a table's OpenFlow 1.4 configuration (table_mod's
// eviction and vacancy-event settings, reported by the table
// description).
type tableConfig struct {
	eviction bool
	// event is the vacancy event the table sends next (0: events off).
	event    uint8
	down, up uint8
}

// vacancyOf is a table's vacancy in percent, as Open vSwitch's
// oftable_vacancy: a table without a limit has a limit of 2^32-1 (so it
// is 100 % vacant only while empty), and the percentage is truncated.
func vacancyOf(n, limit int) uint8 {
	max := float64(limit)
	if limit == oftable.Unlimited {
		max = math.MaxUint32
	}
	switch {
	case max == 0:
		return 100
	case float64(n) >= max:
		return 0
	}
	return uint8((max - float64(n)) * 100 / max)
}

// desc is table t's description with vacancy v (a vacancy property
// only while its events are on).
func (tc *tableConfig) desc(t int, v uint8) ofp.TableDesc {
	flags := uint32(7) // OTHER|IMPORTANCE|LIFETIME, as Open vSwitch
	td := ofp.TableDesc{TableID: uint8(t), EvictionFlags: &flags}
	if tc.eviction {
		td.Config |= ofp.TableConfigEviction
	}
	if tc.event != 0 {
		td.Config |= ofp.TableConfigVacancyEvents
		td.Vacancy = &ofp.TableVacancy{Down: tc.down, Up: tc.up, Vacancy: v}
	}
	return td
}

// vacancyCommit sends the vacancy events a commit caused (the OnCommit
// hook, with the tables' lock held), as Open vSwitch's
// send_table_status, which runs for each rule added (not a replacement)
// or deleted once the whole transaction is in: a table whose commit
// added or deleted a rule is checked at its new count, and an event goes
// out when the vacancy is below vacancy_down (for an armed VACANCY_DOWN)
// or above vacancy_up (for an armed VACANCY_UP), arming the other.
func (ts *tableSet) vacancyCommit(changes []oftable.Change) {
	var out []*ofp.TableStatus
	ts.mu.Lock()
	var checked [254]bool
	for _, ch := range changes {
		t := ch.Rule.Table
		if int(t) >= len(ts.cfg) || checked[t] || ts.cfg[t].event == 0 ||
			ch.Kind != oftable.ChangeRemoved && (ch.Kind != oftable.ChangeAdded || ch.Old != nil) {
			continue
		}
		checked[t] = true
		tc := &ts.cfg[t]
		v := vacancyOf(ts.tables.CommittedRules(t), ts.tables.CommittedMaxFlows(t))
		var ev uint8
		switch {
		case v < tc.down:
			ev = ofp.TableReasonVacancyDown
		case v > tc.up:
			ev = ofp.TableReasonVacancyUp
		}
		if ev != 0 && ev == tc.event {
			out = append(out, &ofp.TableStatus{Reason: ev, Desc: tc.desc(int(t), v)})
			tc.event = ofp.TableReasonVacancyDown + ofp.TableReasonVacancyUp - ev
		}
	}
	ts.mu.Unlock()
	for _, m := range out {
		ts.tableStatus(m)
	}
}

// tableDesc answers OFPMP_TABLE_DESC. Eviction may use every criterion
// (OTHER, IMPORTANCE, LIFETIME) as in Open vSwitch; vacancy is as
// vacancyOf counts it.
func (ts *tableSet) tableDesc(s ofconn.Sender, m *ofp.Msg) error {
	rep := &ofp.TableDescReply{}
	var vacancy [254]uint8
	for t := range vacancy {
		vacancy[t] = vacancyOf(ts.tables.Stats(uint8(t)).Active, ts.tables.MaxFlows(uint8(t)))
	}
	ts.mu.Lock()
	for t := 0; t < ts.numTables(); t++ {
		rep.Tables = append(rep.Tables, ts.cfg[t].desc(t, vacancy[t]))
	}
	ts.mu.Unlock()
	return s.Reply(m, rep)
}

// numTables is how many OpenFlow tables the bridge exposes (0-253).
func (ts *tableSet) numTables() int { return 254 }
