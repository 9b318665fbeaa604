// Package ovscmdtest is the test-only oracle harness of the ofproto command
// packages: it replays a command script (one ovs-appctl command a line)
// against Open vSwitch 3.1 itself, through oracle.sh in a fresh network
// namespace, and against gvs's ovscmd.Command values, printing the same
// transcript for both, and it checks testdata/*.txt scripts against their
// testdata/*.golden transcripts (regenerated from the oracle on -update).
//
// Script syntax: empty lines and lines starting with "#" are ignored; a
// line starting with "!" is a shell command run in the namespace (setup);
// any other line is a command and its arguments separated by blanks. The
// transcript prints "$ line", the reply, and for an error reply the
// stderr and exit status as ovs-appctl reports them.
//
// Only _test.go files may import it. It imports the standard library and
// ofproto/internal/ovscmd only.
package ovscmdtest
