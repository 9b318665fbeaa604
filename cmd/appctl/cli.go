package appctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gvs-project/gvs/internal/version"
	"github.com/gvs-project/gvs/unixctl"
	"github.com/spf13/cobra"
)

// cliName is the program name in gvs-appctl's messages.
const cliName = "gvs-appctl"

// DefaultTarget is the daemon gvs-appctl talks to without -t.
const DefaultTarget = "gvs-vswitchd"

const cliUsage = `%[1]s, for querying and controlling gvs daemons
usage: %[1]s [TARGET] COMMAND [ARG...]
Targets:
  -t, --target=TARGET  pidfile or socket to contact
Common commands:
  list-commands      List commands supported by the target
  version            Print version of the target
  vlog/list          List current logging levels
  vlog/list-pattern  List logging patterns for each destination.
  vlog/set [SPEC]
      Set log levels as detailed in SPEC, which may include:
      A valid module name (all modules, by default)
      'syslog', 'console', 'file' (all destinations, by default))
      'off', 'emer', 'err', 'warn', 'info', or 'dbg' ('dbg', by default)
  vlog/reopen        Make the program reopen its log file
Other options:
  -T, --timeout=SECS wait at most SECS seconds for a response
  -f, --format=FMT   Output format. One of: 'json', or 'text'
                     (default: text)
  -h, --help         Print this helpful information
  -V, --version      Display %[1]s version information
`

// exitError carries an exit status and the message printed for it.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// Run is gvs-appctl: args are the command line without the program name.
// It behaves as ovs-appctl does: the reply goes to stdout with a trailing
// newline (exit 0); an error reply goes to stderr followed by
// "gvs-appctl: TARGET: server returned an error" (exit 2); failing to reach
// the target or a broken transaction exits 1; running out of --timeout
// exits 142, the status a shell reports for ovs-appctl killed by SIGALRM.
func Run(args []string, stdout, stderr io.Writer) int {
	var (
		target, timeout, format string
		showVersion, execute    bool
	)
	code := 0
	cmd := &cobra.Command{
		Use:           cliName,
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(_ *cobra.Command, pos []string) error {
			if showVersion {
				fmt.Fprintln(stdout, version.Line(cliName))
				return nil
			}
			c, err := runCommand(target, timeout, format, pos, stdout, stderr)
			code = c
			return err
		},
	}
	fl := cmd.Flags()
	fl.SetInterspersed(false) // options after COMMAND belong to the command
	fl.StringVarP(&target, "target", "t", DefaultTarget, "pidfile or socket to contact")
	fl.StringVarP(&timeout, "timeout", "T", "", "wait at most SECS seconds for a response")
	fl.StringVarP(&format, "format", "f", "text", "output format: json or text")
	fl.BoolVarP(&showVersion, "version", "V", false, "display version information")
	fl.BoolVarP(&execute, "execute", "e", false, "ignored, for compatibility")
	cmd.SetHelpFunc(func(*cobra.Command, []string) { fmt.Fprintf(stdout, cliUsage, cliName) })
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	if err := cmd.Execute(); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintf(stderr, "%s: %s\n", cliName, ee.msg)
			}
			return ee.code
		}
		fmt.Fprintf(stderr, "%s: %v\n", cliName, err)
		return 1
	}
	return code
}

func fatal(code int, format string, a ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, a...)}
}

func runCommand(target, timeout, format string, pos []string, stdout, stderr io.Writer) (int, error) {
	var fmtOpt unixctl.Format
	switch strings.ToLower(format) {
	case "text":
		fmtOpt = unixctl.FormatText
	case "json":
		fmtOpt = unixctl.FormatJSON
	default:
		return 1, fatal(1, "value %s on -f or --format is invalid", format)
	}
	ctx := context.Background()
	if timeout != "" {
		secs, err := strconv.ParseUint(timeout, 10, 31)
		if err != nil || secs == 0 {
			return 1, fatal(1, "value %s on -T or --timeout is invalid", timeout)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(secs)*time.Second)
		defer cancel()
	}
	if len(pos) == 0 {
		return 1, fatal(1, "at least one non-option argument is required (use --help for help)")
	}
	c, err := unixctl.Dial(ctx, target)
	if err != nil {
		return 1, fatal(1, "%v", err)
	}
	defer c.Close()

	if fmtOpt != unixctl.FormatText {
		r, err := c.Transact(ctx, "set-options", []string{"--format", fmtOpt.String()})
		if errors.Is(err, context.DeadlineExceeded) {
			return 142, fatal(142, "%s: timed out after %s seconds", target, timeout)
		}
		if err != nil {
			return 1, fatal(1, "%s: transaction error (%s)", target, unixctl.Strerror(err))
		}
		if r.Error != nil {
			return serverError(target, r.Error, stderr)
		}
	}
	r, err := c.Transact(ctx, pos[0], pos[1:])
	if errors.Is(err, context.DeadlineExceeded) {
		// ovs-appctl dies of SIGALRM here; a shell sees status 128+14.
		return 142, fatal(142, "%s: timed out after %s seconds", target, timeout)
	}
	if err != nil {
		return 1, fatal(1, "%s: transaction error (%s)", target, unixctl.Strerror(err))
	}
	if r.Error != nil {
		return serverError(target, r.Error, stderr)
	}
	text, err := replyText(r.Result, fmtOpt)
	if err != nil {
		return 2, err
	}
	io.WriteString(stdout, text)
	return 0, nil
}

func serverError(target string, e json.RawMessage, stderr io.Writer) (int, error) {
	text, err := replyText(e, unixctl.FormatText)
	if err != nil {
		return 2, err
	}
	io.WriteString(stderr, text)
	return 2, fatal(2, "%s: server returned an error", target)
}

// replyText renders a result or error as ovs-appctl prints it: a string
// as is, a JSON value (in json mode) compact with sorted keys; always
// ending in a newline unless empty.
func replyText(v json.RawMessage, f unixctl.Format) (string, error) {
	var s string
	if f == unixctl.FormatText {
		if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
			return "", fatal(2, "Unexpected reply type in JSON rpc reply: %s", jsonType(v))
		}
	} else {
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		var x any
		if err := d.Decode(&x); err != nil {
			return "", fatal(2, "bad JSON in reply: %v", err)
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b) // maps encode with sorted keys
		enc.SetEscapeHTML(false)
		if err := enc.Encode(x); err != nil {
			return "", fatal(2, "bad JSON in reply: %v", err)
		}
		s = strings.TrimSuffix(b.String(), "\n")
	}
	return withNewline(s), nil
}

// jsonType names a JSON value's type as Open vSwitch's json_type_to_string.
func jsonType(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "null"
	}
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(v, ".eE") {
		return "real"
	}
	return "integer"
}

// withNewline ends non-empty text with a newline, as ovs-appctl prints
// every reply.
func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}
