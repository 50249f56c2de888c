#!/bin/sh
# Host integration test: starts each daemon in a temporary socket
# directory and talks to it through socat (a client nobody here wrote),
# checked with jq, and through nasctl. Ends with "host: N passed, N failed";
# appends "P F host" to $NAS_SUMMARY when set.
# Usage: daemons.sh BINDIR SRCDIR   (UPDATE_GOLDEN=1 rewrites the golden files)
set -u
bin=$1 src=$2
daemons="raidd cryptd netd powerd"
tmp=$(mktemp -d /tmp/nas-host.XXXXXX)
run=$tmp/run
pass=0 fail=0
pids=

cleanup() {
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

. "$(dirname "$0")/check-lib.sh"
# status WANT DESCRIPTION COMMAND...: passes when the command exits WANT;
# its output stays in $tmp/last for the checks that follow.
status() {
	_want=$1 _what=$2
	shift 2
	"$@" > "$tmp/last" 2>&1
	_rc=$?
	if [ "$_rc" -eq "$_want" ]; then ok "$_what"; else
		bad "$_what (exit $_rc, want $_want)"
		sed 's/^/     /' "$tmp/last"
	fi
}

for tool in socat jq; do
	command -v $tool > /dev/null || { echo "daemons.sh: $tool is needed" >&2; exit 1; }
done

# rpc DAEMON JSON: one line to the daemon's socket, its answer on stdout.
rpc() {
	printf '%s\n' "$2" | socat -t 2 - "UNIX-CONNECT:$run/$1.sock"
}
# answer DAEMON JSON JQ-FILTER: the answer satisfies the filter.
answer() {
	rpc "$1" "$2" > "$tmp/ans" || return 1
	jq -e "$3" "$tmp/ans" > /dev/null || { cat "$tmp/ans"; return 1; }
}
nasctl() {
	"$bin/nasctl" -S "$run" "$@"
}
wait_socket() {
	for _ in $(seq 100); do
		[ -S "$run/$1.sock" ] && return 0
		sleep 0.1
	done
	return 1
}
mode_of() {
	stat -c %a "$1"
}

good_conf() {
	printf '[api]\nmax_clients = 16\n[log]\nlevel = info\nsyslog = no\n' > "$tmp/$1.ini"
}

# ---- -n: check and print the configuration ----
for d in $daemons; do
	[ -x "$bin/$d" ] || continue
	good_conf "$d"
	status 0 "$d -n on a good config" "$bin/$d" -n -c "$tmp/$d.ini"
	check "$d -n prints the effective config" grep -qx 'max_clients = 16' "$tmp/last"
	printf '[api]\nmax_clients = 0\n' > "$tmp/bad.ini"
	status 1 "$d -n on a bad config" "$bin/$d" -n -c "$tmp/bad.ini"
	check "$d -n error names file, section and key" \
		grep -qF "$tmp/bad.ini: [api] max_clients:" "$tmp/last"
	printf '[api]\nmax_client = 5\n' > "$tmp/bad.ini"
	status 1 "$d -n refuses an unknown key" "$bin/$d" -n -c "$tmp/bad.ini"
	check "$d -n names the unknown key" grep -qF "[api] max_client: unknown key" "$tmp/last"
	status 1 "$d -n on a missing -c file" "$bin/$d" -n -c "$tmp/none.ini"
	status 1 "$d -n refuses a directory as -c" "$bin/$d" -n -c "$tmp"
	check "$d -n says the directory is not a file" grep -qF "$tmp: not a regular file" "$tmp/last"
	status 2 "$d with a bad option" "$bin/$d" -Z
done

# ---- golden: -n on the shipped example configs ----
for d in $daemons; do
	[ -x "$bin/$d" ] || continue
	golden=$src/tests/host/golden/$d-n.txt
	(cd "$src" && "$bin/$d" -n -c "rootfs-overlay/etc/nas/$d.ini") > "$tmp/$d-n.txt" 2>&1
	[ "${UPDATE_GOLDEN:-}" = 1 ] && cp "$tmp/$d-n.txt" "$golden"
	check "$d -n on the shipped config matches golden/$d-n.txt" diff -u "$golden" "$tmp/$d-n.txt"
done

# ---- nasctl before any daemon runs ----
mkdir -p "$run"
status 3 "nasctl call with an empty socket dir exits 3" nasctl call raidd system.version
status 2 "nasctl without a command exits 2" nasctl
status 2 "nasctl call without a method exits 2" nasctl call raidd
status 2 "nasctl with an unknown option exits 2" nasctl --bogus call raidd system.version

# ---- each daemon, running ----
for d in $daemons; do
	if [ ! -x "$bin/$d" ]; then
		bad "$d is not built ($bin/$d)"
		continue
	fi
	good_conf "$d"
	"$bin/$d" -f -S "$run" -c "$tmp/$d.ini" 2> "$tmp/$d.log" &
	pid=$!
	pids="$pids $pid"
	if ! wait_socket "$d"; then
		bad "$d starts and creates $run/$d.sock"
		sed 's/^/     /' "$tmp/$d.log"
		continue
	fi
	ok "$d starts and creates $run/$d.sock"
	# A passphrase in memory must not reach a core file.
	check "$d runs with a core size limit of 0" \
		grep -Eq '^Max core file size +0 +0 ' "/proc/$pid/limits"
	if [ "$(id -u)" -ne 0 ]; then
		# Not dumpable: the kernel gives its /proc files to root.
		check "$d is not dumpable" test "$(stat -c %u "/proc/$pid/mem")" -eq 0
	fi
	check "$d socket is mode 0660" test "$(mode_of "$run/$d.sock")" = 660
	check "$d system.version names $d" answer "$d" \
		'{"jsonrpc":"2.0","method":"system.version","id":1}' \
		".id == 1 and .result.daemon == \"$d\" and (.result.version | type) == \"string\""
	check "$d system.methods lists job.* and events.*" answer "$d" \
		'{"jsonrpc":"2.0","method":"system.methods","id":2}' \
		'(["job.list","job.status","job.cancel","events.subscribe","system.version"] - [.result[].name]) == []'
	check "$d system.methods gives each a policy" answer "$d" \
		'{"jsonrpc":"2.0","method":"system.methods","id":2}' \
		'all(.result[]; (.params | type) == "array" and (.mutates | type) == "boolean")'
	check "$d parse error is -32700" answer "$d" '{"jsonrpc":"2.0","method":' \
		'.error.code == -32700 and .id == null'
	check "$d unknown method is -32601" answer "$d" \
		'{"jsonrpc":"2.0","method":"no.such","id":"x"}' '.error.code == -32601 and .id == "x"'
	check "$d wrong params are -32602" answer "$d" \
		'{"jsonrpc":"2.0","method":"job.status","params":{"id":"one"},"id":3}' \
		'.error.code == -32602'
	check "$d batch answers requests, not notifications" answer "$d" \
		'[{"jsonrpc":"2.0","method":"system.version","id":1},{"jsonrpc":"2.0","method":"system.version"},{"jsonrpc":"2.0","method":"job.list","id":2},7]' \
		'length == 3 and .[0].id == 1 and .[1].id == 2 and .[2].error.code == -32600'
	check "$d notification alone gets no answer" sh -c \
		"test -z \"\$(printf '%s\n' '{\"jsonrpc\":\"2.0\",\"method\":\"system.version\"}' | socat -t 2 - UNIX-CONNECT:$run/$d.sock)\""
	check "$d job.status of no job is -32003" answer "$d" \
		'{"jsonrpc":"2.0","method":"job.status","params":{"id":12345},"id":4}' \
		'.error.code == -32003'

	status 0 "nasctl call $d system.version exits 0" nasctl call "$d" system.version
	check "nasctl call $d system.version prints the name" grep -q "$d" "$tmp/last"
	status 0 "nasctl --json call $d system.version exits 0" nasctl --json call "$d" system.version
	check "nasctl --json prints the raw result" jq -e ".daemon == \"$d\"" "$tmp/last"
	status 0 "nasctl call $d job.list with params exits 0" nasctl call "$d" job.list '{}'
	status 1 "nasctl call $d no.such exits 1" nasctl call "$d" no.such
	check "nasctl prints the daemon's message" grep -q "no.such" "$tmp/last"
	status 1 "nasctl call $d with bad params exits 1" nasctl call "$d" job.status '{"id":"x"}'
	status 2 "nasctl call $d with params that are not JSON exits 2" \
		nasctl call "$d" job.list '{not json'
	printf '{\n  "id": 12345\n}\n' > "$tmp/params.json"
	status 1 "nasctl call $d --params-file reaches the method" \
		nasctl call "$d" job.status --params-file "$tmp/params.json"
	check "nasctl call $d --params-file: the daemon read the id" grep -q "12345" "$tmp/last"
	status 0 "nasctl call $d --params-file - reads stdin" \
		sh -c "echo '{}' | '$bin/nasctl' -S '$run' call '$d' job.list --params-file -"
	status 2 "nasctl call $d --params-file with an array exits 2" \
		sh -c "echo '[1]' | '$bin/nasctl' -S '$run' call '$d' job.list --params-file -"
	check "nasctl call $d says where the params are wrong" grep -qx \
		"nasctl: call: standard input: line 1, column 1: expected a JSON object" "$tmp/last"

	# SIGHUP with a broken file: refused, the daemon serves on.
	printf '[api]\nmax_clients = many\n' > "$tmp/$d.ini"
	kill -HUP "$pid"
	check "$d still answers after SIGHUP with a broken config" answer "$d" \
		'{"jsonrpc":"2.0","method":"system.version","id":5}' ".result.daemon == \"$d\""
	check "$d logs the refused reload naming the key" \
		grep -q "reload refused.*\[api\] max_clients" "$tmp/$d.log"
	good_conf "$d"
	kill -HUP "$pid"
	check "$d answers after SIGHUP with a good config" answer "$d" \
		'{"jsonrpc":"2.0","method":"system.version","id":6}' ".result.daemon == \"$d\""
done

status 0 "nasctl version exits 0 with the daemons running" nasctl version

# ---- nasctl against a daemon that lies: hostile strings, secrets ----
# socat serves $fake/raidd.sock: each connection's first line is kept in
# requests, the answer is the file answer (a result, then maybe an event),
# or the file methods for system.methods.
fake=$tmp/fake
mkdir -p "$fake"
cat > "$fake/serve.sh" <<'EOF'
#!/bin/sh
IFS= read -r line
dir=$(dirname "$0")
printf '%s\n' "$line" >> "$dir/requests"
case $line in
*'"method":"system.methods"'*) cat "$dir/methods" ;;
*) cat "$dir/answer" ;;
esac
EOF
chmod +x "$fake/serve.sh"
socat UNIX-LISTEN:"$fake/raidd.sock",fork EXEC:"$fake/serve.sh" 2>/dev/null &
pids="$pids $!"
for _ in $(seq 100); do [ -S "$fake/raidd.sock" ] && break; sleep 0.1; done
fakectl() {
	LC_ALL=C "$bin/nasctl" -S "$fake" "$@"
}
# No C0 control but newline, no DEL, no byte from 0x80 up (LC_ALL=C).
clean() {
	! LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177-\377]')" "$1"
}
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":[{"name":"bay1","device":"sda","size_bytes":1000,"model":"\u001b]0;owned\u0007\u001b[2JEVIL\u009b","serial":"S\u007f1","state":"free"}]}' > "$fake/answer"
status 0 "nasctl disk list from a hostile daemon exits 0" fakectl disk list
check "nasctl disk list escapes a hostile model" \
	grep -qF '\x1b]0;owned\x07\x1b[2JEVIL\u009b' "$tmp/last"
check "nasctl disk list prints no control byte" clean "$tmp/last"
status 0 "nasctl --json disk list from a hostile daemon exits 0" fakectl --json disk list
check "nasctl --json escapes DEL and C1 too" grep -qF '"S\u007f1"' "$tmp/last"
check "nasctl --json prints no control byte" clean "$tmp/last"
check "nasctl --json is still JSON" jq -e '.[0].model | startswith("\u001b]0;")' "$tmp/last"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"disk \u001b[8mhidden\u001b[0m"}}' > "$fake/answer"
status 1 "nasctl with a hostile error message exits 1" fakectl volume list
check "nasctl escapes a hostile error message" \
	grep -qF 'disk \x1b[8mhidden\x1b[0m (code -32000)' "$tmp/last"
check "nasctl error prints no control byte" clean "$tmp/last"
printf '%s\n%s\n' '{"jsonrpc":"2.0","id":1,"result":{"topics":["disk"]}}' \
	'{"jsonrpc":"2.0","method":"disk.added","params":{"disk":"sdb\u001b[1;1H","model":"\u009b2J"}}' \
	> "$fake/answer"
status 3 "nasctl events from a hostile daemon ends with 3" fakectl events raidd
check "nasctl events escapes a hostile event" \
	grep -qF 'disk.added disk="sdb\u001b[1;1H" model="\u009b2J"' "$tmp/last"
check "nasctl events prints no control byte" clean "$tmp/last"

printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"ok":true}}' > "$fake/answer"
: > "$fake/requests"
printf 'pass phrase "7\n{"device": "/dev/md0"}\n' > "$tmp/stdin"
status 0 "nasctl call --secret reads the secret from stdin" sh -c \
	"LC_ALL=C '$bin/nasctl' -S '$fake' call raidd crypt.open --secret passphrase --params-file - < '$tmp/stdin'"
check "nasctl call --secret sends it as a member, escaped" grep -qxF \
	'{"jsonrpc":"2.0","method":"crypt.open","params":{"device":"/dev/md0","passphrase":"pass phrase \"7"},"id":1}' \
	"$fake/requests"
status 2 "nasctl call --secret with nothing on stdin exits 2" sh -c \
	"'$bin/nasctl' -S '$fake' call raidd crypt.open --secret passphrase < /dev/null"
check "nasctl call --secret does not look up system.methods" \
	test "$(grep -c system.methods "$fake/requests")" = 0
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":[{"name":"crypt.open","params":[{"name":"device","type":"string","required":true},{"name":"passphrase","type":"string","required":true,"secret":true}]}]}' > "$fake/methods"
status 0 "nasctl call with a secret on the command line still calls" \
	fakectl call raidd crypt.open '{"device": "/dev/md0", "passphrase": "seen by ps"}'
check "nasctl call warns when system.methods marks a param on argv secret" grep -qxF \
	"nasctl: call: passphrase is a secret, and the command line is not: use --secret passphrase or --params-file" \
	"$tmp/last"

# ---- SIGTERM: a clean stop that removes the socket ----
for d in $daemons; do
	[ -S "$run/$d.sock" ] || continue
	pid=$(for p in $pids; do [ "$(cat /proc/$p/comm 2>/dev/null)" = "$d" ] && echo "$p"; done)
	[ -n "$pid" ] || { bad "$d: no process found"; continue; }
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	if [ "$rc" -eq 0 ]; then ok "$d exits 0 on SIGTERM"; else bad "$d exits $rc on SIGTERM"; fi
	check "$d removed its socket" test ! -e "$run/$d.sock"
	pids=$(echo "$pids" | tr ' ' '\n' | grep -vx "$pid" | tr '\n' ' ')
done
status 3 "nasctl call exits 3 once the daemons are gone" nasctl call powerd system.version

echo "host: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail host" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
