// Groups: group mod (OFPT11_GROUP_MOD, OFPT15_GROUP_MOD and, in OpenFlow
// 1.0, NXT_GROUP_MOD in the OpenFlow 1.5 layout), group description,
// statistics and features multipart messages.

package ofp

import (
	"encoding/binary"
	"errors"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// Group mod commands (OFPGC*).
const (
	GroupAdd          = 0
	GroupModify       = 1
	GroupDelete       = 2
	GroupInsertBucket = 3      // OpenFlow 1.5 (and NXT_GROUP_MOD)
	GroupRemoveBucket = 5      // OpenFlow 1.5 (and NXT_GROUP_MOD); 4 is unassigned
	GroupAddOrMod     = 0x8000 // Open vSwitch extension: add, or modify if it exists
)

// Group types (OFPGT11_*).
const (
	GroupTypeAll      = 0
	GroupTypeSelect   = 1
	GroupTypeIndirect = 2
	GroupTypeFF       = 3 // fast failover
)

// Group and bucket IDs.
const (
	GroupMax    = 0xffffff00 // OFPG_MAX: the largest real group ID
	GroupAll    = 0xfffffffc // OFPG_ALL: every group (requests, delete)
	BucketMax   = 0xffffff00 // OFPG15_BUCKET_MAX
	BucketFirst = 0xfffffffd // OFPG15_BUCKET_FIRST
	BucketLast  = 0xfffffffe // OFPG15_BUCKET_LAST
	BucketAll   = 0xffffffff // OFPG15_BUCKET_ALL
)

// Selection method property (Netronome's experimenter group property,
// NTRT_SELECTION_METHOD), OpenFlow 1.5 and NXT_GROUP_MOD only.
const (
	ntrVendorID       = 0x0000154d
	ntrCompatVendorID = 0x00001540
	ntrSelectionType  = 1
	ntrMethodLen      = 16
	ntrPropLen        = 40 // header through selection_method_param
	expPropHeaderLen  = 12 // experimenter property: type, length, experimenter, exp_type
)

// Bucket property types (OFPGBPT15_*).
const (
	bucketPropWeight     = 0
	bucketPropWatchPort  = 1
	bucketPropWatchGroup = 2
)

// Wire sizes.
const (
	ofp11BucketLen     = 16
	ofp15BucketLen     = 8
	ofp11GroupDescLen  = 8
	ofp15GroupDescLen  = 16
	ofp11GroupStatsLen = 32
	ofp13GroupStatsLen = 40
	bucketCounterLen   = 16
)

// Bucket is one bucket of a group.
type Bucket struct {
	ID         uint32 // OF1.5 bucket id (OFPG15_BUCKET_*); OVS numbers buckets 0.. for older versions
	Weight     uint16 // select groups
	WatchPort  uint32 // 32-bit form, OFPP_ANY = none
	WatchGroup uint32 // OFPG_ANY = none
	Actions    []Action
}

// live reports whether the bucket watches a port or group (Open vSwitch's
// ofputil_bucket_has_liveness).
func (b *Bucket) live() bool { return b.WatchPort != PortAny || b.WatchGroup != GroupAny }

// GroupMod is OFPT11_GROUP_MOD, OFPT15_GROUP_MOD or (OpenFlow 1.0)
// NXT_GROUP_MOD. Decoding applies Open vSwitch's checks
// (ofputil_check_group_mod) and fails with its OFPGMFC_* errors.
//
// In the OpenFlow 1.5 layout a bucket ID above BucketMax (BucketAll:
// unset) is replaced, when encoding, by the lowest free one, as ovs-ofctl
// does. Before OpenFlow 1.5 the wire has no bucket IDs: decoding numbers
// the buckets 0, 1, ... and sets CommandBucketID to BucketAll, and
// encoding ignores both; GroupInsertBucket and GroupRemoveBucket cannot
// be encoded there. The selection method properties exist only in OpenFlow 1.5 and
// NXT_GROUP_MOD; other versions drop them.
type GroupMod struct {
	Command         uint16 // GroupAdd, GroupModify, ...
	Type            uint8  // GroupTypeAll, ...
	GroupID         uint32
	CommandBucketID uint32 // OF1.5
	Buckets         []Bucket
	// Nicira selection method properties (OF1.5 / NTR_SELECTION_METHOD):
	// "hash" or "dp_hash" (empty: none), its parameter and, for "hash",
	// the fields hashed, as masks in Fields.Mask.
	SelectionMethod string
	SelectionParam  uint64
	Fields          mf.Match
	// FieldOrder lists the hashed fields in wire order (set by
	// decoding); it is authoritative where fields share storage (tcp_src
	// and udp_src differ in their prerequisites). When nil, encoding
	// emits the fields Fields matches in mf ID order (Open vSwitch's),
	// one name per storage.
	FieldOrder []mf.ID
}

// GroupDescRequest asks for group descriptions. GroupID is on the wire in
// OpenFlow 1.0 (NXST) and 1.5 only; older versions always ask for every
// group and decode as GroupAll.
type GroupDescRequest struct {
	Flags   uint16
	GroupID uint32
}

// GroupDesc describes one group in a GroupDescReply (see GroupMod for the
// fields).
type GroupDesc struct {
	Type            uint8
	GroupID         uint32
	Buckets         []Bucket
	SelectionMethod string
	SelectionParam  uint64
	Fields          mf.Match
	FieldOrder      []mf.ID
}

// GroupDescReply is a group description reply (NXST_GROUP_DESC_REPLY,
// OFPST11_GROUP_DESC_REPLY), one entry per group; EncodeReplies splits it.
type GroupDescReply struct {
	Flags  uint16
	Groups []GroupDesc
}

// GroupStatsRequest asks for the statistics of GroupID or GroupAll.
type GroupStatsRequest struct {
	Flags   uint16
	GroupID uint32
}

// BucketStats are one bucket's counters.
type BucketStats struct{ PacketCount, ByteCount uint64 }

// GroupStats are one group's statistics. OpenFlow 1.1 and 1.2 carry no
// duration: decoding sets both fields to 0xffffffff there, as Open
// vSwitch does, and encoding omits them.
type GroupStats struct {
	GroupID                   uint32
	RefCount                  uint32
	PacketCount, ByteCount    uint64
	DurationSec, DurationNsec uint32
	Buckets                   []BucketStats
}

// GroupStatsReply is a group statistics reply (NXST_GROUP_REPLY,
// OFPST11_GROUP_REPLY, OFPST13_GROUP_REPLY); EncodeReplies splits it.
type GroupStatsReply struct {
	Flags uint16
	Stats []GroupStats
}

// GroupFeaturesRequest asks for the group table's features.
type GroupFeaturesRequest struct{ Flags uint16 }

// GroupFeaturesReply describes the group table (ofp12_group_features):
// supported types and capabilities (OFPGFC_*) bitmaps, and per group type
// the maximum number of groups and the supported actions, as a bitmap of
// the version's action type numbers.
type GroupFeaturesReply struct {
	Flags               uint16
	Types, Capabilities uint32
	MaxGroups           [4]uint32
	Actions             [4]uint32
}

// ovsGroupActions is the action bitmap Open vSwitch 3.1 reports for every
// group type, by wire version.
var ovsGroupActions = [...]uint32{
	mf.OF10: 0x00000fff,
	mf.OF11: 0x01ffe7ff,
	mf.OF12: 0x03ff8001,
	mf.OF13: 0x03ff8001,
	mf.OF14: 0x03ff8001,
	mf.OF15: 0x03ff8001,
}

// OVSGroupFeatures returns the group features Open vSwitch 3.1 reports in
// version v: all four types, select-weight, select-liveness and chaining
// capabilities, 0xffffff00 groups of each type.
func OVSGroupFeatures(v uint8) *GroupFeaturesReply {
	m := &GroupFeaturesReply{Types: 0xf, Capabilities: 0x7}
	var acts uint32
	if int(v) < len(ovsGroupActions) {
		acts = ovsGroupActions[v]
	}
	for i := range m.MaxGroups {
		m.MaxGroups[i], m.Actions[i] = GroupMax, acts
	}
	return m
}

func init() {
	for raw, dec := range map[Raw]decodeFunc{
		RawNXT_GROUP_MOD:              decodeGroupMod,
		RawOFPT11_GROUP_MOD:           decodeGroupMod,
		RawOFPT15_GROUP_MOD:           decodeGroupMod,
		RawNXST_GROUP_DESC_REQUEST:    decodeGroupDescRequest,
		RawOFPST11_GROUP_DESC_REQUEST: decodeGroupDescRequest,
		RawOFPST15_GROUP_DESC_REQUEST: decodeGroupDescRequest,
		RawNXST_GROUP_DESC_REPLY:      decodeGroupDescReply,
		RawOFPST11_GROUP_DESC_REPLY:   decodeGroupDescReply,
		RawNXST_GROUP_REQUEST:         decodeGroupStatsRequest,
		RawOFPST11_GROUP_REQUEST:      decodeGroupStatsRequest,
		RawNXST_GROUP_REPLY:           decodeGroupStatsReply,
		RawOFPST11_GROUP_REPLY:        decodeGroupStatsReply,
		RawOFPST13_GROUP_REPLY:        decodeGroupStatsReply,
		RawNXST_GROUP_FEATURES_REQUEST: func(r *reader, _ uint8, _ Raw) (Message, error) {
			return &GroupFeaturesRequest{Flags: r.statsFlags}, nil
		},
		RawOFPST12_GROUP_FEATURES_REQUEST: func(r *reader, _ uint8, _ Raw) (Message, error) {
			return &GroupFeaturesRequest{Flags: r.statsFlags}, nil
		},
		RawNXST_GROUP_FEATURES_REPLY:    decodeGroupFeaturesReply,
		RawOFPST12_GROUP_FEATURES_REPLY: decodeGroupFeaturesReply,
	} {
		decoders[raw] = dec
	}
}

// ofp15Layout reports whether version v uses the OpenFlow 1.5 group
// layouts (bucket IDs and properties): OpenFlow 1.0's Nicira messages and
// OpenFlow 1.5.
func ofp15Layout(v uint8) bool { return v == mf.OF10 || v >= mf.OF15 }

// --- buckets ---

// decodeBuckets11 decodes ofp11_bucket records filling p, numbering them
// from 0.
func decodeBuckets11(p []byte, v uint8) ([]Bucket, error) {
	var out []Bucket
	for id := uint32(0); len(p) > 0; id++ {
		if len(p) < ofp11BucketLen {
			return nil, errorf(OFPGMFC_BAD_BUCKET, "buckets end with %d leftover bytes", len(p))
		}
		n := int(binary.BigEndian.Uint16(p))
		if n < ofp11BucketLen || n > len(p) {
			return nil, errorf(OFPGMFC_BAD_BUCKET, "bucket length %d with %d bytes left", n, len(p))
		}
		acts, err := DecodeOfpacts(p[ofp11BucketLen:n], v, false)
		if err != nil {
			return nil, err
		}
		b := Bucket{ID: id, Weight: binary.BigEndian.Uint16(p[2:]), WatchPort: binary.BigEndian.Uint32(p[4:]),
			WatchGroup: binary.BigEndian.Uint32(p[8:]), Actions: acts}
		if _, err := PortFromOF11(b.WatchPort); err != nil {
			return nil, &Error{Code: OFPGMFC_BAD_WATCH, Err: err}
		}
		out = append(out, b)
		p = p[n:]
	}
	return out, nil
}

func appendBucket11(b []byte, bk *Bucket, v uint8) ([]byte, error) {
	start := len(b)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint16(b, bk.Weight)
	b = binary.BigEndian.AppendUint32(b, bk.WatchPort)
	b = binary.BigEndian.AppendUint32(b, bk.WatchGroup)
	b = append(b, 0, 0, 0, 0)
	b, err := AppendOfpacts(b, bk.Actions, v, false)
	if err != nil {
		return b[:start], err
	}
	return finishLen16(b, start, "bucket")
}

// finishLen16 sets the 16-bit length at start to the bytes since start.
func finishLen16(b []byte, start int, what string) ([]byte, error) {
	if len(b)-start > maxMessageLen {
		return b[:start], errorf(OFPBRC_BAD_LEN, "%w: %s of %d bytes", errEntryTooLong, what, len(b)-start)
	}
	putLen16(b, start)
	return b, nil
}

// decodeBuckets15 decodes ofp15_bucket records (with properties) filling
// p; absent properties default as in Open vSwitch (weight 1 in select
// groups, else 0; no watch port or group).
func decodeBuckets15(p []byte, v, typ uint8) ([]Bucket, error) {
	var out []Bucket
	seen := map[uint32]bool{}
	for len(p) > 0 {
		if len(p) < ofp15BucketLen {
			return nil, errorf(OFPGMFC_BAD_BUCKET, "buckets end with %d leftover bytes", len(p))
		}
		n, alen := int(binary.BigEndian.Uint16(p)), int(binary.BigEndian.Uint16(p[2:]))
		switch {
		case n < ofp15BucketLen || n > len(p):
			return nil, errorf(OFPGMFC_BAD_BUCKET, "bucket length %d with %d bytes left", n, len(p))
		case alen > n-ofp15BucketLen:
			return nil, errorf(OFPGMFC_BAD_BUCKET, "bucket actions length %d exceeds the bucket's %d", alen, n-ofp15BucketLen)
		}
		b := Bucket{ID: binary.BigEndian.Uint32(p[4:]), WatchPort: PortAny, WatchGroup: GroupAny}
		if typ == GroupTypeSelect {
			b.Weight = 1
		}
		acts, err := DecodeOfpacts(p[ofp15BucketLen:ofp15BucketLen+alen], v, false)
		if err != nil {
			return nil, err
		}
		b.Actions = acts
		it := newOfpropIter(p[ofp15BucketLen+alen:n], 0xffff, "group bucket property")
		for it.next() {
			switch it.Type {
			case bucketPropWeight:
				b.Weight, err = it.u16()
			case bucketPropWatchPort:
				b.WatchPort, err = it.u32()
			case bucketPropWatchGroup:
				b.WatchGroup, err = it.u32()
			default:
				err = it.unknown()
			}
			if err != nil {
				return nil, err
			}
		}
		if err := it.Err(); err != nil {
			return nil, err
		}
		if _, err := PortFromOF11(b.WatchPort); err != nil {
			return nil, &Error{Code: OFPGMFC_BAD_WATCH, Err: err}
		}
		if b.ID > BucketMax {
			return nil, errorf(OFPGMFC_BAD_BUCKET, "bucket id %#x is out of range", b.ID)
		}
		if seen[b.ID] {
			return nil, errorf(OFPGMFC_BAD_BUCKET, "duplicate bucket id %d", b.ID)
		}
		seen[b.ID] = true
		out = append(out, b)
		p = p[n:]
	}
	return out, nil
}

// appendBucket15 appends bk as an ofp15_bucket with the properties Open
// vSwitch writes: weight in select groups or when not zero, watch port
// and group when set.
func appendBucket15(b []byte, bk *Bucket, v, typ uint8) ([]byte, error) {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, bk.ID)
	b, err := AppendOfpacts(b, bk.Actions, v, false)
	if err != nil {
		return b[:start], err
	}
	binary.BigEndian.PutUint16(b[start+2:], uint16(len(b)-start-ofp15BucketLen))
	// Insert-bucket mods carry no group type: a weight goes whenever set.
	if typ == GroupTypeSelect || bk.Weight != 0 {
		b = ofpropAppendU16(b, bucketPropWeight, bk.Weight)
	}
	if bk.WatchPort != PortAny {
		b = ofpropAppendU32(b, bucketPropWatchPort, bk.WatchPort)
	}
	if bk.WatchGroup != GroupAny {
		b = ofpropAppendU32(b, bucketPropWatchGroup, bk.WatchGroup)
	}
	return finishLen16(b, start, "bucket")
}

// --- selection method property ---

// selection is the selection method of a group mod or description.
type selection struct {
	method *string
	param  *uint64
	fields *mf.Match
	order  *[]mf.ID
}

// decodeGroupProps decodes the group properties in p (only the selection
// method exists) for a group of type typ and command cmd.
func decodeGroupProps(p []byte, typ uint8, cmd uint16, s selection) error {
	it := newOfpropIter(p, 0xffff, "group property")
	for it.next() {
		if it.Type != 0xffff || (it.Exp != ntrVendorID && it.Exp != ntrCompatVendorID) || it.ExpType != ntrSelectionType {
			return it.unknown()
		}
		if err := decodeSelection(it.Value, typ, cmd, s); err != nil {
			return err
		}
	}
	return it.Err()
}

// decodeSelection decodes a selection method property's payload (after
// the 12-byte experimenter property header).
func decodeSelection(p []byte, typ uint8, cmd uint16, s selection) error {
	if typ != GroupTypeSelect {
		return errorf(OFPBPC_BAD_VALUE, "selection method property in a group of type %d", typ)
	}
	switch cmd {
	case GroupAdd, GroupModify, GroupAddOrMod:
	default:
		return errorf(OFPBPC_BAD_VALUE, "selection method property with group command %d", cmd)
	}
	if len(p) < ntrPropLen-expPropHeaderLen {
		return errorf(OFPBPC_BAD_LEN, "selection method property of %d bytes", len(p)+expPropHeaderLen)
	}
	name := p[4 : 4+ntrMethodLen]
	method := cString(name)
	switch {
	case len(method) == ntrMethodLen:
		return errorf(OFPBPC_BAD_VALUE, "selection method is not NUL-terminated")
	case method != "hash" && method != "dp_hash":
		return errorf(OFPBPC_BAD_VALUE, "selection method %q is not supported", method)
	}
	*s.method = method
	*s.param = binary.BigEndian.Uint64(p[4+ntrMethodLen:])
	fields := p[ntrPropLen-expPropHeaderLen:]
	if len(fields) > 0 && method != "hash" {
		return errorf(OFPBPC_BAD_VALUE, "selection method %s does not take fields", method)
	}
	return decodeFieldArray(fields, s.fields, s.order)
}

// decodeFieldArray decodes a list of field headers each followed by a
// mask of the field's width (Open vSwitch's oxm_pull_field_array).
func decodeFieldArray(p []byte, m *mf.Match, order *[]mf.ID) error {
	var ids []mf.ID
	for len(p) > 0 {
		if len(p) < 4 {
			return errorf(OFPBMC_BAD_LEN, "partial %d-byte field header", len(p))
		}
		h := binary.BigEndian.Uint32(p)
		class, code, hasMask, length := uint16(h>>16), uint8(h>>9&0x7f), h>>8&1 == 1, int(h&0xff)
		var exp uint32
		hl := 4
		if class == mf.ClassExperimenter {
			if len(p) < 8 || length < 4 {
				return errorf(OFPBMC_BAD_LEN, "partial experimenter field header %#x", h)
			}
			exp, hl, length = binary.BigEndian.Uint32(p[4:]), 8, length-4
		}
		if len(p)-hl < length {
			return errorf(OFPBMC_BAD_LEN, "field %#x needs %d bytes, %d remain", h, length, len(p)-hl)
		}
		mask := p[hl : hl+length]
		p = p[hl+length:]
		if hasMask {
			return errorf(OFPBMC_BAD_MASK, "masked field header %#x in a field array", h)
		}
		f := mf.Std.ByHeader(class, code, exp)
		if f == nil || f.Variable || length != f.Bytes {
			return errorf(OFPBMC_BAD_FIELD, "unknown field header %#x in a field array", h)
		}
		for _, id := range ids {
			if id == f.ID {
				return errorf(OFPBMC_DUP_FIELD, "duplicate %s in a field array", f.Name)
			}
		}
		if !f.MaskValid(mask) {
			return errorf(OFPBMC_BAD_MASK, "bad mask %x for %s in a field array", mask, f.Name)
		}
		if err := m.SetMasked(f, make([]byte, f.Bytes), mask); err != nil {
			code := OFPBMC_BAD_MASK
			if !errors.Is(err, mf.ErrBadMask) && !errors.Is(err, mf.ErrBadValue) {
				code = OFPBMC_BAD_VALUE
			}
			return &Error{Code: code, Err: err}
		}
		ids = append(ids, f.ID)
	}
	*order = ids
	return nil
}

// appendSelection appends the selection method property, if any.
func appendSelection(b []byte, v uint8, method string, param uint64, m *mf.Match, order []mf.ID) ([]byte, error) {
	if method == "" {
		return b, nil
	}
	if len(method) >= ntrMethodLen {
		return b, errorf(OFPBPC_BAD_VALUE, "selection method %q is longer than %d bytes", method, ntrMethodLen-1)
	}
	b, start := ofpropStart(b, 0xffff)
	b = binary.BigEndian.AppendUint32(b, ntrVendorID)
	b = binary.BigEndian.AppendUint32(b, ntrSelectionType)
	b = append(b, 0, 0, 0, 0)
	b = appendCString(b, method, ntrMethodLen)
	b = binary.BigEndian.AppendUint64(b, param)
	var val, mask [maxField]byte
	put := func(f *mf.Field) {
		h, ok := f.HeaderFor(v)
		if !ok {
			return
		}
		n := m.Width(f)
		if h.IsExperimenter() {
			b = binary.BigEndian.AppendUint32(b, uint32(h.Class)<<16|uint32(h.Field)<<9|uint32(n+4))
			b = binary.BigEndian.AppendUint32(b, h.Experimenter)
		} else {
			b = binary.BigEndian.AppendUint32(b, uint32(h.Class)<<16|uint32(h.Field)<<9|uint32(n))
		}
		m.Get(f, val[:n], mask[:n])
		b = append(b, mask[:n]...)
	}
	if order != nil {
		for _, id := range order {
			put(mf.ByID(id))
		}
	} else {
		// Fields sharing storage (tcp_src, udp_src, ...) are emitted
		// once, under the first name in ID order.
		var covered mf.Match
		fs := mf.Std.Fields()
		for i := range fs {
			f := &fs[i]
			if f.Variable || m.IsWild(f) || !covered.IsWild(f) {
				continue
			}
			put(f)
			n := m.Width(f)
			if err := covered.SetMasked(f, make([]byte, n), mask[:n]); err != nil {
				return b[:start], errorf(OFPBPC_BAD_VALUE, "selection field %s: %v", f.Name, err)
			}
		}
	}
	if len(b)-start > maxMessageLen {
		return b[:start], errorf(OFPBPC_BAD_LEN, "selection method property of %d bytes", len(b)-start)
	}
	return ofpropEnd(b, start), nil
}

// --- group mod ---

func decodeGroupMod(r *reader, v uint8, raw Raw) (Message, error) {
	m := &GroupMod{Command: r.u16(), Type: r.u8()}
	r.skip(1)
	m.GroupID = r.u32()
	sel := selection{&m.SelectionMethod, &m.SelectionParam, &m.Fields, &m.FieldOrder}
	var err error
	if raw == RawOFPT11_GROUP_MOD {
		m.CommandBucketID = BucketAll
		if m.Buckets, err = decodeBuckets11(r.take(r.len()), v); err != nil {
			return nil, err
		}
		if v >= mf.OF13 && m.Command == GroupDelete && len(m.Buckets) > 0 {
			return nil, errorf(OFPGMFC_INVALID_GROUP, "group delete with %d buckets", len(m.Buckets))
		}
	} else {
		blen := int(r.u16())
		r.skip(2)
		m.CommandBucketID = r.u32()
		if err := checkCommandBucketID(m.Command, m.CommandBucketID); err != nil {
			return nil, err
		}
		if blen > r.len() {
			return nil, errorf(OFPBRC_BAD_LEN, "bucket array length %d with %d bytes left", blen, r.len())
		}
		if m.Buckets, err = decodeBuckets15(r.take(blen), v, m.Type); err != nil {
			return nil, err
		}
		if err := decodeGroupProps(r.take(r.len()), m.Type, m.Command, sel); err != nil {
			return nil, err
		}
	}
	return m, checkGroupMod(m)
}

// checkCommandBucketID applies Open vSwitch's OpenFlow 1.5 rules: insert
// takes a real bucket ID, first or last; remove also all; other commands
// all only.
func checkCommandBucketID(cmd uint16, id uint32) error {
	ok := id == BucketAll
	switch cmd {
	case GroupInsertBucket:
		ok = id <= BucketMax || id == BucketFirst || id == BucketLast
	case GroupRemoveBucket:
		ok = ok || id <= BucketMax || id == BucketFirst || id == BucketLast
	}
	if !ok {
		return errorf(OFPGMFC_BAD_BUCKET, "command bucket id %#x is out of range for command %d", id, cmd)
	}
	return nil
}

// checkGroupMod applies Open vSwitch's consistency checks.
func checkGroupMod(m *GroupMod) error {
	switch m.Type {
	case GroupTypeIndirect:
		if m.Command != GroupDelete && len(m.Buckets) != 1 {
			return errorf(OFPGMFC_INVALID_GROUP, "indirect group with %d buckets", len(m.Buckets))
		}
	case GroupTypeAll, GroupTypeSelect, GroupTypeFF:
	default:
		return errorf(OFPGMFC_BAD_TYPE, "group type %d", m.Type)
	}
	switch m.Command {
	case GroupAdd, GroupModify, GroupAddOrMod, GroupDelete, GroupInsertBucket:
	case GroupRemoveBucket:
		if len(m.Buckets) > 0 {
			return errorf(OFPGMFC_BAD_BUCKET, "remove-bucket with %d buckets", len(m.Buckets))
		}
	default:
		return errorf(OFPGMFC_BAD_COMMAND, "group command %d", m.Command)
	}
	for i := range m.Buckets {
		bk := &m.Buckets[i]
		switch {
		case bk.Weight != 0 && m.Type != GroupTypeSelect && m.Command != GroupInsertBucket:
			return errorf(OFPGMFC_INVALID_GROUP, "bucket weight %d in a group of type %d", bk.Weight, m.Type)
		case (m.Type == GroupTypeAll || m.Type == GroupTypeIndirect) && bk.live():
			return errorf(OFPGMFC_WATCH_UNSUPPORTED, "watched bucket in a group of type %d", m.Type)
		case m.Type == GroupTypeFF && !bk.live():
			return errorf(OFPGMFC_INVALID_GROUP, "fast failover bucket without a watch port or group")
		}
	}
	return nil
}

// RawFor returns NXT_GROUP_MOD, OFPT11_GROUP_MOD or OFPT15_GROUP_MOD.
func (*GroupMod) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawNXT_GROUP_MOD, RawOFPT11_GROUP_MOD, RawOFPT15_GROUP_MOD)
}

func (m *GroupMod) appendBody(b []byte, v uint8) ([]byte, error) {
	start := len(b)
	b = binary.BigEndian.AppendUint16(b, m.Command)
	b = append(b, m.Type, 0)
	b = binary.BigEndian.AppendUint32(b, m.GroupID)
	var err error
	if !ofp15Layout(v) {
		if m.Command == GroupInsertBucket || m.Command == GroupRemoveBucket {
			return b[:start], errorf(OFPGMFC_BAD_COMMAND, "group command %d needs OpenFlow 1.5", m.Command)
		}
		for i := range m.Buckets {
			if b, err = appendBucket11(b, &m.Buckets[i], v); err != nil {
				return b[:start], err
			}
		}
		return b, nil
	}
	lenAt := len(b)
	b = append(b, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, m.CommandBucketID)
	bstart := len(b)
	ids := bucketIDs(m.Buckets)
	for i := range m.Buckets {
		bk := m.Buckets[i]
		bk.ID = ids[i]
		if b, err = appendBucket15(b, &bk, v, m.Type); err != nil {
			return b[:start], err
		}
	}
	if len(b)-bstart > 0xffff {
		return b[:start], errorf(OFPBRC_BAD_LEN, "bucket array of %d bytes", len(b)-bstart)
	}
	binary.BigEndian.PutUint16(b[lenAt:], uint16(len(b)-bstart))
	if b, err = appendSelection(b, v, m.SelectionMethod, m.SelectionParam, &m.Fields, m.FieldOrder); err != nil {
		return b[:start], err
	}
	return b, nil
}

// bucketIDs returns the IDs to encode for bs: a bucket whose ID is above
// BucketMax (unset, e.g. BucketAll) gets the lowest ID not yet taken, as
// Open vSwitch's encoder allocates them: the explicit IDs of the buckets
// after the first unset one, and those allocated, count as taken.
func bucketIDs(bs []Bucket) []uint32 {
	ids := make([]uint32, len(bs))
	var used map[uint32]bool
	next := uint32(0)
	for i := range bs {
		ids[i] = bs[i].ID
		if bs[i].ID <= BucketMax {
			continue
		}
		if used == nil {
			used = map[uint32]bool{}
			for _, later := range bs[i+1:] {
				if later.ID <= BucketMax {
					used[later.ID] = true
				}
			}
		}
		for used[next] {
			next++
		}
		ids[i] = next
		used[next] = true
	}
	return ids
}

// --- group description ---

func decodeGroupDescRequest(r *reader, _ uint8, raw Raw) (Message, error) {
	m := &GroupDescRequest{Flags: r.statsFlags, GroupID: GroupAll}
	if raw != RawOFPST11_GROUP_DESC_REQUEST {
		m.GroupID = r.u32()
		r.skip(4)
	}
	return m, nil
}

// RawFor returns the group description request type for v.
func (*GroupDescRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawNXST_GROUP_DESC_REQUEST, RawOFPST11_GROUP_DESC_REQUEST, RawOFPST15_GROUP_DESC_REQUEST)
}
func (m *GroupDescRequest) multipartFlags() uint16 { return m.Flags }
func (m *GroupDescRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	if !ofp15Layout(v) {
		return b, nil
	}
	b = binary.BigEndian.AppendUint32(b, m.GroupID)
	return append(b, 0, 0, 0, 0), nil
}

func decodeGroupDescReply(r *reader, v uint8, _ Raw) (Message, error) {
	m := &GroupDescReply{Flags: r.statsFlags}
	fixed := ofp11GroupDescLen
	if ofp15Layout(v) {
		fixed = ofp15GroupDescLen
	}
	for r.len() > 0 {
		if r.len() < fixed {
			return nil, errorf(OFPBRC_BAD_LEN, "group description: %d leftover bytes", r.len())
		}
		n := int(binary.BigEndian.Uint16(r.b[r.off:]))
		if n < fixed || n > r.len() {
			return nil, errorf(OFPBRC_BAD_LEN, "group description of length %d with %d bytes left", n, r.len())
		}
		e := r.take(n)
		gd := GroupDesc{Type: e[2], GroupID: binary.BigEndian.Uint32(e[4:])}
		var err error
		if !ofp15Layout(v) {
			gd.Buckets, err = decodeBuckets11(e[fixed:], v)
		} else {
			blen := int(binary.BigEndian.Uint16(e[8:]))
			if blen > n-fixed {
				return nil, errorf(OFPBRC_BAD_LEN, "group description bucket list length %d exceeds %d", blen, n-fixed)
			}
			if gd.Buckets, err = decodeBuckets15(e[fixed:fixed+blen], v, gd.Type); err == nil {
				// A description has no command; Open vSwitch checks its
				// properties as an add's.
				err = decodeGroupProps(e[fixed+blen:], gd.Type, GroupAdd,
					selection{&gd.SelectionMethod, &gd.SelectionParam, &gd.Fields, &gd.FieldOrder})
			}
		}
		if err != nil {
			return nil, err
		}
		m.Groups = append(m.Groups, gd)
	}
	return m, nil
}

// RawFor returns NXST_GROUP_DESC_REPLY or OFPST11_GROUP_DESC_REPLY.
func (*GroupDescReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawNXST_GROUP_DESC_REPLY, RawOFPST11_GROUP_DESC_REPLY)
}
func (m *GroupDescReply) multipartFlags() uint16 { return m.Flags }
func (m *GroupDescReply) numEntries() int        { return len(m.Groups) }
func (m *GroupDescReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(b, v, m)
}

func (m *GroupDescReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	gd := &m.Groups[i]
	start := len(b)
	b = append(b, 0, 0, gd.Type, 0)
	b = binary.BigEndian.AppendUint32(b, gd.GroupID)
	var err error
	if !ofp15Layout(v) {
		for j := range gd.Buckets {
			if b, err = appendBucket11(b, &gd.Buckets[j], v); err != nil {
				return b[:start], err
			}
		}
		return finishLen16(b, start, "group description")
	}
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	bstart := len(b)
	for j := range gd.Buckets {
		if b, err = appendBucket15(b, &gd.Buckets[j], v, gd.Type); err != nil {
			return b[:start], err
		}
	}
	if len(b)-bstart > 0xffff {
		return b[:start], errorf(OFPBRC_BAD_LEN, "bucket list of %d bytes", len(b)-bstart)
	}
	binary.BigEndian.PutUint16(b[start+8:], uint16(len(b)-bstart))
	if b, err = appendSelection(b, v, gd.SelectionMethod, gd.SelectionParam, &gd.Fields, gd.FieldOrder); err != nil {
		return b[:start], err
	}
	return finishLen16(b, start, "group description")
}

// --- group statistics ---

func decodeGroupStatsRequest(r *reader, _ uint8, _ Raw) (Message, error) {
	m := &GroupStatsRequest{Flags: r.statsFlags, GroupID: r.u32()}
	r.skip(4)
	return m, nil
}

// RawFor returns NXST_GROUP_REQUEST or OFPST11_GROUP_REQUEST.
func (*GroupStatsRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawNXST_GROUP_REQUEST, RawOFPST11_GROUP_REQUEST)
}
func (m *GroupStatsRequest) multipartFlags() uint16 { return m.Flags }
func (m *GroupStatsRequest) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = binary.BigEndian.AppendUint32(b, m.GroupID)
	return append(b, 0, 0, 0, 0), nil
}

// groupStatsLen is the fixed entry size: ofp11_group_stats in OpenFlow
// 1.1 and 1.2, ofp13_group_stats (with durations) otherwise.
func groupStatsLen(v uint8) int {
	if v == mf.OF11 || v == mf.OF12 {
		return ofp11GroupStatsLen
	}
	return ofp13GroupStatsLen
}

func decodeGroupStatsReply(r *reader, v uint8, _ Raw) (Message, error) {
	m := &GroupStatsReply{Flags: r.statsFlags}
	fixed := groupStatsLen(v)
	for r.len() > 0 {
		if r.len() < fixed {
			return nil, errorf(OFPBRC_BAD_LEN, "group stats: %d leftover bytes", r.len())
		}
		n := int(binary.BigEndian.Uint16(r.b[r.off:]))
		if n < fixed || n > r.len() || (n-fixed)%bucketCounterLen != 0 {
			return nil, errorf(OFPBRC_BAD_LEN, "group stats of length %d with %d bytes left", n, r.len())
		}
		e := newReader(r.take(n), "group stats")
		e.skip(4)
		gs := GroupStats{GroupID: e.u32(), RefCount: e.u32()}
		e.skip(4)
		gs.PacketCount, gs.ByteCount = e.u64(), e.u64()
		gs.DurationSec, gs.DurationNsec = 0xffffffff, 0xffffffff
		if fixed == ofp13GroupStatsLen {
			gs.DurationSec, gs.DurationNsec = e.u32(), e.u32()
		}
		for e.len() > 0 {
			gs.Buckets = append(gs.Buckets, BucketStats{PacketCount: e.u64(), ByteCount: e.u64()})
		}
		m.Stats = append(m.Stats, gs)
	}
	return m, nil
}

// RawFor returns the group statistics reply type for v.
func (*GroupStatsReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawNXST_GROUP_REPLY, RawOFPST11_GROUP_REPLY, RawOFPST13_GROUP_REPLY)
}
func (m *GroupStatsReply) multipartFlags() uint16 { return m.Flags }
func (m *GroupStatsReply) numEntries() int        { return len(m.Stats) }
func (m *GroupStatsReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(b, v, m)
}

func (m *GroupStatsReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	gs := &m.Stats[i]
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, gs.GroupID)
	b = binary.BigEndian.AppendUint32(b, gs.RefCount)
	b = append(b, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint64(b, gs.PacketCount)
	b = binary.BigEndian.AppendUint64(b, gs.ByteCount)
	if groupStatsLen(v) == ofp13GroupStatsLen {
		b = binary.BigEndian.AppendUint32(b, gs.DurationSec)
		b = binary.BigEndian.AppendUint32(b, gs.DurationNsec)
	}
	for _, bs := range gs.Buckets {
		b = binary.BigEndian.AppendUint64(b, bs.PacketCount)
		b = binary.BigEndian.AppendUint64(b, bs.ByteCount)
	}
	return finishLen16(b, start, "group stats")
}

// --- group features ---

// RawFor returns NXST_GROUP_FEATURES_REQUEST (OpenFlow 1.0 and 1.1) or
// OFPST12_GROUP_FEATURES_REQUEST.
func (*GroupFeaturesRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawNXST_GROUP_FEATURES_REQUEST, RawOFPST12_GROUP_FEATURES_REQUEST)
}
func (m *GroupFeaturesRequest) multipartFlags() uint16                     { return m.Flags }
func (*GroupFeaturesRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }

func decodeGroupFeaturesReply(r *reader, _ uint8, _ Raw) (Message, error) {
	m := &GroupFeaturesReply{Flags: r.statsFlags, Types: r.u32(), Capabilities: r.u32()}
	for i := range m.MaxGroups {
		m.MaxGroups[i] = r.u32()
	}
	for i := range m.Actions {
		m.Actions[i] = r.u32()
	}
	return m, nil
}

// RawFor returns NXST_GROUP_FEATURES_REPLY (OpenFlow 1.0 and 1.1) or
// OFPST12_GROUP_FEATURES_REPLY.
func (*GroupFeaturesReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawNXST_GROUP_FEATURES_REPLY, RawOFPST12_GROUP_FEATURES_REPLY)
}
func (m *GroupFeaturesReply) multipartFlags() uint16 { return m.Flags }
func (m *GroupFeaturesReply) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = binary.BigEndian.AppendUint32(b, m.Types)
	b = binary.BigEndian.AppendUint32(b, m.Capabilities)
	for _, w := range m.MaxGroups {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	for _, w := range m.Actions {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	return b, nil
}
