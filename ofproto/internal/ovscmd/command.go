package ovscmd

import "context"

// Command is one unixctl command, shaped like the daemon's registry rows:
// Run gets the arguments after the command name, already count-checked
// against MinArgs and MaxArgs, and returns the reply text (ending in a
// newline) or an error whose message is Open vSwitch's error reply.
type Command struct {
	Name             string
	Usage            string
	MinArgs, MaxArgs int
	Run              func(ctx context.Context, args []string) (string, error)
}
