// Flow monitors: NXST_FLOW_MONITOR (OpenFlow 1.0-1.2), ONFST13_FLOW_MONITOR
// (OpenFlow 1.3) and OFPMP_FLOW_MONITOR (OpenFlow 1.4+) requests and
// replies, NXT/ONFT flow monitor cancel, paused and resumed. Flags and
// events are kept in OpenFlow 1.4 numbering whatever the wire form, as
// Open vSwitch's ofputil_flow_monitor_request and ofputil_flow_update do.

package ofp

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// Flow monitor flags (OFPFMF_*).
const (
	FMFInitial      = 1 << 0
	FMFAdd          = 1 << 1
	FMFRemoved      = 1 << 2
	FMFModify       = 1 << 3
	FMFInstructions = 1 << 4
	FMFNoAbbrev     = 1 << 5
	FMFOnlyOwn      = 1 << 6
)

// Flow monitor commands (OFPFMC_*); the Nicira and ONF forms only add.
const (
	FMCAdd    = 0
	FMCModify = 1
	FMCDelete = 2
)

// Flow update events (OFPFME_*).
const (
	FMEInitial  = 0
	FMEAdded    = 1
	FMERemoved  = 2
	FMEModified = 3
	FMEAbbrev   = 4
	FMEPaused   = 5
	FMEResumed  = 6
)

// Nicira flag bits (NXFMF_*) in the order of the OpenFlow 1.4 bits they
// map to: INITIAL, ADD, DELETE, MODIFY, ACTIONS, OWN. NXFMF_OWN is
// OFPFMF_ONLY_OWN, not OFPFMF_NO_ABBREV, as in Open vSwitch.
var nxFMFlagMap = [6][2]uint16{
	{1 << 0, FMFInitial}, {1 << 1, FMFAdd}, {1 << 2, FMFRemoved},
	{1 << 3, FMFModify}, {1 << 4, FMFInstructions}, {1 << 5, FMFOnlyOwn},
}

func fmFlagsFromNX(nx uint16) uint16 {
	var f uint16
	for _, p := range nxFMFlagMap {
		if nx&p[0] != 0 {
			f |= p[1]
		}
	}
	return f
}

func fmFlagsToNX(f uint16) uint16 {
	var nx uint16
	for _, p := range nxFMFlagMap {
		if f&p[1] != 0 {
			nx |= p[0]
		}
	}
	return nx
}

// nxFMEvent maps OFPFME_* to NXFME_* (ADDED 0, DELETED 1, MODIFIED 2,
// ABBREV 3); -1 has no Nicira form.
var nxFMEvent = [...]int{FMEInitial: 0, FMEAdded: 0, FMERemoved: 1, FMEModified: 2, FMEAbbrev: 3, FMEPaused: -1, FMEResumed: -1}

// ofFMEvent maps NXFME_* back to OFPFME_*.
var ofFMEvent = [...]uint16{0: FMEAdded, 1: FMERemoved, 2: FMEModified, 3: FMEAbbrev}

const (
	fmRequestLen  = 16 // nx_, onf_ and ofp14_flow_monitor_request
	fmUpdateFull  = 24 // nx_ and ofp_flow_update_full
	fmUpdateShort = 8  // abbrev, paused, resumed
)

// FlowMonitor is one monitor of a flow monitor request. OutPort is an
// OpenFlow 1.0 port number (PortAny16 for none), as Open vSwitch keeps it;
// OutGroup is GroupAny unless an OpenFlow 1.4 request names one.
type FlowMonitor struct {
	ID       uint32
	Command  uint8  // FMCAdd, FMCModify, FMCDelete
	Flags    uint16 // FMF*
	OutPort  uint16
	OutGroup uint32
	TableID  uint8
	Match    mf.Match
}

// FlowMonitorRequest is a flow monitor request in any version; in
// OpenFlow 1.4+ it also cancels (FMCDelete) and replaces (FMCModify)
// monitors.
type FlowMonitorRequest struct {
	Flags    uint16 // multipart flags
	Monitors []FlowMonitor
}

// FlowUpdate is one entry of a flow monitor reply. Actions are the
// encoded OpenFlow 1.0/NXM actions (OpenFlow 1.0-1.2) or instructions
// (1.3+) of the reply's version. XID is an abbreviated update's flow_mod
// xid.
type FlowUpdate struct {
	Event                              uint16 // FME*
	Reason                             uint16 // OFPRR_* for FMERemoved
	TableID                            uint8
	Priority, IdleTimeout, HardTimeout uint16
	Cookie                             uint64
	Match                              mf.Match
	Actions                            []byte
	XID                                uint32
}

// FlowMonitorReply is a flow monitor reply: the initial flows or
// asynchronous updates (xid 0). In OpenFlow 1.4+ it also carries the
// PAUSED and RESUMED events.
type FlowMonitorReply struct {
	Flags   uint16
	Updates []FlowUpdate
}

// FlowMonitorCancel is NXT/ONFT13_FLOW_MONITOR_CANCEL (OpenFlow 1.0-1.3;
// 1.4+ cancels with a FMCDelete request).
type FlowMonitorCancel struct{ ID uint32 }

// FlowMonitorPaused is NXT/ONFT13_FLOW_MONITOR_PAUSED or _RESUMED
// (OpenFlow 1.0-1.3; 1.4+ sends them as flow monitor reply events).
type FlowMonitorPaused struct{ Resumed bool }

// FlowMonitorPause returns the message that announces a pause (or a
// resume) in version v.
func FlowMonitorPause(v uint8, resumed bool) Message {
	if v >= mf.OF14 {
		ev := uint16(FMEPaused)
		if resumed {
			ev = FMEResumed
		}
		return &FlowMonitorReply{Updates: []FlowUpdate{{Event: ev}}}
	}
	return &FlowMonitorPaused{Resumed: resumed}
}

func init() {
	for _, r := range []Raw{RawNXST_FLOW_MONITOR_REQUEST, RawONFST13_FLOW_MONITOR_REQUEST, RawOFPST14_FLOW_MONITOR_REQUEST} {
		decoders[r] = decodeFlowMonitorRequest
	}
	for _, r := range []Raw{RawNXST_FLOW_MONITOR_REPLY, RawONFST13_FLOW_MONITOR_REPLY, RawOFPST14_FLOW_MONITOR_REPLY} {
		decoders[r] = decodeFlowMonitorReply
	}
	cancel := func(r *reader, _ uint8, _ Raw) (Message, error) { return &FlowMonitorCancel{ID: r.u32()}, nil }
	decoders[RawNXT_FLOW_MONITOR_CANCEL] = cancel
	decoders[RawONFT13_FLOW_MONITOR_CANCEL] = cancel
	paused := func(_ *reader, _ uint8, raw Raw) (Message, error) {
		return &FlowMonitorPaused{Resumed: raw == RawNXT_FLOW_MONITOR_RESUMED || raw == RawONFT13_FLOW_MONITOR_RESUMED}, nil
	}
	for _, r := range []Raw{RawNXT_FLOW_MONITOR_PAUSED, RawNXT_FLOW_MONITOR_RESUMED, RawONFT13_FLOW_MONITOR_PAUSED, RawONFT13_FLOW_MONITOR_RESUMED} {
		decoders[r] = paused
	}
}

func decodeFlowMonitorRequest(r *reader, _ uint8, raw Raw) (Message, error) {
	m := &FlowMonitorRequest{Flags: r.statsFlags}
	for r.len() > 0 {
		if r.len() < fmRequestLen {
			return nil, errorf(OFPBRC_BAD_LEN, "flow monitor request has %d leftover bytes", r.len())
		}
		var fm FlowMonitor
		var err error
		switch raw {
		case RawNXST_FLOW_MONITOR_REQUEST:
			err = decodeNXFlowMonitor(r, &fm)
		case RawONFST13_FLOW_MONITOR_REQUEST:
			err = decodeONFFlowMonitor(r, &fm)
		default:
			err = decodeOF14FlowMonitor(r, &fm)
		}
		if err != nil {
			return nil, err
		}
		m.Monitors = append(m.Monitors, fm)
	}
	return m, nil
}

// checkNXFMFlags applies Open vSwitch's check of the Nicira and ONF flags:
// at least one of add, delete, modify and no unknown bit.
func checkNXFMFlags(nx uint16) error {
	if nx&(1<<1|1<<2|1<<3) == 0 || nx&^0x3f != 0 {
		return errorf(OFPMOFC_BAD_FLAGS, "flow monitor flags %#x", nx)
	}
	return nil
}

func decodeNXFlowMonitor(r *reader, fm *FlowMonitor) error {
	fm.ID = r.u32()
	nx := r.u16()
	fm.OutPort = r.u16()
	n := int(r.u16())
	fm.TableID = r.u8()
	zeros := r.take(5)
	if err := checkNXFMFlags(nx); err != nil {
		return err
	}
	if !allZero(zeros) {
		return errorf(NXBRC_MUST_BE_ZERO, "flow monitor request padding")
	}
	fm.Flags, fm.Command, fm.OutGroup = fmFlagsFromNX(nx), FMCAdd, GroupAny
	if pad8(n) > r.len() {
		return errorf(OFPBMC_BAD_LEN, "nx_match length %d (padded %d) exceeds %d remaining bytes", n, pad8(n), r.len())
	}
	p := r.take(pad8(n))
	return DecodeNXM(p[:n], true, &fm.Match, nil)
}

func decodeONFFlowMonitor(r *reader, fm *FlowMonitor) error {
	fm.ID = r.u32()
	nx := r.u16()
	r.skip(2) // match_len: the ofp11 match carries its own length
	port := r.u32()
	fm.TableID = r.u8()
	zeros := r.take(3)
	if err := checkNXFMFlags(nx); err != nil {
		return err
	}
	if !allZero(zeros) {
		return errorf(NXBRC_MUST_BE_ZERO, "flow monitor request padding")
	}
	fm.Flags, fm.Command, fm.OutGroup = fmFlagsFromNX(nx), FMCAdd, GroupAny
	p, err := PortFromOF11(port)
	if err != nil {
		return err
	}
	fm.OutPort = p
	return decodeFMOXM(r, &fm.Match)
}

func decodeOF14FlowMonitor(r *reader, fm *FlowMonitor) error {
	fm.ID = r.u32()
	port := r.u32()
	fm.OutGroup = r.u32()
	fm.Flags = r.u16()
	fm.TableID = r.u8()
	fm.Command = r.u8()
	if r.Err() != nil {
		return r.Err()
	}
	if fm.Command != FMCDelete {
		if fm.Flags&(FMFAdd|FMFRemoved|FMFModify) == 0 || fm.Flags&^(FMFInitial|FMFAdd|FMFRemoved|FMFModify|FMFInstructions|FMFOnlyOwn) != 0 {
			return errorf(OFPMOFC_BAD_FLAGS, "flow monitor flags %#x", fm.Flags)
		}
		p, err := PortFromOF11(port)
		if err != nil {
			return err
		}
		fm.OutPort = p
	} else {
		// Open vSwitch reads only the id and the match of a delete.
		fm.Flags, fm.OutPort, fm.OutGroup, fm.TableID = 0, PortAny16, GroupAny, 0
	}
	return decodeFMOXM(r, &fm.Match)
}

func decodeFMOXM(r *reader, m *mf.Match) error {
	if r.Err() != nil {
		return r.Err()
	}
	n, err := DecodeOXMMatch(r.b[r.off:], m)
	if err != nil {
		return err
	}
	r.skip(n)
	return nil
}

// RawFor returns NXST (OpenFlow 1.0-1.2), ONFST13 (1.3) or OFPST14 (1.4+).
func (m *FlowMonitorRequest) RawFor(v uint8) (Raw, error) {
	return fmRaw(v, RawNXST_FLOW_MONITOR_REQUEST, RawONFST13_FLOW_MONITOR_REQUEST, RawOFPST14_FLOW_MONITOR_REQUEST)
}

// fmRaw picks the Nicira form below OpenFlow 1.3, as Open vSwitch does
// (the raw table allows NXST up to 1.3 for decoding).
func fmRaw(v uint8, nx, onf, of14 Raw) (Raw, error) {
	switch {
	case v == mf.OF13:
		return onf, nil
	case v >= mf.OF14:
		return versionRange(v, of14)
	}
	return versionRange(v, nx)
}

func (m *FlowMonitorRequest) multipartFlags() uint16 { return m.Flags }

func (m *FlowMonitorRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	for i := range m.Monitors {
		fm := &m.Monitors[i]
		switch {
		case v < mf.OF13:
			b = binary.BigEndian.AppendUint32(b, fm.ID)
			b = binary.BigEndian.AppendUint16(b, fmFlagsToNX(fm.Flags))
			b = binary.BigEndian.AppendUint16(b, fm.OutPort)
			lenAt := len(b)
			b = append(b, 0, 0, fm.TableID, 0, 0, 0, 0, 0)
			start := len(b)
			b = AppendNXM(b, 0, &fm.Match, 0, 0)
			n := len(b) - start
			binary.BigEndian.PutUint16(b[lenAt:], uint16(n))
			b = appendZeros(b, pad8(n)-n)
		case v == mf.OF13:
			b = binary.BigEndian.AppendUint32(b, fm.ID)
			b = binary.BigEndian.AppendUint16(b, fmFlagsToNX(fm.Flags))
			lenAt := len(b)
			b = append(b, 0, 0)
			b = binary.BigEndian.AppendUint32(b, PortToOF11(fm.OutPort))
			b = append(b, fm.TableID, 0, 0, 0)
			start := len(b)
			b = AppendOXMMatch(b, v, &fm.Match)
			binary.BigEndian.PutUint16(b[lenAt:], binary.BigEndian.Uint16(b[start+2:]))
		default:
			b = binary.BigEndian.AppendUint32(b, fm.ID)
			b = binary.BigEndian.AppendUint32(b, PortToOF11(fm.OutPort))
			b = binary.BigEndian.AppendUint32(b, fm.OutGroup)
			b = binary.BigEndian.AppendUint16(b, fm.Flags)
			b = append(b, fm.TableID, fm.Command)
			b = AppendOXMMatch(b, v, &fm.Match)
		}
	}
	return b, nil
}

func decodeFlowMonitorReply(r *reader, v uint8, raw Raw) (Message, error) {
	m := &FlowMonitorReply{Flags: r.statsFlags}
	nx := raw != RawOFPST14_FLOW_MONITOR_REPLY
	for r.len() > 0 {
		e, err := takeEntry(r, 0, 4, "flow update")
		if err != nil {
			return nil, err
		}
		if len(e.b)%8 != 0 {
			return nil, errorf(OFPBRC_BAD_LEN, "flow update of length %d", len(e.b))
		}
		var u FlowUpdate
		if err := decodeFlowUpdate(e, v, raw, nx, &u); err != nil {
			return nil, err
		}
		m.Updates = append(m.Updates, u)
	}
	return m, nil
}

func decodeFlowUpdate(e *reader, v uint8, raw Raw, nx bool, u *FlowUpdate) error {
	length := e.len()
	e.skip(2)
	ev := e.u16()
	if nx {
		if int(ev) >= len(ofFMEvent) {
			return errorf(NXBRC_FM_BAD_EVENT, "flow update event %d", ev)
		}
		ev = ofFMEvent[ev]
	} else if ev > FMEResumed {
		return errorf(NXBRC_FM_BAD_EVENT, "flow update event %d", ev)
	}
	u.Event = ev
	switch ev {
	case FMEAbbrev, FMEPaused, FMEResumed:
		if length != fmUpdateShort {
			return errorf(OFPBRC_BAD_LEN, "flow update event %d of length %d", ev, length)
		}
		if ev == FMEAbbrev {
			u.XID = e.u32()
		}
		return nil
	}
	if length < fmUpdateFull {
		return errorf(OFPBRC_BAD_LEN, "flow update of length %d", length)
	}
	if nx {
		u.Reason = e.u16()
		u.Priority, u.IdleTimeout, u.HardTimeout = e.u16(), e.u16(), e.u16()
		n := int(e.u16())
		u.TableID = e.u8()
		e.skip(1)
		u.Cookie = e.u64()
		if fmUpdateFull+n > length {
			return errorf(OFPBRC_BAD_LEN, "flow update match_len %d in %d bytes", n, length)
		}
		if raw == RawONFST13_FLOW_MONITOR_REPLY {
			if err := decodeFMOXM(e, &u.Match); err != nil {
				return err
			}
		} else {
			if pad8(n) > e.len() {
				return errorf(OFPBMC_BAD_LEN, "nx_match length %d (padded %d) exceeds %d remaining bytes", n, pad8(n), e.len())
			}
			p := e.take(pad8(n))
			if err := DecodeNXM(p[:n], true, &u.Match, nil); err != nil {
				return err
			}
		}
	} else {
		u.TableID = e.u8()
		u.Reason = uint16(e.u8())
		u.IdleTimeout, u.HardTimeout, u.Priority = e.u16(), e.u16(), e.u16()
		e.skip(4)
		u.Cookie = e.u64()
		if err := decodeFMOXM(e, &u.Match); err != nil {
			return err
		}
	}
	if e.Err() != nil {
		return e.Err()
	}
	if e.len()%8 != 0 {
		return errorf(OFPBRC_BAD_LEN, "flow update actions of %d bytes", e.len())
	}
	// Validate the actions as Open vSwitch does while keeping the bytes.
	if _, err := DecodeOfpacts(e.b[e.off:], v, v >= mf.OF13); err != nil {
		return err
	}
	u.Actions = e.rest()
	return nil
}

// RawFor returns NXST (OpenFlow 1.0-1.2), ONFST13 (1.3) or OFPST14 (1.4+).
func (m *FlowMonitorReply) RawFor(v uint8) (Raw, error) {
	return fmRaw(v, RawNXST_FLOW_MONITOR_REPLY, RawONFST13_FLOW_MONITOR_REPLY, RawOFPST14_FLOW_MONITOR_REPLY)
}

func (m *FlowMonitorReply) multipartFlags() uint16 { return m.Flags }
func (m *FlowMonitorReply) numEntries() int        { return len(m.Updates) }
func (m *FlowMonitorReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(b, v, m)
}

func (m *FlowMonitorReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	u := &m.Updates[i]
	start := len(b)
	if int(u.Event) >= len(nxFMEvent) {
		return b, errorf(NXBRC_FM_BAD_EVENT, "flow update event %d", u.Event)
	}
	ev := u.Event
	if v < mf.OF14 {
		if nxFMEvent[ev] < 0 {
			return b, errorf(NXBRC_FM_BAD_EVENT, "flow update event %d has no Nicira form", ev)
		}
		ev = uint16(nxFMEvent[ev])
	}
	b = append(b, 0, 0)
	b = binary.BigEndian.AppendUint16(b, ev)
	switch u.Event {
	case FMEAbbrev:
		b = binary.BigEndian.AppendUint32(b, u.XID)
	case FMEPaused, FMEResumed:
		b = append(b, 0, 0, 0, 0)
	default:
		if v < mf.OF14 {
			b = binary.BigEndian.AppendUint16(b, u.Reason)
			b = binary.BigEndian.AppendUint16(b, u.Priority)
			b = binary.BigEndian.AppendUint16(b, u.IdleTimeout)
			b = binary.BigEndian.AppendUint16(b, u.HardTimeout)
			lenAt := len(b)
			b = append(b, 0, 0, u.TableID, 0)
			b = binary.BigEndian.AppendUint64(b, u.Cookie)
			mstart := len(b)
			if v == mf.OF13 {
				b = AppendOXMMatch(b, v, &u.Match)
				binary.BigEndian.PutUint16(b[lenAt:], binary.BigEndian.Uint16(b[mstart+2:]))
			} else {
				b = AppendNXM(b, 0, &u.Match, 0, 0)
				n := len(b) - mstart
				binary.BigEndian.PutUint16(b[lenAt:], uint16(n))
				b = appendZeros(b, pad8(n)-n)
			}
		} else {
			b = append(b, u.TableID, uint8(u.Reason))
			b = binary.BigEndian.AppendUint16(b, u.IdleTimeout)
			b = binary.BigEndian.AppendUint16(b, u.HardTimeout)
			b = binary.BigEndian.AppendUint16(b, u.Priority)
			b = append(b, 0, 0, 0, 0)
			b = binary.BigEndian.AppendUint64(b, u.Cookie)
			b = AppendOXMMatch(b, v, &u.Match)
		}
		b = append(b, u.Actions...)
	}
	n := len(b) - start
	if n%8 != 0 {
		return b[:start], errorf(OFPBRC_BAD_LEN, "flow update actions of %d bytes", len(u.Actions))
	}
	putLen16(b, start)
	return b, nil
}

// RawFor returns NXT (OpenFlow 1.0-1.2) or ONFT13 (1.3).
func (m *FlowMonitorCancel) RawFor(v uint8) (Raw, error) {
	if v == mf.OF13 {
		return RawONFT13_FLOW_MONITOR_CANCEL, nil
	}
	return versionRange(v, RawNXT_FLOW_MONITOR_CANCEL)
}

func (m *FlowMonitorCancel) appendBody(b []byte, _ uint8) ([]byte, error) {
	return binary.BigEndian.AppendUint32(b, m.ID), nil
}

// RawFor returns NXT (OpenFlow 1.0-1.2) or ONFT13 (1.3) paused/resumed.
func (m *FlowMonitorPaused) RawFor(v uint8) (Raw, error) {
	if v == mf.OF13 {
		if m.Resumed {
			return RawONFT13_FLOW_MONITOR_RESUMED, nil
		}
		return RawONFT13_FLOW_MONITOR_PAUSED, nil
	}
	if m.Resumed {
		return versionRange(v, RawNXT_FLOW_MONITOR_RESUMED)
	}
	return versionRange(v, RawNXT_FLOW_MONITOR_PAUSED)
}

func (m *FlowMonitorPaused) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }
