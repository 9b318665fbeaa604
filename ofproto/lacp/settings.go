package lacp

import (
	"log/slog"
	"math"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/internal/ethaddr"
)

// PortSettings reads a bond's LACP settings from its Port row as Open
// vSwitch's bridge does: the lacp column ("active", "passive"; empty,
// "off" or an unknown mode, warned, turn LACP off), other_config's
// lacp-system-id (else the bridge's MAC; an unparsable or zero ID is
// warned and turns LACP off), lacp-system-priority (default 65534 for a
// bond of several interfaces, so that it leads, else 65535), lacp-time
// and lacp-fallback-ab. ok is false when the port runs no LACP.
func PortSettings(port, mode string, otherConfig map[string]string, bridgeMAC [6]byte, nIfaces int, log *slog.Logger) (s Settings, ok bool) {
	switch mode {
	case "", "off":
		return s, false
	case "active":
		s.Active = true
	case "passive":
	default:
		log.Warn("port " + port + ": unknown LACP mode " + mode)
		return s, false
	}
	s.Name = port
	s.SysID = bridgeMAC
	if id, set := otherConfig["lacp-system-id"]; set {
		var good bool
		if s.SysID, good = ethaddr.Scan(id); !good {
			log.Warn("port " + port + ": LACP system ID (" + id + ") must be an Ethernet address.")
			return s, false
		}
	}
	if s.SysID == ([6]byte{}) {
		log.Warn("port " + port + ": Invalid zero LACP system ID.")
		return s, false
	}
	s.SysPriority = math.MaxUint16
	if nIfaces > 1 {
		s.SysPriority--
	}
	if p := getInt(otherConfig, "lacp-system-priority"); p > 0 && p <= math.MaxUint16 {
		s.SysPriority = uint16(p)
	}
	s.Fast = strings.EqualFold(otherConfig["lacp-time"], "fast")
	s.FallbackAB = strings.EqualFold(otherConfig["lacp-fallback-ab"], "true")
	return s, true
}

// MemberSettingsFor reads a member's settings from its Interface row's
// other_config: lacp-port-id (default: the OpenFlow port number),
// lacp-port-priority (default 65535) and lacp-aggregation-key (default 0,
// the port ID); values out of range take the default.
func MemberSettingsFor(iface string, ofport uint16, otherConfig map[string]string) MemberSettings {
	s := MemberSettings{Name: iface, PortID: ofport, PortPriority: math.MaxUint16}
	if v := getInt(otherConfig, "lacp-port-id"); v > 0 && v <= math.MaxUint16 {
		s.PortID = uint16(v)
	}
	if v := getInt(otherConfig, "lacp-port-priority"); v > 0 && v <= math.MaxUint16 {
		s.PortPriority = uint16(v)
	}
	if v := getInt(otherConfig, "lacp-aggregation-key"); v >= 0 && v <= math.MaxUint16 {
		s.Key = uint16(v)
	}
	return s
}

// getInt is smap_get_int with default 0: a whole decimal int or 0.
func getInt(m map[string]string, key string) int64 {
	v, err := strconv.ParseInt(m[key], 10, 32)
	if err != nil {
		return 0
	}
	return v
}
