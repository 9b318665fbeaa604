#!/bin/bash
# Installs the Debian packages gvs's tests use as real peers and oracles
# (Open vSwitch's and OVN's tools, iproute2, ping), if any is missing.
# Idempotent; needs root (or sudo) only when something is missing.
#
# It never stops a process: Debian's openvswitch-switch, ovn-host and
# ovn-central start their daemons when installed, so while apt-get runs a
# policy-rc.d that refuses every service start is in place (the
# mechanism invoke-rc.d and deb-systemd-invoke obey), and nothing is
# started in the first place. An administrator's own policy-rc.d is left
# as it is. The tests start their daemons in private directories and stop
# them by PID.
set -euo pipefail
PKGS="iproute2 iputils-ping ethtool openvswitch-switch openvswitch-common ovn-host ovn-central tcpdump man-db"
missing=""
for p in $PKGS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
POLICY=${POLICY_RC_D:-/usr/sbin/policy-rc.d}
if [ ! -e "$POLICY" ]; then
  printf '#!/bin/sh\n# gvs scripts/install-deps.sh: no service starts while it installs packages.\nexit 101\n' |
    $SUDO tee "$POLICY" >/dev/null
  $SUDO chmod 755 "$POLICY"
  trap '$SUDO rm -f "$POLICY"' EXIT
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing
