package cfm

import (
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/gvs-project/gvs/internal/logrl"
)

// Registry holds a switch's sessions by interface name and serves
// cfm/show and cfm/set-fault.
type Registry struct {
	mu       sync.Mutex
	sessions map[string]*Session
	// limit is the log rate limit the sessions share.
	limit *logrl.Limit
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{sessions: map[string]*Session{}, limit: newLimit()} }

// Open configures the session of interface name with st: it creates one
// when there is none and reconfigures cur otherwise. Invalid settings
// end the session (nil is returned), as Open vSwitch's set_cfm.
func (r *Registry) Open(cur *Session, name string, st Settings, env Env) *Session {
	s := cur
	if s == nil {
		if env.Limit == nil {
			env.Limit = r.limit
		}
		s = New(name, env)
	}
	if !s.Configure(st) {
		r.Close(cur)
		return nil
	}
	if cur == nil {
		r.mu.Lock()
		r.sessions[name] = s
		r.mu.Unlock()
	}
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

// Lookup returns the session of an interface, or nil.
func (r *Registry) Lookup(name string) *Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessions[name]
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

// ShowCommand is cfm/show [interface].
func (r *Registry) ShowCommand(args []string) (string, error) {
	if len(args) > 0 {
		s := r.Lookup(args[0])
		if s == nil {
			return "", errors.New("no such CFM object")
		}
		return s.Show(), nil
	}
	var b strings.Builder
	for _, s := range r.Sessions() {
		b.WriteString(s.Show())
	}
	return b.String(), nil
}

// SetFaultCommand is cfm/set-fault [interface] normal|false|true.
func (r *Registry) SetFaultCommand(args []string) (string, error) {
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
			return "", errors.New("no such CFM object")
		}
		s.SetFaultOverride(v)
		return "OK", nil
	}
	for _, s := range r.Sessions() {
		s.SetFaultOverride(v)
	}
	return "OK", nil
}
