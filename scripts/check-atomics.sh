#!/usr/bin/env bash
# Fails if any Go file in the repository calls the raw 64-bit sync/atomic
# functions (atomic.AddInt64, LoadUint64, ...). On 32-bit ARM (armv7) they
# fault unless the operand is 64-bit aligned, which Go guarantees only for
# the atomic.Int64 / atomic.Uint64 types: use those instead.
# Usage: scripts/check-atomics.sh [dir]   (default: the repository root)
set -euo pipefail

root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
funcs='(Add|Load|Store|CompareAndSwap|Swap)(Int64|Uint64)'
status=0

while IFS= read -r -d '' f; do
	grep -q '"sync/atomic"' "$f" || continue
	# Names sync/atomic is imported under in this file: atomic, an alias,
	# or '.' for a dot import.
	names=$(sed -nE 's/^[[:space:]]*(import[[:space:]]+)?([A-Za-z_][A-Za-z0-9_]*|\.)?[[:space:]]*"sync\/atomic".*/\2/p' "$f" | sort -u)
	pats=()
	for n in $names; do
		if [[ $n == . ]]; then
			pats+=("(^|[^A-Za-z0-9_.])${funcs}[[:space:]]*\\(")
		else
			pats+=("(^|[^A-Za-z0-9_.])${n}\\.${funcs}\\b")
		fi
	done
	# A plain import line leaves no name: the package name is atomic.
	if grep -qE '^[[:space:]]*(import[[:space:]]+)?"sync/atomic"' "$f"; then
		pats+=("(^|[^A-Za-z0-9_.])atomic\\.${funcs}\\b")
	fi
	re=$(IFS='|'; echo "${pats[*]}")
	# Drop // comments before matching, so prose about the rule passes.
	if hits=$(sed -E 's#//.*$##' "$f" | grep -nE "$re"); then
		while IFS= read -r h; do
			echo "${f#"$root"/}:$h"
		done <<<"$hits"
		status=1
	fi
done < <(find "$root" -name .git -prune -o -type f -name '*.go' -print0)

if ((status != 0)); then
	echo "check-atomics: use the atomic.Int64 / atomic.Uint64 types, not the raw 64-bit" >&2
	echo "check-atomics: sync/atomic functions (64-bit alignment on armv7)." >&2
fi
exit $status
