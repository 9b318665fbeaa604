package unixctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gvs-project/gvs/internal/syserr"
	"github.com/gvs-project/gvs/ovsdb/jsonrpc"
)

// DefaultRunDir is Debian's Open vSwitch run directory.
const DefaultRunDir = "/var/run/openvswitch"

// RunDir returns $OVS_RUNDIR, or DefaultRunDir when it is unset.
func RunDir() string {
	if d := os.Getenv("OVS_RUNDIR"); d != "" {
		return d
	}
	return DefaultRunDir
}

// TargetError says why a target could not be reached; its text is
// ovs-appctl's ("cannot connect to \"P\" (No such file or directory)").
type TargetError struct {
	Op   string // "read pidfile" or "connect to"
	Path string
	Err  error
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("cannot %s %q (%s)", e.Op, e.Path, Strerror(e.Err))
}

func (e *TargetError) Unwrap() error { return e.Err }

// Strerror renders an error the way C's strerror does for errno values
// ("No such file or directory"), so messages match Open vSwitch's tools.
func Strerror(err error) string { return syserr.ClientText(err) }

// ResolveTarget maps an ovs-appctl target to a socket path: an absolute
// path is used as is; a name is looked up through <rundir>/NAME.pid as
// <rundir>/NAME.<pid>.ctl.
func ResolveTarget(target, rundir string) (string, error) {
	if filepath.IsAbs(target) {
		return target, nil
	}
	pidfile := filepath.Join(rundir, target+".pid")
	pid, err := ReadPidfile(pidfile)
	if err != nil {
		return "", &TargetError{Op: "read pidfile", Path: pidfile, Err: err}
	}
	return SocketPath(rundir, target, pid), nil
}

// Client is one connection to a unixctl server. It is not safe for
// concurrent use; open one per goroutine.
type Client struct {
	nc   net.Conn
	conn *jsonrpc.Conn
	id   int64
}

// Dial connects to an ovs-appctl target (see ResolveTarget), using RunDir.
func Dial(ctx context.Context, target string) (*Client, error) {
	path, err := ResolveTarget(target, RunDir())
	if err != nil {
		return nil, err
	}
	return DialPath(ctx, path)
}

// DialPath connects to the socket at path.
func DialPath(ctx context.Context, path string) (*Client, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, &TargetError{Op: "connect to", Path: path, Err: err}
	}
	return &Client{nc: nc, conn: jsonrpc.NewConn(nc)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.nc.Close() }

// Reply is a server's answer: exactly one of Result and Error is set.
type Reply struct {
	Result json.RawMessage
	Error  json.RawMessage
}

// Transact sends one command and waits for its reply, until ctx ends.
// The returned error is about transport or protocol only; a command that
// failed comes back as Reply.Error.
func (c *Client) Transact(ctx context.Context, method string, args []string) (Reply, error) {
	if args == nil {
		args = []string{}
	}
	id := c.id
	c.id++
	req, err := jsonrpc.NewRequest(method, args, id)
	if err != nil {
		return Reply{}, err
	}
	if dl, ok := ctx.Deadline(); ok {
		c.nc.SetDeadline(dl)
		defer c.nc.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := c.conn.Send(req); err != nil {
		return Reply{}, ctxErr(ctx, err)
	}
	want := strconv.FormatInt(id, 10)
	for {
		m, err := c.conn.Recv()
		if err != nil {
			return Reply{}, ctxErr(ctx, err)
		}
		if (m.Kind != jsonrpc.KindReply && m.Kind != jsonrpc.KindError) || string(m.ID) != want {
			continue // not ours (Open vSwitch's client skips these too)
		}
		if m.Kind == jsonrpc.KindError {
			return Reply{Error: m.Error}, nil
		}
		return Reply{Result: m.Result}, nil
	}
}

// ctxErr reports a failure caused by ctx as ctx's error. The socket
// deadline may fire a moment before ctx's own timer does.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if dl, ok := ctx.Deadline(); ok && errors.Is(err, os.ErrDeadlineExceeded) && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return err
}
