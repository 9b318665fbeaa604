// Command gvs-appctl sends commands to a running gvs daemon's control
// socket, as ovs-appctl does for Open vSwitch daemons.
package main

import (
	"os"

	"github.com/gvs-project/gvs/cmd/appctl"
)

func main() {
	os.Exit(appctl.Run(os.Args[1:], os.Stdout, os.Stderr))
}
