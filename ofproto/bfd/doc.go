// Package bfd is Bidirectional Forwarding Detection (RFC 5880, with the
// RFC 5881 encapsulation) as Open vSwitch 3.1's lib/bfd.c runs it on an
// interface: asynchronous mode without demand or echo, one session per
// interface configured from Interface.bfd.
//
// It owns:
//   - the control message codec (Msg, Decode, Encode) and the frame the
//     switch sends (Ethernet, IPv4 with TTL 255 and TOS 0xc0, UDP to port
//     3784 from a per-session source port in 49152-65535), with Open
//     vSwitch's defaults for bfd_local_src_mac, bfd_local_dst_mac
//     (00:23:20:00:00:01), bfd_src_ip (169.254.1.1) and bfd_dst_ip
//     (169.254.1.0);
//   - the session (Session): option parsing exactly as Open vSwitch
//     (values that are not numbers take the default, min_rx and min_tx are
//     raised to 1 ms, mult outside 1..255 becomes 3, a decay_min_rx below
//     min_rx is refused with a warning), the state machine, poll sequences
//     when timers change, decay of min_rx on idle links, cpath_down,
//     forwarding_if_rx, check_tnl_key, the forwarding decision with its
//     manual override (bfd/set-forwarding) and flap counting;
//   - the texts: Interface.bfd_status (Status), bfd/show (Show) and the
//     "bfd" log module's lines, in Open vSwitch's words.
//
// Time comes from a Clock (milliseconds), so tests drive sessions without
// sleeping; randomness (transmit jitter, discriminators) from a Rand.
//
// The package does no I/O: the switch asks ShouldSend, sends what
// PutPacket builds through its datapath, hands received control packets'
// UDP payloads to Process (after ShouldProcess recognised the flow in
// translation, which also says which flow bits the decision read), and
// calls Run at WakeTime. It imports only the standard library: no
// datapath or OpenFlow package.
package bfd
