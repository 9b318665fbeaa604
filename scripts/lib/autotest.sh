# Shared by scripts/ovs-testsuite.sh and scripts/ovn-testsuite.sh: the
# search path with gvs standing in, the one-run-per-tree lock, and the
# per-.at-file summary and per-group failure digest of an autotest run.

# autotest_path USUAL: prints the AUTOTEST_PATH for mode $MODE: with gvs,
# a directory holding ovs-vswitchd -> gvs-vswitchd (built from $REPO
# unless BUILD_GVS=0) goes before USUAL. Uses log and die of the caller.
autotest_path() {
  if [ "$MODE" != gvs ]; then
    echo "$1"
    return
  fi
  _dir=$WORK/gvs-bin
  mkdir -p "$_dir"
  if [ "$BUILD_GVS" = 1 ]; then
    log "building gvs-vswitchd"
    (cd "$REPO" && $CPU go build -o "$_dir/gvs-vswitchd" ./cmd/gvs-vswitchd) || die "go build failed"
  fi
  [ -x "$_dir/gvs-vswitchd" ] || die "no $_dir/gvs-vswitchd (drop --no-build)"
  ln -sf gvs-vswitchd "$_dir/ovs-vswitchd"
  echo "$_dir:$1"
}

# one_run_per_tree: autotest works in the tree's tests/ directory, so two
# runs in one tree would remove each other's files.
one_run_per_tree() {
  exec 9>"tests/.gvs-testsuite.lock"
  flock -n 9 || die "another run is using $PWD/tests; wait for it"
}

# Run the suite, then call
#   autotest_report TESTSUITE OUT HEADER
# where TESTSUITE is the generated testsuite script (its at_help_all maps
# group numbers to .at files), OUT holds testsuite.out and testsuite.dir
# (moved there from the run) and HEADER is the summary's first line. It
# writes OUT/summary.txt (also printed) and OUT/failures.txt.

autotest_report() {
  _ts=$1 _out=$2 _hdr=$3
  # Summary per .at file: at_help_all in the testsuite maps each group
  # number to its file; the run's output gives each group's result.
  {
    echo "$_hdr"
    awk '
      FNR == NR {
        if (match($0, /^[0-9]+;[^;:]+\.at:/)) {
          split($0, f, ";"); split(f[2], g, ":"); file[f[1]] = g[1]
        }
        next
      }
      match($0, /^ *[0-9]+: /) {
        n = $0; sub(/^ */, "", n); sub(/:.*/, "", n)
        if ($0 ~ / ok$/) r = "passed"
        else if ($0 ~ /FAILED \(/ || $0 ~ /UNEXPECTED PASS/) r = "failed"
        else if ($0 ~ /skipped \(/) r = "skipped"
        else if ($0 ~ /expected failure/) r = "xfail"
        else next
        at = (n in file) ? file[n] : "?"
        cnt[at, r]++; tot[at]++; seen[at] = 1
        if (r == "failed") fl[at] = fl[at] " " n
      }
      END {
        printf "%-28s %5s %6s %6s %7s  %s\n", "file", "run", "passed", "failed", "skipped", "failed groups"
        for (at in seen) {
          printf "%-28s %5d %6d %6d %7d %s\n", at, tot[at], cnt[at, "passed"] + cnt[at, "xfail"],
            cnt[at, "failed"], cnt[at, "skipped"], fl[at] | "sort"
          T += tot[at]; P += cnt[at, "passed"] + cnt[at, "xfail"]; F += cnt[at, "failed"]; S += cnt[at, "skipped"]
        }
        close("sort")
        printf "%-28s %5d %6d %6d %7d\n", "total", T, P, F, S
      }' "$_ts" "$_out/testsuite.out"
  } | tee "$_out/summary.txt"

  # failures.txt: per failed group, the check that failed and the first
  # lines of its diff or error output, for sorting failures by cause.
  if [ -d "$_out/testsuite.dir" ]; then
    for d in "$_out"/testsuite.dir/[0-9]*; do
      [ -f "$d/testsuite.log" ] || continue
      grep -v '^[>|] ' "$d/testsuite.log" | awk -v g="${d##*/}" '
        / testing .* [.][.][.]$/ && title == "" { title = $0 }
        /^[.]\/[a-z0-9-]+[.]at:[0-9]+: / { last = $0 }
        /^[-+][^-+]/ || /exit code was|wait failed|hard failure/ { if (n < 8) body[n++] = $0 }
        END {
          print "=== " title
          print "    at: " last
          for (i = 0; i < n; i++) print "    " body[i]
        }'
    done >"$_out/failures.txt"
  fi
}
