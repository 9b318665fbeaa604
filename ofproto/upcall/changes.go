package upcall

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Changes is the change sequence the handlers of one datapath share. The
// handler of the bridge a packet entered keeps its megaflow, but the
// translation may have gone on in other bridges (a patch port, NORMAL's
// recirculation into a peer): a change in any bridge of the datapath
// makes every handler translate its megaflows again, as Open vSwitch
// revalidates a whole datapath when any of its bridges changes.
type Changes struct {
	seq      atomic.Uint64
	mu       sync.Mutex
	handlers []*Handler
}

// NewChanges returns a change sequence for the handlers of one datapath.
func NewChanges() *Changes { return &Changes{} }

func (c *Changes) join(h *Handler) {
	c.mu.Lock()
	c.handlers = append(c.handlers, h)
	c.mu.Unlock()
}

func (c *Changes) leave(h *Handler) {
	c.mu.Lock()
	c.handlers = slices.DeleteFunc(c.handlers, func(x *Handler) bool { return x == h })
	c.mu.Unlock()
}

func (c *Changes) members() []*Handler {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.handlers)
}

// bump counts a change and wakes every handler's revalidator.
func (c *Changes) bump() {
	c.seq.Add(1)
	for _, h := range c.members() {
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
}

// waitRevalidated blocks until every handler's revalidation has covered
// the changes made so far, or until the deadline.
func (c *Changes) waitRevalidated(deadline time.Time) {
	want := c.seq.Load()
	for _, h := range c.members() {
		h.waitRound(want, deadline)
	}
}
