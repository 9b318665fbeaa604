package vsctl_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentAddBrLosesNoBridge runs add-br from several clients at
// once: each run rewrites Open_vSwitch.bridges, so without verification
// and retry some bridges would be lost from it.
func TestConcurrentAddBrLosesNoBridge(t *testing.T) {
	db := "--db=unix:" + startServer(t)
	if r := runGVS(db, "--no-wait", "init"); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	const clients, each = 4, 10
	var want []string
	var wg sync.WaitGroup
	errs := make(chan string, clients*each)
	for c := range clients {
		for i := range each {
			want = append(want, fmt.Sprintf("br%d-%d", c, i))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if r := runGVS(db, "--no-wait", "add-br", fmt.Sprintf("br%d-%d", c, i)); r.code != 0 {
					errs <- r.stderr
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	sort.Strings(want)
	r := runGVS(db, "--no-wait", "list-br")
	if got := strings.Fields(r.stdout); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("list-br = %v, want %v", got, want)
	}
	r = runGVS(db, "--no-wait", "--columns=name", "--bare", "list", "Bridge")
	if n := len(strings.Fields(r.stdout)); n != clients*each {
		t.Fatalf("%d Bridge rows, want %d", n, clients*each)
	}
}
