#!/bin/sh
# make bench: measures the API and the daemons on this host and writes
# docs/benchmarks.md. Figures are medians of three runs; nothing here
# asserts a speed - the table is read by people against the targets.
# Usage: run.sh BUILD-DIR OUTPUT.md
set -eu
O=$1 out=$2
bin=$O/bin
tmp=$(mktemp -d)
trap 'pkill -TERM -P $$ 2>/dev/null || true; rm -rf "$tmp"' EXIT
daemons="raidd cryptd netd powerd"

for d in $daemons; do
	"$bin/$d" -f -S "$tmp" -c /dev/null 2>"$tmp/$d.log" &
done
for _ in 1 2 3 4 5 6 7 8 9 10; do
	n=0
	for d in $daemons; do [ -S "$tmp/$d.sock" ] && n=$((n + 1)); done
	[ "$n" -eq 4 ] && break
	sleep 0.2
done

median() { sort -n | sed -n 2p; }

# rpc_row LABEL CLIENTS SECONDS [OPTION...]: three rpc-bench runs against
# raidd, median per column.
rpc_row() {
	label=$1 clients=$2 secs=$3; shift 3
	: > "$tmp/runs"
	for _ in 1 2 3; do
		"$bin/rpc-bench" "$@" "$tmp/raidd.sock" "$clients" "$secs" >> "$tmp/runs"
	done
	rate=$(awk '{print $4}' "$tmp/runs" | median)
	p50=$(awk '{print $5}' "$tmp/runs" | median)
	p99=$(awk '{print $6}' "$tmp/runs" | median)
	errs=$(awk '{s += $8} END {print s}' "$tmp/runs")
	printf '| %s | %s | %s | %s | %s |\n' "$label" "$rate" \
	    "$(echo "$p50" | awk '{printf "%.3f", $1/1000}')" \
	    "$(echo "$p99" | awk '{printf "%.3f", $1/1000}')" "$errs"
}

rss_row() {
	pid=$(pgrep -f "$bin/$1 -f -S $tmp" | head -n 1)
	rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
	pss=$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup")
	anon=$(awk '/^RssAnon/ {print $2}' "/proc/$pid/status")
	strip -o "$tmp/$1.stripped" "$bin/$1"
	size=$(stat -c %s "$tmp/$1.stripped")
	printf '| %s | %s | %s | %s | %s |\n' "$1" "$rss" "$pss" "$anon" "$size"
}

# attack_row LABEL CLIENTS OPTION...: a fresh raidd attacked by
# rpc-bench -a for 3 s; its peak RSS (VmHWM, KiB) at rest and after.
attack_row() {
	label=$1 clients=$2; shift 2
	adir=$tmp/attack
	mkdir -p "$adir"
	"$bin/raidd" -f -S "$adir" -c /dev/null 2>>"$tmp/attack.log" &
	apid=$!
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ -S "$adir/raidd.sock" ] && break
		sleep 0.2
	done
	base=$(awk '/^VmHWM/ {print $2}' "/proc/$apid/status")
	"$bin/rpc-bench" "$@" "$adir/raidd.sock" "$clients" 3 >/dev/null
	peak=$(awk '/^VmHWM/ {print $2}' "/proc/$apid/status" 2>/dev/null)
	kill -TERM "$apid" 2>/dev/null
	wait "$apid" || true
	rm -f "$adir/raidd.sock"
	printf '| %s | %s | %s |\n' "$label" "$base" "${peak:-died}"
}

{
	echo "# Benchmarks"
	echo
	echo "Written by \`make bench\` ($(date -u +%Y-%m-%d), $(git -C "$(dirname "$0")/.." describe --always --dirty 2>/dev/null)),"
	echo "on $(nproc) cores of $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1), $(uname -r)."
	echo "Each figure is the median of three runs. Client and daemon share the machine's cores."
	echo
	echo "## API: system.version on raidd"
	echo
	echo "Closed loop: every client keeps one request in flight, so the rate is the"
	echo "daemon's ceiling and latency there is mostly queueing (Little's law:"
	echo "64 clients / rate). Paced: 64 clients together send 20,000 requests/s on a"
	echo "fixed schedule; latency counts from when each request was due."
	echo "Targets: >= 20,000 requests/s and p99 <= 2 ms at 64 clients."
	echo
	echo "| load | requests/s | p50 ms | p99 ms | errors |"
	echo "|---|---|---|---|---|"
	rpc_row "1 client, closed loop" 1 3
	rpc_row "64 clients, closed loop" 64 3
	rpc_row "64 clients, paced 20,000/s" 64 3 -r 20000
	echo
	echo "## Daemons at rest"
	echo
	echo "Idle after start with the default configuration, in KiB. RSS counts every"
	echo "resident page of shared libraries (libc alone is about 1.6 MiB of it on this"
	echo "host); PSS divides shared pages among the processes using them; private is"
	echo "the daemon's own anonymous memory. Target: <= 2 MiB RSS per idle daemon."
	echo
	echo "| daemon | RSS KiB | PSS KiB | private KiB | stripped bytes |"
	echo "|---|---|---|---|---|"
	for d in $daemons; do rss_row "$d"; done
	strip -o "$tmp/nasctl.stripped" "$bin/nasctl" 2>/dev/null &&
	    printf '| nasctl | - | - | - | %s |\n' "$(stat -c %s "$tmp/nasctl.stripped")"
	max=$("$bin/raidd" -n -c /dev/null | awk -F' = ' '$1 == "max_request_bytes" {print $2}')
	size=$((max - 64))
	echo
	echo "## API under attack: raidd's peak RSS"
	echo
	echo "A fresh raidd (default configuration: max_request_bytes $max) gets the worst"
	echo "requests a client may send (bench/rpc-bench.c -a), for 3 s; peak RSS is VmHWM,"
	echo "in KiB. The client runs as root, which has more room than the read group (the"
	echo "whole memory budget and the reserved places). Target: < 16 MiB."
	echo "Before the limits (0e08639: 1 MiB requests, no caps, no budget), measured the"
	echo "same way with 1 MiB requests: one \`[{},{},...]\` took raidd to 220020 KiB;"
	echo "16 clients holding half-sent ones to 384476 KiB (it was still parsing), 16"
	echo "holding half-sent \`[0,0,...]\` to 325240 KiB, 128 holding the mixed shape to"
	echo "164588 KiB, 128 sending unread batches to 16188 KiB."
	echo
	echo "| attack | at rest KiB | peak KiB |"
	echo "|---|---|---|"
	attack_row "1 request \`[{},{},...]\` of $size bytes" 1 -a objects -s "$size"
	attack_row "1 request of $size bytes: params \`[0,0,...]\`" 1 -a values -s "$size"
	attack_row "1 request of $size bytes: 500 {}, 3,500 values, a string" 1 -a mixed -s "$size"
	attack_row "128 clients each holding a half-sent \`[{},{},...]\`" 128 -a objects -H -s "$size"
	attack_row "128 clients each holding a half-sent 500 {}, 3,500 values, a string" 128 \
	    -a mixed -H -s "$size"
	attack_row "128 clients sending batches of 64 system.methods, reading nothing" 128 -a batch
	if [ -f "$O/bench-board.md" ]; then
		echo
		cat "$O/bench-board.md"
	fi
} > "$tmp/out.md"
# Sections other targets own (make fuzz-long, make check-long) stay.
for s in fuzz-long soak kill-campaign; do
	sed -n "/^<!-- begin $s -->\$/,/^<!-- end $s -->\$/p" "$out" 2>/dev/null |
	    sed '1d;$d' > "$tmp/$s.md"
	if [ -s "$tmp/$s.md" ]; then
		sh "$(dirname "$0")/md-section.sh" "$tmp/out.md" "$s" < "$tmp/$s.md"
	fi
done
mv "$tmp/out.md" "$out"
cat "$out"
