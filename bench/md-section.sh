#!/bin/sh
# Replaces one section of a Markdown file that a tool owns, between the
# lines "<!-- begin NAME -->" and "<!-- end NAME -->", with standard
# input; appends it when the file has none. Other sections stay as they
# are, so make bench, make fuzz-long and make check-long share
# docs/benchmarks.md.
# Usage: md-section.sh FILE NAME < CONTENT
set -eu
file=$1 name=$2
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.new"' EXIT
cat > "$tmp"
touch "$file"
awk -v name="$name" -v new="$tmp" '
	function emit(   line) {
		print "<!-- begin " name " -->"
		while ((getline line < new) > 0) print line
		print "<!-- end " name " -->"
		done = 1
	}
	$0 == "<!-- begin " name " -->" { skip = 1; emit(); next }
	$0 == "<!-- end " name " -->" { skip = 0; next }
	!skip { print }
	END { if (!done) { print ""; emit() } }
' "$file" > "$tmp.new"
mv "$tmp.new" "$file"
