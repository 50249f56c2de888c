#!/bin/sh
# vnas.py's --disk-rate (Decision 137): a rate parse_rate takes, QEMU's
# throttle group takes too, judged by QEMU itself (a limit it refuses would
# stop the board at its boot, naming only the -object line vnas wrote);
# odd and hostile values are refused with the reason, and run-scenario
# says so before it makes anything.  The same for --line-pc (Decision 138):
# a rate parse_line_rate takes, tc's tbf takes, judged by tc in a network
# namespace of its own (the line PC's init went on unshaped when tc
# refused it, and said it was ready at that rate).
# Usage: vnas-rate.sh [SRC]
set -u
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# parse RATE [FN]: vnas's answer (FN: parse_rate unless named), or "refused: why"
parse() {
	python3 - "$src/board/qemu-x86_64" "$1" "${2:-parse_rate}" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import vnas
try:
    print(getattr(vnas, sys.argv[3])(sys.argv[2]))
except ValueError as e:
    print("refused:", e)
EOF
}

# group RATE: the -object JSON of a bay held to RATE
group() {
	python3 - "$src/board/qemu-x86_64" "$1" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1])
import vnas
print(json.dumps(vnas.Bay(1, "/nonexistent", 1 << 30, vnas.parse_rate(sys.argv[2])).group_args()))
EOF
}

for r in 0:0 0:160 200:0 -1:160 1:2:3 a:b "" 200 "200:160 " " 200:160" 1_0:160 \
    200:160.5 200:0x10 OFF 1000000000000001:160 200:1000000001 99999999999999999999:160; do
	case $(parse "$r") in
	refused:*) ok ;;
	*) bad "parse_rate took '$r': $(parse "$r")" ;;
	esac
done

qemu="qemu-system-x86_64"
for r in 200:160 1:1 1000000000000000:1000000000; do
	case $(parse "$r") in
	refused:*) bad "parse_rate refused '$r': $(parse "$r")"; continue ;;
	*) ok ;;
	esac
	command -v "$qemu" >/dev/null 2>&1 || continue
	# QEMU starts with the group, or exits at once with why it does not.
	if echo quit | timeout 20 "$qemu" -machine none -nodefaults -display none -S \
	    -monitor stdio -object "$(group "$r")" >/dev/null 2>&1; then
		ok
	else
		bad "QEMU refused the throttle group of '$r'"
	fi
done

out=$(python3 "$src/tests/system/run-scenario" --disk-rate 1:1000000001 /nonexistent 2>&1)
rc=$?
if [ "$rc" -eq 2 ] && echo "$out" | grep -q "QEMU's limit"; then
	ok
else
	bad "run-scenario --disk-rate 1:1000000001: rc $rc, $out"
fi

for r in 0bit 7bit 0mbit 10Mbit 10mbps "10mbit " "1 0mbit" 10mbit,x "10mbit lo" \
    18446744073709551616bit 18446744074gbit 99999999999999999999gbit; do
	case $(parse "$r" parse_line_rate) in
	refused:*) ok ;;
	*) bad "parse_line_rate took '$r'" ;;
	esac
done

# tbf RATE: tc's tbf takes RATE, as the line PC's init asks it
tbf() {
	unshare -n tc qdisc add dev lo root tbf rate "$1" burst 32kb latency 50ms \
	    >/dev/null 2>&1
}

judge=
[ "$(id -u)" = 0 ] && command -v tc >/dev/null 2>&1 && unshare -n true 2>/dev/null && judge=1
for r in 8bit 1kbit 10mbit 100mbit 1000gbit 18446744073709551615bit; do
	case $(parse "$r" parse_line_rate) in
	refused:*) bad "parse_line_rate refused '$r'"; continue ;;
	*) ok ;;
	esac
	[ -n "$judge" ] || continue
	if tbf "$r"; then ok; else bad "tc refused the line rate '$r'"; fi
done
# The judge refuses what parse_line_rate refuses at its edges.
if [ -n "$judge" ]; then
	for r in 7bit 147573952590gbit; do
		if tbf "$r"; then bad "tc took '$r': the judge is not tc"; else ok; fi
	done
fi

out=$(python3 "$src/tests/system/run-scenario" --line-pc 7bit /nonexistent 2>&1)
rc=$?
if [ "$rc" -eq 2 ] && echo "$out" | grep -q "line rate '7bit'"; then
	ok
else
	bad "run-scenario --line-pc 7bit: rc $rc, $out"
fi

echo "vnas-rate: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail host-vnas-rate" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
