// Package handover owns the protocol by which a running gvs-vswitchd
// hands its ports, listening sockets and state to its successor on the
// same host, so that an upgrade or a planned restart loses no packet and
// no connection.
//
// The successor connects to the running daemon's handover socket (a
// unix seqpacket socket, mode 0600, internal/fdpass) and the two speak in
// turn:
//
//  1. hello (successor): protocol version, its build's version string.
//  2. The running daemon checks the peer before anything else: root or
//     its own user, and an executable built from the same main package
//     (Go build information of /proc/PID/exe): another program is
//     refused. A different protocol version is refused; the successor
//     then exits saying why (gvs-vswitchd), and the ordinary restart
//     remains.
//  3. bundle (running daemon): it freezes (Source.Freeze: forwarding
//     paused at a batch boundary, nothing that is handed over changes)
//     and sends the ports' descriptors and positions (netdev.Handoff),
//     the listening sockets, and the state (a statefile: OpenFlow tables,
//     MAC tables, conntrack), descriptors at most fdpass.MaxFds a message.
//  4. verdict (successor): "done" once it has adopted everything and
//     forwards; "failed" with the reason otherwise.
//  5. On "done" the running daemon exits at once without closing ports
//     (Give returns nil); on "failed", a closed connection or a timeout it
//     thaws (Source.Thaw) and goes on forwarding, and Give says why.
//
// Frames that arrive between the freeze and the successor's first
// receive wait in the ports' kernel rings and queues; nothing is dropped
// unless they overflow.
//
// It imports internal/fdpass and datapath/netdev (the Handoff type) and
// nothing of OpenFlow, OVSDB or the daemon: what the state holds and how
// it is applied is the caller's.
package handover
