package pmd

import (
	"strconv"
	"strings"
)

// Defaults and bounds of the auto load balance settings (minutes,
// percents) and of pmd-maxsleep (microseconds), as Open vSwitch 3.1's.
const (
	DefaultALBInterval    = 1
	MaxALBInterval        = 20000
	DefaultALBImprovement = 25
	DefaultALBLoad        = 95
	MaxSleepMicros        = 10000
)

// Settings are the datapath's PMD settings from Open_vSwitch's
// other_config. A datapath keeps one and feeds it every new
// other_config with Update, which logs what changed in Open vSwitch's
// words and says whether the threads or the assignment must be redone.
// The zero value is a datapath that has not been configured yet (its
// first Update logs every auto load balance setting and the sleep).
type Settings struct {
	CPUMask     string // pmd-cpu-mask; "" is none
	Mode        Mode
	Isolate     bool
	ALB         bool
	ALBInterval uint64 // minutes
	ALBImprove  uint32 // percent
	ALBLoad     uint32 // percent
	MaxSleep    uint64 // microseconds
	SMC         bool
	PerfMetrics bool
	TxFlush     int // microseconds

	configured bool
}

// Changes are what an Update asks of the datapath.
type Changes struct {
	Reconfigure bool // the PMD threads or the rx queue assignment
	ALBChanged  bool // an auto load balance setting changed
}

// otherBool is smap_get_bool: "true" is true, anything else the default
// only when absent.
func otherBool(oc map[string]string, k string, def bool) bool {
	v, ok := oc[k]
	if !ok {
		return def
	}
	return strings.EqualFold(v, "true")
}

// otherUint parses an unsigned decimal value, the default when it is
// absent or not a number.
func otherUint(oc map[string]string, k string, def uint64) uint64 {
	v, ok := oc[k]
	if !ok {
		return def
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return def
	}
	return n
}

// Update applies other_config.
func (s *Settings) Update(oc map[string]string, logf Logf) Changes {
	if logf == nil {
		logf = func(Level, string, ...any) {}
	}
	var ch Changes
	first := !s.configured
	if first {
		s.Mode = Cycles
		s.configured = true
	}

	txFlush := 0
	if n, err := strconv.Atoi(oc["tx-flush-interval"]); err == nil {
		txFlush = n
	}
	if txFlush != s.TxFlush {
		s.TxFlush = txFlush
		logf(Info, "Flushing interval for tx queues set to %d us", txFlush)
	}

	if mask := oc["pmd-cpu-mask"]; mask != s.CPUMask {
		s.CPUMask = mask
		ch.Reconfigure = true
	}

	if perf := otherBool(oc, "pmd-perf-metrics", false); perf != s.PerfMetrics {
		s.PerfMetrics = perf
		if perf {
			logf(Info, "PMD performance metrics collection enabled")
		} else {
			logf(Info, "PMD performance metrics collection disabled")
		}
	}
	if smc := otherBool(oc, "smc-enable", false); smc != s.SMC {
		s.SMC = smc
		if smc {
			logf(Info, "SMC cache is enabled")
		} else {
			logf(Info, "SMC cache is disabled")
		}
	}

	name, ok := oc["pmd-rxq-assign"]
	if !ok {
		name = "cycles"
	}
	mode, known := ParseMode(name)
	if !known {
		logf(Warn, "Unsupported rx queue to PMD assignment mode in pmd-rxq-assign. Defaulting to 'cycles'.")
	}
	if mode != s.Mode {
		s.Mode = mode
		logf(Info, "Rxq to PMD assignment mode changed to: '%s'.", mode)
		ch.Reconfigure = true
		ch.ALBChanged = true
	}

	iso := otherBool(oc, "pmd-rxq-isolate", true)
	if mode != Group && !iso {
		logf(Warn, "pmd-rxq-isolate can only be set false when using pmd-rxq-assign=group")
		iso = true
	}
	if first || iso != s.Isolate {
		s.Isolate = iso
		if iso {
			logf(Info, "pmd-rxq-affinity isolates PMD core")
		} else {
			logf(Info, "pmd-rxq-affinity does not isolate PMD core")
		}
		ch.Reconfigure = true
	}

	logALB := false
	interval := otherUint(oc, "pmd-auto-lb-rebal-interval", DefaultALBInterval)
	if interval > MaxALBInterval {
		interval = DefaultALBInterval
	}
	if interval == 0 {
		interval = 1
	}
	if first || interval != s.ALBInterval {
		s.ALBInterval = interval
		logf(Info, "PMD auto load balance interval set to %d mins\n", interval)
		logALB = true
	}
	improve := otherUint(oc, "pmd-auto-lb-improvement-threshold", DefaultALBImprovement)
	if improve > 100 {
		improve = DefaultALBImprovement
	}
	if first && improve != 0 || uint32(improve) != s.ALBImprove {
		s.ALBImprove = uint32(improve)
		logf(Info, "PMD auto load balance improvement threshold set to %d%%", improve)
		logALB = true
	}
	load := otherUint(oc, "pmd-auto-lb-load-threshold", DefaultALBLoad)
	if load > 100 {
		load = DefaultALBLoad
	}
	if first && load != 0 || uint32(load) != s.ALBLoad {
		s.ALBLoad = uint32(load)
		logf(Info, "PMD auto load balance load threshold set to %d%%", load)
		logALB = true
	}
	alb := otherBool(oc, "pmd-auto-lb", false)
	if alb != s.ALB || logALB {
		s.ALB = alb
		if alb {
			logf(Info, "PMD auto load balance is enabled, interval %d mins, pmd load threshold %d%%, improvement threshold %d%%.",
				s.ALBInterval, s.ALBLoad, s.ALBImprove)
		} else {
			logf(Info, "PMD auto load balance is disabled.")
		}
		ch.ALBChanged = true
	}

	sleep := otherUint(oc, "pmd-maxsleep", 0)
	if sleep > MaxSleepMicros {
		sleep = MaxSleepMicros
	}
	if first || sleep != s.MaxSleep {
		s.MaxSleep = sleep
		logf(Info, "PMD max sleep request is %d usecs.", sleep)
		state := "disabled"
		if sleep > 0 {
			state = "enabled"
		}
		logf(Info, "PMD load based sleeps are %s.", state)
	}
	return ch
}
