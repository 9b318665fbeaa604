package connmgr

import (
	"sync"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofconn"
)

// Inactivity probes as Open vSwitch's bridge.c and rconn set them: the
// management socket's connections are probed after 60 s idle; a
// controller's after Controller.inactivity_probe milliseconds (absent: 5
// s; 0: never; under a second counts as one), never under 5 s; a
// connection closes after twice its interval without receiving anything.
const (
	mgmtProbe       = 60 * time.Second
	controllerProbe = 5 * time.Second
	minProbe        = 5 * time.Second
)

// probeFromColumn converts Controller.inactivity_probe (milliseconds; nil
// when the column is empty) as Open vSwitch does.
func probeFromColumn(ms *int64) time.Duration {
	var secs int64
	switch {
	case ms == nil:
		return controllerProbe
	case *ms == 0:
		return 0
	case *ms < 1000:
		secs = 1
	default:
		secs = *ms / 1000
	}
	return max(time.Duration(secs)*time.Second, minProbe)
}

// probeSet holds each controller target's inactivity probe.
type probeSet struct {
	mu     sync.Mutex
	probes map[string]*int64 // by target; missing: the default
}

func (p *probeSet) set(m map[string]*int64) {
	p.mu.Lock()
	p.probes = m
	p.mu.Unlock()
}

func (p *probeSet) get(target string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return probeFromColumn(p.probes[target])
}

// passiveProbe is the probe of a connection accepted on a passive
// controller target: that target's setting.
func (m *Manager[X]) passiveProbe(c *ofconn.Conn) time.Duration {
	l := c.Listener()
	m.mu.Lock()
	target := ""
	for t, pl := range m.passive {
		if pl == l {
			target = t
		}
	}
	m.mu.Unlock()
	if target == "" {
		return controllerProbe
	}
	return m.probes.get(target)
}
