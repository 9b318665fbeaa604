package ofconn

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"
)

// ParseDial turns "unix:PATH" or "tcp:IP:PORT" into a network and
// address for net.Dial.
func ParseDial(target string) (network, addr string, err error) {
	kind, rest, ok := strings.Cut(target, ":")
	switch {
	case ok && kind == "unix" && rest != "":
		return "unix", rest, nil
	case ok && kind == "tcp" && rest != "":
		i := strings.LastIndex(rest, ":")
		if i < 0 {
			return "tcp", net.JoinHostPort(strings.Trim(rest, "[]"), "6653"), nil
		}
		return "tcp", net.JoinHostPort(strings.Trim(rest[:i], "[]"), rest[i+1:]), nil
	}
	return "", "", fmt.Errorf("ofconn: unsupported target %q (want unix:PATH or tcp:IP:PORT)", target)
}

// Dial connects to target, completes the hello exchange and serves the
// connection's incoming messages with h in the background. The returned
// Conn closes when the peer goes away; use Client for reconnection.
func Dial(ctx context.Context, target string, cfg Config, h Handler) (*Conn, error) {
	network, addr, err := ParseDial(target)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("ofconn: connecting to %s: %w", target, err)
	}
	c, r, err := handshake(ctx, nc, &cfg, h, target)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("ofconn: %s: %w", target, err)
	}
	go c.run(r)
	return c, nil
}

// Client keeps one connection to Target up, reconnecting with
// exponential backoff (1s doubling to MaxBackoff, 8s by default, as Open
// vSwitch's rconn).
type Client struct {
	Target  string
	Handler Handler
	Config
	MinBackoff, MaxBackoff time.Duration
	// OnConnect is called with each new connection once its hello
	// exchange is done (its messages may already be reaching Handler).
	OnConnect func(c *Conn)
	// OnError receives connect and connection failures; nil discards.
	OnError func(err error)
	// TLS is the SSL configuration for an "ssl:" Target (tls.go).
	TLS *TLSSettings
}

// Run connects and reconnects until ctx is done; it returns ctx.Err().
func (cl *Client) Run(ctx context.Context) error {
	minB, maxB := cl.MinBackoff, cl.MaxBackoff
	if minB <= 0 {
		minB = time.Second
	}
	if maxB < minB {
		maxB = 8 * time.Second
		if maxB < minB {
			maxB = minB
		}
	}
	backoff := minB
	for {
		c, err := DialTarget(ctx, cl.Target, cl.TLS, cl.Config, cl.Handler)
		if err == nil {
			backoff = minB
			if cl.OnConnect != nil {
				cl.OnConnect(c)
			}
			select {
			case <-c.Done():
				err = c.Err()
			case <-ctx.Done():
				c.Close()
				return ctx.Err()
			}
		}
		if err != nil && cl.OnError != nil && ctx.Err() == nil {
			cl.OnError(err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if backoff *= 2; backoff > maxB {
			backoff = maxB
		}
	}
}
