package bfd

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// RateLimit is the "bfd" module's log rate limit, Open vSwitch's
// VLOG_RATE_LIMIT_INIT(20, 20) shared by every session: 20 messages a
// minute with bursts of 20; the first message let through after drops is
// preceded by Open vSwitch's "Dropped N log messages ..." line. Messages
// at a level the logger does not print take no token.
type RateLimit struct {
	mu                 sync.Mutex
	tokens             int64 // one message is msgTokens
	lastFill           int64 // ms; 0 before the first use
	filled             bool
	nDropped           int
	firstDrop, lastDrp int64 // seconds
}

const (
	msgTokens   = 60 * 1000 // per message: the rate is per minute
	rlRate      = 20        // tokens a millisecond: 20 messages a minute
	rlBurst     = 20 * msgTokens
	dropWarning = "Dropped %d log messages in last %d seconds (most recently, %d seconds ago) due to excessive rate"
)

// allow reports whether a rate-limited message at level may be logged
// now (vlog_should_drop's negation).
func (r *RateLimit) allow(log *slog.Logger, level slog.Level, nowMs int64) bool {
	ctx := context.Background()
	if !log.Enabled(ctx, level) {
		return false
	}
	r.mu.Lock()
	if !r.filled || r.tokens < msgTokens {
		if !r.filled {
			r.tokens, r.filled = rlBurst, true
		} else if el := nowMs - r.lastFill; el > 0 {
			r.tokens = min(r.tokens+el*rlRate, rlBurst)
		}
		r.lastFill = nowMs
	}
	if r.tokens < msgTokens {
		now := nowMs / 1000
		if r.nDropped == 0 {
			r.firstDrop = now
		}
		r.lastDrp = now
		r.nDropped++
		r.mu.Unlock()
		return false
	}
	r.tokens -= msgTokens
	n, first, last := r.nDropped, r.firstDrop, r.lastDrp
	r.nDropped = 0
	r.mu.Unlock()
	if n > 0 {
		now := nowMs / 1000
		log.Log(ctx, level, fmt.Sprintf(dropWarning, n, now-first, now-last))
	}
	return true
}
