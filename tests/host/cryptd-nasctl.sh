#!/bin/sh
# cryptd driven by nasctl on the host, the keyring and device-mapper
# simulated (CRYPTD_SIMULATE=1) and the device a plain file: format with
# the passphrase from stdin, open, list, wrong passphrase refused, key
# change, close; the passphrases appear in no log line, no command line
# and no environment; the header cryptd wrote opens in cryptsetup.
# Usage: cryptd-nasctl.sh [BINDIR]
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
bindir=${1:-$src/build/bin}
pass=0 fail=0
tmp=$(mktemp -d)
# shellcheck source=tests/host/check-lib.sh
. "$src/tests/host/check-lib.sh"
not() { ! "$@"; }
cat > "$tmp/cryptd.ini" <<INI
[api]
admin_group = root
read_group = root
[kdf]
max_memory_kib = 1024
time_ms = 50
[cryptd]
metrics_dir = $tmp/metrics
INI
CRYPTD_SIMULATE=1 "$bindir/cryptd" -f -c "$tmp/cryptd.ini" -S "$tmp" > "$tmp/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
i=0
while [ ! -S "$tmp/cryptd.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
dev=$tmp/disk
truncate -s 20M "$dev"
n() { "$bindir/nasctl" -S "$tmp" "$@"; }
P1="first-Passphrase-7f3a"
P2="second-Passphrase-91c2"

check "format from stdin" sh -c "echo '$P1' | $bindir/nasctl -S $tmp crypt format $dev"
check "show: LUKS2, 4096-byte sectors" sh -c \
	"$bindir/nasctl -S $tmp --json crypt show $dev | grep -q '\"sector_size\": *4096'"
check "wrong passphrase refused" not sh -c "echo wrong | $bindir/nasctl -S $tmp crypt open $dev v1"
check "right one waits out the back-off" sh -c \
	"sleep 1.1; echo '$P1' | $bindir/nasctl -S $tmp crypt open $dev v1"
check "list shows the mapping" sh -c "$bindir/nasctl -S $tmp crypt list | grep -q v1"
check "close" n crypt close v1
check "key change (old, new from stdin)" sh -c \
	"printf '%s\n%s\n' '$P1' '$P2' | $bindir/nasctl -S $tmp key change $dev"
check "old passphrase refused" not sh -c "echo '$P1' | $bindir/nasctl -S $tmp crypt open $dev v1"
check "new passphrase opens" sh -c \
	"sleep 1.1; echo '$P2' | $bindir/nasctl -S $tmp crypt open $dev v1 && $bindir/nasctl -S $tmp crypt close v1"
check "a passphrase on the command line is not taken" not sh -c \
	"$bindir/nasctl -S $tmp crypt open $dev v1 --passphrase '$P2' </dev/null"
if command -v cryptsetup >/dev/null 2>&1; then
	printf '%s' "$P2" > "$tmp/k"
	check "cryptsetup opens cryptd's header" cryptsetup open --test-passphrase --key-file "$tmp/k" "$dev"
	rm -f "$tmp/k"
fi
check "no passphrase in the log" not grep -q -e "$P1" -e "$P2" "$tmp/log"
check "no passphrase in cryptd's cmdline or environ" not grep -q -e "$P1" -e "$P2" \
	"/proc/$pid/cmdline" "/proc/$pid/environ"

echo "cryptd-nasctl: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail host-cryptd" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
