#!/bin/bash
# Runs Open vSwitch's own autotest suite (tests/testsuite) with gvs-vswitchd
# standing in for ovs-vswitchd: a directory holding a link named
# ovs-vswitchd -> gvs-vswitchd goes first in AUTOTEST_PATH, so every test
# starts gvs while Open vSwitch's build-tree clients (ovs-vsctl, ovs-ofctl,
# ovs-appctl, ovsdb-server) stay the peers. See docs/ovs-testsuite.md.
#
# usage: scripts/ovs-testsuite.sh [options] [--] TESTSUITE-ARGS...
#   -s, --src DIR    Open vSwitch source tree (built in place; keep it outside
#                    this repository, e.g. under /tmp). Default: download
#                    openvswitch-$OVS_VERSION.tar.gz into $WORK and build there.
#   -w, --work DIR   scratch directory (default /tmp/ovs-testsuite)
#   -o, --out DIR    where logs and the summary go (default $WORK/results-<mode>)
#   -j N             parallel test groups (default 1)
#   --real           run the suite with Open vSwitch's own ovs-vswitchd (the
#                    baseline: what fails then is the sandbox, not gvs)
#   --no-build       do not (re)build gvs-vswitchd
#   --daemon         run every group that starts ovs-vswitchd (694 in 3.1.0:
#                    all of the eleven files the first runs covered, and the
#                    groups of the other files whose test starts the daemon)
# TESTSUITE-ARGS are passed to tests/testsuite: group numbers or ranges
# (`1010-1020 1100`), `-k keyword,keyword`, `-l` to list.
# Examples:
#   scripts/ovs-testsuite.sh -s /tmp/ovs-src -j2 855-1036        (ofproto.at)
#   scripts/ovs-testsuite.sh -s /tmp/ovs-src -k 'ofproto - bundle'
#   scripts/ovs-testsuite.sh -s /tmp/ovs-src --real 1000-1010
set -uo pipefail

OVS_VERSION=${OVS_VERSION:-3.1.0}
REPO=$(cd "$(dirname "$0")/.." && pwd)
SRC=""
WORK=/tmp/ovs-testsuite
OUT=""
JOBS=1
MODE=gvs
BUILD_GVS=1
DAEMON_SET=0
# gvs-cpu limits CPU-heavy commands on shared machines; plain exec elsewhere.
CPU=""
command -v gvs-cpu >/dev/null 2>&1 && CPU=gvs-cpu

while [ $# -gt 0 ]; do
  case "$1" in
    -s|--src) SRC=$2; shift 2 ;;
    -w|--work) WORK=$2; shift 2 ;;
    -o|--out) OUT=$2; shift 2 ;;
    -j) JOBS=$2; shift 2 ;;
    -j*) JOBS=${1#-j}; shift ;;
    --real) MODE=real; shift ;;
    --no-build) BUILD_GVS=0; shift ;;
    --daemon) DAEMON_SET=1; shift ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[ -n "$OUT" ] || OUT=$WORK/results-$MODE
mkdir -p "$WORK" "$OUT"
WORK=$(cd "$WORK" && pwd)
OUT=$(cd "$OUT" && pwd)
log() { echo "ovs-testsuite: $*" >&2; }
die() { log "$*"; exit 1; }

# 1. Tools to build Open vSwitch from a release or git tree.
missing=""
for t in autoconf:autoconf automake:automake libtoolize:libtool make:make gcc:gcc python3:python3; do
  command -v "${t%%:*}" >/dev/null 2>&1 || missing="$missing ${t#*:}"
done
if [ -n "$missing" ]; then
  log "installing$missing"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends $missing ||
    die "could not install$missing"
fi

# 2. The source tree: given, or the release tarball.
if [ -z "$SRC" ]; then
  SRC=$WORK/openvswitch-$OVS_VERSION
  if [ ! -d "$SRC" ]; then
    tgz=$WORK/openvswitch-$OVS_VERSION.tar.gz
    [ -s "$tgz" ] || curl -fsSL -o "$tgz" "https://www.openvswitch.org/releases/openvswitch-$OVS_VERSION.tar.gz" ||
      die "download of openvswitch-$OVS_VERSION.tar.gz failed"
    tar -xzf "$tgz" -C "$WORK" || die "cannot unpack $tgz"
  fi
fi
SRC=$(cd "$SRC" && pwd) || die "no source tree at $SRC"
case "$SRC/" in "$REPO"/*) die "build the Open vSwitch tree outside $REPO (e.g. /tmp)" ;; esac

# 3. Build Open vSwitch and its test suite (skipped when already built).
cd "$SRC" || exit 1
if [ ! -x configure ]; then
  log "boot.sh"
  ./boot.sh >"$WORK/boot.log" 2>&1 || die "boot.sh failed, see $WORK/boot.log"
fi
if [ ! -f Makefile ]; then
  log "configure"
  ./configure >"$WORK/configure.log" 2>&1 || die "configure failed, see $WORK/configure.log"
fi
if [ ! -x vswitchd/ovs-vswitchd ] || [ ! -x utilities/ovs-ofctl ]; then
  log "make (a while)"
  $CPU make -j2 >"$WORK/make.log" 2>&1 || die "make failed, see $WORK/make.log"
fi
if [ ! -x tests/testsuite ]; then
  log "make tests/testsuite"
  $CPU make -j2 tests/testsuite tests/atconfig tests/atlocal >>"$WORK/make.log" 2>&1 ||
    die "make tests/testsuite failed, see $WORK/make.log"
fi

# 4. gvs-vswitchd, and the directory whose ovs-vswitchd is gvs.
. "$REPO/scripts/lib/autotest.sh"
APATH=$(autotest_path "utilities:vswitchd:ovsdb:vtep:tests:ipsec:") || exit 1
one_run_per_tree

# The daemon set: whole files for the eleven the first runs covered, and in
# the others each group whose AT_SETUP..AT_CLEANUP block starts the daemon.
daemon_groups() {
  local full='^(ovs-ofctl|tunnel|tunnel-push-pop|tunnel-push-pop-ipv6|ovs-vswitchd|ofproto|dpif-netdev|dpctl|ofproto-dpif|bridge|packet-type-aware)\.at$'
  (cd tests && ./testsuite -l) | awk '/^ *[0-9]+: [a-z0-9_-]+\.at:[0-9]+/ {split($2, a, ":"); print $1+0, a[1], a[2]}' |
    while read -r n f line; do
      if [[ $f =~ $full ]] || awk -v s="$line" 'NR >= s { print; if (/AT_CLEANUP/) exit }' "tests/$f" |
        grep -qE 'OVS_VSWITCHD_START|OVS_TRAFFIC_VSWITCHD_START|ovs-vswitchd|add_of_br'; then
        echo "$n"
      fi
    done
}
if [ "$DAEMON_SET" = 1 ]; then
  set -- $(daemon_groups) "$@"
  log "daemon set: $# groups"
fi

# 5. Run the suite; autotest leaves testsuite.log and a directory per
# failed group, which are moved to $OUT so runs do not overwrite each other.
log "running tests/testsuite ($MODE) $* (log in $OUT)"
rm -rf tests/testsuite.dir tests/testsuite.log
start=$(date +%s)
started=$(date -u +%Y-%m-%dT%H:%MZ)
# 9>&-: daemons a group leaves running (sFlow collectors) must not hold
# the tree's lock after the run.
tests/testsuite -C tests -j"$JOBS" AUTOTEST_PATH="$APATH" "$@" 9>&- 2>&1 | tee "$OUT/testsuite.out"
rc=${PIPESTATUS[0]}
secs=$(($(date +%s) - start))
rm -rf "$OUT/testsuite.dir"
[ -f tests/testsuite.log ] && mv tests/testsuite.log "$OUT/"
[ -d tests/testsuite.dir ] && mv tests/testsuite.dir "$OUT/"

# 6. The summary per .at file and the failure digest.
autotest_report tests/testsuite "$OUT" "mode=$MODE ovs=$(sed -n "s/^PACKAGE_VERSION = //p" Makefile) started=$started seconds=$secs args=$*"
exit "$rc"
