// Package version owns gvs's version string: one for the whole project,
// reported by every binary (--version, ovs-appctl version, the OpenFlow
// description, Open_vSwitch.ovs_version).
//
// The Makefile sets it at build time from git, with
// -ldflags '-X github.com/gvs-project/gvs/internal/version.build=VERSION';
// a plain `go build` reports Base followed by "-dev".
//
// It imports only the standard library.
package version

// Base is the release gvs's version starts from; the Makefile appends the
// commit (e.g. 0.1.0+git20261204.a2197ad) and Debian packages use it.
const Base = "0.1.0"

// OpenVSwitch is the Open vSwitch release whose behaviour, schema and
// tools gvs follows.
const OpenVSwitch = "3.1.0"

// build is set by the linker (-X); empty when not built by the Makefile.
// It is written only at link time, never at run time.
var build string

// String returns the project's version.
func String() string {
	if build != "" {
		return build
	}
	return Base + "-dev"
}

// Line returns a program's version line in Open vSwitch's shape,
// "PROGRAM (gvs) VERSION", without a newline.
func Line(program string) string {
	return program + " (gvs) " + String()
}
