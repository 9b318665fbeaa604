// Groups: the ovs-ofctl group syntax (add-group, mod-group, del-groups,
// insert-buckets, remove-buckets and group files) and the group text
// ovs-ofctl prints for group mods and group descriptions.

package ofptext

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Versions is a set of OpenFlow versions (bit 1<<v for mf.OF10 ...
// mf.OF15): the versions that can carry a parsed message, as ovs-ofctl's
// usable protocols narrowed to versions (OpenFlow 1.0 stands for all its
// Nicira flow formats).
type Versions uint8

// Version sets.
const (
	AllVersions  Versions = 1<<mf.OF10 | 1<<mf.OF11 | 1<<mf.OF12 | 1<<mf.OF13 | 1<<mf.OF14 | 1<<mf.OF15
	OF13Up       Versions = 1<<mf.OF13 | 1<<mf.OF14 | 1<<mf.OF15
	nxOrOF15Only Versions = 1<<mf.OF10 | 1<<mf.OF15 // Nicira group mods and OpenFlow 1.5
)

// Has reports whether v is in the set.
func (vs Versions) Has(v uint8) bool { return v < 8 && vs&(1<<v) != 0 }

// GroupFromText, as ParseGroupMod's command, takes the command from the
// text's first word (add, delete, modify, add_or_mod, insert_bucket,
// remove_bucket, or any prefix of one; add when there is none), as the
// lines of an add-groups file.
const GroupFromText = -1

// groupCommandWords are the leading words of a group file line, in the
// order a prefix is tried.
var groupCommandWords = []struct {
	word string
	cmd  uint16
}{
	{"add", ofp.GroupAdd}, {"delete", ofp.GroupDelete}, {"modify", ofp.GroupModify},
	{"add_or_mod", ofp.GroupAddOrMod}, {"insert_bucket", ofp.GroupInsertBucket}, {"remove_bucket", ofp.GroupRemoveBucket},
}

// What each group command's text may (and, for the type, must) carry.
const (
	gfType         = 1 << iota // type, selection_method, selection_method_param, fields
	gfBuckets                  // bucket=
	gfCmdBucket                // command_bucket_id (required unless gfCmdBucketAll)
	gfCmdBucketAll             // command_bucket_id may be "all", and defaults to it
)

var groupCommandFields = map[uint16]int{
	ofp.GroupAdd: gfType | gfBuckets, ofp.GroupModify: gfType | gfBuckets, ofp.GroupAddOrMod: gfType | gfBuckets,
	ofp.GroupDelete: 0, ofp.GroupInsertBucket: gfBuckets | gfCmdBucket, ofp.GroupRemoveBucket: gfCmdBucket | gfCmdBucketAll,
}

var groupTypeWords = map[string]uint8{
	"all": ofp.GroupTypeAll, "select": ofp.GroupTypeSelect, "indirect": ofp.GroupTypeIndirect,
	"ff": ofp.GroupTypeFF, "fast_failover": ofp.GroupTypeFF,
}

// ParseGroupMod parses a group in ovs-ofctl's syntax for command (an
// ofp.Group* command, or GroupFromText) and returns the group mod with
// the versions that can carry it. Bucket actions are kept as parsed
// (version-independent); ofp's encoder writes each version's form.
// Unset bucket IDs are ofp.BucketAll, which the OpenFlow 1.5 encoder
// numbers as ovs-ofctl does. Errors carry ovs-ofctl's message.
//
// As in ovs-ofctl, the usable versions after a bucket are those of the
// last bucket's actions alone: the bucket parser resets them.
func ParseGroupMod(s string, command int) (*ofp.GroupMod, Versions, error) {
	if command == GroupFromText {
		s = strings.TrimLeft(s, " \t\r\n")
		n := strings.IndexAny(s, ", \t\r\n")
		if n < 0 {
			n = len(s)
		}
		command = ofp.GroupAdd
		for _, w := range groupCommandWords {
			if strings.HasPrefix(w.word, s[:n]) {
				command = int(w.cmd)
				s = s[n:]
				break
			}
		}
	}
	fields, ok := groupCommandFields[uint16(command)]
	if !ok || command < 0 {
		return nil, 0, errf("unknown group command %d", command)
	}
	vs := AllVersions
	if fields&gfCmdBucket != 0 {
		vs &= nxOrOF15Only
	}
	gm := &ofp.GroupMod{Command: uint16(command), GroupID: ofp.GroupAny, CommandBucketID: ofp.BucketAll}
	if command == ofp.GroupDelete && s == "" {
		gm.GroupID = ofp.GroupAll
		return gm, vs, nil
	}
	// Buckets come last: their defaults depend on the group type.
	head, buckets, hasBuckets := strings.Cut(s, "bucket=")
	if hasBuckets && fields&gfBuckets == 0 {
		return nil, 0, errf("bucket is not needed")
	}
	hadType, hadCmdBucket := false, false
	var fieldOrder []mf.ID
	for kv := range keyValues(head) {
		var err error
		switch kv.key {
		case "command_bucket_id":
			if fields&gfCmdBucket == 0 {
				return nil, 0, errf("command bucket id is not needed")
			}
			switch kv.value {
			case "all":
				gm.CommandBucketID = ofp.BucketAll
			case "first":
				gm.CommandBucketID = ofp.BucketFirst
			case "last":
				gm.CommandBucketID = ofp.BucketLast
			default:
				if gm.CommandBucketID, err = strToU32(kv.value); err != nil {
					return nil, 0, err
				}
				if id := gm.CommandBucketID; id > ofp.BucketMax && id != ofp.BucketFirst && id != ofp.BucketLast && id != ofp.BucketAll {
					return nil, 0, errf("invalid command bucket id %d", id)
				}
			}
			if gm.CommandBucketID == ofp.BucketAll && fields&gfCmdBucketAll == 0 {
				return nil, 0, errf("command_bucket_id=all is not permitted")
			}
			hadCmdBucket = true
		case "group_id":
			if kv.value == "all" {
				gm.GroupID = ofp.GroupAll
				break
			}
			if gm.GroupID, err = strToU32(kv.value); err != nil {
				return nil, 0, err
			}
			if gm.GroupID != ofp.GroupAll && gm.GroupID > ofp.GroupMax {
				return nil, 0, errf("invalid group id %d", gm.GroupID)
			}
		case "type":
			if fields&gfType == 0 {
				return nil, 0, errf("type is not needed")
			}
			t, ok := groupTypeWords[kv.value]
			if !ok {
				return nil, 0, errf("invalid group type %s", kv.value)
			}
			gm.Type, hadType = t, true
		case "selection_method":
			if fields&gfType == 0 {
				return nil, 0, errf("selection method is not needed")
			}
			if len(kv.value) >= 16 {
				return nil, 0, errf("selection method is longer than 15 bytes long")
			}
			gm.SelectionMethod = kv.value
			vs &= nxOrOF15Only
		case "selection_method_param":
			if fields&gfType == 0 {
				return nil, 0, errf("selection method param is not needed")
			}
			if gm.SelectionParam, err = strToU64(kv.value); err != nil {
				return nil, 0, err
			}
			vs &= nxOrOF15Only
		case "fields":
			if fields&gfType == 0 {
				return nil, 0, errf("fields are not needed")
			}
			if fieldOrder, err = parseHashFields(kv.value, &gm.Fields, fieldOrder); err != nil {
				return nil, 0, err
			}
			vs &= nxOrOF15Only
		default:
			return nil, 0, errf("unknown keyword %s", kv.key)
		}
	}
	switch {
	case gm.GroupID == ofp.GroupAny:
		return nil, 0, errf("must specify a group_id")
	case fields&gfType != 0 && !hadType:
		return nil, 0, errf("must specify a type")
	case gm.SelectionMethod != "hash" && len(fieldOrder) > 0:
		return nil, 0, errf("fields may only be specified with \"selection_method=hash\"")
	case gm.SelectionMethod == "" && gm.SelectionParam != 0:
		return nil, 0, errf("selection_method_param is only allowed with \"selection_method\"")
	case fields&gfCmdBucket != 0 && fields&gfCmdBucketAll == 0 && !hadCmdBucket:
		return nil, 0, errf("must specify a command bucket id")
	}
	if len(fieldOrder) > 0 {
		slices.Sort(fieldOrder)
		gm.FieldOrder = fieldOrder
	}
	for hasBuckets {
		var text string
		text, buckets, hasBuckets = strings.Cut(buckets, "bucket=")
		bk, bvs, err := parseBucket(text, gm.Type)
		if err != nil {
			return nil, 0, err
		}
		vs = bvs
		gm.Buckets = append(gm.Buckets, bk)
		// Insert-bucket text has no type; its weights are the group's.
		if gm.Type != ofp.GroupTypeSelect && bk.Weight != 0 && command != ofp.GroupInsertBucket {
			return nil, 0, errf("Only select groups can have bucket weights.")
		}
	}
	if gm.Type == ofp.GroupTypeIndirect && len(gm.Buckets) > 1 {
		return nil, 0, errf("Indirect groups can have at most one bucket.")
	}
	return gm, vs, nil
}

// parseBucket parses one bucket's text (after "bucket="): weight,
// watch_port, watch_group and bucket_id keywords, "actions=" and any other
// key-value pair as an action, in any order.
func parseBucket(s string, typ uint8) (ofp.Bucket, Versions, error) {
	bk := ofp.Bucket{ID: ofp.BucketAll, WatchPort: ofp.PortAny, WatchGroup: ofp.GroupAny}
	if typ == ofp.GroupTypeSelect {
		bk.Weight = 1
	}
	var acts strings.Builder
	for kv := range keyValues(s) {
		var err error
		switch strings.ToLower(kv.key) {
		case "weight":
			var n uint64
			n, err = strToUint(kv.value, 16, "weight")
			bk.Weight = uint16(n)
		case "watch_port":
			p, ok := parsePort(kv.value)
			if !ok || (p >= portMax && p != portNone) {
				return bk, 0, errf("%s: invalid watch_port", kv.value)
			}
			bk.WatchPort = ofp.PortToOF11(p)
		case "watch_group":
			if bk.WatchGroup, err = strToU32(kv.value); err == nil && bk.WatchGroup > ofp.GroupMax {
				err = errf("invalid watch_group id %d", bk.WatchGroup)
			}
		case "bucket_id":
			if bk.ID, err = strToU32(kv.value); err == nil && bk.ID > ofp.BucketMax {
				err = errf("invalid bucket_id id %d", bk.ID)
			}
		case "action", "actions":
			acts.WriteString(kv.value + ",")
		default:
			acts.WriteString(kv.key + "(" + kv.value + "),")
		}
		if err != nil {
			return bk, 0, err
		}
	}
	if acts.Len() == 0 {
		return bk, 0, errf("bucket must specify actions")
	}
	if typ == ofp.GroupTypeFF && bk.WatchPort == ofp.PortAny && bk.WatchGroup == ofp.GroupAny {
		return bk, 0, errf("fast failover bucket requires watch_port or watch_group")
	}
	var m mf.Match
	list, err := parseActionList(strings.TrimSuffix(acts.String(), ","), mf.OF10, &m, 0)
	if err != nil {
		return bk, 0, err
	}
	if err := verifyActions(list, mf.OF10, false); err != nil {
		return bk, 0, err
	}
	bk.Actions = list
	if bk.Actions == nil {
		bk.Actions = []ofp.Action{}
	}
	return bk, AllVersions, nil
}

// parseHashFields parses the fields a "hash" selection method hashes:
// "name" (all bits) or "name=mask", separated by commas, added to m and to
// order (one entry per field name).
func parseHashFields(s string, m *mf.Match, order []mf.ID) ([]mf.ID, error) {
	for kv := range keyValues(s) {
		f := mf.ByName(kv.key)
		if f == nil || f.Variable {
			return nil, errf(": unknown field %s", kv.key)
		}
		mask := ones(f.Bytes)
		if kv.value != "" {
			if strings.Contains(kv.value, "/") {
				return nil, errf("%s: wildcards not allowed here", kv.value)
			}
			val, vmask, err := parseFieldValue(f, kv.value)
			if err != nil {
				return nil, &syntaxError{err.Error()}
			}
			if !isAllOnes(vmask) {
				return nil, errf("%s: wildcards not allowed here", kv.value)
			}
			if isZero(val) {
				return nil, errf(": values are wildcards here and must not be all-zeros")
			}
			mask = val
		}
		if err := m.SetMasked(f, make([]byte, f.Bytes), mask); err != nil {
			return nil, errf("%s: %v", kv.key, err)
		}
		if !slices.Contains(order, f.ID) {
			order = append(order, f.ID)
		}
	}
	return order, nil
}

// FormatGroupMod prints gm as ovs-ofctl prints a group mod in version v
// (after the message header): the command, then the group.
func FormatGroupMod(gm *ofp.GroupMod, v uint8) string {
	var b strings.Builder
	bucketCmd := false
	switch gm.Command {
	case ofp.GroupAdd:
		b.WriteString("ADD")
	case ofp.GroupModify:
		b.WriteString("MOD")
	case ofp.GroupAddOrMod:
		b.WriteString("ADD_OR_MOD")
	case ofp.GroupDelete:
		b.WriteString("DEL")
	case ofp.GroupInsertBucket:
		b.WriteString("INSERT_BUCKET")
		bucketCmd = true
	case ofp.GroupRemoveBucket:
		b.WriteString("REMOVE_BUCKET")
		bucketCmd = true
	default:
		b.WriteString("cmd:" + strconv.Itoa(int(gm.Command)))
	}
	b.WriteByte(' ')
	if bucketCmd {
		writeBucketID(&b, "command_bucket_id:", gm.CommandBucketID, v)
	}
	formatGroup(&b, gm.GroupID, gm.Type, !bucketCmd, gm.Buckets, gm.SelectionMethod, gm.SelectionParam, &gm.Fields, gm.FieldOrder, v)
	return b.String()
}

// FormatGroupDesc prints gd as ovs-ofctl dump-groups prints one group in
// version v ("group_id=1,type=all,bucket=actions=output:1").
func FormatGroupDesc(gd *ofp.GroupDesc, v uint8) string {
	var b strings.Builder
	formatGroup(&b, gd.GroupID, gd.Type, true, gd.Buckets, gd.SelectionMethod, gd.SelectionParam, &gd.Fields, gd.FieldOrder, v)
	return b.String()
}

var groupTypeText = [...]string{"all", "select", "indirect", "ff", "unknown"}

func formatGroup(b *strings.Builder, id uint32, typ uint8, withType bool, buckets []ofp.Bucket,
	method string, param uint64, fields *mf.Match, order []mf.ID, v uint8) {
	b.WriteString("group_id=" + strconv.FormatUint(uint64(id), 10))
	if withType {
		b.WriteString(",type=" + groupTypeText[min(int(typ), len(groupTypeText)-1)])
	}
	if method != "" {
		b.WriteString(",selection_method=" + method)
		if param != 0 {
			b.WriteString(",selection_method_param=" + strconv.FormatUint(param, 10))
		}
		names := hashFieldNames(fields, order)
		switch {
		case len(names) == 1:
			b.WriteString(",fields=" + names[0])
		case len(names) > 1:
			b.WriteString(",fields(" + strings.Join(names, ",") + ")")
		}
	}
	for i := range buckets {
		bk := &buckets[i]
		b.WriteString(",bucket=")
		writeBucketID(b, "bucket_id:", bk.ID, v)
		defWeight := uint16(0)
		if typ == ofp.GroupTypeSelect {
			defWeight = 1
		}
		if bk.Weight != defWeight {
			b.WriteString("weight:" + strconv.Itoa(int(bk.Weight)) + ",")
		}
		if bk.WatchPort != ofp.PortAny {
			b.WriteString("watch_port:")
			if p, err := ofp.PortFromOF11(bk.WatchPort); err == nil {
				b.WriteString(formatPort(p))
			} else {
				b.WriteString(strconv.FormatUint(uint64(bk.WatchPort), 10))
			}
			b.WriteByte(',')
		}
		if bk.WatchGroup != ofp.GroupAny {
			b.WriteString("watch_group:" + strconv.FormatUint(uint64(bk.WatchGroup), 10) + ",")
		}
		b.WriteString("actions=" + FormatActions(bk.Actions, v))
	}
}

// writeBucketID writes a bucket ID with its label and a comma; versions
// without bucket IDs on the wire (OpenFlow 1.1 to 1.4) print none.
func writeBucketID(b *strings.Builder, label string, id uint32, v uint8) {
	if v > mf.OF10 && v < mf.OF15 {
		return
	}
	b.WriteString(label)
	switch id {
	case ofp.BucketFirst:
		b.WriteString("first")
	case ofp.BucketLast:
		b.WriteString("last")
	case ofp.BucketAll:
		b.WriteString("all")
	default:
		b.WriteString(strconv.FormatUint(uint64(id), 10))
	}
	b.WriteByte(',')
}

// hashFieldNames names the hashed fields in field order: the name alone
// for all bits, else name=mask.
func hashFieldNames(m *mf.Match, order []mf.ID) []string {
	ids := slices.Clone(order)
	if ids == nil {
		fs := mf.Std.Fields()
		for i := range fs {
			if !fs[i].Variable && !m.IsWild(&fs[i]) {
				ids = append(ids, fs[i].ID)
			}
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var out []string
	for _, id := range ids {
		f := mf.ByID(id)
		n := m.Width(f)
		val, mask := make([]byte, n), make([]byte, n)
		m.Get(f, val, mask)
		if isAllOnes(mask) {
			out = append(out, f.Name)
		} else {
			out = append(out, f.Name+"="+formatValue(f, mask, ones(n)))
		}
	}
	return out
}

// keyValue is one pair of ovs-ofctl's key-value syntax.
type keyValue struct{ key, value string }

// keyValues yields the pairs of s as ovs-ofctl's ofputil_parse_key_value
// splits them: pairs are separated by commas and white space; a key ends
// at ':', '=', '(' or a separator; after ':' or '=' the value runs to the
// next separator outside parentheses, after '(' to the matching ')'
// ("(x)->y" continues past it).
func keyValues(s string) func(func(keyValue) bool) {
	return func(yield func(keyValue) bool) {
		for {
			s = strings.TrimLeft(s, ", \t\r\n")
			if s == "" {
				return
			}
			n := strings.IndexAny(s, ":=(, \t\r\n")
			if n < 0 {
				n = len(s)
			}
			key := s[:n]
			var delim byte
			if n < len(s) {
				delim = s[n]
				s = s[n+1:]
			} else {
				s = ""
			}
			var stops string
			switch delim {
			case ':', '=':
				stops = ", \t\r\n"
			case '(':
				stops = ")"
			default:
				if !yield(keyValue{key, ""}) {
					return
				}
				continue
			}
			vn := valueLen(s, stops)
			if delim == '(' && vn < len(s) && strings.HasPrefix(s[vn:], ")->") {
				vn += valueLen(s[vn:], ", \t\r\n")
			}
			value := s[:vn]
			if vn < len(s) {
				s = s[vn+1:]
			} else {
				s = ""
			}
			if !yield(keyValue{key, value}) {
				return
			}
		}
	}
}

// valueLen is the length of the value at the start of s: up to a byte in
// stops outside parentheses (or the end).
func valueLen(s, stops string) int {
	n := 0
	for n < len(s) && strings.IndexByte(stops, s[n]) < 0 {
		if s[n] != '(' {
			n++
			continue
		}
		for level := 0; ; {
			if n >= len(s) {
				return n
			}
			switch s[n] {
			case '(':
				level++
			case ')':
				level--
			}
			n++
			if level <= 0 {
				break
			}
		}
	}
	return n
}

// strToUint parses s as C's strtoull with base 0 (0x hex, 0 octal, else
// decimal) into bits bits. The error is ovs-ofctl's "invalid NAME "s""
// when name is set, else "invalid numeric format s".
func strToUint(s string, bits int, name string) (uint64, error) {
	bad := func() error {
		if name != "" {
			return errf("invalid %s \"%s\"", name, s)
		}
		return errf("invalid numeric format %s", s)
	}
	if s == "" && name == "" {
		return 0, errf("missing required numeric argument")
	}
	base, digits := 10, s
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X"):
		base, digits = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, digits = 8, s[1:]
	}
	if digits == "" || strings.ContainsAny(digits, "_+-") {
		return 0, bad()
	}
	n, err := strconv.ParseUint(digits, base, bits)
	if err != nil {
		return 0, bad()
	}
	return n, nil
}

func strToU32(s string) (uint32, error) {
	n, err := strToUint(s, 32, "")
	return uint32(n), err
}

func strToU64(s string) (uint64, error) { return strToUint(s, 64, "") }
