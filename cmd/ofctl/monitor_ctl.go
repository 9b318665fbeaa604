package ofctl

// The control socket of monitor and snoop ($OVS_RUNDIR/gvs-ofctl.PID.ctl),
// as ovs-ofctl's unixctl server: ovs-appctl -t PATH ofctl/barrier,
// ofctl/send, ofctl/block, ofctl/unblock, exit.

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/gvs-project/gvs/internal/syserr"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofprint"
)

// monitorState is what the monitor loop shares with its control
// connections; mu guards everything, including writes to out.
type monitorState struct {
	c       *vconn
	out     *bufio.Writer
	mu      sync.Mutex
	cond    *sync.Cond // signalled when blocked or exiting changes
	blocked bool
	exiting bool
	barrier chan string // the pending ofctl/barrier's reply, nil if none
}

func newMonitorState(c *vconn, out *bufio.Writer) *monitorState {
	s := &monitorState{c: c, out: out}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// ctlRequest and ctlReply are unixctl's JSON-RPC 1.0 messages.
type ctlRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params []string        `json:"params"`
}

type ctlReply struct {
	ID     json.RawMessage `json:"id"`
	Result *string         `json:"result"`
	Error  *string         `json:"error"`
}

// ctlCommands are the commands served, with the usage list-commands shows.
var ctlCommands = map[string]string{
	"exit": "", "list-commands": "", "version": "",
	"ofctl/barrier": "", "ofctl/block": "", "ofctl/unblock": "", "ofctl/send": "OFMSG...",
}

// serveCtl listens on the control socket; the returned function stops
// it and removes the socket. A socket that cannot be created leaves the
// monitor without control (ovs-ofctl would give up instead).
func (s *monitorState) serveCtl() func() {
	path := filepath.Join(rundir(), fmt.Sprintf("%s.%d.ctl", progName, os.Getpid()))
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return func() {}
	}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serveCtlConn(nc)
		}
	}()
	return func() { ln.Close(); os.Remove(path) }
}

func (s *monitorState) serveCtlConn(nc net.Conn) {
	defer nc.Close()
	dec := json.NewDecoder(nc)
	enc := json.NewEncoder(nc)
	for {
		var req ctlRequest
		if err := dec.Decode(&req); err != nil {
			return
		}
		result, failure := s.command(req.Method, req.Params)
		rep := ctlReply{ID: req.ID}
		if failure != "" {
			rep.Error = &failure
		} else {
			rep.Result = &result
		}
		if err := enc.Encode(&rep); err != nil {
			return
		}
	}
}

// command runs one control command: its result, or an error text.
func (s *monitorState) command(method string, params []string) (result, failure string) {
	if _, ok := ctlCommands[method]; !ok {
		return "", fmt.Sprintf("\"%s\" is not a valid command (use \"list-commands\" to see a list of valid commands)", method)
	}
	if method != "ofctl/send" && len(params) > 0 {
		return "", fmt.Sprintf("\"%s\" command takes at most 0 arguments", method)
	}
	switch method {
	case "list-commands":
		names := make([]string, 0, len(ctlCommands))
		for n := range ctlCommands {
			names = append(names, n)
		}
		sort.Strings(names)
		var sb strings.Builder
		sb.WriteString("The available commands are:\n")
		for _, n := range names {
			fmt.Fprintf(&sb, "  %-23s %s\n", n, ctlCommands[n])
		}
		return sb.String(), ""
	case "version":
		v, _, _ := strings.Cut(versionText(), "\n")
		return v + "\n", ""
	case "exit":
		s.mu.Lock()
		s.exiting = true
		s.cond.Broadcast()
		s.mu.Unlock()
		s.c.nc.Close() // ends a read in progress
		return "", ""
	case "ofctl/block", "ofctl/unblock":
		s.mu.Lock()
		defer s.mu.Unlock()
		want := method == "ofctl/block"
		if s.blocked == want {
			if want {
				return "already blocking", ""
			}
			return "already unblocked", ""
		}
		s.blocked = want
		s.cond.Broadcast()
		return "", ""
	case "ofctl/barrier":
		return s.sendBarrier()
	}
	return s.sendHex(params)
}

// sendBarrier sends a barrier request and waits until the monitor loop
// sees a barrier reply.
func (s *monitorState) sendBarrier() (string, string) {
	s.mu.Lock()
	if s.barrier != nil {
		s.mu.Unlock()
		return "", "already waiting for barrier reply"
	}
	done := make(chan string, 1)
	s.barrier = done
	xid := s.c.e.nextXID()
	s.mu.Unlock()
	b, err := ofp.Encode(nil, s.c.version, xid, &ofp.BarrierRequest{})
	if err == nil {
		err = s.c.sendRaw(b)
	}
	if err != nil {
		s.mu.Lock()
		s.barrier = nil
		s.mu.Unlock()
		return "", syserr.ClientText(err)
	}
	return <-done, ""
}

// barrierReplied answers the pending ofctl/barrier, if any.
func (s *monitorState) barrierReplied() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.barrier != nil {
		s.barrier <- ""
		s.barrier = nil
	}
}

// sendHex sends each argument, an OpenFlow message in hex, printing it
// first ("send: ", at the base verbosity) as ovs-ofctl's ofctl/send.
func (s *monitorState) sendHex(params []string) (string, string) {
	var reply strings.Builder
	ok := true
	for _, p := range params {
		b, err := hex.DecodeString(strings.Join(strings.Fields(p), ""))
		if err != nil {
			fmt.Fprintf(&reply, "%s: invalid hex\n", p)
			ok = false
			continue
		}
		s.mu.Lock()
		s.out.WriteString("send: ")
		ofprint.Any(s.out, b, s.c.e.verbosity)
		s.out.Flush()
		s.mu.Unlock()
		if err := s.c.sendRaw(b); err != nil {
			fmt.Fprintf(&reply, "%s\n", syserr.ClientText(err))
			ok = false
			continue
		}
		reply.WriteString("sent\n")
	}
	if !ok {
		return "", reply.String()
	}
	return reply.String(), ""
}
