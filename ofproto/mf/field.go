package mf

import (
	"errors"
	"fmt"
	"strings"
)

// ID identifies a field; it is the field's index in the table.
type ID uint16

// Format is how the text syntax prints and parses a field's value.
type Format uint8

// Text formats, as Open vSwitch's MFS_*.
const (
	FormatDecimal    Format = iota
	FormatHex               // 0x-prefixed hexadecimal
	FormatEthernet          // xx:xx:xx:xx:xx:xx
	FormatIPv4              // dotted quad, CIDR masks
	FormatIPv6              // RFC 5952
	FormatOFPPort           // OpenFlow 1.0 port (16-bit, names such as LOCAL)
	FormatOFPPortOXM        // OpenFlow 1.1+ port (32-bit on the wire)
	FormatFrag              // no/yes/first/later/not_later
	FormatTunFlags          // +oam
	FormatTCPFlags          // +syn-ack...
	FormatCtState           // +trk+est...
	FormatPacketType        // (ns,type)
)

var formatNames = [...]string{"decimal", "hexadecimal", "Ethernet", "IPv4", "IPv6",
	"OpenFlow 1.0 port", "OpenFlow 1.1+ port", "frag", "tunnel flags", "TCP flags",
	"ct state", "packet type"}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// OXM classes.
const (
	ClassNXM0         uint16 = 0x0000 // NXM_OF_*
	ClassNXM1         uint16 = 0x0001 // NXM_NX_*
	ClassEricsson     uint16 = 0x1000 // ERICOXM_OF_*
	ClassOpenFlow     uint16 = 0x8000 // OXM_OF_*
	ClassPacketRegs   uint16 = 0x8001 // OXM_OF_PKT_REG*
	ClassExperimenter uint16 = 0xffff // followed by a 32-bit experimenter ID
)

// Experimenter IDs used in experimenter OXM headers.
const (
	ExpNicira uint32 = 0x00002320 // NXOXM_ET_*
	ExpONF    uint32 = 0x4f4e4600 // ONFOXM_ET_*
	ExpNSH    uint32 = 0x005ad650 // NXOXM_NSH_*
)

// OpenFlow wire versions, as they appear in ofp_header.version.
const (
	OF10 uint8 = 0x01
	OF11 uint8 = 0x02
	OF12 uint8 = 0x03
	OF13 uint8 = 0x04
	OF14 uint8 = 0x05
	OF15 uint8 = 0x06
)

// Header is one NXM or OXM header that encodes a field.
type Header struct {
	Name         string // e.g. "NXM_OF_ETH_SRC", "OXM_OF_ETH_SRC"
	Class        uint16
	Field        uint8  // 7 bits
	Experimenter uint32 // only when Class == ClassExperimenter
	// Version is the first OpenFlow version whose OXM includes this
	// header; 0 for an NXM or extension header, usable in every version.
	Version uint8
}

// IsExperimenter reports whether the header carries a 32-bit experimenter ID.
func (h Header) IsExperimenter() bool { return h.Class == ClassExperimenter }

// Field is one row of the table.
type Field struct {
	ID       ID
	Name     string
	Aliases  []string // other names the text syntax accepts ("dl_src")
	Bytes    int      // width in bytes on the wire (maximum for variable fields)
	Bits     int      // meaningful low bits (8*Bytes unless "low N bits")
	Maskable bool
	Writable bool // set_field/load may write it
	Variable bool // tun_metadata: length set by the TLV map
	Prereq   Prereq
	Format   Format
	// Headers lists the NXM/OXM headers for the field, ordered by Version
	// (stable), as Open vSwitch orders them for preferred-header choice.
	Headers []Header
	loc     loc
}

// String returns the field's name.
func (f *Field) String() string { return f.Name }

// HeaderFor returns the header to use when encoding the field for wire
// version v (0 asks for NXM, preferring legacy NXM headers over standard
// OXM ones). ok is false when the field has no header at all.
func (f *Field) HeaderFor(v uint8) (h Header, ok bool) {
	for i, c := range f.Headers {
		if i == 0 || v >= c.Version {
			h, ok = c, true
		}
	}
	return h, ok
}

// Errors returned by the accessors. The wire codec maps them to OpenFlow
// error codes (ErrBadValue to OFPBMC_BAD_VALUE, ErrBadMask to
// OFPBMC_BAD_MASK).
var (
	ErrBadValue  = errors.New("mf: value has bits outside the field")
	ErrBadMask   = errors.New("mf: field is not maskable")
	ErrBadLength = errors.New("mf: wrong value length")
	ErrTunFull   = errors.New("mf: tunnel metadata space exhausted")
)

// Registry is the immutable set of all fields with name and header indexes.
type Registry struct {
	fields   []Field
	byName   map[string]*Field
	byHeader map[headerKey]*Field
}

type headerKey struct {
	class uint16
	field uint8
	exp   uint32
}

func newRegistry(fields []Field) *Registry {
	r := &Registry{fields: fields, byName: map[string]*Field{}, byHeader: map[headerKey]*Field{}}
	for i := range fields {
		f := &fields[i]
		if int(f.ID) != i {
			panic(fmt.Sprintf("mf: table row %d has ID %d", i, f.ID))
		}
		for _, n := range append([]string{f.Name}, f.Aliases...) {
			r.byName[n] = f
		}
		for _, h := range f.Headers {
			r.byName[h.Name] = f
			r.byHeader[headerKey{h.Class, h.Field, h.Experimenter}] = f
		}
	}
	return r
}

// Std is the registry of every field gvs knows. It is built once at
// package initialisation and never modified.
var Std = newRegistry(table)

// Fields returns all fields, indexed by ID. The caller must not modify them.
func (r *Registry) Fields() []Field { return r.fields }

// ByID returns the field with the given ID, or nil.
func (r *Registry) ByID(id ID) *Field {
	if int(id) < len(r.fields) {
		return &r.fields[id]
	}
	return nil
}

// ByName finds a field by name, alias or NXM/OXM header name (names are
// case-sensitive, as in ovs-ofctl).
func (r *Registry) ByName(name string) *Field { return r.byName[name] }

// ByHeader finds the field encoded by an NXM/OXM class, field code and
// experimenter ID (0 unless class is ClassExperimenter). The header's
// length is checked by the codec, not here.
func (r *Registry) ByHeader(class uint16, field uint8, exp uint32) *Field {
	return r.byHeader[headerKey{class, field, exp}]
}

// ByID returns the standard field with the given ID; it panics on an ID
// not in the table, which is a programming error.
func ByID(id ID) *Field { return &table[id] }

// ByName is Std.ByName.
func ByName(name string) *Field { return Std.ByName(name) }

// Lookup is like ByName but also accepts the NXM/OXM names with a "_W"
// suffix that ovs-ofctl prints for masked headers.
func Lookup(name string) *Field {
	if f := Std.ByName(name); f != nil {
		return f
	}
	if n, ok := strings.CutSuffix(name, "_W"); ok {
		if f := Std.ByName(n); f != nil && f.Maskable {
			return f
		}
	}
	return nil
}
