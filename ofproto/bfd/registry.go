package bfd

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/gvs-project/gvs/internal/logrl"
)

// Registry holds a switch's sessions by interface name: it hands out
// unique discriminators and UDP source ports (RFC 5881 4: 49152-65535,
// one per session) and serves bfd/show and bfd/set-forwarding.
type Registry struct {
	mu       sync.Mutex
	sessions map[string]*Session
	nextUDP  uint32
	// Rand32 returns a random discriminator candidate (math/rand when
	// nil).
	Rand32 func() uint32
	// limit is the log rate limit the sessions share.
	limit *logrl.Limit
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{sessions: map[string]*Session{}, limit: newLimit()} }

// Open configures the session of interface name: it creates one when cfg
// enables BFD and there is none, reconfigures the existing one, or
// removes it (returning nil) when cfg does not enable BFD.
func (r *Registry) Open(cur *Session, name string, cfg map[string]string, env Env) *Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !Enabled(cfg) {
		if cur != nil && r.sessions[cur.name] == cur {
			delete(r.sessions, cur.name)
		}
		return nil
	}
	if cur != nil {
		cur.Configure(cfg)
		return cur
	}
	if env.Limit == nil {
		env.Limit = r.limit
	}
	udp := uint16(r.nextUDP%16384) + 49152
	r.nextUDP++
	s := New(name, r.discLocked(), udp, cfg, env)
	r.sessions[name] = s
	return s
}

// Close removes a session.
func (r *Registry) Close(s *Session) {
	if s == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sessions[s.name] == s {
		delete(r.sessions, s.name)
	}
}

func (r *Registry) discLocked() uint32 {
	for {
		var d uint32
		if r.Rand32 != nil {
			d = r.Rand32()
		} else {
			d = rand.Uint32()
		}
		if d == 0 {
			continue
		}
		used := false
		for _, s := range r.sessions {
			if s.disc == d {
				used = true
			}
		}
		if !used {
			return d
		}
	}
}

// Sessions returns the sessions in name order.
func (r *Registry) Sessions() []*Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Session, 0, len(r.sessions))
	for _, s := range r.sessions {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Session) int { return strings.Compare(a.name, b.name) })
	return out
}

// Lookup returns the session of an interface, or nil.
func (r *Registry) Lookup(name string) *Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessions[name]
}

// ShowCommand is bfd/show [interface]: one session's details, or every
// session's under a "---- NAME ----" header.
func (r *Registry) ShowCommand(args []string) (string, error) {
	if len(args) > 0 {
		s := r.Lookup(args[0])
		if s == nil {
			return "", errors.New("no such bfd object")
		}
		return s.Show(), nil
	}
	var b strings.Builder
	for _, s := range r.Sessions() {
		b.WriteString("---- " + s.name + " ----\n")
		b.WriteString(s.Show())
	}
	return b.String(), nil
}

// SetForwardingCommand is bfd/set-forwarding [interface] normal|false|true.
func (r *Registry) SetForwardingCommand(args []string) (string, error) {
	var v int
	switch last := args[len(args)-1]; {
	case strings.EqualFold(last, "true"):
		v = 1
	case strings.EqualFold(last, "false"):
		v = 0
	case strings.EqualFold(last, "normal"):
		v = -1
	default:
		return "", errors.New("unknown fault string")
	}
	if len(args) > 1 {
		s := r.Lookup(args[0])
		if s == nil {
			return "", errors.New("no such BFD object")
		}
		s.SetForwardingOverride(v)
		return "OK", nil
	}
	for _, s := range r.Sessions() {
		s.SetForwardingOverride(v)
	}
	return "OK", nil
}
