#!/bin/bash
# Runs OVN's own autotest suites with gvs-vswitchd standing in for
# ovs-vswitchd: a directory holding a link ovs-vswitchd -> gvs-vswitchd goes
# first in AUTOTEST_PATH, so every test starts gvs while Open vSwitch's and
# OVN's build-tree programs (ovsdb-server, ovs-vsctl, ovs-ofctl, ovs-appctl,
# ovn-northd, ovn-controller, ovn-nbctl, ...) stay the peers. See
# docs/ovn-testsuite.md.
#
# usage: scripts/ovn-testsuite.sh [options] [--] TESTSUITE-ARGS...
#   -s, --src DIR      OVN source tree (built in place; outside this
#                      repository, e.g. `git archive v23.03.1` of ovn-org/ovn
#                      unpacked under /tmp). Required.
#   --ovs DIR          the Open vSwitch 3.1 tree, built (scripts/ovs-testsuite.sh
#                      builds one); OVN is configured against it. Default
#                      /tmp/ovs-src.
#   --suite NAME       testsuite (sandboxes with the dummy datapath; default)
#                      or system-userspace (namespaces, veths, netdev datapath;
#                      needs root).
#   -w, --work DIR     scratch directory (default /tmp/ovn-testsuite)
#   -o, --out DIR      where logs and the summary go (default
#                      $WORK/results-<suite>-<mode>)
#   -j N               parallel test groups (default 1)
#   --real             Open vSwitch's own ovs-vswitchd (the baseline)
#   --no-build         do not (re)build gvs-vswitchd
# TESTSUITE-ARGS go to the suite: group numbers or ranges, `-k keyword`,
# `-l` to list.
# Examples:
#   scripts/ovn-testsuite.sh -s /tmp/ovn-src -k 'ovn -- 2 HVs'
#   scripts/ovn-testsuite.sh -s /tmp/ovn-src --suite system-userspace --real 1-10

REPO=$(cd "$(dirname "$0")/.." && pwd)
SRC=""
OVS=/tmp/ovs-src
SUITE=testsuite
WORK=/tmp/ovn-testsuite
OUT=""
JOBS=1
MODE=gvs
BUILD_GVS=1
CPU=""
command -v gvs-cpu >/dev/null 2>&1 && CPU=gvs-cpu

while [ $# -gt 0 ]; do
  case "$1" in
    -s|--src) SRC=$2; shift 2 ;;
    --ovs) OVS=$2; shift 2 ;;
    --suite) SUITE=$2; shift 2 ;;
    -w|--work) WORK=$2; shift 2 ;;
    -o|--out) OUT=$2; shift 2 ;;
    -j) JOBS=$2; shift 2 ;;
    -j*) JOBS=${1#-j}; shift ;;
    --real) MODE=real; shift ;;
    --no-build) BUILD_GVS=0; shift ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
log() { echo "ovn-testsuite: $*" >&2; }
die() { log "$*"; exit 1; }
case "$SUITE" in
  testsuite) TS=tests/testsuite ;;
  system-userspace) TS=tests/system-userspace-testsuite ;;
  *) die "--suite: testsuite or system-userspace, not $SUITE" ;;
esac
[ -n "$SRC" ] || die "-s OVN_SOURCE_TREE is required"
[ -n "$OUT" ] || OUT=$WORK/results-$SUITE-$MODE
mkdir -p "$WORK" "$OUT"
WORK=$(cd "$WORK" && pwd)
OUT=$(cd "$OUT" && pwd)
SRC=$(cd "$SRC" && pwd) || die "no source tree at $SRC"
OVS=$(cd "$OVS" && pwd) || die "no Open vSwitch tree at $OVS"
for d in "$SRC" "$OVS"; do
  case "$d/" in "$REPO"/*) die "build $d outside $REPO (e.g. /tmp)" ;; esac
done
[ -f "$OVS/lib/.libs/libopenvswitch.a" ] || die "$OVS is not built: run scripts/ovs-testsuite.sh -s $OVS -l first"

# 1. Build OVN against the Open vSwitch tree, once.
cd "$SRC" || exit 1
if [ ! -x configure ]; then
  log "boot.sh"
  ./boot.sh >"$WORK/boot.log" 2>&1 || die "boot.sh failed, see $WORK/boot.log"
fi
if [ ! -f Makefile ]; then
  log "configure"
  ./configure --with-ovs-source="$OVS" --with-ovs-build="$OVS" >"$WORK/configure.log" 2>&1 ||
    die "configure failed, see $WORK/configure.log"
fi
if [ ! -x controller/ovn-controller ] || [ ! -x northd/ovn-northd ]; then
  log "make (a while)"
  $CPU make -j2 >"$WORK/make.log" 2>&1 || die "make failed, see $WORK/make.log"
fi
if [ ! -x "$TS" ]; then
  log "make $TS"
  $CPU make "$TS" tests/atconfig tests/atlocal >>"$WORK/make.log" 2>&1 || die "make $TS failed, see $WORK/make.log"
fi
# The test PKI (the sandboxes' ovn-controllers reach the southbound
# database over SSL) and the other check data: `make check` builds them,
# and with --version its testsuite run only prints the version.
if [ ! -f tests/testpki-hv1-cert.pem ]; then
  log "make check_DATA (test PKI)"
  $CPU make check TESTSUITEFLAGS=--version >>"$WORK/make.log" 2>&1 || die "building the test PKI failed, see $WORK/make.log"
fi

# 2. What OVN's Makefile gives its suites: ovs_srcdir in the environment
# (the sandboxes create their databases from its schema) and the search
# path, with gvs first.
export ovs_srcdir=$OVS

# The system suite's traffic checks expect nmap's ncat as `nc` (`echo a |
# nc -u HOST PORT` must return at the end of its input; the OpenBSD nc
# Debian installs by default waits for an answer forever and the group
# never finishes). The tools directory goes first in PATH for the run
# only; the machine's nc is left alone.
if [ "$SUITE" = system-userspace ]; then
  missing=""
  for t in ethtool tcpdump ncat curl; do
    command -v $t >/dev/null 2>&1 || missing="$missing $t"
  done
  [ -z "$missing" ] || die "the system suite needs:$missing (apt-get install ethtool tcpdump ncat curl)"
  mkdir -p "$WORK/tools" && ln -sf "$(command -v ncat)" "$WORK/tools/nc"
  export PATH=$WORK/tools:$PATH
fi

. "$REPO/scripts/lib/autotest.sh"
APATH=$(autotest_path "$OVS/utilities:$OVS/vswitchd:$OVS/ovsdb:$OVS/vtep:tests::controller-vtep:northd:utilities:controller:ic") || exit 1
one_run_per_tree

# 3. Run; autotest's log and per-group directories move to $OUT.
log "running $TS ($MODE) $* (log in $OUT)"
dir=${TS%/*}/$(basename "$TS").dir
rm -rf "$dir" "$TS.log"
start=$(date +%s)
started=$(date -u +%Y-%m-%dT%H:%MZ)
# 9>&-: daemons a group leaves running must not hold the tree's lock.
"$TS" -C tests -j"$JOBS" AUTOTEST_PATH="$APATH" "$@" 9>&- 2>&1 | tee "$OUT/testsuite.out"
rc=${PIPESTATUS[0]}
secs=$(($(date +%s) - start))
rm -rf "$OUT/testsuite.dir"
[ -f "$TS.log" ] && mv "$TS.log" "$OUT/testsuite.log"
[ -d "$dir" ] && mv "$dir" "$OUT/testsuite.dir"

# 4. The summary per .at file and the failure digest.
autotest_report "$TS" "$OUT" "suite=$SUITE mode=$MODE ovn=$(sed -n "s/^PACKAGE_VERSION = //p" Makefile) started=$started seconds=$secs args=$*"
exit "$rc"
