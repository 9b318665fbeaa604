package tnlneigh

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/internal/ovscmd/ovscmdtest"
)

// testdata/*.golden are transcripts of Open vSwitch 3.1 itself:
// go test -run TestTranscripts -update runs the shared oracle script
// (ofproto/internal/ovscmd/ovscmdtest/oracle.sh) in a fresh network
// namespace for every testdata/*.txt script.
var update = flag.Bool("update", false, "regenerate testdata/*.golden with the Open vSwitch oracle")

var env = ovscmdtest.Env{Pkg: "ofproto/tnlneigh", NetnsPrefix: "gvsnb-"}

// sortShows sorts the entry lines of every show block: Open vSwitch lists
// entries in hash-table order under a random per-process hash basis, so
// only the set of lines is defined.
func sortShows(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "=====") {
			continue
		}
		j := i + 1
		for j < len(lines) && lines[j] != "" && !strings.HasPrefix(lines[j], "$ ") {
			j++
		}
		slices.Sort(lines[i+1 : j])
		i = j - 1
	}
	return strings.Join(lines, "")
}

// TestTranscriptsMatchOVS replays every testdata/*.txt script and compares
// the transcript with Open vSwitch's (show entries compared as sets).
func TestTranscriptsMatchOVS(t *testing.T) {
	env.Golden(t, *update, func(t *testing.T, script string) string {
		return ovscmdtest.Replay(t, New().Commands(), script, nil)
	}, sortShows)
}
