// Package logrl is Open vSwitch's log rate limit (VLOG_RATE_LIMIT_INIT):
// a token bucket per message site, N messages a minute with bursts of M,
// and the "Dropped N log messages" line before the first message let
// through after drops. Time comes from the caller (milliseconds), so
// tests and time/warp drive it. It imports only the standard library.
package logrl

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// Limit is one VLOG_RATE_LIMIT_INIT(rate, burst): rate messages a minute
// with bursts of burst; the first message let through after drops is
// preceded by Open vSwitch's "Dropped N log messages ..." line. Messages
// at a level the logger does not print take no token. Use New; a Limit
// is safe for concurrent use.
type Limit struct {
	mu                 sync.Mutex
	rate, burst        int64 // tokens a millisecond; bucket size
	tokens             int64 // one message is msgTokens
	lastFill           int64 // ms; 0 before the first use
	filled             bool
	nDropped           int
	firstDrop, lastDrp int64 // seconds
}

// New returns the limit of rate messages a minute with bursts of burst.
func New(rate, burst int) *Limit {
	return &Limit{rate: int64(rate), burst: int64(burst) * msgTokens}
}

const (
	msgTokens   = 60 * 1000 // per message: the rate is per minute
	dropWarning = "Dropped %d log messages in last %d seconds (most recently, %d seconds ago) due to excessive rate"
)

// Allow reports whether a rate-limited message at level may be logged
// now (vlog_should_drop's negation).
func (r *Limit) Allow(log *slog.Logger, level slog.Level, nowMs int64) bool {
	ctx := context.Background()
	if !log.Enabled(ctx, level) {
		return false
	}
	r.mu.Lock()
	if !r.filled || r.tokens < msgTokens {
		if !r.filled {
			r.tokens, r.filled = r.burst, true
		} else if el := nowMs - r.lastFill; el > 0 {
			r.tokens = min(r.tokens+el*r.rate, r.burst)
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
