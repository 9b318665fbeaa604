// Table features (OFPMP_TABLE_FEATURES, OpenFlow 1.3+).

package ofp

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/ofproto/mf"
)

func init() {
	decoders[RawOFPST13_TABLE_FEATURES_REQUEST] = decodeTableFeatures
	decoders[RawOFPST13_TABLE_FEATURES_REPLY] = decodeTableFeatures
}

// Table feature property types (OFPTFPT_*). Each has a _MISS twin one
// higher (except NEXT_TABLES' and the match/wildcards lists).
const (
	TFPInstructions     = 0  // ofp_instruction headers (type, length 4)
	TFPNextTables       = 2  // table IDs, one byte each
	TFPWriteActions     = 4  // ofp_action headers (type, length 4)
	TFPApplyActions     = 6  // ofp_action headers
	TFPMatch            = 8  // OXM headers (4 bytes; 8 for experimenter)
	TFPWildcards        = 10 // OXM headers
	TFPWriteSetfield    = 12 // OXM headers
	TFPApplySetfield    = 14 // OXM headers
	TFPExperimenter     = 0xfffe
	TFPExperimenterMiss = 0xffff
)

// TableFeatureProp is one table feature property: its type and its value
// (without the 4-byte header and the padding), as on the wire.
type TableFeatureProp struct {
	Type uint16
	Data []byte
}

// TableFeatures describes one table (ofp_table_features).
type TableFeatures struct {
	TableID uint8
	// Command and Features exist in OpenFlow 1.5 only (OFPTFC_*,
	// OFPTFF_*); they are padding before.
	Command                      uint8
	Features                     uint32
	Name                         string
	MetadataMatch, MetadataWrite uint64
	Capabilities                 uint32 // "config" in OpenFlow 1.3
	MaxEntries                   uint32
	Props                        []TableFeatureProp
}

// TableFeaturesRequest is OFPST13_TABLE_FEATURES_REQUEST: no tables to
// ask for the features, or the tables to set.
type TableFeaturesRequest struct {
	Flags  uint16
	Tables []TableFeatures
}

// TableFeaturesReply is OFPST13_TABLE_FEATURES_REPLY. Open vSwitch sends
// one entry per table, split across messages (see EncodeReplies); the
// body must hold at least one table.
type TableFeaturesReply struct {
	Flags  uint16
	Tables []TableFeatures
}

const ofp13TableFeaturesLen = 64

func decodeTableFeatures(r *reader, v uint8, raw Raw) (Message, error) {
	var tables []TableFeatures
	for r.len() > 0 {
		if r.len() < ofp13TableFeaturesLen {
			return nil, errorf(OFPBRC_BAD_LEN, "ofp_table_features: %d leftover bytes", r.len())
		}
		// A bad entry length is a property error, as in Open vSwitch.
		n := int(binary.BigEndian.Uint16(r.b[r.off:]))
		if n < ofp13TableFeaturesLen || n%8 != 0 || n > r.len() {
			return nil, errorf(OFPBPC_BAD_LEN, "ofp_table_features of length %d with %d bytes left", n, r.len())
		}
		e := newReader(r.take(n), "ofp_table_features")
		var tf TableFeatures
		e.skip(2)
		tf.TableID, tf.Command, tf.Features = e.u8(), e.u8(), e.u32()
		if v < mf.OF15 {
			tf.Command, tf.Features = 0, 0
		}
		tf.Name = cString(e.take(tableNameLen))
		tf.MetadataMatch, tf.MetadataWrite = e.u64(), e.u64()
		tf.Capabilities, tf.MaxEntries = e.u32(), e.u32()
		props := e.take(e.len())
		for len(props) > 0 {
			typ, rec, adv, err := nextProp(props)
			if err != nil {
				return nil, err
			}
			tf.Props = append(tf.Props, TableFeatureProp{Type: typ, Data: append([]byte(nil), rec[4:]...)})
			props = props[adv:]
		}
		tables = append(tables, tf)
	}
	if raw == RawOFPST13_TABLE_FEATURES_REQUEST {
		return &TableFeaturesRequest{Flags: r.statsFlags, Tables: tables}, nil
	}
	return &TableFeaturesReply{Flags: r.statsFlags, Tables: tables}, nil
}

func appendTableFeatures(b []byte, v uint8, tf *TableFeatures) ([]byte, error) {
	start := len(b)
	b = append(b, 0, 0, tf.TableID, 0, 0, 0, 0, 0)
	if v >= mf.OF15 {
		b[start+3] = tf.Command
		binary.BigEndian.PutUint32(b[start+4:], tf.Features)
	}
	b = appendCString(b, tf.Name, tableNameLen)
	b = binary.BigEndian.AppendUint64(b, tf.MetadataMatch)
	b = binary.BigEndian.AppendUint64(b, tf.MetadataWrite)
	b = binary.BigEndian.AppendUint32(b, tf.Capabilities)
	b = binary.BigEndian.AppendUint32(b, tf.MaxEntries)
	for _, p := range tf.Props {
		n := 4 + len(p.Data)
		if n > maxMessageLen {
			return b[:start], errorf(OFPBPC_BAD_LEN, "table feature property %d of %d bytes", p.Type, n)
		}
		b = binary.BigEndian.AppendUint16(b, p.Type)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
		b = append(b, p.Data...)
		b = appendZeros(b, pad8(n)-n)
	}
	if len(b)-start > maxMessageLen {
		return b[:start], errorf(OFPBRC_BAD_LEN, "table features of %d bytes", len(b)-start)
	}
	putLen16(b, start)
	return b, nil
}

func (*TableFeaturesRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST13_TABLE_FEATURES_REQUEST)
}
func (m *TableFeaturesRequest) multipartFlags() uint16 { return m.Flags }
func (m *TableFeaturesRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	var err error
	for i := range m.Tables {
		if b, err = appendTableFeatures(b, v, &m.Tables[i]); err != nil {
			return b, err
		}
	}
	return b, nil
}

func (*TableFeaturesReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST13_TABLE_FEATURES_REPLY)
}
func (m *TableFeaturesReply) multipartFlags() uint16 { return m.Flags }
func (m *TableFeaturesReply) numEntries() int        { return len(m.Tables) }
func (m *TableFeaturesReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	return appendTableFeatures(b, v, &m.Tables[i])
}
func (m *TableFeaturesReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(b, v, m)
}
