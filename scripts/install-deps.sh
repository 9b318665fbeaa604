#!/bin/bash
# Installs the Debian packages gvs's tests use as real peers and oracles
# (Open vSwitch's and OVN's tools, iproute2, ping), if any is missing.
# Idempotent; needs root (or sudo) only when something is missing.
set -euo pipefail
PKGS="iproute2 iputils-ping openvswitch-switch openvswitch-common ovn-host ovn-central tcpdump"
missing=""
for p in $PKGS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing
# Debian's packages start their own daemons where an init system runs;
# gvs's tests start their own in private directories, so stop those.
$SUDO pkill -x ovs-vswitchd 2>/dev/null || true
$SUDO pkill -x ovsdb-server 2>/dev/null || true
$SUDO pkill -x ovn-northd 2>/dev/null || true
$SUDO pkill -x ovn-controller 2>/dev/null || true
