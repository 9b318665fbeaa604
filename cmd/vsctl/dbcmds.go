package vsctl

import (
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/model"
)

// rowID names a way to find a record by name, like ovs-vsctl's
// vsctl_row_ids: rows of table whose nameCol equals the name, or, when
// refCol is set, the row referenced by refCol of that row.
type rowID struct {
	table, nameCol, refCol string
}

// rowIDs lists, per table, how records are named besides their UUIDs.
var rowIDs = map[string][]rowID{
	"Open_vSwitch":              {{"Open_vSwitch", "", ""}},
	"Bridge":                    {{"Bridge", "name", ""}},
	"Port":                      {{"Port", "name", ""}},
	"Interface":                 {{"Interface", "name", ""}},
	"Controller":                {{"Bridge", "name", "controller"}},
	"Manager":                   {{"Manager", "target", ""}},
	"Mirror":                    {{"Mirror", "name", ""}},
	"NetFlow":                   {{"Bridge", "name", "netflow"}},
	"QoS":                       {{"Port", "name", "qos"}},
	"SSL":                       {{"Open_vSwitch", "", "ssl"}},
	"sFlow":                     {{"Bridge", "name", "sflow"}},
	"IPFIX":                     {{"Bridge", "name", "ipfix"}},
	"Flow_Table":                {{"Flow_Table", "name", ""}},
	"AutoAttach":                {{"Bridge", "name", "auto_attach"}},
	"Flow_Sample_Collector_Set": {{"Flow_Sample_Collector_Set", "id", ""}},
}

// findTable matches a table name case-insensitively, exactly or by a
// unique prefix.
func (dc *dbctx) findTable(name string) (*model.TableSchema, error) {
	var match *model.TableSchema
	n := 0
	for tn, ts := range dc.schema.Tables {
		if strings.EqualFold(tn, name) {
			return ts, nil
		}
		if len(name) <= len(tn) && strings.EqualFold(tn[:len(name)], name) {
			match = ts
			n++
		}
	}
	if n == 1 {
		return match, nil
	}
	if n > 1 {
		return nil, fail("multiple table names match \"%s\"", name)
	}
	return nil, fail("unknown table \"%s\"", name)
}

// findRecord finds a record by UUID or name; nil if none (and mustExist
// false).
func (dc *dbctx) findRecord(ts *model.TableSchema, id string, mustExist bool) (*row, error) {
	if u, err := model.ParseUUID(id); err == nil {
		if r := dc.row(ts.Name, u); r != nil {
			return r, nil
		}
	}
	for _, ri := range rowIDs[ts.Name] {
		for _, r := range dc.rows(ri.table) {
			if ri.nameCol == "" {
				if id != "." {
					continue
				}
			} else {
				d := r.get(ri.nameCol)
				if len(d.Keys) != 1 || model.AtomString(d.Keys[0]) != id && fmt.Sprint(d.Keys[0]) != id {
					continue
				}
			}
			if ri.refCol == "" {
				return r, nil
			}
			refs := r.refs(ri.refCol)
			if len(refs) == 1 {
				if t := dc.row(ts.Name, refs[0]); t != nil {
					return t, nil
				}
			}
			if len(refs) > 1 {
				return nil, fail("multiple rows in %s match \"%s\"", ts.Name, id)
			}
		}
	}
	if mustExist {
		return nil, fail("no row \"%s\" in table %s", id, ts.Name)
	}
	return nil, nil
}

// tableRecord resolves the TABLE RECORD arguments of get/set/add/...;
// nil row with --if-exists.
func (inv *invocation) tableRecord() (*model.TableSchema, *row, error) {
	ts, err := inv.ctx.findTable(inv.args[0])
	if err != nil {
		return nil, nil, err
	}
	r, err := inv.ctx.findRecord(ts, inv.args[1], !inv.has("--if-exists"))
	return ts, r, err
}

// columnToChange resolves the TABLE RECORD COLUMN arguments of add and
// remove: the record (nil with --if-exists and no such record), the
// column, which must be mutable, and a copy of its value to edit.
func (inv *invocation) columnToChange() (*model.TableSchema, *row, *model.ColumnSchema, model.Datum, error) {
	ts, r, err := inv.tableRecord()
	if err != nil || r == nil {
		return ts, r, nil, model.Datum{}, err
	}
	col, err := findColumn(ts, inv.args[2])
	if err != nil {
		return nil, nil, nil, model.Datum{}, err
	}
	if err := checkMutable(r, col); err != nil {
		return nil, nil, nil, model.Datum{}, err
	}
	return ts, r, col, r.get(col.Name).Clone(), nil
}

func checkMutable(r *row, c *model.ColumnSchema) error {
	if !c.Mutable && !r.isNew {
		return fail("cannot modify read-only column %s in table %s", c.Name, r.ts.Name)
	}
	return nil
}

// listColumns returns the columns to show: --columns or _uuid then all.
func (inv *invocation) listColumns(ts *model.TableSchema) ([]*model.ColumnSchema, error) {
	if spec, ok := inv.opts["--columns"]; ok {
		var cols []*model.ColumnSchema
		for _, n := range strings.Split(spec, ",") {
			c, err := findColumn(ts, n)
			if err != nil {
				return nil, err
			}
			cols = append(cols, c)
		}
		return cols, nil
	}
	cols := []*model.ColumnSchema{}
	if c, ok := ts.Column("_uuid"); ok {
		cols = append(cols, c)
	}
	return append(cols, ts.Columns...), nil
}

func (inv *invocation) value(r *row, c *model.ColumnSchema) string {
	var d model.Datum
	if c.Name == "_uuid" {
		d = model.Scalar(r.uuid)
	} else {
		d = r.get(c.Name)
	}
	if inv.g.data == "bare" {
		return formatBare(d, &c.Type)
	}
	return formatDatum(d, &c.Type)
}

// printRows writes rows in the selected output format.
func (inv *invocation) printRows(cols []*model.ColumnSchema, rows []*row) {
	w := &inv.out
	if inv.g.format == "table" {
		widths := make([]int, len(cols))
		cells := make([][]string, len(rows))
		for j, c := range cols {
			if !inv.g.noHead {
				widths[j] = len(c.Name)
			}
		}
		for i, r := range rows {
			cells[i] = make([]string, len(cols))
			for j, c := range cols {
				cells[i][j] = inv.value(r, c)
				widths[j] = max(widths[j], len(cells[i][j]))
			}
		}
		line := func(vals []string) {
			var b strings.Builder
			for j, v := range vals {
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(fmt.Sprintf("%-*s", widths[j], v))
			}
			w.WriteString(strings.TrimRight(b.String(), " ") + "\n")
		}
		if !inv.g.noHead {
			names := make([]string, len(cols))
			dashes := make([]string, len(cols))
			for j, c := range cols {
				names[j] = c.Name
				dashes[j] = strings.Repeat("-", widths[j])
			}
			line(names)
			line(dashes)
		}
		for _, c := range cells {
			line(c)
		}
		return
	}
	for i, r := range rows {
		if i > 0 {
			w.WriteByte('\n')
		}
		for _, c := range cols {
			if !inv.g.noHead {
				fmt.Fprintf(w, "%-20s: ", c.Name)
			}
			w.WriteString(inv.value(r, c))
			w.WriteByte('\n')
		}
	}
}

func cmdList(inv *invocation) error {
	ts, err := inv.ctx.findTable(inv.args[0])
	if err != nil {
		return err
	}
	cols, err := inv.listColumns(ts)
	if err != nil {
		return err
	}
	var rows []*row
	if len(inv.args) == 1 {
		rows = inv.ctx.rows(ts.Name)
	} else {
		for _, id := range inv.args[1:] {
			r, err := inv.ctx.findRecord(ts, id, !inv.has("--if-exists"))
			if err != nil {
				return err
			}
			if r != nil {
				rows = append(rows, r)
			}
		}
	}
	inv.printRows(cols, rows)
	return nil
}

func cmdFind(inv *invocation) error {
	ts, err := inv.ctx.findTable(inv.args[0])
	if err != nil {
		return err
	}
	cols, err := inv.listColumns(ts)
	if err != nil {
		return err
	}
	type cond struct {
		ca   *columnArg
		want model.Datum
		ct   *model.ColumnType
	}
	p := valueParser{dc: inv.ctx}
	var conds []cond
	for _, a := range inv.args[1:] {
		ca, err := parseColumnArg(ts, a, findOps)
		if err != nil {
			return err
		}
		ct := &ca.col.Type
		if ca.hasK {
			if !ct.IsMap() {
				return fail("cannot specify key to check for non-map column %s", ca.col.Name)
			}
			ct = &model.ColumnType{Key: *ct.Value, Min: 0, Max: 1}
		}
		want, err := p.parseDatum(unbounded(ct), ca.value)
		if err != nil {
			return err
		}
		conds = append(conds, cond{ca, want, ct})
	}
	var rows []*row
	for _, r := range inv.ctx.rows(ts.Name) {
		ok := true
		for _, c := range conds {
			var have model.Datum
			if c.ca.col.Name == "_uuid" {
				have = model.Scalar(r.uuid)
			} else {
				have = r.get(c.ca.col.Name)
			}
			if c.ca.hasK {
				k, err := p.parseAtom(&c.ca.col.Type.Key, c.ca.key)
				if err != nil {
					return err
				}
				if v, found := have.Lookup(k); found {
					have = model.Scalar(v)
				} else {
					have = model.Datum{Keys: []model.Atom{}}
				}
			}
			if !evalCond(c.ca.op, have, c.want) {
				ok = false
				break
			}
		}
		if ok {
			rows = append(rows, r)
		}
	}
	inv.printRows(cols, rows)
	return nil
}

// evalCond applies a find operator to a row's value and the wanted value.
func evalCond(op string, have, want model.Datum) bool {
	switch op {
	case "=":
		return have.Equal(want)
	case "!=":
		return !have.Equal(want)
	case "<":
		return have.Compare(want) < 0
	case "<=":
		return have.Compare(want) <= 0
	case ">":
		return have.Compare(want) > 0
	case ">=":
		return have.Compare(want) >= 0
	case "{=}":
		return have.Equal(want)
	case "{!=}":
		return !have.Equal(want)
	case "{<=}":
		return subset(have, want)
	case "{<}":
		return subset(have, want) && !have.Equal(want)
	case "{>=}":
		return subset(want, have)
	case "{>}":
		return subset(want, have) && !have.Equal(want)
	}
	return false
}

// subset reports whether every element (pair) of a is in b.
func subset(a, b model.Datum) bool {
	for i, k := range a.Keys {
		if a.Values != nil {
			v, ok := b.Lookup(k)
			if !ok || model.CompareAtoms(v, a.Values[i]) != 0 {
				return false
			}
		} else if !b.Contains(k) {
			return false
		}
	}
	return true
}

func cmdGet(inv *invocation) error {
	ts, r, err := inv.tableRecord()
	if err != nil || r == nil {
		return err
	}
	if id, ok := inv.opts["--id"]; ok {
		if !strings.HasPrefix(id, "@") {
			return fail("row id \"%s\" does not begin with \"@\"", id)
		}
		s := inv.ctx.symbol(id)
		if s.created {
			return fail("row id \"%s\" may only be specified on one --id option", id)
		}
		s.created = true
		s.uuid = r.uuid
	}
	p := valueParser{dc: inv.ctx}
	for _, a := range inv.args[2:] {
		ca, err := parseColumnArg(ts, a, nil)
		if err != nil {
			return err
		}
		var d model.Datum
		if ca.col.Name == "_uuid" {
			d = model.Scalar(r.uuid)
		} else {
			d = r.get(ca.col.Name)
		}
		if ca.hasK {
			k, err := p.keyOf(ca)
			if err != nil {
				return err
			}
			v, found := d.Lookup(k)
			if !found {
				if !inv.has("--if-exists") {
					return fail("no key \"%s\" in %s record \"%s\" column %s", ca.key, ts.Name, inv.args[1], ca.col.Name)
				}
			} else if inv.g.data == "bare" {
				inv.out.WriteString(bareAtom(v))
			} else {
				inv.out.WriteString(model.AtomString(v))
			}
		} else if inv.g.data == "bare" {
			inv.out.WriteString(formatBare(d, &ca.col.Type))
		} else {
			inv.out.WriteString(formatDatum(d, &ca.col.Type))
		}
		inv.out.WriteByte('\n')
	}
	return nil
}

// setColumn applies one "column[:key]=value" to r.
func (dc *dbctx) setColumn(r *row, arg string) error {
	ca, err := parseColumnArg(r.ts, arg, []string{"="})
	if err != nil {
		return err
	}
	if err := checkMutable(r, ca.col); err != nil {
		return err
	}
	p := valueParser{dc: dc}
	t := &ca.col.Type
	if ca.hasK {
		if !t.IsMap() {
			return fail("cannot specify key to set for non-map column %s", ca.col.Name)
		}
		k, err := p.parseAtom(&t.Key, ca.key)
		if err != nil {
			return err
		}
		v, err := p.parseAtom(t.Value, ca.value)
		if err != nil {
			return err
		}
		add := model.Datum{Keys: []model.Atom{k}, Values: []model.Atom{v}}
		if err := checkDatum(t, &add); err != nil {
			return err
		}
		d := r.get(ca.col.Name).Clone()
		if i := indexOf(d, k); i >= 0 {
			d.Values[i] = v
		} else {
			d.Keys = append(d.Keys, k)
			d.Values = append(d.Values, v)
			sortDatum(&d)
		}
		r.set(ca.col.Name, d)
		return nil
	}
	d, err := p.parseDatum(t, ca.value)
	if err != nil {
		return err
	}
	r.set(ca.col.Name, d)
	return nil
}

func indexOf(d model.Datum, k model.Atom) int {
	for i, x := range d.Keys {
		if model.CompareAtoms(x, k) == 0 {
			return i
		}
	}
	return -1
}

func cmdSet(inv *invocation) error {
	_, r, err := inv.tableRecord()
	if err != nil || r == nil {
		return err
	}
	for _, a := range inv.args[2:] {
		if err := inv.ctx.setColumn(r, a); err != nil {
			return err
		}
	}
	return nil
}

func cmdAdd(inv *invocation) error {
	ts, r, col, d, err := inv.columnToChange()
	if err != nil || r == nil {
		return err
	}
	p := valueParser{dc: inv.ctx}
	for _, a := range inv.args[3:] {
		add, err := p.parseDatum(unbounded(&col.Type), a)
		if err != nil {
			return err
		}
		for i, k := range add.Keys {
			if indexOf(d, k) >= 0 {
				continue
			}
			d.Keys = append(d.Keys, k)
			if col.Type.IsMap() {
				d.Values = append(d.Values, add.Values[i])
			}
		}
	}
	sortDatum(&d)
	if len(d.Keys) > col.Type.Max {
		return fail("\"add\" operation would put %s in column %s of table %s but the maximum number is %d",
			describeCount(len(d.Keys), &col.Type), col.Name, ts.Name, col.Type.Max)
	}
	r.set(col.Name, d)
	return nil
}

func cmdRemove(inv *invocation) error {
	ts, r, col, d, err := inv.columnToChange()
	if err != nil || r == nil {
		return err
	}
	p := valueParser{dc: inv.ctx}
	for _, a := range inv.args[3:] {
		rm, err := p.parseDatum(unbounded(&col.Type), a)
		keysOnly := false
		if err != nil && col.Type.IsMap() {
			// A map operand may also be a set of keys.
			kt := &model.ColumnType{Key: col.Type.Key, Min: 0, Max: model.Unlimited}
			var err2 error
			if rm, err2 = p.parseDatum(kt, a); err2 == nil {
				err, keysOnly = nil, true
			}
		}
		if err != nil {
			return err
		}
		for i, k := range rm.Keys {
			j := indexOf(d, k)
			if j < 0 {
				continue
			}
			if col.Type.IsMap() && !keysOnly && model.CompareAtoms(d.Values[j], rm.Values[i]) != 0 {
				continue
			}
			d.Keys = append(d.Keys[:j], d.Keys[j+1:]...)
			if d.Values != nil {
				d.Values = append(d.Values[:j], d.Values[j+1:]...)
			}
		}
	}
	if len(d.Keys) < col.Type.Min {
		return fail("\"remove\" operation would put %s in column %s of table %s but the minimum number is %d",
			describeCount(len(d.Keys), &col.Type), col.Name, ts.Name, col.Type.Min)
	}
	r.set(col.Name, d)
	return nil
}

func cmdClear(inv *invocation) error {
	ts, r, err := inv.tableRecord()
	if err != nil || r == nil {
		return err
	}
	for _, a := range inv.args[2:] {
		col, err := findColumn(ts, a)
		if err != nil {
			return err
		}
		if err := checkMutable(r, col); err != nil {
			return err
		}
		if col.Type.Min > 0 {
			return fail("\"clear\" operation cannot be applied to column %s of table %s, which is not allowed to be empty", col.Name, ts.Name)
		}
		r.set(col.Name, model.DefaultDatum(&col.Type))
	}
	return nil
}

func cmdCreate(inv *invocation) error {
	ts, err := inv.ctx.findTable(inv.args[0])
	if err != nil {
		return err
	}
	var id model.UUID
	if name, ok := inv.opts["--id"]; ok {
		if !strings.HasPrefix(name, "@") {
			return fail("row id \"%s\" does not begin with \"@\"", name)
		}
		s := inv.ctx.symbol(name)
		if s.created {
			return fail("row id \"%s\" may only be specified on one --id option", name)
		}
		s.created = true
		id = s.uuid
	} else if !ts.IsRoot {
		inv.ctx.warnf("db_ctl_base", "applying \"create\" command to table %s without --id option will have no effect", ts.Name)
	}
	r := inv.ctx.insert(ts.Name, id)
	for _, a := range inv.args[1:] {
		if err := inv.ctx.setColumn(r, a); err != nil {
			return err
		}
	}
	inv.post = func(res *client.Result) {
		if u, ok := res.UUIDs[r.uuidName]; ok {
			fmt.Fprintf(&inv.out, "%s\n", u)
		}
	}
	return nil
}

func cmdDestroy(inv *invocation) error {
	ts, err := inv.ctx.findTable(inv.args[0])
	if err != nil {
		return err
	}
	if inv.has("--all") {
		if len(inv.args) > 1 {
			return fail("--all and records argument should not be specified together")
		}
		for _, r := range inv.ctx.rows(ts.Name) {
			inv.ctx.delete(r)
		}
		return nil
	}
	if len(inv.args) == 1 {
		inv.ctx.warnf("db_ctl_base", "either --all or records argument should be specified")
		return nil
	}
	for _, id := range inv.args[1:] {
		r, err := inv.ctx.findRecord(ts, id, !inv.has("--if-exists"))
		if err != nil {
			return err
		}
		if r != nil {
			inv.ctx.delete(r)
		}
	}
	return nil
}

// showTable is how "show" prints a table: the column that names a row
// and the columns printed under it, like ovs-vsctl's cmd_show_tables.
type showTable struct {
	nameCol string
	columns []string
}

var showTables = map[string]showTable{
	"Open_vSwitch": {"", []string{"manager_options", "bridges", "ovs_version"}},
	"Bridge":       {"name", []string{"controller", "fail_mode", "datapath_type", "ports"}},
	"Port":         {"name", []string{"tag", "trunks", "interfaces"}},
	"Interface":    {"name", []string{"type", "options", "error", "bfd_status"}},
	"Controller":   {"target", []string{"is_connected"}},
	"Manager":      {"target", []string{"is_connected"}},
}

func cmdShow(inv *invocation) error {
	for _, r := range inv.ctx.rows("Open_vSwitch") {
		inv.showRow(r, 0, map[model.UUID]bool{})
	}
	return nil
}

func (inv *invocation) showRow(r *row, level int, shown map[model.UUID]bool) {
	st := showTables[r.ts.Name]
	indent := strings.Repeat(" ", 4*level)
	w := &inv.out
	if st.nameCol == "" {
		fmt.Fprintf(w, "%s%s\n", indent, r.uuid)
	} else {
		c, _ := r.ts.Column(st.nameCol)
		fmt.Fprintf(w, "%s%s %s\n", indent, r.ts.Name, formatDatum(r.get(st.nameCol), &c.Type))
	}
	shown[r.uuid] = true
	for _, name := range st.columns {
		c, ok := r.ts.Column(name)
		if !ok {
			continue
		}
		d := r.get(name)
		if ref := c.Type.Key.RefTable; c.Type.Key.Type == model.TypeUUID && ref != "" {
			if _, ok := showTables[ref]; ok {
				for _, id := range r.refs(name) {
					if sub := inv.ctx.row(ref, id); sub != nil && !shown[id] {
						inv.showRow(sub, level+1, shown)
					}
				}
				continue
			}
		}
		if d.IsDefault(&c.Type) {
			continue
		}
		fmt.Fprintf(w, "%s    %s: %s\n", indent, name, formatDatum(d, &c.Type))
	}
}
