package ipfix

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/gvs-project/gvs/ofproto/flowexport/internal/udpcoll"
	"slices"
	"sync"
	"time"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/packet"
)

const (
	version              = 10
	headerLen            = 16
	setHeaderLen         = 4
	setIDTemplate        = 2
	setIDOptionsTemplate = 3
	maxIfNameLen         = 64  // MAX_IF_NAME_LEN
	maxVirtualObsLen     = 254 // IPFIX_VIRTUAL_OBS_MAX_LEN
	ethHeaderLen         = 14
	vlanEthHeaderLen     = 18
	maxFrame             = 65535
	ipProtoGRE           = 47

	tcpFIN = 0x01
	tcpSYN = 0x02
	tcpRST = 0x04
	tcpPSH = 0x08
	tcpACK = 0x10
	tcpURG = 0x20
)

// totals are the running totals Open vSwitch keeps per exporter
// (dpif_ipfix_global_stats); each record carries a snapshot of them taken
// when its last sample was added.
type totals struct {
	droppedPackets, packets                uint64
	inUcast, inMcast, inBcast              uint64
	outUcast, outBcast                     uint64
	postMcastPackets, l2Octets             uint64
	droppedOctets, octets, octetsSq        uint64
	postMcastOctets                        uint64
	tcpACK, tcpFIN, tcpPSH, tcpRST, tcpSYN uint64
	tcpURG                                 uint64
}

// entry is one cached flow record (ipfix_flow_cache_entry).
type entry struct {
	key      string // cache key: domain, template ID, then the record's flow-key bytes
	domain   uint32
	template uint16
	ip, tcp  bool
	start    uint64 // µs since the epoch
	end      uint64

	droppedPacketDelta, packetDelta, l2OctetDelta, postMcastPacketDelta uint64
	droppedOctetDelta, octetDelta, octetDeltaSq, postMcastOctetDelta    uint64
	minLen, maxLen                                                      uint64
	tot                                                                 totals
}

// cacheKeyPrefix is the domain and template ID in front of the flow-key
// bytes in entry.key.
const cacheKeyPrefix = 6

// Exporter aggregates sampled packets into IPFIX flow records and sends
// them, with their templates, to the collectors. It is safe for concurrent
// use.
type Exporter struct {
	now func() time.Time

	// mu guards everything below.
	mu         sync.Mutex
	cfg        Config
	coll       *udpcoll.Set
	tmplSets   [][]byte
	optTmplSet []byte
	seq        uint32            // sequence number: starts at 1, counts data records
	domains    map[uint32]uint32 // observation domain → export second templates were last sent
	lastStats  uint32            // export second statistics were last sent
	tot        totals
	stats      Stats
	cache      map[string]*entry
	fifo       []*entry // cached entries, oldest first
	free       []*entry
	scratch    entry
	pkt        *packet.Packet
	key        flow.Key
	kbuf       []byte // Sample's cache key
	ebuf       []byte // expire's copy of a record's flow-key bytes
	msg        []byte
	closed     bool
}

// New returns an exporter sending to cfg.Targets; now is the clock (nil
// means time.Now). If some targets cannot be opened, New still returns a
// working Exporter along with an error naming them (Open vSwitch keeps the
// collectors it could open); if none can, it returns only the error.
func New(cfg Config, now func() time.Time) (*Exporter, error) {
	if now == nil {
		now = time.Now
	}
	e := &Exporter{
		now:        now,
		seq:        1,
		domains:    make(map[uint32]uint32),
		cache:      make(map[string]*entry),
		optTmplSet: optionsTemplateSet(),
		pkt:        packet.New(maxFrame),
		kbuf:       make([]byte, 0, 512),
		msg:        make([]byte, 0, 2048),
	}
	err := e.Reconfigure(cfg)
	if e.coll.Count() == 0 {
		if err == nil {
			err = errors.New("ipfix: no targets")
		}
		return nil, err
	}
	return e, err
}

// Reconfigure applies cfg. As in Open vSwitch, an unchanged configuration
// whose collectors are all open is a no-op; otherwise the collectors are
// reopened, templates are announced again before the next record of each
// domain, and cached records past the new limits are exported. The
// sequence number and statistics carry on.
func (e *Exporter) Reconfigure(cfg Config) error {
	cfg.Targets = slices.Clone(cfg.Targets)
	if len(cfg.VirtualObsID) > maxVirtualObsLen {
		return fmt.Errorf("ipfix: virtual observation ID longer than %d bytes", maxVirtualObsLen)
	}
	e.mu.Lock()
	same := e.coll != nil && sameConfig(&e.cfg, &cfg) && e.coll.Count() == len(cfg.Targets)
	e.mu.Unlock()
	if same {
		return nil
	}
	coll, err := udpcoll.Open(cfg.Targets, DefaultPort)
	if err != nil {
		err = fmt.Errorf("ipfix: %w", err)
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.coll
	e.coll = coll
	if e.tmplSets == nil || (cfg.VirtualObsID != "") != (e.cfg.VirtualObsID != "") {
		e.tmplSets = templateSets(cfg.VirtualObsID != "")
	}
	e.cfg = cfg
	clear(e.domains)
	e.expire(false)
	if cerr := old.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("ipfix: closing old collectors: %w", cerr)
	}
	return err
}

func sameConfig(a, b *Config) bool {
	return slices.Equal(a.Targets, b.Targets) &&
		a.ObsDomainID == b.ObsDomainID && a.ObsPointID == b.ObsPointID &&
		a.CacheActiveTimeout == b.CacheActiveTimeout && a.CacheMaxFlows == b.CacheMaxFlows &&
		a.TemplateInterval == b.TemplateInterval && a.StatsInterval == b.StatsInterval &&
		a.VirtualObsID == b.VirtualObsID && a.ExporterID == b.ExporterID
}

// Sample accounts one sampled packet: it builds the record for the packet
// and either aggregates it into the cached record with the same flow key
// or exports it, following the cache rules in Config.
func (e *Exporter) Sample(s *Sample) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.pkt.SetData(s.Packet)
	flow.Extract(e.pkt, &e.key)
	k := &e.key

	l2 := l2Eth
	if k.VLANs[0].TCI&flow.VLANCFI != 0 {
		l2 = l2VLAN
	}
	l3, l4 := l3Unknown, l4Unknown
	var v4, v6, ok bool
	switch k.EthType {
	case flow.EthTypeIPv4:
		l3, v4 = l3IPv4, true
		l4, ok = l4Of(k.NwProto, flow.IPProtoICMP)
	case flow.EthTypeIPv6:
		l3, v6 = l3IPv6, true
		l4, ok = l4Of(k.NwProto, flow.IPProtoICMPv6)
	}
	dir := 0
	if s.Egress {
		dir = 1
	}
	domain, point := s.ObsDomainID, s.ObsPointID
	if domain == 0 {
		domain = e.cfg.ObsDomainID
	}
	if point == 0 {
		point = e.cfg.ObsPointID
	}
	tun := 0
	if s.Tunnel != nil {
		tun = 1
	}
	tmpl := templateID(l2, l3, l4, tun, dir)
	ethHdr := uint64(ethHeaderLen)
	if l2 == l2VLAN {
		ethHdr = vlanEthHeaderLen
	}

	// The flow key part of the record, behind the cache-key prefix.
	b := e.kbuf[:0]
	b = binary.BigEndian.AppendUint32(b, domain)
	b = binary.BigEndian.AppendUint16(b, tmpl)
	b = binary.BigEndian.AppendUint32(b, point)
	b = append(b, byte(dir))
	b = append(b, k.EthSrc[:]...)
	b = append(b, k.EthDst[:]...)
	b = binary.BigEndian.AppendUint16(b, k.EthType)
	b = append(b, byte(ethHdr))
	b = appendIface(b, s.InPort, s.InIfType, s.InName)
	if dir == 1 {
		b = appendIface(b, s.OutPort, s.OutIfType, s.OutName)
	}
	if l2 == l2VLAN {
		vid := k.VLANs[0].TCI & 0x0fff
		b = binary.BigEndian.AppendUint16(b, vid)
		b = binary.BigEndian.AppendUint16(b, vid)
		b = append(b, byte(k.VLANs[0].TCI>>13))
	}
	if l3 != l3Unknown {
		ver := byte(4)
		if v6 {
			ver = 6
		}
		b = append(b, ver, k.NwTTL, k.NwProto, k.NwTos>>2, k.NwTos>>5, k.NwTos)
		if v4 {
			b = binary.BigEndian.AppendUint32(b, k.NwSrc)
			b = binary.BigEndian.AppendUint32(b, k.NwDst)
		} else {
			b = append(b, k.IPv6Src[:]...)
			b = append(b, k.IPv6Dst[:]...)
			b = binary.BigEndian.AppendUint32(b, k.IPv6Label)
		}
		switch l4 {
		case l4TCP, l4UDP, l4SCTP:
			b = binary.BigEndian.AppendUint16(b, k.TpSrc)
			b = binary.BigEndian.AppendUint16(b, k.TpDst)
		case l4ICMP:
			b = append(b, byte(k.TpSrc), byte(k.TpDst))
		}
	}
	if t := s.Tunnel; t != nil {
		b = appendTunnel(b, t)
	}
	e.kbuf = b

	// The counters (ipfix_cache_entry_init): every packet the sample
	// stands for is assumed to have the sampled packet's length.
	n := s.PacketDeltaCount
	if n == 0 {
		n = 1
	}
	x := &e.scratch
	*x = entry{domain: domain, template: tmpl, ip: l3 != l3Unknown, tcp: l4 == l4TCP}
	x.end = e.nowMicros()
	x.start = x.end
	frameLen := uint64(len(s.Packet))
	x.packetDelta = n
	x.l2OctetDelta = n * frameLen
	if s.Dropped {
		x.droppedPacketDelta = n
	}
	t := &e.tot
	t.droppedPackets += x.droppedPacketDelta
	t.packets += n
	t.l2Octets += x.l2OctetDelta
	bcast := k.EthDst == [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	mcast := !bcast && k.EthDst[0]&1 != 0
	switch {
	case bcast && dir == 0:
		t.inBcast += n
	case bcast:
		t.outBcast += n
	case mcast && dir == 0:
		t.inMcast += n
	case mcast:
		x.postMcastPacketDelta = n
		t.postMcastPackets += n
	case dir == 0:
		t.inUcast += n
	default:
		t.outUcast += n
	}
	if x.ip {
		ipLen := uint64(0)
		if frameLen > ethHdr {
			ipLen = frameLen - ethHdr
		}
		x.octetDelta = n * ipLen
		if s.Dropped {
			x.droppedOctetDelta = x.octetDelta
		}
		x.octetDeltaSq = x.octetDelta * ipLen
		x.minLen, x.maxLen = ipLen, ipLen
		t.droppedOctets += x.droppedOctetDelta
		t.octets += x.octetDelta
		t.octetsSq += x.octetDeltaSq
		if mcast && dir == 1 {
			x.postMcastOctetDelta = x.octetDelta
			t.postMcastOctets += x.octetDelta
		}
	}
	if x.tcp {
		fl := k.TCPFlags
		for _, c := range [...]struct {
			bit uint16
			ctr *uint64
		}{{tcpACK, &t.tcpACK}, {tcpFIN, &t.tcpFIN}, {tcpPSH, &t.tcpPSH}, {tcpRST, &t.tcpRST}, {tcpSYN, &t.tcpSYN}, {tcpURG, &t.tcpURG}} {
			if fl&c.bit != 0 {
				*c.ctr += n
			}
		}
	}
	x.tot = *t

	e.stats.SampledPackets++
	switch {
	case v4 && ok:
		e.stats.IPv4OK++
	case v6 && ok:
		e.stats.IPv6OK++
	case v4:
		e.stats.IPv4Errors++
		e.stats.Errors++
	case v6:
		e.stats.IPv6Errors++
		e.stats.Errors++
	}

	if e.cfg.CacheMaxFlows == 0 {
		// No cache: Open vSwitch inserts the record and at once finds
		// the cache over its limit; the record leaves by the first rule
		// that applies to it.
		e.stats.Flows++
		e.stats.CurrentFlows = uint64(len(e.fifo)) + 1
		reason := uint8(EndLackOfResources)
		if e.cfg.CacheActiveTimeout == 0 {
			reason = EndActiveTimeout
		}
		// The cache is empty here: Reconfigure expired it when the
		// limit became 0.
		e.sendRecord(x, b[cacheKeyPrefix:], reason)
		return
	}
	if old := e.cache[string(b)]; old != nil {
		aggregate(old, x)
		return
	}
	ne := e.newEntry()
	*ne = *x
	ne.key = string(b)
	e.cache[ne.key] = ne
	e.fifo = append(e.fifo, ne)
	e.stats.Flows++
	e.stats.CurrentFlows = uint64(len(e.cache))
	if uint64(len(e.cache)) > uint64(e.cfg.CacheMaxFlows) {
		e.expire(false)
	}
}

// l4Of maps an IP protocol to the template's transport layer and says
// whether Open vSwitch counts the packet as a well-formed sample.
func l4Of(proto, icmp uint8) (int, bool) {
	switch proto {
	case flow.IPProtoTCP:
		return l4TCP, true
	case flow.IPProtoUDP:
		return l4UDP, true
	case flow.IPProtoSCTP:
		return l4SCTP, true
	case icmp:
		return l4ICMP, true
	}
	return l4Unknown, false
}

// appendTunnel appends the tunnel elements in template order.
func appendTunnel(b []byte, t *Tunnel) []byte {
	var proto uint8
	keyLen := 0
	switch t.Type {
	case TunnelVXLAN, TunnelGeneve:
		proto, keyLen = flow.IPProtoUDP, 3
	case TunnelGRE:
		proto, keyLen = ipProtoGRE, 4
	}
	b = append(b, t.Src[:]...)
	b = append(b, t.Dst[:]...)
	b = append(b, proto)
	b = binary.BigEndian.AppendUint16(b, t.SrcPort)
	b = binary.BigEndian.AppendUint16(b, t.DstPort)
	b = append(b, t.Type, byte(keyLen))
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], t.ID)
	return append(b, id[8-keyLen:]...)
}

// appendIface appends ingress/egressInterface, its type, interfaceName
// and an empty interfaceDescription.
func appendIface(b []byte, ifindex, ifType uint32, name string) []byte {
	b = binary.BigEndian.AppendUint32(b, ifindex)
	b = binary.BigEndian.AppendUint32(b, ifType)
	if len(name) > maxIfNameLen {
		name = name[:maxIfNameLen]
	}
	b = append(b, byte(len(name)))
	b = append(b, name...)
	return append(b, 0)
}

// aggregate adds the sample record from into the cached record to
// (ipfix_cache_aggregate_entries): deltas add up, totals are replaced by
// the newer snapshot.
func aggregate(to, from *entry) {
	to.start = min(to.start, from.start)
	to.end = max(to.end, from.end)
	to.droppedPacketDelta += from.droppedPacketDelta
	to.packetDelta += from.packetDelta
	to.l2OctetDelta += from.l2OctetDelta
	to.postMcastPacketDelta += from.postMcastPacketDelta
	to.postMcastOctetDelta += from.postMcastOctetDelta
	to.droppedOctetDelta += from.droppedOctetDelta
	to.octetDelta += from.octetDelta
	to.octetDeltaSq += from.octetDeltaSq
	if to.minLen == 0 || (from.minLen != 0 && from.minLen < to.minLen) {
		to.minLen = from.minLen
	}
	to.maxLen = max(to.maxLen, from.maxLen)
	to.tot = from.tot
}

func (e *Exporter) newEntry() *entry {
	if n := len(e.free); n > 0 {
		x := e.free[n-1]
		e.free = e.free[:n-1]
		return x
	}
	return new(entry)
}

// nowMicros is Open vSwitch's ipfix_now: wall-clock milliseconds, in µs.
func (e *Exporter) nowMicros() uint64 {
	return uint64(e.now().UnixMilli()) * 1000
}

// exportTime returns the export time in µs and the header's export
// second, rounded up so that the start/end deltas stay non-negative.
func (e *Exporter) exportTime() (uint64, uint32) {
	us := e.nowMicros()
	return us, uint32((us + 999999) / 1000000)
}

// expire exports the cached records that are past the active timeout,
// or all of them if forced, and the oldest ones while the cache is over
// its size limit (dpif_ipfix_cache_expire).
//
// Preconditions: e.mu is held.
func (e *Exporter) expire(forced bool) {
	if len(e.fifo) == 0 {
		return
	}
	us, _ := e.exportTime()
	timeout := uint64(max(e.cfg.CacheActiveTimeout, 0).Microseconds())
	var oldest uint64
	if us > timeout {
		oldest = us - timeout
	}
	i := 0
	for ; i < len(e.fifo); i++ {
		x := e.fifo[i]
		var reason uint8
		switch {
		case forced:
			reason = EndForced
		case x.start <= oldest:
			reason = EndActiveTimeout
		case uint64(len(e.cache)) > uint64(e.cfg.CacheMaxFlows):
			reason = EndLackOfResources
		}
		if reason == 0 {
			break
		}
		delete(e.cache, x.key)
		e.ebuf = append(e.ebuf[:0], x.key[cacheKeyPrefix:]...)
		e.sendRecord(x, e.ebuf, reason)
		x.key = ""
		if len(e.free) < 1024 {
			e.free = append(e.free, x)
		}
		e.fifo[i] = nil
	}
	if i > 0 {
		n := copy(e.fifo, e.fifo[i:])
		clear(e.fifo[n:])
		e.fifo = e.fifo[:n]
	}
}

// sendRecord sends one data record in its own message, as Open vSwitch
// does, preceded when due by the templates of its domain and by the
// exporting-process statistics.
//
// Preconditions: e.mu is held.
func (e *Exporter) sendRecord(x *entry, keyPart []byte, reason uint8) {
	_, sec := e.exportTime()
	interval := durSeconds(e.cfg.TemplateInterval)
	if last, ok := e.domains[x.domain]; !ok || last+interval <= sec {
		e.domains[x.domain] = sec
		e.sendTemplates(sec, x.domain)
	}
	if e.lastStats == 0 || e.lastStats+durSeconds(e.cfg.StatsInterval) <= sec {
		e.lastStats = sec
		e.sendStats(sec)
	}

	m := e.startMsg(sec, e.seq, x.domain)
	e.seq++
	setOff := len(m)
	m = binary.BigEndian.AppendUint16(m, x.template)
	m = append(m, 0, 0)
	m = append(m, keyPart...)
	if v := e.cfg.VirtualObsID; v != "" {
		m = append(m, byte(len(v)))
		m = append(m, v...)
	}
	exportUs := uint64(sec) * 1000000
	m = binary.BigEndian.AppendUint32(m, uint32(exportUs-x.start))
	m = binary.BigEndian.AppendUint32(m, uint32(exportUs-x.end))
	t := &x.tot
	for _, v := range [...]uint64{
		x.droppedPacketDelta, t.droppedPackets, x.packetDelta, t.packets,
		t.inUcast, t.inMcast, t.inBcast, t.outUcast, t.outBcast,
		x.postMcastPacketDelta, t.postMcastPackets, x.l2OctetDelta, t.l2Octets,
	} {
		m = binary.BigEndian.AppendUint64(m, v)
	}
	m = append(m, reason)
	if x.ip {
		for _, v := range [...]uint64{
			x.droppedOctetDelta, t.droppedOctets, x.octetDelta, t.octets,
			x.octetDeltaSq, t.octetsSq, x.minLen, x.maxLen,
			x.postMcastOctetDelta, t.postMcastOctets,
		} {
			m = binary.BigEndian.AppendUint64(m, v)
		}
	}
	if x.tcp {
		for _, v := range [...]uint64{t.tcpACK, t.tcpFIN, t.tcpPSH, t.tcpRST, t.tcpSYN, t.tcpURG} {
			m = binary.BigEndian.AppendUint64(m, v)
		}
	}
	binary.BigEndian.PutUint16(m[setOff+2:], uint16(len(m)-setOff))
	e.msg = m
	e.sendMsg(m)
	if e.stats.CurrentFlows > 0 {
		e.stats.CurrentFlows--
	}
}

func durSeconds(d time.Duration) uint32 {
	if d <= 0 {
		d = DefaultTemplateInterval
	}
	return uint32(d / time.Second)
}

// startMsg starts a message in e.msg with its header (length set by
// sendMsg).
func (e *Exporter) startMsg(sec, seq, domain uint32) []byte {
	m := e.msg[:0]
	m = binary.BigEndian.AppendUint16(m, version)
	m = append(m, 0, 0)
	m = binary.BigEndian.AppendUint32(m, sec)
	m = binary.BigEndian.AppendUint32(m, seq)
	return binary.BigEndian.AppendUint32(m, domain)
}

// sendMsg sets the message length and sends it to every collector.
func (e *Exporter) sendMsg(m []byte) {
	binary.BigEndian.PutUint16(m[2:], uint16(len(m)))
	errs := e.coll.Send(m)
	e.stats.TxErrors += uint64(errs)
	e.stats.TxPackets += uint64(e.coll.Count() - errs)
}

// sendTemplates announces every data template in domain, then the options
// template in domain 0 (where the statistics record goes). Template
// messages carry the current sequence number without advancing it.
func (e *Exporter) sendTemplates(sec, domain uint32) {
	for _, set := range e.tmplSets {
		m := append(e.startMsg(sec, e.seq, domain), set...)
		e.msg = m
		e.sendMsg(m)
	}
	m := append(e.startMsg(sec, e.seq, 0), e.optTmplSet...)
	e.msg = m
	e.sendMsg(m)
}

// sendStats sends the exporting-process reliability statistics record
// (notSentPacketTotalCount = transmit errors so far) in domain 0.
func (e *Exporter) sendStats(sec uint32) {
	m := e.startMsg(sec, e.seq, 0)
	e.seq++
	m = binary.BigEndian.AppendUint16(m, optionsTemplateID)
	m = binary.BigEndian.AppendUint16(m, setHeaderLen+12)
	id := e.cfg.ExporterID
	if id == 0 {
		id = 1
	}
	m = binary.BigEndian.AppendUint32(m, id)
	m = binary.BigEndian.AppendUint64(m, e.stats.TxErrors)
	e.msg = m
	e.sendMsg(m)
}

// Run exports the cached records past the active timeout. Templates are
// re-sent with the next record of a domain once TemplateInterval has
// passed. Call it about once a second.
func (e *Exporter) Run() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		e.expire(false)
	}
}

// Flush exports every cached record now (flowEndReason forcedEnd).
func (e *Exporter) Flush() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		e.expire(true)
	}
}

// Stats returns the exporter statistics.
func (e *Exporter) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

// Close flushes the cache and closes the sockets. The Exporter ignores
// samples afterwards.
func (e *Exporter) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.expire(true)
	e.closed = true
	err := e.coll.Close()
	e.coll = nil
	if err != nil {
		return fmt.Errorf("ipfix: %w", err)
	}
	return nil
}
