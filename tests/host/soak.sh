#!/bin/sh
# Soak every daemon, all four at once (tests/host/soak.py): CLIENTS clients x CALLS
# mixed calls, RSS and descriptors sampled; raidd runs on simulated disks.
# Ends with "soak: N passed, N failed"; appends "P F soak" to $NAS_SUMMARY
# when set. With a REPORT file, the figures go to its "soak" section
# (bench/md-section.sh).
# Usage: soak.sh BINDIR SRCDIR CLIENTS CALLS [REPORT.md]
set -u
bin=$1 src=$2 clients=$3 calls=$4 report=${5:-}
tmp=$(mktemp -d /tmp/nas-soak.XXXXXX)
pass=0 fail=0 pids= spids=

cleanup() {
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# Our own group reads and administers, so that the soak works unprivileged.
# Room for every connection the soak holds at once (two per client, all
# of them this one user's: the per-user cap must let 64 clients in), and
# for descriptors enough; the descriptor check then finds any connection
# a daemon fails to notice closing.
ulimit -n 8192 2>/dev/null || true
printf '[api]\nread_group = %s\nadmin_group = %s\nmax_clients = 4096\nmax_clients_per_uid = 4096\n[log]\nsyslog = no\n' \
	"$(id -gn)" "$(id -gn)" > "$tmp/soak.ini"
: > "$tmp/rows"
# The daemons side by side: the soak takes as long as the slowest.
for d in raidd cryptd netd powerd; do
	if [ "$d" = raidd ]; then
		RAIDD_SIMULATE=sda:4,sdb:4,sdc:8 "$bin/$d" -f -S "$tmp" -c "$tmp/soak.ini" 2> "$tmp/$d.log" &
	else
		"$bin/$d" -f -S "$tmp" -c "$tmp/soak.ini" 2> "$tmp/$d.log" &
	fi
	pids="$pids $!"
	echo "$!" > "$tmp/$d.pid"
done
for d in raidd cryptd netd powerd; do
	for _ in $(seq 100); do [ -S "$tmp/$d.sock" ] && break; sleep 0.1; done
	extra=
	[ "$d" = raidd ] && extra='--valid {"method":"disk.show","params":{"disk":"sdb"}}'
	# shellcheck disable=SC2086 # $extra is two words
	(python3 "$src/tests/host/soak.py" --name "$d" --socket "$tmp/$d.sock" \
	    --pid "$(cat "$tmp/$d.pid")" --clients "$clients" --calls "$calls" \
	    --row "$tmp/$d.row" $extra > "$tmp/$d.out" 2>&1
	 echo $? > "$tmp/$d.rc") &
	spids="$spids $!"
done
for p in $spids; do wait "$p"; done
for d in raidd cryptd netd powerd; do
	cat "$tmp/$d.out"
	cat "$tmp/$d.row" >> "$tmp/rows" 2>/dev/null
	if [ "$(cat "$tmp/$d.rc" 2>/dev/null)" = 0 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "     last lines of the $d log:"
		tail -n 3 "$tmp/$d.log" | sed 's/^/     /'
	fi
	if ! kill -0 "$(cat "$tmp/$d.pid")" 2>/dev/null; then
		fail=$((fail + 1))
		echo "FAIL $d died during the soak"
	fi
done
if [ -n "$report" ]; then
	{
		echo "## Soak: make check-long"
		echo
		echo "Written by \`make check-long\` ($(date -u +%Y-%m-%d), $(git -C "$src" describe --always --dirty 2>/dev/null), $(nproc) cores)."
		echo "$clients clients x $calls calls against each daemon, the four at once (tests/host/soak.py;"
		echo "raidd on simulated disks): 60 % valid requests, 18 % invalid ones (parse"
		echo "errors, unknown methods, wrong parameters, bad envelopes), 15 % batches of 2-8"
		echo "mixed elements, 5.5 % 4-32 pipelined requests read late through a 4 KiB"
		echo "receive buffer, 1.5 % subscribers that vanish (at once, after the answer, or"
		echo "half-closing first as socat does). RSS in KiB after a warm-up round of the"
		echo "same mix and a settle, descriptors before any client; then the peak, and both"
		echo "after a settle. Pass: 0 valid calls failed, every invalid one refused,"
		echo "descriptors back to the start, RSS within 512 KiB of it. A call is one"
		echo "request, batch, pipelined group or subscriber; \"valid\" counts requests."
		echo "Load average of the host at the end: $(cut -d' ' -f1-3 /proc/loadavg) (shared host)."
		echo
		echo "| daemon | calls | seconds | valid | failed | invalid | not refused | RSS start / peak / end | fds start / peak / end | verdict |"
		echo "|---|---|---|---|---|---|---|---|---|---|"
		cat "$tmp/rows"
	} | sh "$src/bench/md-section.sh" "$report" soak
fi
echo "soak: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail soak" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
