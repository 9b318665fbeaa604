// Command gvs-vswitchd is the gvs switch daemon. Invoked through a link
// named ovs-vswitchd it names its pidfile and control socket after that
// name, standing in for Open vSwitch's daemon.
package main

import (
	"os"
	"path/filepath"

	"github.com/gvs-project/gvs/cmd/vswitchd"
)

func main() {
	os.Exit(vswitchd.Main(filepath.Base(os.Args[0]), os.Args[1:]))
}
