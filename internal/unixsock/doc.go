// Package unixsock creates the daemon's listening unix-domain sockets
// (the unixctl control socket, db.sock, <bridge>.mgmt, <bridge>.snoop,
// punix: remotes) with restrictive permissions.
//
// Open vSwitch gives its sockets mode 0770 less the process umask so
// that the daemon's user and group may connect (connecting needs write
// permission on the socket file): 0750 under umask 022, 0700 under 077.
// gvs does the same by default; a caller may ask for an exact Mode and a
// group (gvs-vswitchd's --socket-group, where 0770 is the point).
//
// A socket file is replaced only when no process listens on it, so a
// second daemon started by mistake cannot take over (or, exiting, delete)
// the first one's sockets.
//
// No window is more open than the final permissions: the socket is bound
// with mode 0700 (set on the socket's inode with fchmod before bind, which
// Linux copies to the file it creates, so the process-wide umask is never
// changed), then its group is set, then its mode widened.
//
// Handed (handover.go) records the daemon's listeners, unix ones by path
// and TCP ones (ListenTCP) by address, so that a handover can send their
// descriptors to a successor, whose Listen and ListenTCP take the handed
// socket for the same path or address instead of binding a new one; Hold
// stops this process accepting on them meanwhile.
//
// It imports only the standard library and golang.org/x/sys.
package unixsock
