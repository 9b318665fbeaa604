package ofswitch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
)

// The bridge's OpenFlow state handed to a successor process (a restart
// without loss, vswitchd/handover): the TLV map, meters, groups and
// flows, encoded with this package's own codec as the OpenFlow 1.5
// messages that recreate them (tlv_table_mod, meter_mod, group_mod,
// flow_mod add), in that order, each preceded by its length (4 bytes,
// big endian); each flow_mod is followed by a flow stats reply for that
// flow with its packet and byte counts (no actions, no duration). The
// successor applies them through the checks a controller's messages go
// through and adds the counts to the recreated flows. Flow ages and
// group and meter counters restart; timeouts count again from the
// handover.

// StateVersion is the version of the encoding ExportState writes and
// ImportState reads.
const StateVersion = 1

// stateOFVersion is the OpenFlow version of the handed messages: 1.5
// carries importance and every match field.
const stateOFVersion = mf.OF15

// maxStateMsgs bounds the messages ImportState accepts.
const maxStateMsgs = 1 << 22

// HoldState stops every change to the bridge's flow tables, groups and
// meters (flow_mods, bundles, learn, expiry) and returns the messages
// that recreate them. Until release is called nothing changes them; a
// process that handed its state over exits instead of releasing.
func (b *Bridge) HoldState() (state []byte, release func(), err error) {
	b.ports.mu.Lock()
	tlv := append([]ofp.TLVMap(nil), b.ports.tlv...)
	b.ports.mu.Unlock()
	b.gmu.Lock()
	x := b.tables.Begin()
	release = func() {
		x.Abort()
		b.gmu.Unlock()
	}
	state, err = b.exportLocked(tlv)
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("bridge %s: exporting OpenFlow state: %w", b.cfg.Name, err)
	}
	return state, release, nil
}

// exportLocked encodes the state; gmu and the tables' transaction are
// held.
func (b *Bridge) exportLocked(tlv []ofp.TLVMap) ([]byte, error) {
	var out []byte
	add := func(m ofp.Message) error {
		at := len(out)
		out = append(out, 0, 0, 0, 0)
		var err error
		out, err = ofp.Encode(out, stateOFVersion, 0, m)
		if err != nil {
			return err
		}
		binary.BigEndian.PutUint32(out[at:], uint32(len(out)-at-4))
		return nil
	}
	if len(tlv) > 0 {
		if err := add(&ofp.TLVTableMod{Command: ofp.TLVAdd, Mappings: tlv}); err != nil {
			return nil, fmt.Errorf("TLV map: %w", err)
		}
	}
	mids := make([]uint32, 0, len(b.meters.m))
	for id := range b.meters.m {
		mids = append(mids, id)
	}
	sort.Slice(mids, func(i, j int) bool { return mids[i] < mids[j] })
	for _, id := range mids {
		e := b.meters.m[id]
		if err := add(&ofp.MeterMod{Command: ofp.MeterAdd, Flags: e.flags, MeterID: id, Bands: e.bands}); err != nil {
			return nil, fmt.Errorf("meter %d: %w", id, err)
		}
	}
	gids := make([]uint32, 0, len(b.groups.m))
	for id := range b.groups.m {
		gids = append(gids, id)
	}
	sort.Slice(gids, func(i, j int) bool { return gids[i] < gids[j] })
	for _, id := range gids {
		e := b.groups.m[id]
		gm := &ofp.GroupMod{Command: ofp.GroupAdd, Type: e.g.Type, GroupID: id, CommandBucketID: ofp.BucketAll, Buckets: e.g.Buckets,
			SelectionMethod: e.g.Method, SelectionParam: e.param, Fields: e.fields, FieldOrder: e.fieldOrder}
		if err := add(gm); err != nil {
			return nil, fmt.Errorf("group %d: %w", id, err)
		}
	}
	var all mf.Match
	for r := range b.tables.Rules(0xff, &all) {
		acts, err := ofp.AppendOfpacts(nil, r.Actions, stateOFVersion, true)
		if err != nil {
			return nil, fmt.Errorf("flow in table %d: %w", r.Table, err)
		}
		fm := &ofp.FlowMod{Format: ofp.FormatOXM, Command: ofp.FlowAdd, TableID: r.Table, Priority: r.Priority,
			Cookie: r.Cookie, IdleTimeout: r.IdleTimeout, HardTimeout: r.HardTimeout, Importance: r.Importance,
			Flags: r.Flags & stateFlowFlags, BufferID: ofp.BufferNone, OutPort: ofp.PortAny, OutGroup: ofp.GroupAny,
			Match: r.Match(), Instructions: acts}
		if err := add(fm); err != nil {
			return nil, fmt.Errorf("flow in table %d: %w", r.Table, err)
		}
		fs := ofp.FlowStats{TableID: r.Table, Priority: r.Priority, Cookie: r.Cookie, Match: r.Match(), IdleAge: -1, HardAge: -1,
			PacketCount: r.Stats.Packets.Load(), ByteCount: r.Stats.Bytes.Load()}
		if err := add(&ofp.FlowStatsReply{Format: ofp.FormatOXM, Stats: []ofp.FlowStats{fs}}); err != nil {
			return nil, fmt.Errorf("counters of a flow in table %d: %w", r.Table, err)
		}
	}
	return out, nil
}

// stateFlowFlags are the flow_mod flags a rule keeps that its re-adding
// carries: send_flow_rem, reset_counts, no_packet_counts,
// no_byte_counts (check_overlap is a property of the add, not the rule).
const stateFlowFlags = 0x1d

// ErrState is wrapped by ImportState's errors.
var ErrState = errors.New("OpenFlow state refused")

// ImportState applies an encoding of HoldState to a bridge that has no
// flows but its default one: the TLV map, meters and groups, then every
// flow in one transaction. The whole encoding is decoded and checked
// before anything is applied.
func (b *Bridge) ImportState(state []byte) error {
	var msgs []*ofp.Msg
	for p := state; len(p) > 0; {
		if len(p) < 4 || len(msgs) >= maxStateMsgs {
			return fmt.Errorf("%w: truncated or too long", ErrState)
		}
		n := binary.BigEndian.Uint32(p)
		p = p[4:]
		if uint64(n) > uint64(len(p)) {
			return fmt.Errorf("%w: message of %d bytes, %d left", ErrState, n, len(p))
		}
		m, err := ofp.Decode(p[:n])
		if err != nil {
			return fmt.Errorf("%w: message %d: %v", ErrState, len(msgs), err)
		}
		if m.Version != stateOFVersion {
			return fmt.Errorf("%w: message %d of OpenFlow version %#x", ErrState, len(msgs), m.Version)
		}
		switch body := m.Body.(type) {
		case *ofp.TLVTableMod:
			if body.Command != ofp.TLVAdd {
				return fmt.Errorf("%w: message %d: TLV command %d", ErrState, len(msgs), body.Command)
			}
		case *ofp.MeterMod:
			if body.Command != ofp.MeterAdd {
				return fmt.Errorf("%w: message %d: meter command %d", ErrState, len(msgs), body.Command)
			}
		case *ofp.GroupMod:
			if body.Command != ofp.GroupAdd {
				return fmt.Errorf("%w: message %d: group command %d", ErrState, len(msgs), body.Command)
			}
		case *ofp.FlowMod:
			if body.Command != ofp.FlowAdd {
				return fmt.Errorf("%w: message %d: flow command %d", ErrState, len(msgs), body.Command)
			}
		case *ofp.FlowStatsReply:
		default:
			return fmt.Errorf("%w: message %d is %s", ErrState, len(msgs), m.Raw)
		}
		msgs = append(msgs, m)
		p = p[n:]
	}
	st := &connState{}
	var fms []*oftable.FlowMod
	var counts []ofp.FlowStats
	for i, m := range msgs {
		var err error
		switch body := m.Body.(type) {
		case *ofp.TLVTableMod:
			err = b.ports.tlvMod(body)
		case *ofp.MeterMod:
			err = b.meters.meterMod(body)
		case *ofp.GroupMod:
			err = b.groups.groupMod(body)
		case *ofp.FlowMod:
			fm := &oftable.FlowMod{}
			if err = b.fmd.decode(fm, body, m.Version, st); err == nil {
				fms = append(fms, fm)
			}
		case *ofp.FlowStatsReply:
			counts = append(counts, body.Stats...)
		}
		if err != nil {
			return fmt.Errorf("bridge %s: applying OpenFlow state message %d (%s): %w", b.cfg.Name, i, m.Raw, err)
		}
	}
	if err := b.applyFlowMods(fms); err != nil {
		return fmt.Errorf("bridge %s: applying %d flows: %w", b.cfg.Name, len(fms), err)
	}
	tm := b.xl.Snapshot().TunMap
	for i := range counts {
		c := &counts[i]
		if c.Match.Relayout(tm) != nil {
			continue
		}
		if r := b.tables.FindStrict(c.TableID, &c.Match, c.Priority); r != nil && r.Cookie == c.Cookie {
			r.Stats.Packets.Add(c.PacketCount)
			r.Stats.Bytes.Add(c.ByteCount)
		}
	}
	return nil
}
