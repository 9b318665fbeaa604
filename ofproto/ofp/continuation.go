package ofp

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// Continuation properties (NXCPT_*): the switch-private contents of
// NXT_PACKET_IN2's NXPINT_CONTINUATION property, which a controller
// echoes back in NXT_RESUME. Open vSwitch's ovs-ofctl and ovn-controller
// decode them, so gvs uses the same layout.
const (
	nxcptBridge      = 0x8000
	nxcptStack       = 0x8001
	nxcptMirrors     = 0x8002
	nxcptConntracked = 0x8003
	nxcptTableID     = 0x8004
	nxcptCookie      = 0x8005
	nxcptActions     = 0x8006
	nxcptActionSet   = 0x8007
	nxcptODPPort     = 0x8008
)

// ContinuationGroup is a run of frozen actions and the table and cookie
// of the rule they belong to (Open vSwitch's unroll_xlate groups).
type ContinuationGroup struct {
	TableID uint8
	Cookie  uint64
	Actions []Action
}

// PacketInPrivate is a decoded continuation.
type PacketInPrivate struct {
	Bridge      [16]byte
	Stack       [][]byte
	Mirrors     uint32
	Conntracked bool
	// Groups are the frozen actions, innermost action list first.
	Groups    []ContinuationGroup
	ActionSet []Action
	ODPPort   uint32
}

// AppendContinuation encodes p as continuation properties for version v,
// in Open vSwitch's order (bridge, stack, mirrors, conntracked, then each
// group's table id and cookie when they change and its actions, the
// action set, the datapath port).
func AppendContinuation(b []byte, p *PacketInPrivate, v uint8) ([]byte, error) {
	if p.Bridge != ([16]byte{}) {
		b = ofpropAppend(b, nxcptBridge, p.Bridge[:])
	}
	for _, e := range p.Stack {
		b = ofpropAppend(b, nxcptStack, e)
	}
	if p.Mirrors != 0 {
		b = ofpropAppendU32(b, nxcptMirrors, p.Mirrors)
	}
	if p.Conntracked {
		b = ofpropAppend(b, nxcptConntracked, nil)
	}
	var table uint8
	var cookie uint64
	for i, g := range p.Groups {
		if i > 0 || g.TableID != 0 || g.Cookie != 0 {
			if g.TableID != table {
				b = ofpropAppendU8(b, nxcptTableID, g.TableID)
				table = g.TableID
			}
			if g.Cookie != cookie {
				b = ofpropAppendU64(b, nxcptCookie, g.Cookie)
				cookie = g.Cookie
			}
		}
		if len(g.Actions) == 0 {
			continue
		}
		var start int
		b, start = ofpropStart(b, nxcptActions)
		b = append(b, 0, 0, 0, 0)
		var err error
		if b, err = appendContinuationActions(b, g.Actions, v); err != nil {
			return nil, err
		}
		b = ofpropEnd(b, start)
	}
	if len(p.ActionSet) > 0 {
		var start int
		b, start = ofpropStart(b, nxcptActionSet)
		b = append(b, 0, 0, 0, 0)
		var err error
		if b, err = AppendActions(b, p.ActionSet, v); err != nil {
			return nil, err
		}
		b = ofpropEnd(b, start)
	}
	if p.ODPPort != 0 {
		b = ofpropAppendU32(b, nxcptODPPort, p.ODPPort)
	}
	return b, nil
}

// DecodeContinuation decodes continuation properties of version v. A
// table id or cookie property applies to the actions that follow it.
func DecodeContinuation(b []byte, v uint8) (*PacketInPrivate, error) {
	p := &PacketInPrivate{}
	it := newOfpropIter(b, 0x10000, "continuation")
	var table uint8
	var cookie uint64
	for it.next() {
		switch it.Type {
		case nxcptBridge:
			if len(it.Value) != 16 {
				return nil, it.badLen("16")
			}
			copy(p.Bridge[:], it.Value)
		case nxcptStack:
			p.Stack = append(p.Stack, append([]byte(nil), it.Value...))
		case nxcptMirrors:
			m, err := it.u32()
			if err != nil {
				return nil, err
			}
			p.Mirrors = m
		case nxcptConntracked:
			p.Conntracked = true
		case nxcptTableID:
			t, err := it.u8()
			if err != nil {
				return nil, err
			}
			table = t
		case nxcptCookie:
			c, err := it.u64()
			if err != nil {
				return nil, err
			}
			cookie = c
		case nxcptActions, nxcptActionSet:
			raw, err := it.nested()
			if err != nil {
				return nil, err
			}
			acts, err := decodeContinuationActions(raw, v)
			if err != nil {
				return nil, err
			}
			if it.Type == nxcptActionSet {
				p.ActionSet = acts
			} else {
				p.Groups = append(p.Groups, ContinuationGroup{TableID: table, Cookie: cookie, Actions: acts})
			}
		case nxcptODPPort:
			o, err := it.u32()
			if err != nil {
				return nil, err
			}
			p.ODPPort = o
		default:
			return nil, it.unknown()
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	_ = binary.BigEndian
	return p, nil
}

// appendContinuationActions encodes frozen actions as Open vSwitch's
// ofpacts_put_openflow_actions does: goto_table and write_metadata, which
// OpenFlow 1.1 and later have only as instructions, are written in place
// as those instructions (a pause before a goto_table leaves one in the
// continuation).
func appendContinuationActions(b []byte, acts []Action, v uint8) ([]byte, error) {
	if v < mf.OF11 {
		return AppendActions(b, acts, v)
	}
	run := 0
	var err error
	for i := range acts {
		a := &acts[i]
		if a.Type != ActGotoTable && a.Type != ActWriteMetadata {
			continue
		}
		if b, err = AppendActions(b, acts[run:i], v); err != nil {
			return b, err
		}
		if a.Type == ActGotoTable {
			b = binary.BigEndian.AppendUint16(b, InstGotoTable)
			b = binary.BigEndian.AppendUint16(b, 8)
			b = append(b, a.Table, 0, 0, 0)
		} else {
			b = binary.BigEndian.AppendUint16(b, InstWriteMetadata)
			b = binary.BigEndian.AppendUint16(b, 24)
			b = append(b, 0, 0, 0, 0)
			b = binary.BigEndian.AppendUint64(b, a.Arg)
			b = binary.BigEndian.AppendUint64(b, a.Arg2)
		}
		run = i + 1
	}
	return AppendActions(b, acts[run:], v)
}

// decodeContinuationActions is appendContinuationActions' inverse. From
// OpenFlow 1.2 on, types 1 and 2 are no actions, so an 8-byte type 1 is
// the goto_table instruction and a 24-byte type 2 write_metadata.
func decodeContinuationActions(raw []byte, v uint8) ([]Action, error) {
	if v < mf.OF12 {
		return DecodeActions(raw, v)
	}
	var out []Action
	run := 0
	for off := 0; off+4 <= len(raw); {
		typ, n := binary.BigEndian.Uint16(raw[off:]), int(binary.BigEndian.Uint16(raw[off+2:]))
		if n < 8 || off+n > len(raw) {
			break // DecodeActions reports it
		}
		goTo, meta := typ == InstGotoTable && n == 8, typ == InstWriteMetadata && n == 24
		if goTo || meta {
			acts, err := DecodeActions(raw[run:off], v)
			if err != nil {
				return nil, err
			}
			out = append(out, acts...)
			if goTo {
				out = append(out, Action{Type: ActGotoTable, Table: raw[off+4]})
			} else {
				out = append(out, Action{Type: ActWriteMetadata, Arg: binary.BigEndian.Uint64(raw[off+8:]), Arg2: binary.BigEndian.Uint64(raw[off+16:])})
			}
			run = off + n
		}
		off += n
	}
	acts, err := DecodeActions(raw[run:], v)
	if err != nil {
		return nil, err
	}
	return append(out, acts...), nil
}
