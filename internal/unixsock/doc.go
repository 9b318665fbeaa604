// Package unixsock creates the daemon's listening unix-domain sockets
// (the unixctl control socket, db.sock, <bridge>.mgmt, <bridge>.snoop,
// punix: remotes) with restrictive permissions.
//
// Open vSwitch gives its sockets mode 0770 less the process umask so
// that the daemon's user and group may connect (connecting needs write
// permission on the socket file). gvs makes them exactly Mode (0770 by
// default) and chowns them to a chosen group (--socket-group).
//
// No window is more open than the final permissions: the socket is bound
// with mode 0700 (set on the socket's inode with fchmod before bind, which
// Linux copies to the file it creates, so the process-wide umask is never
// changed), then its group is set, then its mode widened.
//
// It imports only the standard library and golang.org/x/sys.
package unixsock
