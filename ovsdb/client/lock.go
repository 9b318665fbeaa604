package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/gvs-project/gvs/ovsdb/jsonrpc"
)

// Lock is this client's request for an OVSDB lock. Its state follows the
// server: the reply to lock or steal, then locked and stolen
// notifications. After a reconnect the lock is requested again (with
// "lock", never "steal").
type Lock struct {
	c    *Client
	name string

	mu sync.Mutex
	// guarded by mu
	held bool
	// guarded by mu
	changed chan struct{} // closed at the next change of held
}

// Lock asks for lock name, queueing behind its current owner. The
// returned Lock reports whether it is held now and when that changes.
func (c *Client) Lock(ctx context.Context, name string) (*Lock, error) {
	return c.requestLock(ctx, name, "lock")
}

// Steal takes lock name from its current owner, which receives "stolen".
func (c *Client) Steal(ctx context.Context, name string) (*Lock, error) {
	return c.requestLock(ctx, name, "steal")
}

func (c *Client) requestLock(ctx context.Context, name, method string) (*Lock, error) {
	l := &Lock{c: c, name: name, changed: make(chan struct{})}
	c.mu.Lock()
	if c.locks[name] != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("ovsdb client: %s %q: already requested (unlock first)", method, name)
	}
	c.locks[name] = l
	c.mu.Unlock()
	if err := l.request(ctx, nil, method); err != nil {
		c.mu.Lock()
		delete(c.locks, name)
		c.mu.Unlock()
		return nil, err
	}
	return l, nil
}

// request sends lock or steal on session s (current when nil); the reply
// sets the state on the reader goroutine, before later notifications.
func (l *Lock) request(ctx context.Context, s *session, method string) error {
	var bad error
	hook := func(m *jsonrpc.Message) {
		if m.Kind != jsonrpc.KindReply {
			return
		}
		var r struct {
			Locked *bool `json:"locked"`
		}
		if err := json.Unmarshal(m.Result, &r); err != nil || r.Locked == nil {
			bad = fmt.Errorf("ovsdb client: %s %q: bad reply %s", method, l.name, m.Result)
			return
		}
		l.setHeld(*r.Locked)
	}
	_, err := l.c.call(ctx, s, method, []any{l.name}, hook)
	if err == nil {
		err = bad
	}
	return err
}

// Name returns the lock's name.
func (l *Lock) Name() string { return l.name }

// Held reports whether this client owns the lock now.
func (l *Lock) Held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// Changed returns a channel closed at the next change of Held.
func (l *Lock) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// Wait blocks until the lock is held.
func (l *Lock) Wait(ctx context.Context) error {
	for {
		ch := l.Changed()
		if l.Held() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (l *Lock) setHeld(h bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == h {
		return
	}
	l.held = h
	close(l.changed)
	l.changed = make(chan struct{})
}

// Unlock releases the lock (or withdraws the request). It is not
// requested again after a reconnect.
func (l *Lock) Unlock(ctx context.Context) error {
	c := l.c
	c.mu.Lock()
	if c.locks[l.name] == l {
		delete(c.locks, l.name)
	}
	c.mu.Unlock()
	l.setHeld(false)
	_, err := c.call(ctx, nil, "unlock", []any{l.name}, nil)
	if errors.Is(err, ErrNotConnected) || errors.Is(err, ErrDisconnected) {
		return nil
	}
	return err
}
