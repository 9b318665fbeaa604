#!/bin/bash
# Installs gvs's .deb packages next to Debian's openvswitch-switch and
# runs gvs the ways they offer, inside a private mount namespace: the test
# starts it with `unshare -m --propagation private`, and this script lays
# overlays on /usr, /etc and /var and a tmpfs on /run, so that dpkg, the
# alternatives, the database and the sockets are seen by nothing outside and
# vanish with the namespace. The host's files and any ovs-vswitchd running
# on it are never touched.
#
# Usage: deploy_deb.sh DEBDIR SCRATCH. Prints "CHECK name=value" lines
# that the Go test compares; exits non-zero at the first failed step.
set -euo pipefail
DEBS=$1 T=$2

for d in usr etc var; do
	mkdir -p "$T/$d.up" "$T/$d.work"
	mount -t overlay overlay -o "lowerdir=/$d,upperdir=$T/$d.up,workdir=$T/$d.work" "/$d"
done
mount -t tmpfs tmpfs /run

# Everything started here is stopped here, by the PID in its pidfile.
stop_pidfile() {
	local f=$1 pid
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	kill "$pid" 2>/dev/null || return 0
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.05; done
	kill -9 "$pid" 2>/dev/null || true
}
cleanup() {
	for f in /run/openvswitch/*.pid; do stop_pidfile "$f"; done
}
trap cleanup EXIT

check() { echo "CHECK $1=$2"; }
first_line() { "$@" 2>&1 | head -n 1; }
# unit_exec FILE KEY prints the last non-empty KEY= setting of a unit
# file (continuation lines joined), with the variables systemd expands.
unit_exec() {
	sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1" | sed -n "s/^$2=//p" | grep -v '^$' | tail -n 1 |
		sed -e "s|\$GVS_OPTS|${GVS_OPTS:-}|g" -e "s|\$OVS_CTL_OPTS|${OVS_CTL_OPTS:-}|g"
}
wait_sock() {
	for _ in $(seq 200); do
		ovs-vsctl --no-wait --timeout=1 show >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	echo "no database on /var/run/openvswitch/db.sock" >&2
	return 1
}
export DEBIAN_FRONTEND=noninteractive

check before "$(first_line /usr/sbin/ovs-vswitchd --version)"
dpkg -i "$DEBS"/gvs_*.deb >/dev/null
check gvs_installed "$(dpkg-query -W -f='${Status}' gvs)"
check gvs_version "$(first_line gvs-vswitchd --version)"
for p in gvs-vswitchd gvs-vsctl gvs-ofctl gvs-appctl; do
	check "man_$p" "$(man -w "$p" 2>&1)"
done
check still_ovs "$(first_line /usr/sbin/ovs-vswitchd --version)"

# The option: gvs-ovs-vswitchd makes gvs the preferred alternative for
# /usr/sbin/ovs-vswitchd (Debian's openvswitch-switch makes that path an
# alternatives link); set by hand, Open vSwitch's comes back and --auto
# gives gvs again.
alternative() { update-alternatives --query ovs-vswitchd | sed -n 's/^Value: //p'; }
dpkg -i "$DEBS"/gvs-ovs-vswitchd_*.deb >/dev/null
check diverted "$(first_line /usr/sbin/ovs-vswitchd --version)"
check alternative "$(alternative)"
check kept "$(first_line /usr/lib/openvswitch-switch/ovs-vswitchd --version)"
update-alternatives --set ovs-vswitchd /usr/lib/openvswitch-switch/ovs-vswitchd >/dev/null
check manual "$(first_line /usr/sbin/ovs-vswitchd --version)"
update-alternatives --auto ovs-vswitchd >/dev/null
check auto "$(first_line /usr/sbin/ovs-vswitchd --version)"

# The units, where systemd is installed.
mkdir -p /etc/systemd/system/ovs-vswitchd.service.d
cp /usr/share/gvs/ovs-vswitchd.service.d/gvs.conf /etc/systemd/system/ovs-vswitchd.service.d/
if command -v systemd-analyze >/dev/null; then
	check verify_gvs "$(systemd-analyze verify /lib/systemd/system/gvs-vswitchd.service 2>&1 && echo ok)"
	check verify_dropin "$(systemd-analyze verify /lib/systemd/system/ovs-vswitchd.service 2>&1 && echo ok)"
fi

# 1. gvs-vswitchd.service: its ExecStart as systemd runs it (GVS_OPTS from
# /etc/default/gvs-vswitchd), Debian's paths: /etc/openvswitch/conf.db
# is Debian's dangling symlink to /var/lib/openvswitch/conf.db.
check conf_link "$(readlink /etc/openvswitch/conf.db)"
mkdir -p /run/openvswitch # RuntimeDirectory=
GVS_OPTS=""
. /etc/default/gvs-vswitchd
$(unit_exec /lib/systemd/system/gvs-vswitchd.service ExecStart)
wait_sock
check unit_pidfile "$(test -f /run/openvswitch/gvs-vswitchd.pid && echo present)"
ovs-vsctl --timeout=10 add-br br0 -- set bridge br0 datapath_type=dummy
check unit_show "$(ovs-vsctl --timeout=10 show | grep -c 'Bridge br0')"
check unit_db "$(test -f /var/lib/openvswitch/conf.db && echo created)"
check unit_link_kept "$(readlink /etc/openvswitch/conf.db)"
check unit_appctl "$(gvs-appctl -t gvs-vswitchd version | cut -d' ' -f1-2)"
stop_pidfile /run/openvswitch/gvs-vswitchd.pid

# 2. Debian's ovsdb-server.service (its ExecStart: ovs-ctl) with gvs run
# by the drop-in for ovs-vswitchd.service, on the same database.
OVS_CTL_OPTS=""
[ -f /etc/default/openvswitch-switch ] && . /etc/default/openvswitch-switch
$(unit_exec /lib/systemd/system/ovsdb-server.service ExecStart) >/dev/null
wait_sock
$(unit_exec /etc/systemd/system/ovs-vswitchd.service.d/gvs.conf ExecStart)
check dropin_version "$(ovs-appctl -t ovs-vswitchd version | cut -d' ' -f1-2)"
check dropin_show "$(ovs-vsctl --timeout=10 show | grep -c 'Bridge br0')"
pid=$(cat /run/openvswitch/ovs-vswitchd.pid)
$(unit_exec /etc/systemd/system/ovs-vswitchd.service.d/gvs.conf ExecStop)
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done # systemd waits too
check dropin_stopped "$(kill -0 "$pid" 2>/dev/null && echo running || echo exited)"
check dropin_pidfile "$(test -e /run/openvswitch/ovs-vswitchd.pid && echo left || echo gone)"

# 3. /usr/sbin/ovs-vswitchd, now gvs, with the command line ovs-ctl
# gives it (ovs-ctl itself also loads the kernel module, which a
# container cannot).
/usr/sbin/ovs-vswitchd unix:/var/run/openvswitch/db.sock -vconsole:emer -vsyslog:err -vfile:info \
	--mlockall --no-chdir --log-file=/var/log/openvswitch/ovs-vswitchd.log \
	--pidfile=/var/run/openvswitch/ovs-vswitchd.pid --detach
check divert_version "$(ovs-appctl version | cut -d' ' -f1-2)"
check divert_show "$(ovs-vsctl --timeout=10 show | grep -c 'Bridge br0')"
stop_pidfile /run/openvswitch/ovs-vswitchd.pid
$(unit_exec /lib/systemd/system/ovsdb-server.service ExecStop) >/dev/null

# Removing the packages gives Open vSwitch its daemon back.
dpkg -r gvs-ovs-vswitchd >/dev/null
check restored "$(first_line /usr/sbin/ovs-vswitchd --version)"
check alternative_after "$(alternative)"
dpkg -r gvs >/dev/null
check gvs_removed "$(command -v gvs-vswitchd || echo gone)"
