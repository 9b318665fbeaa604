package backer

import (
	"fmt"

	"github.com/gvs-project/gvs/ofproto/xlate"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// ConfigureMirrors applies a bridge's Mirror rows to its OpenFlow switch
// (bridge.MirrorConfigurer). Rows Open vSwitch refuses were left out by
// the parser with a warning, logged here as Open vSwitch logs them.
// snaplen is kept in 16 bits, as Open vSwitch's mirror_set takes it.
func (s *Backer) ConfigureMirrors(name string, mirrors []bridge.MirrorConfig, warnings []string) {
	of := s.view.OFBridge(name)
	if of == nil {
		return
	}
	s.setSTPMirrorOutputs(name, mirrors) // stp.go
	log := s.cfg.Logger("bridge")
	for _, w := range warnings {
		log.Warn(w)
	}
	ms := make([]xlate.Mirror, 0, len(mirrors))
	for _, mc := range mirrors {
		m := xlate.Mirror{ID: mc.UUID, Name: mc.Name, SelectAll: mc.SelectAll, SrcPorts: mc.SelectSrcPorts,
			DstPorts: mc.SelectDstPorts, OutPort: mc.OutputPort, Snaplen: uint16(mc.Snaplen)}
		if mc.OutputPort == "" {
			m.OutVLAN = uint16(mc.OutputVLAN & 0xfff)
		}
		for _, v := range mc.SelectVLANs {
			if v >= 0 && v < 4096 {
				m.VLANs = append(m.VLANs, uint16(v))
			}
		}
		ms = append(ms, m)
	}
	for _, n := range of.SetMirrors(ms) {
		log.Warn(fmt.Sprintf("maximum of %d port mirrors reached, cannot create %s", xlate.MaxMirrors, n))
	}
}

// MirrorStats reports what a bridge's mirror sent (bridge.MirrorStatuser).
func (s *Backer) MirrorStats(name, uuid string) (packets, bytes int64, ok bool) {
	of := s.view.OFBridge(name)
	if of == nil {
		return 0, 0, false
	}
	p, b, ok := of.MirrorStats(uuid)
	return int64(p), int64(b), ok
}
