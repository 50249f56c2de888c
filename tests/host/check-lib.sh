# Shared by the host scripts: counters and the check helper. The caller
# sets pass=0 fail=0 and $tmp (a scratch directory) before use.
# (Helpers use _names: sh has no locals.)
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() {
	_what=$1
	shift
	if "$@" > "$tmp/out" 2>&1; then ok "$_what"; else
		bad "$_what"
		sed 's/^/     /' "$tmp/out"
	fi
}
