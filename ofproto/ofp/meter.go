// Meters (OpenFlow 1.3+; Open vSwitch has no OpenFlow 1.0 form): meter
// mod and the meter configuration, statistics and features multipart
// messages.

package ofp

import "encoding/binary"

// Meter mod commands (OFPMC13_*).
const (
	MeterAdd    = 0
	MeterModify = 1
	MeterDelete = 2
)

// Meter flags (OFPMF13_*).
const (
	MeterFlagKbps  = 1
	MeterFlagPktps = 2
	MeterFlagBurst = 4
	MeterFlagStats = 8
)

// Meter band types (OFPMBT13_*).
const (
	MeterBandDrop       = 1
	MeterBandDSCPRemark = 2
)

// Meter IDs.
const (
	MeterMax        = 0xffff0000 // OFPM13_MAX: the largest real meter ID
	MeterSlowpath   = 0xfffffffd // OFPM13_SLOWPATH
	MeterController = 0xfffffffe // OFPM13_CONTROLLER
	MeterAll        = 0xffffffff // OFPM13_ALL
)

const (
	meterBandLen       = 16 // every band type Open vSwitch knows
	meterConfigLen     = 8
	meterStatsLen      = 40
	meterBandStatsLen  = 16
	ovsMaxMeters       = 262144 // the userspace datapath's meter table
	ovsMeterMaxBands   = 8
	ovsMeterCapability = MeterFlagKbps | MeterFlagPktps | MeterFlagBurst | MeterFlagStats
)

// MeterBand is one band of a meter.
type MeterBand struct {
	Type            uint16 // MeterBandDrop, MeterBandDSCPRemark
	Rate, BurstSize uint32
	PrecLevel       uint8 // DSCP remark bands only
}

// MeterMod is OFPT13_METER_MOD. Decoding applies Open vSwitch's checks:
// an unknown command is OFPMMFC_BAD_COMMAND; for add and modify, both
// KBPS and PKTPS is OFPMMFC_BAD_FLAGS, a band not 16 bytes long
// OFPBRC_BAD_LEN and an unknown band type OFPMMFC_BAD_BAND. A delete's
// bands are ignored, as Open vSwitch does.
type MeterMod struct {
	Command uint16 // MeterAdd, MeterModify, MeterDelete
	Flags   uint16 // MeterFlagKbps, MeterFlagPktps, MeterFlagBurst, MeterFlagStats
	MeterID uint32
	Bands   []MeterBand
}

// MeterConfigRequest asks for the configuration of MeterID or MeterAll.
type MeterConfigRequest struct {
	Flags   uint16
	MeterID uint32
}

// MeterConfig is one meter's configuration.
type MeterConfig struct {
	Flags   uint16
	MeterID uint32
	Bands   []MeterBand
}

// MeterConfigReply is OFPST13_METER_CONFIG_REPLY; EncodeReplies splits it.
type MeterConfigReply struct {
	Flags   uint16
	Configs []MeterConfig
}

// MeterStatsRequest asks for the statistics of MeterID or MeterAll.
type MeterStatsRequest struct {
	Flags   uint16
	MeterID uint32
}

// BandStats are one band's counters.
type BandStats struct{ PacketCount, ByteCount uint64 }

// MeterStats are one meter's statistics.
type MeterStats struct {
	MeterID                    uint32
	FlowCount                  uint32
	PacketInCount, ByteInCount uint64
	DurationSec, DurationNsec  uint32
	Bands                      []BandStats
}

// MeterStatsReply is OFPST13_METER_REPLY; EncodeReplies splits it.
type MeterStatsReply struct {
	Flags uint16
	Stats []MeterStats
}

// MeterFeaturesRequest is OFPST13_METER_FEATURES_REQUEST.
type MeterFeaturesRequest struct{ Flags uint16 }

// MeterFeaturesReply is OFPST13_METER_FEATURES_REPLY. BandTypes is a
// bitmap of 1<<band type; Capabilities of meter flags.
type MeterFeaturesReply struct {
	Flags              uint16
	MaxMeter           uint32
	BandTypes          uint32
	Capabilities       uint32
	MaxBands, MaxColor uint8
}

// OVSMeterFeatures returns what Open vSwitch 3.1's userspace datapath
// reports: 262144 meters with up to 8 drop bands, all four flags.
func OVSMeterFeatures() *MeterFeaturesReply {
	return &MeterFeaturesReply{MaxMeter: ovsMaxMeters, BandTypes: 1 << MeterBandDrop,
		Capabilities: ovsMeterCapability, MaxBands: ovsMeterMaxBands}
}

func init() {
	for raw, dec := range map[Raw]decodeFunc{
		RawOFPT13_METER_MOD:             decodeMeterMod,
		RawOFPST13_METER_CONFIG_REQUEST: decodeMeterRequest,
		RawOFPST13_METER_REQUEST:        decodeMeterRequest,
		RawOFPST13_METER_CONFIG_REPLY:   decodeMeterConfigReply,
		RawOFPST13_METER_REPLY:          decodeMeterStatsReply,
		RawOFPST13_METER_FEATURES_REQUEST: func(r *reader, _ uint8, _ Raw) (Message, error) {
			return &MeterFeaturesRequest{Flags: r.statsFlags}, nil
		},
		RawOFPST13_METER_FEATURES_REPLY: decodeMeterFeaturesReply,
	} {
		decoders[raw] = dec
	}
}

// decodeBands decodes the meter bands filling p.
func decodeBands(p []byte) ([]MeterBand, error) {
	var out []MeterBand
	for len(p) >= meterBandLen {
		n := int(binary.BigEndian.Uint16(p[2:]))
		if n != meterBandLen {
			return nil, errorf(OFPBRC_BAD_LEN, "meter band of length %d", n)
		}
		mb := MeterBand{Type: binary.BigEndian.Uint16(p), Rate: binary.BigEndian.Uint32(p[4:]), BurstSize: binary.BigEndian.Uint32(p[8:])}
		switch mb.Type {
		case MeterBandDrop:
		case MeterBandDSCPRemark:
			mb.PrecLevel = p[12]
		default:
			return nil, errorf(OFPMMFC_BAD_BAND, "meter band type %d", mb.Type)
		}
		out = append(out, mb)
		p = p[n:]
	}
	if len(p) > 0 {
		return nil, errorf(OFPBRC_BAD_LEN, "meter bands end with %d leftover bytes", len(p))
	}
	return out, nil
}

func appendBands(b []byte, bands []MeterBand) []byte {
	for _, mb := range bands {
		b = binary.BigEndian.AppendUint16(b, mb.Type)
		b = binary.BigEndian.AppendUint16(b, meterBandLen)
		b = binary.BigEndian.AppendUint32(b, mb.Rate)
		b = binary.BigEndian.AppendUint32(b, mb.BurstSize)
		b = append(b, mb.PrecLevel, 0, 0, 0)
	}
	return b
}

func decodeMeterMod(r *reader, _ uint8, _ Raw) (Message, error) {
	m := &MeterMod{Command: r.u16(), Flags: r.u16(), MeterID: r.u32()}
	rest := r.take(r.len())
	switch m.Command {
	case MeterAdd, MeterModify:
	case MeterDelete:
		return m, nil
	default:
		return nil, errorf(OFPMMFC_BAD_COMMAND, "meter command %d", m.Command)
	}
	if m.Flags&MeterFlagKbps != 0 && m.Flags&MeterFlagPktps != 0 {
		return nil, errorf(OFPMMFC_BAD_FLAGS, "meter flags %#x have both kbps and pktps", m.Flags)
	}
	var err error
	if m.Bands, err = decodeBands(rest); err != nil {
		return nil, err
	}
	return m, nil
}

// RawFor returns OFPT13_METER_MOD (OpenFlow 1.3+).
func (*MeterMod) RawFor(v uint8) (Raw, error) { return versionRange(v, RawOFPT13_METER_MOD) }

func (m *MeterMod) appendBody(b []byte, _ uint8) ([]byte, error) {
	if len(m.Bands)*meterBandLen > maxMessageLen {
		return b, errorf(OFPBRC_BAD_LEN, "meter mod with %d bands", len(m.Bands))
	}
	b = binary.BigEndian.AppendUint16(b, m.Command)
	b = binary.BigEndian.AppendUint16(b, m.Flags)
	b = binary.BigEndian.AppendUint32(b, m.MeterID)
	return appendBands(b, m.Bands), nil
}

func decodeMeterRequest(r *reader, _ uint8, raw Raw) (Message, error) {
	flags, id := r.statsFlags, r.u32()
	r.skip(4)
	if raw == RawOFPST13_METER_CONFIG_REQUEST {
		return &MeterConfigRequest{Flags: flags, MeterID: id}, nil
	}
	return &MeterStatsRequest{Flags: flags, MeterID: id}, nil
}

func appendMeterRequest(b []byte, id uint32) []byte {
	b = binary.BigEndian.AppendUint32(b, id)
	return append(b, 0, 0, 0, 0)
}

// RawFor returns OFPST13_METER_CONFIG_REQUEST.
func (*MeterConfigRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST13_METER_CONFIG_REQUEST)
}
func (m *MeterConfigRequest) multipartFlags() uint16 { return m.Flags }
func (m *MeterConfigRequest) appendBody(b []byte, _ uint8) ([]byte, error) {
	return appendMeterRequest(b, m.MeterID), nil
}

// RawFor returns OFPST13_METER_REQUEST.
func (*MeterStatsRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST13_METER_REQUEST)
}
func (m *MeterStatsRequest) multipartFlags() uint16 { return m.Flags }
func (m *MeterStatsRequest) appendBody(b []byte, _ uint8) ([]byte, error) {
	return appendMeterRequest(b, m.MeterID), nil
}

func decodeMeterConfigReply(r *reader, _ uint8, _ Raw) (Message, error) {
	m := &MeterConfigReply{Flags: r.statsFlags}
	for r.len() > 0 {
		if r.len() < meterConfigLen {
			return nil, errorf(OFPBRC_BAD_LEN, "meter config: %d leftover bytes", r.len())
		}
		n := int(binary.BigEndian.Uint16(r.b[r.off:]))
		if n < meterConfigLen || n > r.len() {
			return nil, errorf(OFPBRC_BAD_LEN, "meter config of length %d with %d bytes left", n, r.len())
		}
		e := r.take(n)
		mc := MeterConfig{Flags: binary.BigEndian.Uint16(e[2:]), MeterID: binary.BigEndian.Uint32(e[4:])}
		var err error
		if mc.Bands, err = decodeBands(e[meterConfigLen:]); err != nil {
			return nil, err
		}
		m.Configs = append(m.Configs, mc)
	}
	return m, nil
}

// RawFor returns OFPST13_METER_CONFIG_REPLY.
func (*MeterConfigReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST13_METER_CONFIG_REPLY)
}
func (m *MeterConfigReply) multipartFlags() uint16 { return m.Flags }
func (m *MeterConfigReply) numEntries() int        { return len(m.Configs) }
func (m *MeterConfigReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(b, v, m)
}

func (m *MeterConfigReply) appendEntry(b []byte, _ uint8, i int) ([]byte, error) {
	mc := &m.Configs[i]
	start := len(b)
	b = append(b, 0, 0)
	b = binary.BigEndian.AppendUint16(b, mc.Flags)
	b = binary.BigEndian.AppendUint32(b, mc.MeterID)
	b = appendBands(b, mc.Bands)
	return finishLen16(b, start, "meter config")
}

func decodeMeterStatsReply(r *reader, _ uint8, _ Raw) (Message, error) {
	m := &MeterStatsReply{Flags: r.statsFlags}
	for r.len() > 0 {
		if r.len() < meterStatsLen {
			return nil, errorf(OFPBRC_BAD_LEN, "meter stats: %d leftover bytes", r.len())
		}
		n := int(binary.BigEndian.Uint16(r.b[r.off+4:]))
		if n < meterStatsLen || n > r.len() || (n-meterStatsLen)%meterBandStatsLen != 0 {
			return nil, errorf(OFPBRC_BAD_LEN, "meter stats of length %d with %d bytes left", n, r.len())
		}
		e := newReader(r.take(n), "meter stats")
		ms := MeterStats{MeterID: e.u32()}
		e.skip(8)
		ms.FlowCount, ms.PacketInCount, ms.ByteInCount = e.u32(), e.u64(), e.u64()
		ms.DurationSec, ms.DurationNsec = e.u32(), e.u32()
		for e.len() > 0 {
			ms.Bands = append(ms.Bands, BandStats{PacketCount: e.u64(), ByteCount: e.u64()})
		}
		m.Stats = append(m.Stats, ms)
	}
	return m, nil
}

// RawFor returns OFPST13_METER_REPLY.
func (*MeterStatsReply) RawFor(v uint8) (Raw, error) { return versionRange(v, RawOFPST13_METER_REPLY) }
func (m *MeterStatsReply) multipartFlags() uint16    { return m.Flags }
func (m *MeterStatsReply) numEntries() int           { return len(m.Stats) }
func (m *MeterStatsReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(b, v, m)
}

func (m *MeterStatsReply) appendEntry(b []byte, _ uint8, i int) ([]byte, error) {
	ms := &m.Stats[i]
	n := meterStatsLen + len(ms.Bands)*meterBandStatsLen
	if n > maxMessageLen {
		return b, errorf(OFPBRC_BAD_LEN, "meter stats with %d bands", len(ms.Bands))
	}
	b = binary.BigEndian.AppendUint32(b, ms.MeterID)
	b = binary.BigEndian.AppendUint16(b, uint16(n))
	b = append(b, 0, 0, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, ms.FlowCount)
	b = binary.BigEndian.AppendUint64(b, ms.PacketInCount)
	b = binary.BigEndian.AppendUint64(b, ms.ByteInCount)
	b = binary.BigEndian.AppendUint32(b, ms.DurationSec)
	b = binary.BigEndian.AppendUint32(b, ms.DurationNsec)
	for _, bs := range ms.Bands {
		b = binary.BigEndian.AppendUint64(b, bs.PacketCount)
		b = binary.BigEndian.AppendUint64(b, bs.ByteCount)
	}
	return b, nil
}

// RawFor returns OFPST13_METER_FEATURES_REQUEST.
func (*MeterFeaturesRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST13_METER_FEATURES_REQUEST)
}
func (m *MeterFeaturesRequest) multipartFlags() uint16                     { return m.Flags }
func (*MeterFeaturesRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }

func decodeMeterFeaturesReply(r *reader, _ uint8, _ Raw) (Message, error) {
	m := &MeterFeaturesReply{Flags: r.statsFlags, MaxMeter: r.u32(), BandTypes: r.u32(), Capabilities: r.u32(),
		MaxBands: r.u8(), MaxColor: r.u8()}
	r.skip(2)
	return m, nil
}

// RawFor returns OFPST13_METER_FEATURES_REPLY.
func (*MeterFeaturesReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPST13_METER_FEATURES_REPLY)
}
func (m *MeterFeaturesReply) multipartFlags() uint16 { return m.Flags }
func (m *MeterFeaturesReply) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = binary.BigEndian.AppendUint32(b, m.MaxMeter)
	b = binary.BigEndian.AppendUint32(b, m.BandTypes)
	b = binary.BigEndian.AppendUint32(b, m.Capabilities)
	return append(b, m.MaxBands, m.MaxColor, 0, 0), nil
}
