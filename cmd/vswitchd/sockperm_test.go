package vswitchd

import (
	"os"
	"os/user"
	"strconv"
	"testing"

	"github.com/gvs-project/gvs/internal/unixsock"
)

func TestSocketGroupFlagAndEnvironmentReachTheConfig(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{nil, "", ""},
		{[]string{"--socket-group=adm"}, "", "adm"},
		{nil, "daemon", "daemon"},
		{[]string{"--socket-group", "adm"}, "daemon", "adm"},
	} {
		t.Setenv("GVS_SOCKET_GROUP", tc.env)
		var got *Config
		cmd := NewCommand("gvs-vswitchd", func(c *Config) error { got = c; return nil })
		cmd.SetArgs(tc.args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if got.SocketGroup != tc.want {
			t.Errorf("args %q GVS_SOCKET_GROUP=%q: SocketGroup = %q, want %q", tc.args, tc.env, got.SocketGroup, tc.want)
		}
	}
}

func TestSocketPermResolvesGroups(t *testing.T) {
	p, err := socketPerm("")
	if err != nil || p != (unixsock.Perm{GID: os.Getgid(), SetGID: true}) {
		t.Fatalf(`socketPerm("") = %+v, %v; want the umask's mode (0) with the primary group`, p, err)
	}
	if p, err := socketPerm("4242"); err != nil || p.GID != 4242 || p.Mode != 0o770 {
		t.Fatalf(`socketPerm("4242") = %+v, %v; want gid 4242`, p, err)
	}
	if _, err := socketPerm("no-such-group-gvs"); err == nil {
		t.Fatal("an unknown group name was accepted")
	}
	if g, err := user.LookupGroup("daemon"); err == nil {
		want, _ := strconv.Atoi(g.Gid)
		if p, err := socketPerm("daemon"); err != nil || p.GID != want {
			t.Fatalf(`socketPerm("daemon") = %+v, %v; want gid %d`, p, err, want)
		}
	}
}
