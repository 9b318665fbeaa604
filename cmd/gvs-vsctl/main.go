// Command gvs-vsctl configures gvs (or Open vSwitch) through its OVSDB
// Open_vSwitch database, with ovs-vsctl's syntax and output.
package main

import (
	"os"

	"github.com/gvs-project/gvs/cmd/vsctl"
)

func main() {
	os.Exit(vsctl.Run(os.Args[1:], os.Stdout, os.Stderr))
}
