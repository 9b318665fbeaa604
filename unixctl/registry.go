package unixctl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
)

// Unlimited is the MaxArgs of a command that takes any number of
// arguments (Open vSwitch uses INT_MAX).
const Unlimited = math.MaxInt32

// Handler runs one command with arguments already count-checked. The
// returned text is the reply; a non-nil error's message is the error reply.
type Handler func(ctx context.Context, args []string) (string, error)

// JSONHandler is a command's output for connections that asked for JSON
// (ovs-appctl -f json). The value must encode with encoding/json.
type JSONHandler func(ctx context.Context, args []string) (any, error)

// Command is one row of the command table.
type Command struct {
	Name    string
	Usage   string // shown by list-commands, e.g. "[bridge] port"
	MinArgs int
	MaxArgs int // Unlimited for no limit
	Run     Handler
	RunJSON JSONHandler // optional
	// Hidden leaves the command out of list-commands, as Open vSwitch
	// does with the commands it registers without a usage (old names
	// kept for compatibility).
	Hidden bool
}

// Format is a connection's output format.
type Format uint8

// The output formats set with set-options --format.
const (
	FormatText Format = iota
	FormatJSON
)

var formatNames = map[string]Format{"text": FormatText, "json": FormatJSON}

func (f Format) String() string {
	if f == FormatJSON {
		return "json"
	}
	return "text"
}

// ErrDuplicate is returned when a command name is registered twice.
var ErrDuplicate = errors.New("appctl: command already registered")

// Registry is the table of commands a server answers. The zero value is
// not usable; call NewRegistry.
type Registry struct {
	version string

	mu   sync.RWMutex
	cmds map[string]*Command // guarded by mu
}

// VersionString builds the reply of "version" in Open vSwitch's shape,
// "PROGRAM (PACKAGE) VERSION", e.g. "gvs-vswitchd (gvs) 0.1.0".
func VersionString(program, pkg, version string) string {
	return fmt.Sprintf("%s (%s) %s", program, pkg, version)
}

// NewRegistry returns a registry holding the built-in commands
// list-commands, version (replying version) and set-options.
func NewRegistry(version string) *Registry {
	r := &Registry{version: version, cmds: make(map[string]*Command)}
	for _, c := range []Command{
		{Name: "list-commands", Run: r.listCommands},
		{Name: "version", Run: func(context.Context, []string) (string, error) { return r.version, nil }},
		{Name: "set-options", Usage: "[--format text|json]", MaxArgs: 2, Run: setOptions},
	} {
		if err := r.RegisterCommand(c); err != nil {
			panic(err) // the built-in table is constant
		}
	}
	return r
}

// Register adds a text command; see RegisterCommand.
func (r *Registry) Register(name, usage string, minArgs, maxArgs int, h Handler) error {
	return r.RegisterCommand(Command{Name: name, Usage: usage, MinArgs: minArgs, MaxArgs: maxArgs, Run: h})
}

// RegisterCommand adds c to the table. Names are unique; registering one
// twice is an error, as is a nil handler or 0 <= MinArgs <= MaxArgs not
// holding.
func (r *Registry) RegisterCommand(c Command) error {
	switch {
	case c.Name == "" || strings.ContainsAny(c.Name, " \t\n"):
		return fmt.Errorf("appctl: invalid command name %q", c.Name)
	case c.Run == nil:
		return fmt.Errorf("appctl: command %q has no handler", c.Name)
	case c.MinArgs < 0 || c.MaxArgs < c.MinArgs:
		return fmt.Errorf("appctl: command %q: bad argument bounds %d..%d", c.Name, c.MinArgs, c.MaxArgs)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.cmds[c.Name]; ok {
		return fmt.Errorf("%w: %q", ErrDuplicate, c.Name)
	}
	r.cmds[c.Name] = &c
	return nil
}

// Unregister removes a command (for example when the bridge that owned it
// goes away). Removing an unknown name does nothing.
func (r *Registry) Unregister(name string) {
	r.mu.Lock()
	delete(r.cmds, name)
	r.mu.Unlock()
}

// Lookup returns the command registered under name.
func (r *Registry) Lookup(name string) (Command, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.cmds[name]
	if !ok {
		return Command{}, false
	}
	return *c, true
}

// Commands returns the table sorted by name.
func (r *Registry) Commands() []Command {
	r.mu.RLock()
	out := make([]Command, 0, len(r.cmds))
	for _, c := range r.cmds {
		out = append(out, *c)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (r *Registry) listCommands(context.Context, []string) (string, error) {
	var b strings.Builder
	b.WriteString("The available commands are:\n")
	for _, c := range r.Commands() {
		if c.Hidden {
			continue
		}
		// Name left-justified in 23 columns, as ovs-vswitchd prints it;
		// longer names push the usage right.
		fmt.Fprintf(&b, "  %-23s %s\n", c.Name, c.Usage)
	}
	return b.String(), nil
}

// checkArgs returns Open vSwitch's error text for a request that cannot be
// dispatched, in the order Open vSwitch checks: name, minimum, maximum,
// argument types.
func checkArgs(c *Command, ok bool, method string, n int, allStrings bool) string {
	switch {
	case !ok:
		return fmt.Sprintf("%q is not a valid command (use \"list-commands\" to see a list of valid commands)", method)
	case n < c.MinArgs:
		return fmt.Sprintf("%q command requires at least %d arguments", method, c.MinArgs)
	case n > c.MaxArgs:
		return fmt.Sprintf("%q command takes at most %d arguments", method, c.MaxArgs)
	case !allStrings:
		return fmt.Sprintf("%q command has non-string argument", method)
	}
	return ""
}

// setOptions changes the calling connection's output format. The server
// puts the connection's state in ctx.
func setOptions(ctx context.Context, args []string) (string, error) {
	st, _ := ctx.Value(connKey{}).(*connState)
	if st == nil {
		return "", errors.New("set-options: no connection")
	}
	format := st.format
	for i := 0; i < len(args); i++ {
		a := args[i]
		var val string
		switch {
		case a == "--format" || a == "-f":
			if i+1 >= len(args) {
				return "", fmt.Errorf("option %q requires an argument", a)
			}
			i++
			val = args[i]
		case strings.HasPrefix(a, "--format="):
			val = strings.TrimPrefix(a, "--format=")
		default:
			return "", fmt.Errorf("unknown option %q", a)
		}
		f, ok := formatNames[strings.ToLower(val)]
		if !ok {
			return "", fmt.Errorf("invalid output format %q", val)
		}
		format = f
	}
	st.format = format
	return "", nil
}

// FormatOf reports the output format of the connection a handler serves.
func FormatOf(ctx context.Context) Format {
	if st, ok := ctx.Value(connKey{}).(*connState); ok {
		return st.format
	}
	return FormatText
}
