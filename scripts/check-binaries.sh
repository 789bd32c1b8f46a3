#!/usr/bin/env bash
# Checks the cross-built release binaries (run via `make check-binaries`,
# which builds them first):
#   - each is a statically linked ELF for the right machine (file(1)),
#   - each fits the size budget (12 MiB),
#   - each runs under qemu user-mode emulation and --version prints the
#     version it was stamped with.
# Usage: scripts/check-binaries.sh VERSION [BINDIR]
set -euo pipefail

if (($# < 1)); then
	echo "usage: $0 VERSION [BINDIR]" >&2
	exit 2
fi
version=$1
bindir=${2:-bin}
budget=$((12 * 1024 * 1024))

# binary name | what file(1) must say about the machine | emulator
targets=(
	"edged-linux-arm64|ELF 64-bit LSB executable, ARM aarch64|qemu-aarch64-static"
	"edged-linux-armv7|ELF 32-bit LSB executable, ARM, EABI5|qemu-arm-static"
)

for tool in file qemu-aarch64-static qemu-arm-static; do
	if ! command -v "$tool" >/dev/null; then
		echo "check-binaries: $tool not found (run scripts/deps.sh)" >&2
		exit 1
	fi
done

fail=0
for t in "${targets[@]}"; do
	IFS='|' read -r name machine emulator <<<"$t"
	bin=$bindir/$name
	if [[ ! -f $bin ]]; then
		echo "FAIL $bin: missing (build it with make arm64 armv7)"
		fail=1
		continue
	fi

	desc=$(file -b "$bin")
	if [[ $desc != *"$machine"* ]]; then
		echo "FAIL $bin: not an $machine binary: $desc"
		fail=1
	fi
	if [[ $desc != *"statically linked"* ]]; then
		echo "FAIL $bin: not statically linked: $desc"
		fail=1
	fi

	size=$(stat -c %s "$bin")
	mb=$(awk -v s="$size" 'BEGIN { printf "%.2f", s / 1048576 }')
	if ((size > budget)); then
		echo "FAIL $bin: $size bytes ($mb MB) exceeds the budget of $budget bytes (12 MB)"
		fail=1
	fi

	if ! out=$("$emulator" "$bin" --version 2>&1); then
		echo "FAIL $bin: '$emulator $bin --version' failed: $out"
		fail=1
		continue
	fi
	if [[ $out != "edged $version" ]]; then
		echo "FAIL $bin: --version printed '$out', want 'edged $version'"
		fail=1
		continue
	fi
	echo "ok   $bin: $size bytes ($mb MB, budget 12 MB), static $machine, --version under $emulator: $out"
done

if ((fail != 0)); then
	echo "check-binaries: FAILED" >&2
	exit 1
fi
echo "check-binaries: all binaries ok"
