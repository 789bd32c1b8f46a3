#!/usr/bin/env bash
# Runs every fuzz target in the module for FUZZTIME each (default 10s).
# Targets are discovered per package with `go test -list '^Fuzz'`; with no
# fuzz targets at all it says so and succeeds.
# Usage: FUZZTIME=30s scripts/fuzz.sh [packages...]   (default ./...)
set -euo pipefail

fuzztime=${FUZZTIME:-10s}
(($# > 0)) || set -- ./...

mapfile -t pkgs < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}' "$@")
root=$(go list -m -f '{{.Dir}}')
count=0
for dir in "${pkgs[@]}"; do
	[[ -n $dir ]] || continue
	pkg=./${dir#"$root"/}
	[[ $dir == "$root" ]] && pkg=.
	# `go test -list` prints the names, then an "ok" line; keep the names.
	listing=$(go test -list '^Fuzz' "$pkg")
	mapfile -t names < <(grep -E '^Fuzz[A-Za-z0-9_]*$' <<<"$listing" || true)
	for name in "${names[@]}"; do
		echo "== fuzz $pkg $name for $fuzztime"
		go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg"
		count=$((count + 1))
	done
done

if ((count == 0)); then
	echo "fuzz: no fuzz targets found"
else
	echo "fuzz: $count fuzz target(s) ran for $fuzztime each"
fi
