package vswitchd

import (
	"fmt"
	"os"
	"os/user"
	"strconv"

	"github.com/gvs-project/gvs/internal/unixsock"
)

// socketPerm resolves --socket-group into the permissions of the
// daemon's unix sockets: mode 0770, owned by the daemon's user and by
// group (a name or a number), or by the daemon's primary group when group
// is "". Open vSwitch makes its sockets 0770 less the umask (0750 under
// the usual 022) with the daemon's group; gvs applies 0770 exactly so
// that a --socket-group's members can connect.
func socketPerm(group string) (unixsock.Perm, error) {
	p := unixsock.Perm{Mode: unixsock.DefaultMode, GID: os.Getgid(), SetGID: true}
	if group == "" {
		return p, nil
	}
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
