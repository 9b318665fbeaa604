package vswitchd

import (
	"fmt"
	"os"
	"os/user"
	"strconv"

	"github.com/gvs-project/gvs/internal/unixsock"
)

// socketPerm resolves --socket-group into the permissions of the
// daemon's unix sockets. Without it they are as Open vSwitch makes them:
// 0770 less the umask (0750 under the usual 022, 0700 under 077) with
// the daemon's primary group. With it (a name or a number) they are 0770
// exactly in that group, so that its members can connect.
func socketPerm(group string) (unixsock.Perm, error) {
	p := unixsock.Perm{GID: os.Getgid(), SetGID: true}
	if group == "" {
		return p, nil
	}
	p.Mode = unixsock.DefaultMode
	if n, err := strconv.Atoi(group); err == nil && n >= 0 {
		p.GID = n // a number need not be in the group database
		return p, nil
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return p, fmt.Errorf("--socket-group: %w", err)
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil {
		return p, fmt.Errorf("--socket-group %s: group id %q: %w", group, g.Gid, err)
	}
	p.GID = gid
	return p, nil
}
