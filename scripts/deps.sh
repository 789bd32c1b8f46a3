#!/usr/bin/env bash
# Installs the Debian packages edged's tests need, if any is missing.
# Does nothing (quickly) when all are present. Uses sudo when not root.
# Set DEPS_APT_UPDATED=1 if the caller has just run apt-get update.
set -euo pipefail

packages=(
	qemu-user-static # test-arm, check-binaries: qemu-aarch64-static, qemu-arm-static
	file             # check-binaries
	python3-pymodbus # Modbus interop tests (soon)
	mbpoll           # Modbus interop tests (soon)
	socat            # serial/TCP plumbing in tests (soon)
)

if ! command -v dpkg-query >/dev/null; then
	echo "deps: dpkg-query not found: this script needs Debian (or a derivative)." >&2
	echo "deps: install by hand: ${packages[*]}" >&2
	exit 1
fi

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	if [[ $status != "install ok installed" ]]; then
		missing+=("$p")
	fi
done
if ((${#missing[@]} == 0)); then
	exit 0
fi

sudo=()
if (($(id -u) != 0)); then
	if ! command -v sudo >/dev/null; then
		echo "deps: missing ${missing[*]}; not root and no sudo: install them as root." >&2
		exit 1
	fi
	sudo=(sudo)
fi

echo "deps: installing ${missing[*]}"
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600)
if [[ ${DEPS_APT_UPDATED:-} != 1 ]]; then
	"${apt[@]}" update -q
fi
"${apt[@]}" install -y -q --no-install-recommends "${missing[@]}" </dev/null
