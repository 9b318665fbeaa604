package version

import "testing"

// Without -X, the version is the base release marked as a development
// build, and a version line has Open vSwitch's shape.
func TestDefaultVersionAndLine(t *testing.T) {
	if got := String(); got != Base+"-dev" {
		t.Errorf("String() = %q, want %q", got, Base+"-dev")
	}
	if got := Line("gvs-vswitchd"); got != "gvs-vswitchd (gvs) "+Base+"-dev" {
		t.Errorf("Line = %q", got)
	}
}
