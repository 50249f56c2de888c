# Shared by the netd host scripts: a scratch directory, netd's namespace
# ($ns) with v0 whose veth peer v1 sits in a second namespace ($peer),
# torn down (with netd, $pid) on exit. The caller sets $name first; when
# not root or without `ip netns` the script says it is skipped and exits.
pass=0 fail=0
tmp=$(mktemp -d "/tmp/$name.XXXXXX")
ns=$name-$$ peer=$name-p$$
pid=

cleanup() {
	# `in_ns netd &` makes $pid the subshell: netd is its child.
	[ -n "$pid" ] && { pkill -TERM -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null; }
	ip netns del "$ns" 2>/dev/null
	ip netns del "$peer" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
. "$(dirname "$0")/check-lib.sh"

if [ "$(id -u)" != 0 ] || ! ip netns add "$ns" 2>/dev/null; then
	echo "$name: skipped (needs root and ip netns)"
	exit 0
fi
ip netns add "$peer"
in_ns() { ip netns exec "$ns" "$@"; }
in_ns ip link add v0 type veth peer name v1 netns "$peer"
# netd_start: netd in $ns on $tmp/netd.ini, its socket in $tmp/run; n runs nasctl on it.
netd_start() {
	mkdir -p "$tmp/run"
	in_ns "$bin/netd" -f -S "$tmp/run" -c "$tmp/netd.ini" > "$tmp/netd.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do [ -S "$tmp/run/netd.sock" ] && break; sleep 0.1; done
}
n() { "$bin/nasctl" -S "$tmp/run" "$@"; }
