package vsctl_test

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/cmd/vsctl"
	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/ovsoracle"
	"github.com/gvs-project/gvs/ovsdb/server"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

// requireBin skips (or, under CI=true, fails) when an Open vSwitch binary
// is missing.
func requireBin(t *testing.T, name string) {
	t.Helper()
	nstest.RequireBinary(t, name, "openvswitch-common")
}

// shortDir returns a temporary directory whose path fits in sun_path.
func shortDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("/tmp", "gvsvsctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// startServer runs gvs's OVSDB server with an empty Open_vSwitch
// database on a unix socket and returns the socket's path.
func startServer(t testing.TB) string {
	t.Helper()
	schema, err := vswitch.Schema()
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New()
	if err := srv.AddDatabase(server.NewDatabase(schema)); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(shortDir(t), "db.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return sock
}

// result is one command line's outcome.
type result struct {
	stdout, stderr string
	code           int
}

// runGVS runs gvs-vsctl in-process.
func runGVS(args ...string) result {
	var out, errOut bytes.Buffer
	code := vsctl.Run(args, &out, &errOut)
	return result{out.String(), errOut.String(), code}
}

// runOVS runs Debian's ovs-vsctl.
func runOVS(t *testing.T, args ...string) result {
	t.Helper()
	o := ovsoracle.Tool(t, nil, "ovs-vsctl", args...)
	return result{o.Stdout, o.Stderr, o.Code}
}

// splitLine splits a script line at spaces; '...' quotes literally.
func splitLine(line string) []string {
	var args []string
	var cur strings.Builder
	inArg, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inArg = !quoted, true
		case r == ' ' && !quoted:
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args
}

var (
	uuidRE  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	stampRE = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\|`)
)

// normalize masks what legitimately differs between the two programs and
// two databases: UUIDs, log time stamps, the program name, and the order
// of rows, which follows random UUIDs.
func normalize(args []string, r result) result {
	mask := func(s string) string {
		s = uuidRE.ReplaceAllString(s, "<uuid>")
		s = stampRE.ReplaceAllString(s, "<time>|")
		return strings.ReplaceAll(s, "ovs-vsctl: ", "gvs-vsctl: ")
	}
	r.stdout, r.stderr = mask(r.stdout), mask(r.stderr)
	for _, a := range args {
		switch a {
		case "show":
			r.stdout = sortTree(r.stdout)
		case "list", "find":
			if strings.Contains(strings.Join(args, " "), "--format=table") {
				lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
				if len(lines) > 2 {
					sort.Strings(lines[2:])
				}
				r.stdout = strings.Join(lines, "\n")
			} else {
				recs := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n\n")
				sort.Strings(recs)
				r.stdout = strings.Join(recs, "\n\n")
			}
		}
	}
	return r
}

// sortTree sorts the sibling blocks of an indented tree (show output).
func sortTree(s string) string {
	type node struct {
		line     string
		children []*node
	}
	root := &node{}
	stack := []*node{root}
	depth := []int{-1}
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		d := len(l) - len(strings.TrimLeft(l, " "))
		for len(stack) > 1 && depth[len(depth)-1] >= d {
			stack, depth = stack[:len(stack)-1], depth[:len(depth)-1]
		}
		n := &node{line: l}
		parent := stack[len(stack)-1]
		parent.children = append(parent.children, n)
		stack, depth = append(stack, n), append(depth, d)
	}
	var render func(n *node) string
	render = func(n *node) string {
		parts := make([]string, len(n.children))
		for i, c := range n.children {
			parts[i] = render(c)
		}
		sort.Strings(parts)
		if n == root {
			return strings.Join(parts, "")
		}
		return n.line + "\n" + strings.Join(parts, "")
	}
	return render(root)
}
