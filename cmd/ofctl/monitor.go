package ofctl

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gvs-project/gvs/internal/syserr"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofprint"
)

// monitorVerbosity is the verbosity ovs-ofctl's monitor and snoop print
// with (its default 0 plus 2): packets are dissected.
const monitorVerbosity = 2

// offInvalidTTL is OFPC_INVALID_TTL_TO_CONTROLLER in the switch config
// flags.
const offInvalidTTL = 4

// monitorCmd is ovs-ofctl's monitor: set miss_send_len (MISSLEN),
// invalid_ttl and the packet-in format as asked, then print every
// message the switch sends (to stderr, as ovs-ofctl) until the
// connection ends.
func monitorCmd(e *env, args []string) error {
	resume := false
	for _, a := range args[1:] {
		switch {
		case a != "" && a[0] >= '0' && a[0] <= '9', a == "resume":
			resume = resume || a == "resume"
		case a == "invalid_ttl":
			// Only OpenFlow 1.0 (an Open vSwitch extension), 1.1 and 1.2
			// have the flag; gvs-ofctl speaks 1.0 of those.
			var vs []uint8
			for _, v := range e.allowedVersions() {
				if v == mf.OF10 {
					vs = append(vs, v)
				}
			}
			if len(vs) == 0 {
				return errors.New("invalid_ttl requires one of the OpenFlow versions OpenFlow10, OpenFlow11, OpenFlow12 but none is enabled (use -O)")
			}
			e.versions = vs
		case strings.HasPrefix(a, "watch:"):
			// Parsed once connected, as ovs-ofctl: names need the switch.
		default:
			return fmt.Errorf("%s: unsupported \"monitor\" argument", a)
		}
	}
	c, err := e.open(args[0])
	if err != nil {
		return err
	}
	defer c.close()
	var watches uint32
	for _, a := range args[1:] {
		switch {
		case strings.HasPrefix(a, "watch:"):
			// ovs-ofctl looks the switch's table and port names up (on
			// connections of their own) before it parses the first SPEC.
			if watches == 0 {
				if err := e.nameLookups(args[0]); err != nil {
					return err
				}
			}
			fm, err := e.parseWatch(a[len("watch:"):], watches, c.version)
			if err != nil {
				return err
			}
			watches++
			if err := c.watch(fm); err != nil {
				return err
			}
		case a == "invalid_ttl":
			sc, err := c.switchConfig()
			if err != nil {
				return err
			}
			if sc.Flags&offInvalidTTL != 0 {
				break
			}
			sc.Flags |= offInvalidTTL
			if err := c.transactNoReply(&ofp.SetConfig{SwitchConfig: sc}); err != nil {
				return c.e.reportReply(err)
			}
			// OpenFlow reports bad flags poorly: read the flag back.
			if sc, err = c.switchConfig(); err != nil {
				return err
			}
			if sc.Flags&offInvalidTTL == 0 {
				return errors.New("setting invalid_ttl_to_controller failed (this switch probably doesn't support this OpenFlow 1.1 feature)")
			}
		case a == "resume":
			if err := c.updateConfig(func(sc *ofp.SwitchConfig) { sc.MissSendLen = 0xffff }); err != nil {
				return err
			}
		default:
			n, _ := strconv.Atoi(leadingDigits(a))
			if err := c.updateConfig(func(sc *ofp.SwitchConfig) { sc.MissSendLen = uint16(n) }); err != nil {
				return err
			}
		}
	}
	// A format given with -P must be accepted. Otherwise ovs-ofctl
	// prefers NXT_PACKET_IN2; a switch that refuses it gets NXT_PACKET_IN
	// on OpenFlow 1.0 (later versions keep the standard packet-in).
	if e.packetInFormat >= 0 {
		if err := c.transactNoReply(&ofp.SetPacketInFormat{Format: uint32(e.packetInFormat)}); err != nil {
			return e.reportReply(err)
		}
	} else if err := c.transactNoReply(&ofp.SetPacketInFormat{Format: ofp.PacketIn2}); err != nil {
		var re *replyError
		if !errors.As(err, &re) {
			return fmt.Errorf("talking to %s (%s)", c.name, err)
		}
		if c.version == mf.OF10 {
			if err := c.transactNoReply(&ofp.SetPacketInFormat{Format: ofp.PacketInNXT}); err != nil {
				if errors.As(err, &re) {
					return e.reportReply(err)
				}
				return fmt.Errorf("talking to %s (%s)", c.name, err)
			}
		}
	}
	return c.monitor(true, resume)
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// switchConfig fetches the switch configuration (OFPT_GET_CONFIG).
func (c *vconn) switchConfig() (ofp.SwitchConfig, error) {
	msgs, _, err := c.transact(&ofp.GetConfigRequest{})
	if err != nil {
		return ofp.SwitchConfig{}, c.e.reportReply(err)
	}
	rep, ok := msgs[0].Body.(*ofp.GetConfigReply)
	if !ok {
		return ofp.SwitchConfig{}, fmt.Errorf("%s: bad reply to get-config request", c.name)
	}
	return rep.SwitchConfig, nil
}

// updateConfig fetches the switch configuration, changes it with f and
// sets it, as ovs-ofctl's fetch_switch_config/set_switch_config.
func (c *vconn) updateConfig(f func(*ofp.SwitchConfig)) error {
	sc, err := c.switchConfig()
	if err != nil {
		return err
	}
	f(&sc)
	if err := c.transactNoReply(&ofp.SetConfig{SwitchConfig: sc}); err != nil {
		return c.e.reportReply(err)
	}
	return nil
}

// snoopCmd is ovs-ofctl's snoop: connect to the bridge's snoop socket
// ($OVS_RUNDIR/BRIDGE.snoop) and print every OpenFlow message the bridge
// exchanges with its controller, in both directions.
func snoopCmd(e *env, args []string) error {
	c, err := e.openAt(args[0], ".snoop")
	if err != nil {
		return err
	}
	defer c.close()
	return c.monitor(false, false)
}

// monitor prints every message received, as ovs-ofctl's monitor_vconn:
// to stderr at verbosity 2, echo requests answered when replyEcho, paused
// packet-ins sent back with NXT_RESUME when resume. It returns when the
// connection ends, with ovs-ofctl's "vconn_recv (End of file)".
func (c *vconn) monitor(replyEcho, resume bool) error {
	// --timeout bounds the whole run, as ovs-ofctl's alarm.
	if c.e.timeout > 0 {
		c.nc.SetDeadline(time.Now().Add(c.e.timeout))
	}
	w := bufio.NewWriter(c.e.stderr)
	defer w.Flush()
	st := newMonitorState(c, w)
	defer st.serveCtl()()
	var hdr [8]byte
	for {
		// ofctl/block stops reading (the switch then sees a full
		// socket); exit ends the monitor.
		st.mu.Lock()
		for st.blocked && !st.exiting {
			st.cond.Wait()
		}
		exiting := st.exiting
		st.mu.Unlock()
		if exiting {
			return nil
		}
		if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
			return st.recvError(err)
		}
		n := int(binary.BigEndian.Uint16(hdr[2:]))
		if n < len(hdr) {
			return errors.New("vconn_recv (Protocol error)")
		}
		b := make([]byte, n)
		copy(b, hdr[:])
		if _, err := io.ReadFull(c.r, b[len(hdr):]); err != nil {
			return st.recvError(err)
		}
		st.mu.Lock()
		if c.e.timestamp {
			// ovs-ofctl's "%Y-%m-%d %H:%M:%S.###: " in UTC.
			w.WriteString(time.Now().UTC().Format("2006-01-02 15:04:05.000: "))
		}
		ofprint.Any(w, b, monitorVerbosity+c.e.verbosity)
		err := w.Flush()
		st.mu.Unlock()
		if err != nil {
			return err
		}
		m, err := ofp.Decode(b)
		if err != nil {
			continue
		}
		switch body := m.Body.(type) {
		case *ofp.BarrierReply:
			st.barrierReplied()
		case *ofp.EchoRequest:
			if replyEcho {
				if err := c.send(m.Version, m.XID, &ofp.EchoReply{Data: body.Data}); err != nil {
					return fmt.Errorf("failed to send echo reply (%s)", syserr.ClientText(err))
				}
			}
		case *ofp.PacketIn:
			if resume && len(body.Continuation) != 0 {
				// As ovs-ofctl: the packet-in goes back without its
				// userdata, transaction id 0, and is printed first.
				r := &ofp.Resume{PacketIn: *body}
				r.Userdata = nil
				b, err := ofp.Encode(nil, m.Version, 0, r)
				if err != nil {
					return fmt.Errorf("encoding resume: %w", err)
				}
				st.mu.Lock()
				w.WriteString("send: ")
				ofprint.Any(w, b, monitorVerbosity+c.e.verbosity)
				err = w.Flush()
				st.mu.Unlock()
				if err != nil {
					return err
				}
				if err := c.sendRaw(b); err != nil {
					return fmt.Errorf("failed to send packet to switch (%s)", syserr.ClientText(err))
				}
			}
		}
	}
}

// recvError is recvError, or nil once exit has closed the connection.
func (s *monitorState) recvError(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exiting {
		return nil
	}
	return recvError(err)
}

func recvError(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("vconn_recv (End of file)")
	}
	return fmt.Errorf("vconn_recv (%s)", syserr.ClientText(err))
}
