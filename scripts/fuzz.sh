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
# fuzz_one runs one target. Go 1.26's fuzzing coordinator can report a
# bare "context deadline exceeded" when -fuzztime ends while a worker is
# mid-call (go.dev/issue/75804, fixed in Go 1.27), with no input at fault.
# Such a run is tried again, twice at most; any other failure, or one
# that writes a failing input to testdata/fuzz, fails at once.
# files counts the files under dir (0 when it does not exist).
files() {
	if [[ -d $1 ]]; then
		find "$1" -type f | wc -l
	else
		echo 0
	fi
}

fuzz_one() {
	local pkg=$1 name=$2 corpus=$3 out rc before after
	for attempt in 1 2 3; do
		before=$(files "$corpus")
		rc=0
		out=$(go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" 2>&1) || rc=$?
		printf '%s\n' "$out"
		((rc == 0)) && return 0
		after=$(files "$corpus")
		if ((after != before)) || ! grep -q '^    context deadline exceeded$' <<<"$out" || ((attempt == 3)); then
			return "$rc"
		fi
		echo "== fuzz $pkg $name: the coordinator's deadline race (go.dev/issue/75804), no failing input; again"
	done
}

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
		fuzz_one "$pkg" "$name" "$dir/testdata/fuzz/$name"
		count=$((count + 1))
	done
done

if ((count == 0)); then
	echo "fuzz: no fuzz targets found"
else
	echo "fuzz: $count fuzz target(s) ran for $fuzztime each"
fi
