// Command gvs-ofctl is gvs's counterpart of ovs-ofctl: it parses and prints
// OpenFlow flows and messages with ovs-ofctl's syntax and output.
package main

import (
	"os"

	"github.com/gvs-project/gvs/cmd/ofctl"
)

func main() {
	os.Exit(ofctl.Run(os.Args[1:], os.Stdout, os.Stderr))
}
