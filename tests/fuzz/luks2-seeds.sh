#!/bin/sh
# Seeds for fuzz-luks2, made at build time by Debian's cryptsetup (none
# of cryptsetup's own test images are copied): LUKS2 headers with each
# KDF, two keyslots, a token-less label, a token, a 32 KiB metadata area, and a
# LUKS1 header; each as mode byte 0 + the header area, and as mode 4 +
# its JSON text.  No cryptsetup: no seeds (the committed corpus remains).
# Usage: luks2-seeds.sh OUTDIR
set -u
out=$1
mkdir -p "$out"
command -v cryptsetup >/dev/null 2>&1 || exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'seed passphrase' > "$tmp/k"
printf 'other passphrase' > "$tmp/k2"
n=0
seed() {	# seed NAME HEADER-BYTES cryptsetup-options...
	name=$1 bytes=$2
	shift 2
	rm -f "$tmp/img"
	truncate -s 20M "$tmp/img"
	cryptsetup luksFormat -q --key-file "$tmp/k" "$@" "$tmp/img" >/dev/null 2>&1 || return 0
	case "$*" in *luks1*) ;; *)
		cryptsetup luksAddKey -q --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
			--key-file "$tmp/k" "$tmp/img" "$tmp/k2" >/dev/null 2>&1
		# A token naming keyslot 1, as systemd-cryptenroll leaves them.
		[ "$name" = token ] && echo '{"type":"x-seed","keyslots":["1"]}' |
			cryptsetup token import "$tmp/img" >/dev/null 2>&1
		# The JSON text alone, behind mode 4.
		{ printf '\004'; dd if="$tmp/img" bs=4096 skip=1 count=3 2>/dev/null |
			tr -d '\000'; } > "$out/json-$name"
	esac
	{ printf '\000'; head -c "$bytes" "$tmp/img"; } > "$out/dev-$name"
	n=$((n + 1))
}
fast="--pbkdf pbkdf2 --pbkdf-force-iterations 1000"
argon="--pbkdf-memory 32 --pbkdf-force-iterations 4 --pbkdf-parallel 1"
seed pbkdf2 32768 --type luks2 $fast
seed argon2i 32768 --type luks2 --pbkdf argon2i $argon
seed argon2id 32768 --type luks2 --pbkdf argon2id $argon --label seedlabel
seed sector512 32768 --type luks2 $fast --sector-size 512 --cipher aes-xts-plain64 --key-size 256
seed meta32k 65536 --type luks2 $fast --luks2-metadata-size 32k
seed token 32768 --type luks2 $fast
seed luks1 4096 --type luks1 --iter-time 1
exit 0
