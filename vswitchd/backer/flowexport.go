package backer

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/gvs-project/gvs/internal/ovshash"
	"github.com/gvs-project/gvs/ofproto/flowexport/ipfix"
	"github.com/gvs-project/gvs/ofproto/flowexport/netflow"
	"github.com/gvs-project/gvs/ofproto/flowexport/sflow"
	"github.com/gvs-project/gvs/ofproto/ofswitch"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// ConfigureFlowExport applies a bridge's NetFlow, sFlow and IPFIX rows
// (bridge.FlowExportConfigurer). Problems are logged as Open vSwitch
// logs them; whatever can be applied is.
func (s *Backer) ConfigureFlowExport(name string, cfg *bridge.FlowExportConfig) {
	s.mu.Lock()
	b := s.bridges[name]
	s.mu.Unlock()
	if b == nil || b.of == nil {
		return
	}
	log := s.cfg.Logger("bridge")
	if cfg == nil {
		if err := b.of.SetFlowExport(nil); err != nil {
			log.Warn(fmt.Sprintf("bridge %s: %v", name, err))
		}
		return
	}
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	dp := s.Datapath(b.dpTyp)
	oc := &ofswitch.FlowExportConfig{IfIndex: func(no uint32) uint32 {
		pi, ok := dp.Port(no)
		if !ok || pi.Device == nil || pi.Device.Ifindex() <= 0 {
			return 0
		}
		return uint32(pi.Device.Ifindex())
	}}
	if nf := cfg.NetFlow; nf != nil {
		c := &netflow.Config{Targets: nf.Targets, ActiveTimeout: time.Duration(nf.ActiveTimeout) * time.Second,
			AddIDToInterface: nf.AddIDToInterface}
		// Without engine ids the datapath's apply, derived from its
		// name as Open vSwitch's userspace datapath does.
		c.EngineType, c.EngineID = netflowEngineIDs("ovs-" + b.dpTyp)
		if nf.EngineType != nil {
			c.EngineType = *nf.EngineType
		}
		if nf.EngineID != nil {
			c.EngineID = *nf.EngineID
		}
		oc.NetFlow = c
	}
	if sf := cfg.SFlow; sf != nil {
		agent, err := sflowAgent(sf.Agent, sf.Targets)
		if err != nil {
			log.Warn(fmt.Sprintf("bridge %s: could not determine agent address for sFlow: %v", name, err))
		} else {
			oc.SFlow = &sflow.Config{Targets: sf.Targets, Sampling: sf.Sampling, Polling: time.Duration(sf.Polling) * time.Second,
				Header: sf.Header, Agent: agent, SubID: sf.SubID}
		}
	}
	if ic := cfg.IPFIX; ic != nil {
		c := ipfixConfig(ic)
		oc.IPFIX, oc.IPFIXSampling = &c, ic.Sampling
		oc.IPFIXInput, oc.IPFIXOutput = ic.EnableInputSampling, ic.EnableOutputSampling
	}
	for _, cs := range cfg.CollectorSets {
		if oc.CollectorSets == nil {
			oc.CollectorSets = map[uint32]ipfix.Config{}
		}
		oc.CollectorSets[cs.ID] = ipfixConfig(&cs.IPFIX)
	}
	if err := b.of.SetFlowExport(oc); err != nil {
		log.Warn(fmt.Sprintf("bridge %s: %v", name, err))
	}
}

func ipfixConfig(c *bridge.IPFIXConfig) ipfix.Config {
	return ipfix.Config{Targets: c.Targets, ObsDomainID: c.ObsDomainID, ObsPointID: c.ObsPointID,
		CacheActiveTimeout: time.Duration(c.CacheActiveTimeout) * time.Second, CacheMaxFlows: c.CacheMaxFlows,
		TemplateInterval: time.Duration(c.TemplateInterval) * time.Second}
}

// sflowAgent resolves sFlow.agent as Open vSwitch does: an IP address,
// or the address of the named interface, or (when unset) the local
// address that routes to the first collector.
func sflowAgent(agent string, targets []string) (netip.Addr, error) {
	if agent != "" {
		if a, err := netip.ParseAddr(agent); err == nil {
			return a, nil
		}
		ifc, err := net.InterfaceByName(agent)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("agent %q: %w", agent, err)
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			return netip.Addr{}, fmt.Errorf("agent %q: %w", agent, err)
		}
		var v6 netip.Addr
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(ipn.IP); ok {
					if ip.Unmap().Is4() {
						return ip.Unmap(), nil
					}
					if !v6.IsValid() {
						v6 = ip
					}
				}
			}
		}
		if v6.IsValid() {
			return v6, nil
		}
		return netip.Addr{}, fmt.Errorf("agent %q has no IP address", agent)
	}
	for _, t := range targets {
		if _, _, err := net.SplitHostPort(t); err != nil {
			t = net.JoinHostPort(t, "6343")
		}
		c, err := net.Dial("udp", t)
		if err != nil {
			continue
		}
		la := c.LocalAddr().(*net.UDPAddr)
		c.Close()
		if ip, ok := netip.AddrFromSlice(la.IP); ok {
			return ip.Unmap(), nil
		}
	}
	return netip.Addr{}, errors.New("no agent and no reachable collector")
}

// netflowEngineIDs returns the NetFlow engine type and id Open vSwitch's
// userspace datapath reports when NetFlow.engine_type/engine_id are unset:
// the high and low bytes of the low 16 bits of a hash of the datapath's
// name (hash_string with basis 0: a 32-bit Murmur3 over little-endian
// words, finished with the length).
func netflowEngineIDs(dpName string) (engineType, engineID uint8) {
	h := ovshash.Bytes([]byte(dpName), 0)
	return uint8(h >> 8), uint8(h)
}
