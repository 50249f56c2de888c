#!/bin/sh
# Host test of the API socket's ownership, with powerd (the smallest
# daemon) in a temporary socket directory: the group follows read_group
# on SIGHUP, mode 0660 kept; a socket directory others could write to, or
# owned by someone else, stops the daemon at start with a clear message;
# a missing one is made 0755. Runs as root (chown needs it); the groups
# are two of the host's system groups.
# Usage: sockets.sh BINDIR    Ends with "sockets: N passed, N failed".
set -u
bin=$1
d=powerd
tmp=$(mktemp -d /tmp/nas-sock.XXXXXX)
pass=0 fail=0
pid=

cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

. "$(dirname "$0")/check-lib.sh"

# give_up WHY: the script cannot run here; that counts as one failure.
give_up() {
	echo "sockets.sh: $1"
	echo "sockets: 0 passed, 1 failed"
	[ -n "${NAS_SUMMARY:-}" ] && echo "0 1 host-sockets" >> "$NAS_SUMMARY"
	exit 1
}
[ "$(id -u)" = 0 ] || give_up "must run as root"
[ -x "$bin/$d" ] || give_up "no $bin/$d"
g1=daemon g2=bin
gid1=$(getent group $g1 | cut -d: -f3)
gid2=$(getent group $g2 | cut -d: -f3)
if [ -z "$gid1" ] || [ -z "$gid2" ]; then give_up "groups $g1/$g2 missing"; fi

conf() {
	printf '[api]\nread_group = %s\nadmin_group =\n[log]\nsyslog = no\n' "$1" > "$tmp/$d.ini"
}
# until COMMAND...: true once the command succeeds, polled for up to 10 s.
until_true() {
	for _ in $(seq 100); do
		"$@" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
group_is() { [ "$(stat -c %g "$1")" = "$2" ]; }
# start RUNDIR: starts the daemon in the foreground, its log in $tmp/log.
start() {
	"$bin/$d" -f -S "$1" -c "$tmp/$d.ini" 2> "$tmp/log" &
	pid=$!
}
stop() {
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=
}

# ---- a missing directory is made 0755; the socket is the read group's ----
run=$tmp/run
conf $g1
start "$run"
if until_true test -S "$run/$d.sock"; then
	ok "$d starts in a missing socket dir"
	check "the socket dir is made 0755" test "$(stat -c %a "$run")" = 755
	check "the socket belongs to $g1" group_is "$run/$d.sock" "$gid1"
	check "the socket is 0660" test "$(stat -c %a "$run/$d.sock")" = 660

	# ---- SIGHUP with another read_group: the socket follows ----
	conf $g2
	kill -HUP "$pid"
	check "SIGHUP gives the socket to $g2" until_true group_is "$run/$d.sock" "$gid2"
	check "the socket is still 0660" test "$(stat -c %a "$run/$d.sock")" = 660
	check "the change is logged" grep -q "$d.sock now belongs to group $gid2" "$tmp/log"
	# A symlink put where the socket was: SIGHUP chowns nothing through it.
	printf 'x' > "$tmp/victim"
	mv "$run/$d.sock" "$run/moved.sock"
	ln -s "$tmp/victim" "$run/$d.sock"
	conf $g1
	kill -HUP "$pid"
	check "a swapped socket path is refused on SIGHUP" \
		until_true grep -q "no longer the socket we bound" "$tmp/log"
	check "the symlink's target keeps its group" group_is "$tmp/victim" 0
	rm -f "$run/$d.sock"
	mv "$run/moved.sock" "$run/$d.sock"
else
	bad "$d starts in a missing socket dir"
	sed 's/^/     /' "$tmp/log"
fi
stop

# ---- a directory others could write to: refused at start ----
# refused DESCRIPTION WANT-IN-LOG: the daemon exits 1 naming the problem.
# (A daemon that starts anyway is stopped, so the script never hangs.)
refused() {
	"$bin/$d" -f -S "$bad" -c "$tmp/$d.ini" > "$tmp/log" 2>&1 &
	pid=$!
	until_true sh -c "test -S '$bad/$d.sock' || grep -q 'socket directory' '$tmp/log'"
	[ -S "$bad/$d.sock" ] && kill -TERM "$pid"
	wait "$pid"
	_rc=$?
	pid=
	if [ "$_rc" -eq 1 ] && grep -qF "$2" "$tmp/log" && [ ! -e "$bad/$d.sock" ]; then
		ok "$1"
	else
		bad "$1 (exit $_rc)"
		sed 's/^/     /' "$tmp/log"
	fi
}
bad=$tmp/bad
mkdir "$bad"
chmod 0775 "$bad"
refused "a group-writable socket dir stops $d" \
	"socket directory $bad: mode 0775 lets others replace the socket"
chmod 0757 "$bad"
refused "a world-writable socket dir stops $d" "socket directory $bad: mode 0757"
chmod 0755 "$bad"
chown 12345 "$bad"
refused "a socket dir owned by another uid stops $d" \
	"socket directory $bad: owned by uid 12345"
chown 0 "$bad"
chmod 01777 "$bad"
start "$bad"
check "a sticky world-writable socket dir is accepted" until_true test -S "$bad/$d.sock"
stop

echo "sockets: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail host-sockets" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
