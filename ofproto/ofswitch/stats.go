package ofswitch

import (
	"time"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// Description strings, as Open vSwitch's ofproto defaults with gvs's name.
const (
	mfrDesc    = "Open vSwitch compatible (gvs)"
	hwDesc     = "gvs userspace datapath"
	serialDesc = "None"
)

// rawSender is implemented by ofconn.Conn: split multipart replies are
// sent as several pre-encoded messages.
type rawSender interface{ SendRaw(b []byte) error }

// replyMultipart sends a possibly large multipart reply, split as Open
// vSwitch splits it.
func replyMultipart(s ofconn.Sender, req *ofp.Msg, m ofp.Message) error {
	rs, ok := s.(rawSender)
	if !ok {
		return s.Reply(req, m)
	}
	msgs, err := ofp.EncodeReplies(req.Version, req.XID, m)
	if err != nil {
		return err
	}
	for _, b := range msgs {
		if err := rs.SendRaw(b); err != nil {
			return err
		}
	}
	return nil
}

// statsPort converts a stats request's out_port to the 16-bit form
// (oftable.PortAny for none).
func statsPort(p uint32, format ofp.FlowFormat) uint32 {
	if format != ofp.FormatOXM {
		if p == ofp.PortAny16 {
			return oftable.PortAny
		}
		return uint32(xlate.Port16(p))
	}
	if p == ofp.PortAny {
		return oftable.PortAny
	}
	return uint32(xlate.Port16(p))
}

// selectedRules returns the rules a flow or aggregate stats request
// selects, in the tables' order.
func (b *Bridge) selectedRules(req *ofp.FlowStatsRequest) []*oftable.Rule {
	port := statsPort(req.OutPort, req.Format)
	group := req.OutGroup
	if req.Format != ofp.FormatOXM {
		group = oftable.GroupAny
	}
	var out []*oftable.Rule
	for r := range b.tables.Rules(req.TableID, &req.Match) {
		if req.CookieMask != 0 && (r.Cookie^req.Cookie)&req.CookieMask != 0 {
			continue
		}
		if (port != oftable.PortAny || group != oftable.GroupAny) && !outputsTo(r.Actions, port, group) {
			continue
		}
		out = append(out, r)
	}
	return out
}

func (b *Bridge) flowStats(s ofconn.Sender, m *ofp.Msg, req *ofp.FlowStatsRequest) error {
	if req.TableID != 0xff && int(req.TableID) >= oftable.NumTables {
		return &ofp.Error{Code: ofp.OFPBRC_BAD_TABLE_ID}
	}
	rules := b.selectedRules(req)
	if req.Aggregate {
		rep := &ofp.AggregateStatsReply{Format: req.Format}
		for _, r := range rules {
			rep.PacketCount += r.Stats.Packets.Load()
			rep.ByteCount += r.Stats.Bytes.Load()
			rep.FlowCount++
		}
		return s.Reply(m, rep)
	}
	now := time.Now()
	v := m.Version
	enc := new(ofp.ActionEncoder) // one for the whole dump
	rs, ok := s.(rawSender)
	if !ok {
		rep := &ofp.FlowStatsReply{Format: req.Format, Stats: make([]ofp.FlowStats, 0, len(rules))}
		for _, r := range rules {
			rep.Stats = append(rep.Stats, ofp.FlowStats{})
			if err := flowStatsEntry(enc, &rep.Stats[len(rep.Stats)-1], r, req.Format, v, now, nil); err != nil {
				return err
			}
		}
		return s.Reply(m, rep)
	}
	// The reply is encoded and sent a batch of flows at a time, split at
	// 64 KiB as Open vSwitch splits it: a dump of 100,000 flows does not
	// hold 100,000 copies of their matches at once.
	w, err := ofp.NewMultipartWriter(v, m.XID, &ofp.FlowStatsReply{Format: req.Format}, rs.SendRaw)
	if err != nil {
		return err
	}
	batch := &ofp.FlowStatsReply{Format: req.Format, Stats: make([]ofp.FlowStats, 0, min(len(rules), flowStatsBatch))}
	var acts []byte
	for i, r := range rules {
		if cap(acts) < 512 {
			acts = make([]byte, 0, 32<<10) // the batch's actions, in one array
		}
		batch.Stats = append(batch.Stats, ofp.FlowStats{})
		fs := &batch.Stats[len(batch.Stats)-1]
		if err := flowStatsEntry(enc, fs, r, req.Format, v, now, acts); err != nil {
			return err
		}
		acts = fs.Actions[len(fs.Actions):]
		if len(batch.Stats) == flowStatsBatch || i == len(rules)-1 {
			if err := w.Add(batch); err != nil {
				return err
			}
			batch.Stats = batch.Stats[:0]
		}
	}
	for range w.Excluded() {
		if b.cfg.ModuleWarnf != nil {
			b.cfg.ModuleWarnf("ofp_flow", "Flow exceeded the maximum flow statistics reply size and was excluded from the response set")
		}
	}
	return w.Close()
}

// flowStatsBatch is how many flows a flow stats reply encodes at a time.
const flowStatsBatch = 256

// flowStatsEntry is rule r's entry in a flow stats reply; its actions are
// appended to buf by enc.
func flowStatsEntry(enc *ofp.ActionEncoder, fs *ofp.FlowStats, r *oftable.Rule, format ofp.FlowFormat, v uint8, now time.Time, buf []byte) error {
	acts, err := enc.AppendOfpacts(buf, r.Actions, v, format == ofp.FormatOXM)
	if err != nil {
		return err
	}
	// Open vSwitch keeps times in milliseconds.
	d := now.Sub(r.CreatedAt()).Truncate(time.Millisecond)
	idleTO, hardTO := r.Timeouts()
	*fs = ofp.FlowStats{
		TableID: r.Table, DurationSec: uint32(d / time.Second), DurationNsec: uint32(d % time.Second),
		Priority: r.Priority, IdleTimeout: idleTO, HardTimeout: hardTO,
		Flags: r.Flags & 0x1f, Importance: r.Importance, Cookie: r.Cookie,
		PacketCount: r.Stats.Packets.Load(), ByteCount: r.Stats.Bytes.Load(),
		Actions: acts, IdleAge: -1, HardAge: -1,
	}
	r.MatchInto(&fs.Match)
	if format == ofp.FormatNXM {
		// Open vSwitch: idle_age counts from the last hit or the add,
		// not from a modify.
		fs.IdleAge = int(now.Sub(r.LastUsed()) / time.Second)
		if r.WasModified() {
			fs.HardAge = int(now.Sub(r.ModifiedAt()) / time.Second)
		}
	}
	return nil
}

func (b *Bridge) tableStats(s ofconn.Sender, m *ofp.Msg) error {
	rep := &ofp.TableStatsReply{}
	for t := 0; t < 254; t++ {
		st := b.tables.Stats(uint8(t))
		ts := ofp.TableStats{TableID: uint8(t), ActiveCount: uint32(st.Active), LookupCount: st.Lookups, MatchedCount: st.Matched}
		ts.Name = b.tabs.tableName(t)
		ts.SetOVSLegacy(m.Version, t == 253)
		ts.MaxEntries = b.tabs.maxEntries(t)
		switch miss := b.xl.TableMiss(uint8(t)); m.Version {
		case mf.OF11:
			// Open vSwitch puts its internal miss setting here (default
			// 0, controller 1, continue 2, drop 3: xlate's Miss*
			// numbers), not OFPTC11_TABLE_MISS_*.
			ts.Config = uint32(miss)
		case mf.OF12:
			ts.Config = map[uint8]uint32{xlate.MissContinue: ofp.TableMissContinue, xlate.MissDrop: ofp.TableMissDrop}[miss]
		}
		rep.Stats = append(rep.Stats, ts)
	}
	return replyMultipart(s, m, rep)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [8]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

func (b *Bridge) descStats(s ofconn.Sender, m *ofp.Msg) error {
	return s.Reply(m, &ofp.DescStatsReply{MfrDesc: mfrDesc, HWDesc: hwDesc, SWDesc: b.cfg.Version,
		SerialNum: serialDesc, DPDesc: "None"})
}

// matchInPort returns a match on in_port only.
func matchInPort(p uint16) mf.Match {
	var m mf.Match
	m.Flow.InPort, m.Mask.InPort = uint32(p), 0xffff
	return m
}
