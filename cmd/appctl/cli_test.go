package appctl

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/version"
	"github.com/gvs-project/gvs/unixctl"
)

// newTestServer serves a fresh registry on a socket in a temporary
// directory until the test ends.
func newTestServer(t testing.TB) (*unixctl.Registry, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "appctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	reg := unixctl.NewRegistry(unixctl.VersionString("gvs-vswitchd", "gvs", "0.1.0"))
	srv := unixctl.NewServer(reg, nil)
	path := filepath.Join(dir, "t.ctl")
	ln, err := unixctl.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return reg, path
}

func TestRunJSONOutput(t *testing.T) {
	reg, path := newTestServer(t)
	if err := reg.RegisterCommand(unixctl.Command{Name: "t/obj", Run: func(context.Context, []string) (string, error) {
		return "text form", nil
	}, RunJSON: func(context.Context, []string) (any, error) {
		return map[string]any{"z": "<&>", "a": 1.5}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args         []string
		stdout, errs string
		code         int
	}{
		{[]string{"-t", path, "-f", "json", "t/obj"}, "{\"a\":1.5,\"z\":\"<&>\"}\n", "", 0},
		{[]string{"-t", path, "--format=json", "version"}, "{\"reply\":\"gvs-vswitchd (gvs) 0.1.0\\n\",\"reply-format\":\"plain\"}\n", "", 0},
		{[]string{"-t", path, "-f", "text", "t/obj"}, "text form\n", "", 0},
		{[]string{"-t", path, "-f", "xml", "t/obj"}, "", "gvs-appctl: value xml on -f or --format is invalid\n", 1},
		{[]string{"-t", path, "-f", "json", "nosuch"}, "", "\"nosuch\" is not a valid command (use \"list-commands\" to see a list of valid commands)\ngvs-appctl: " + path + ": server returned an error\n", 2},
	} {
		var out, errb strings.Builder
		code := Run(tc.args, &out, &errb)
		if out.String() != tc.stdout || errb.String() != tc.errs || code != tc.code {
			t.Errorf("Run(%q) = %d, %q, %q; want %d, %q, %q", tc.args, code, out.String(), errb.String(), tc.code, tc.stdout, tc.errs)
		}
	}
}

func TestReplyTextRejectsNonStringInTextMode(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`: "Unexpected reply type in JSON rpc reply: object",
		`[1]`:     "Unexpected reply type in JSON rpc reply: array",
		`12`:      "Unexpected reply type in JSON rpc reply: integer",
		`true`:    "Unexpected reply type in JSON rpc reply: true",
	} {
		_, err := replyText(json.RawMessage(in), unixctl.FormatText)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || ee.msg != want {
			t.Errorf("replyText(%s) = %v; want exit 2 %q", in, err, want)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	var out, errb strings.Builder
	if code := Run([]string{"--help"}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "gvs-appctl, for querying") {
		t.Errorf("--help: %d %q %q", code, out.String(), errb.String())
	}
	out.Reset()
	if code := Run([]string{"-V"}, &out, &errb); code != 0 || out.String() != version.Line("gvs-appctl")+"\n" {
		t.Errorf("-V: %d %q", code, out.String())
	}
	out.Reset()
	errb.Reset()
	if code := Run([]string{"--bogus"}, &out, &errb); code != 1 || !strings.HasPrefix(errb.String(), "gvs-appctl: unknown flag: --bogus") {
		t.Errorf("--bogus: %d %q", code, errb.String())
	}
}
