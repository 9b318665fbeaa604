# Sourced by scripts that capture what Open vSwitch's own daemons do (the
# golden files of wire formats): ovs_sandbox starts Debian's ovsdb-server
# and ovs-vswitchd --enable-dummy in a new temporary directory, exports
# the OVS_* variables that point the clients there, and stops both (by
# PID) and removes the directory when the script exits. $dir is the
# directory.
ovs_sandbox() {
  dir=$(mktemp -d)
  ovs_pids=()
  trap 'for p in "${ovs_pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"' EXIT
  export OVS_RUNDIR=$dir OVS_LOGDIR=$dir OVS_DBDIR=$dir OVS_SYSCONFDIR=$dir
  ovsdb-tool create "$dir/conf.db" /usr/share/openvswitch/vswitch.ovsschema
  ovsdb-server --remote=punix:"$dir/db.sock" --pidfile="$dir/ovsdb-server.pid" \
    --log-file="$dir/ovsdb-server.log" -vconsole:off "$dir/conf.db" &
  ovs_pids+=($!)
  for _ in $(seq 50); do [ -S "$dir/db.sock" ] && break; sleep 0.1; done
  ovs-vswitchd --enable-dummy --disable-system unix:"$dir/db.sock" --pidfile="$dir/ovs-vswitchd.pid" \
    --log-file="$dir/ovs-vswitchd.log" -vconsole:off &
  ovs_pids+=($!)
  for _ in $(seq 50); do [ -e "$dir/ovs-vswitchd.pid" ] && break; sleep 0.1; done
}
