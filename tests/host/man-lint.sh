#!/bin/sh
# Lints the manual pages: every page must format without a single warning.
# Each page goes through man-db (`man --warnings`, i.e. groff -ww) and, when
# the Debian package mandoc is installed, through `mandoc -Tlint -Wwarning`;
# without man-db it falls back to `groff -man -ww -z`. A page also has to
# name itself: its .TH title and section must match its file name.
# Usage: man-lint.sh [PAGE...]   (default: docs/man/* next to this script)
# Prints one line per page and ends with "N passed, N failed"; appends
# "P F man-lint" to $NAS_SUMMARY when that is set. Exit 0 when all pass.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -gt 0 ] || set -- "$top"/docs/man/*.[1-8]
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
pass=0 fail=0

# lint PAGE: writes every complaint to $tmp; returns 0 when there is none.
lint() {
	: > "$tmp"
	if command -v man >/dev/null 2>&1; then
		LC_ALL=C.UTF-8 man --warnings -E UTF-8 -l -Tutf8 -Z "$1" \
		    2>>"$tmp" >/dev/null || echo "man: exit status $?" >> "$tmp"
	elif command -v groff >/dev/null 2>&1; then
		groff -man -ww -z "$1" 2>>"$tmp" || echo "groff: exit status $?" >> "$tmp"
	else
		echo "neither man nor groff is installed" >> "$tmp"
	fi
	if command -v mandoc >/dev/null 2>&1; then
		mandoc -Tlint -Wwarning "$1" >> "$tmp" 2>&1
	fi
	# .TH NAME SECTION must say what the file name says (raidd.conf.5 -> RAIDD.CONF 5).
	base=$(basename "$1")
	want="$(echo "${base%.*}" | tr '[:lower:]' '[:upper:]') ${base##*.}"
	got=$(sed -n 's/^\.TH  *\([^ ]*\)  *\([^ ]*\).*/\1 \2/p' "$1" | head -n 1 | tr -d '"')
	[ "$got" = "$want" ] || echo "$1: .TH says '$got', file name says '$want'" >> "$tmp"
	grep -q '^\.SH NAME' "$1" || echo "$1: no NAME section" >> "$tmp"
	[ ! -s "$tmp" ]
}

for page in "$@"; do
	if [ ! -f "$page" ]; then
		echo "FAIL $page: no such file"
		fail=$((fail + 1))
	elif lint "$page"; then
		echo "ok   ${page#"$top"/}"
		pass=$((pass + 1))
	else
		echo "FAIL ${page#"$top"/}"
		sed 's/^/     /' "$tmp"
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail man-lint" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
