#!/bin/sh
# Holds cryptd's LUKS2 library (through build/bin/luks2-tool) against
# Debian's cryptsetup on plain files (cryptsetup reads and writes headers
# of a file without device-mapper):
#  - headers cryptd writes pass `cryptsetup luksDump` and
#    `cryptsetup open --test-passphrase`, and give the same volume key;
#  - headers cryptsetup writes (pbkdf2, argon2i, argon2id, LUKS1) are read
#    and unlocked by cryptd with the same volume key;
#  - key add/change/remove done on one side is seen by the other;
#  - a damaged primary header is read from the secondary and repaired;
#  - an unknown requirement is refused and the header left unchanged.
# KDF costs are the smallest allowed, so the whole script takes seconds.
# Usage: luks2.sh [BINDIR]
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
bindir=${1:-$src/build/bin}
tool=$bindir/luks2-tool
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/host/check-lib.sh
. "$src/tests/host/check-lib.sh"

if ! command -v cryptsetup >/dev/null 2>&1 || [ ! -x "$tool" ]; then
	echo "luks2: cryptsetup or $tool missing"
	echo "luks2: 0 passed, 1 failed"
	[ -n "${NAS_SUMMARY:-}" ] && echo "0 1 host-luks2" >> "$NAS_SUMMARY"
	exit 1
fi
img=$tmp/img
CS_FAST="--pbkdf pbkdf2 --pbkdf-force-iterations 1000"
CS_ARGON="--pbkdf-memory 32 --pbkdf-force-iterations 4 --pbkdf-parallel 1"
printf 'first secret' > "$tmp/k1"
printf 'second secret' > "$tmp/k2"
printf 'third secret' > "$tmp/k3"

fresh() { rm -f "$img"; truncate -s 24M "$img"; }
# our_key FILE KEYFILE: the volume key as cryptd unlocks it.
our_key() { (cat "$2"; echo) | "$tool" unlock "$1" --key | sed -n 2p; }
# cs_key FILE KEYFILE: the volume key as cryptsetup dumps it.
cs_key() {
	cryptsetup luksDump -q --dump-volume-key --key-file "$2" "$1" 2>/dev/null |
		sed -n '/^MK dump:/,$p' | sed 's/^MK dump://' | tr -d ' \t\n'
}
same_key() { a=$(our_key "$1" "$2") && b=$(cs_key "$1" "$2") && [ -n "$a" ] && [ "$a" = "$b" ]; }
cs_opens() { cryptsetup open --test-passphrase --key-file "$2" "$1"; }
us_opens() { (cat "$2"; echo) | "$tool" unlock "$1" >/dev/null; }
not() { ! "$@"; }

# ---- headers cryptd writes ----
for kdf in pbkdf2 argon2i argon2id; do
	fresh
	check "cryptd $kdf format" sh -c "(cat $tmp/k1; echo) | $tool --kdf $kdf format $img"
	check "cryptd $kdf: luksDump reads it" cryptsetup luksDump "$img"
	check "cryptd $kdf: cryptsetup opens it" cs_opens "$img" "$tmp/k1"
	check "cryptd $kdf: same volume key" same_key "$img" "$tmp/k1"
	check "cryptd $kdf: wrong passphrase refused by cryptsetup" not cs_opens "$img" "$tmp/k2"
done
check "cryptd format: 4096-byte sectors" sh -c "cryptsetup luksDump $img | grep -q 'sector: 4096'"
rm -f "$img"; truncate -s 17001K "$img"
check "cryptd format: 512-byte sectors where 4096 do not fit" sh -c \
	"(cat $tmp/k1; echo) | $tool format $img && cryptsetup luksDump $img | grep -q 'sector: 512 '"

# ---- cryptd's key changes, seen by cryptsetup ----
fresh
(cat "$tmp/k1"; echo) | "$tool" format "$img" >/dev/null
check "cryptd add: slot 1" sh -c "(cat $tmp/k1; echo; cat $tmp/k2; echo) | $tool add $img | grep -q 'slot 1'"
check "cryptd add: cryptsetup opens with the new one" cs_opens "$img" "$tmp/k2"
check "cryptd change: done" sh -c "(cat $tmp/k2; echo; cat $tmp/k3; echo) | $tool change $img"
check "cryptd change: cryptsetup opens with the new one" cs_opens "$img" "$tmp/k3"
check "cryptd change: the old one is refused" not cs_opens "$img" "$tmp/k2"
check "cryptd remove: done" sh -c "(cat $tmp/k3; echo) | $tool remove $img"
check "cryptd remove: cryptsetup refuses it" not cs_opens "$img" "$tmp/k3"
check "cryptd remove: the other still opens" cs_opens "$img" "$tmp/k1"
check "cryptd key changes: luksDump still reads it" cryptsetup luksDump "$img"

# ---- headers cryptsetup writes ----
for kdf in pbkdf2 argon2i argon2id; do
	fresh
	if [ $kdf = pbkdf2 ]; then opts=$CS_FAST; else opts="--pbkdf $kdf $CS_ARGON"; fi
	# shellcheck disable=SC2086
	cryptsetup luksFormat -q --type luks2 $opts --key-file "$tmp/k1" "$img" >/dev/null 2>&1
	check "cryptsetup $kdf: cryptd reads it" "$tool" dump "$img"
	check "cryptsetup $kdf: cryptd opens it, same key" same_key "$img" "$tmp/k1"
	check "cryptsetup $kdf: wrong passphrase refused by cryptd" not us_opens "$img" "$tmp/k2"
	# shellcheck disable=SC2086
	cryptsetup luksAddKey -q $opts --key-file "$tmp/k1" "$img" "$tmp/k2" >/dev/null 2>&1
	check "cryptsetup $kdf add: cryptd opens with the new one" us_opens "$img" "$tmp/k2"
	cryptsetup luksRemoveKey -q "$img" "$tmp/k1" >/dev/null 2>&1
	check "cryptsetup $kdf remove: cryptd refuses the old one" not us_opens "$img" "$tmp/k1"
	check "cryptsetup $kdf: cryptd adds a key to it" sh -c \
		"(cat $tmp/k2; echo; cat $tmp/k3; echo) | $tool add $img"
	check "cryptsetup $kdf: cryptsetup opens cryptd's key" cs_opens "$img" "$tmp/k3"
done
fresh
# shellcheck disable=SC2086
cryptsetup luksFormat -q --type luks1 --iter-time 1 --key-file "$tmp/k1" "$img" >/dev/null 2>&1
check "cryptsetup luks1: cryptd reads it" sh -c "$tool dump $img | grep -q 'version 1'"
check "cryptsetup luks1: cryptd opens it, same key" same_key "$img" "$tmp/k1"
check "cryptsetup luks1: cryptd refuses to write it" not sh -c \
	"(cat $tmp/k1; echo; cat $tmp/k2; echo) | $tool add $img"

# ---- a token (systemd-cryptenroll's kind) naming the keyslot cryptd removes ----
fresh
cryptsetup luksFormat -q --type luks2 $CS_FAST --key-file "$tmp/k1" "$img" >/dev/null 2>&1
# shellcheck disable=SC2086
cryptsetup luksAddKey -q $CS_FAST --key-file "$tmp/k1" "$img" "$tmp/k2" >/dev/null 2>&1
echo '{"type":"x-test","keyslots":["1"]}' > "$tmp/token.json"
cryptsetup token import --json-file "$tmp/token.json" "$img" >/dev/null 2>&1
check "token: cryptd reads it" "$tool" dump "$img"
check "token: cryptd removes the keyslot it names" sh -c "(cat $tmp/k2; echo) | $tool remove $img"
check "token: cryptsetup still reads the header" cryptsetup luksDump "$img"
check "token: cryptsetup opens with the other key" cs_opens "$img" "$tmp/k1"
check "token: it names no keyslot now" sh -c \
	"cryptsetup token export --token-id 0 $img | grep -q '\"keyslots\":\\[\\]'"

# ---- damage and refusal ----
fresh
(cat "$tmp/k1"; echo) | "$tool" format "$img" >/dev/null
dd if=/dev/urandom of="$img" bs=512 count=8 conv=notrunc 2>/dev/null
check "damaged primary: cryptd reads the secondary" sh -c "$tool dump $img | grep -q 'repair 1'"
check "damaged primary: cryptd opens it" us_opens "$img" "$tmp/k1"
check "damaged primary: cryptd repairs it" "$tool" repair "$img"
check "damaged primary: cryptsetup reads the repaired one" cs_opens "$img" "$tmp/k1"
fresh
cryptsetup luksFormat -q --type luks2 $CS_FAST --key-file "$tmp/k1" "$img" >/dev/null 2>&1
# A requirement through cryptsetup's own tool is not offered; write one.
python3 - "$img" <<'EOF'
import hashlib, json, struct, sys
f = open(sys.argv[1], "r+b")
for off in (0, 16384):
    f.seek(off); b = bytearray(f.read(16384))
    j = json.loads(b[4096:].split(b"\0")[0])
    j["config"]["requirements"] = {"mandatory": ["future-thing"]}
    t = json.dumps(j).encode()
    b[4096:] = t + bytes(16384 - 4096 - len(t))
    b[448:512] = bytes(64)
    b[448:480] = hashlib.sha256(bytes(b)).digest()
    f.seek(off); f.write(b)
EOF
sum=$(sha256sum < "$img")
check "unknown requirement: cryptd refuses to read it" not "$tool" dump "$img"
check "unknown requirement: cryptd refuses to open it" not us_opens "$img" "$tmp/k1"
check "unknown requirement: cryptd refuses to repair it" not "$tool" repair "$img"
check "unknown requirement: header unchanged" [ "$(sha256sum < "$img")" = "$sum" ]

echo "luks2: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail host-luks2" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
