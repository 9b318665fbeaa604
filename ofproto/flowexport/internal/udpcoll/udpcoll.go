// Package udpcoll owns the UDP sockets a flow exporter sends to, as Open
// vSwitch's ofproto/collectors.c: one connected socket per target and a
// send to all that counts failures. It imports only the standard library.
package udpcoll

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// Set is the set of UDP sockets an exporter sends to.
type Set struct {
	conns []*net.UDPConn
}

// Open opens a connected UDP socket to each target. A target
// without a port gets defaultPort; if defaultPort is 0 the port is
// mandatory. Targets that fail are skipped and reported in the error, the
// way Open vSwitch keeps the collectors it could open.
func Open(targets []string, defaultPort int) (*Set, error) {
	c := &Set{}
	var errs []error
	for _, t := range targets {
		addr, err := resolveTarget(t, defaultPort)
		if err == nil {
			var conn *net.UDPConn
			conn, err = net.DialUDP("udp", nil, addr)
			if err == nil {
				c.conns = append(c.conns, conn)
				continue
			}
		}
		errs = append(errs, fmt.Errorf("collector %q: %w", t, err))
	}
	return c, errors.Join(errs...)
}

func resolveTarget(t string, defaultPort int) (*net.UDPAddr, error) {
	host, port, err := net.SplitHostPort(t)
	if err != nil {
		if defaultPort == 0 {
			return nil, fmt.Errorf("port is mandatory: %w", err)
		}
		host, port = t, strconv.Itoa(defaultPort)
		if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
			host = host[1 : len(host)-1]
		}
	}
	return net.ResolveUDPAddr("udp", net.JoinHostPort(host, port))
}

// Send writes b to every collector and returns how many sends failed.
func (c *Set) Send(b []byte) (errs int) {
	if c == nil {
		return 0
	}
	for _, conn := range c.conns {
		if _, err := conn.Write(b); err != nil {
			errs++
		}
	}
	return errs
}

// Count is the number of open collectors.
func (c *Set) Count() int {
	if c == nil {
		return 0
	}
	return len(c.conns)
}

// Close closes every socket.
func (c *Set) Close() error {
	if c == nil {
		return nil
	}
	var errs []error
	for _, conn := range c.conns {
		if err := conn.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	c.conns = nil
	return errors.Join(errs...)
}
