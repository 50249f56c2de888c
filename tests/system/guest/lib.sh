# Helpers for scenario scripts: . /scenario/lib.sh
# (sh has no local variables: helpers use names starting with _)
# fail MSG | ok MSG | check DESC CMD... | wait_for SECONDS CMD... |
# bay_dev N (prints sdX of bay N or fails) | port_name N | bays

failures=0
ok() { echo "ok   - $*"; }
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }
# check DESC CMD...: run CMD, report, count failures
check() {
	_ck_desc=$1; shift
	if "$@"; then ok "$_ck_desc"; else fail "$_ck_desc"; fi
}
# wait_for SECONDS CMD...: retry CMD every 0.2 s until it succeeds
wait_for() {
	_wf_n=$(($1 * 5)); shift
	while [ "$_wf_n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		_wf_n=$((_wf_n - 1))
	done
	return 1
}
bays() { nas-ini /etc/board.ini board bays; }
bay_dev() {
	# shellcheck disable=SC2086 # the glob is meant to match
	for p in $(nas-ini /etc/board.ini "bay$1" path); do
		for b in "$p"/block/*; do
			[ -e "$b" ] && { echo "${b##*/}"; return 0; }
		done
	done
	return 1
}
port_name() { nas-ini /etc/board.ini "port$1" name; }
# finish: exit 1 if any check failed
finish() {
	echo "$failures failure(s)"
	[ "$failures" -eq 0 ]
}
# all_ok: true while no check has failed
all_ok() { [ "$failures" -eq 0 ]; }
# nasctl with a time bound, so a daemon that hangs fails a check, not the run
nasctl() { timeout "${NASCTL_TIMEOUT:-60}" /usr/bin/nasctl "$@"; }
# json_ok FILTER CMD...: CMD must succeed and print JSON for which the jq
# FILTER is true (jq alone accepts empty input, so a failed CMD would pass)
json_ok() {
	_jf=$1; shift
	"$@" > /tmp/.json_ok 2>/dev/null || return 1
	[ -s /tmp/.json_ok ] && jq -e "$_jf" /tmp/.json_ok >/dev/null
}
