package bond

import (
	"log/slog"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/internal/ethaddr"
	"github.com/gvs-project/gvs/internal/logrl"
)

// PortSettings reads a bond's settings from its Port row as Open vSwitch's
// bridge does: bond_mode (default active-backup, with Open vSwitch's
// warnings for a missing or unknown mode), bond_updelay and
// bond_downdelay (negative: 0), other_config's bond-detect-mode (carrier;
// miimon is accepted and monitored by carrier), bond-hash-basis,
// bond-rebalance-interval (default 10,000 ms, at least 1,000 unless 0),
// lacp-fallback-ab, bond-primary (active-backup or fallback only),
// lb-output-action (balance-tcp only), all-members-active, and
// bond_active_slave (the last active member's MAC).
//
// The default-mode warning is rate-limited by rl (Open vSwitch's
// VLOG_RATE_LIMIT_INIT(1, 1): the bridge reads its ports on every
// reconfiguration) at time nowMs; nil logs it every time.
func PortSettings(port, mode string, updelay, downdelay int64, activeSlave string, otherConfig map[string]string, log *slog.Logger, rl *logrl.Limit, nowMs int64) Settings {
	s := Settings{Name: port, Mode: ActiveBackup}
	if mode != "" {
		if m, ok := ParseMode(mode); ok {
			s.Mode = m
		} else {
			log.Warn("port " + port + ": unknown bond_mode " + mode + ", defaulting to " + s.Mode.String())
		}
	} else if rl == nil || rl.Allow(log, slog.LevelWarn, nowMs) {
		log.Warn("port " + port + ": Using the default bond_mode " + s.Mode.String() +
			". Note that in previous versions, the default bond_mode was balance-slb")
	}
	if d, ok := otherConfig["bond-detect-mode"]; ok && d != "carrier" && d != "miimon" {
		log.Warn("port " + port + ": unsupported bond-detect-mode " + d + ", defaulting to carrier")
	}
	s.UpDelay, s.DownDelay = max(0, updelay), max(0, downdelay)
	s.Basis = uint32(getInt(otherConfig, "bond-hash-basis", 0))
	s.RebalanceInterval = getInt(otherConfig, "bond-rebalance-interval", 10000)
	if s.RebalanceInterval != 0 && s.RebalanceInterval < 1000 {
		s.RebalanceInterval = 1000
	}
	s.LACPFallbackAB = getBool(otherConfig, "lacp-fallback-ab")
	if s.Mode == ActiveBackup || s.LACPFallbackAB {
		s.Primary = otherConfig["bond-primary"]
	}
	if mac, ok := ethaddr.Scan(activeSlave); ok {
		s.ActiveMemberMAC = mac
	}
	s.UseLBOutput = s.Mode == BalanceTCP && getBool(otherConfig, "lb-output-action")
	s.AllMembersActive = getBool(otherConfig, "all-members-active")
	return s
}

// getInt is smap_get_int: a whole decimal int, else def.
func getInt(m map[string]string, key string, def int64) int64 {
	v, ok := m[key]
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return def
	}
	return n
}

func getBool(m map[string]string, key string) bool { return strings.EqualFold(m[key], "true") }
