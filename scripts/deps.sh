#!/usr/bin/env bash
# Installs what edged's tests need: the Debian packages, if any is missing
# (with sudo when not root; Node.js and npm from Debian only when there is
# no node or npm at all), then the npm packages of the node-opcua interop
# test (npm ci, unless node_modules was installed from the same
# package-lock.json). Does nothing (quickly) when all are present.
# Set DEPS_APT_UPDATED=1 if the caller has just run apt-get update.
set -euo pipefail
cd "$(dirname "$0")/.."

# npm projects whose node_modules the tests use (never committed).
npm_dirs=(
	cmd/edged/testdata/nodeopcua # node-opcua client: cmd/edged/nodeopcua_test.go
	cmd/edged/testdata/sparkplug # Eclipse Tahu's decoder and MQTT.js: cmd/edged/sparkplug_test.go
)

# npm_deps runs npm ci in each of npm_dirs unless its node_modules holds
# the stamp of the same package-lock.json, node and npm. --prefer-offline
# takes what npm's cache has without asking the registry.
npm_deps() {
	local dir stamp want
	if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
		echo "deps: node or npm not found: the node-opcua interop test skips (fails under CI)." >&2
		return 0
	fi
	for dir in "${npm_dirs[@]}"; do
		stamp=$dir/node_modules/.deps-stamp
		want="$(sha256sum <"$dir/package-lock.json" | cut -d' ' -f1) node $(node --version) npm $(npm --version)"
		if [[ -f $stamp && $(<"$stamp") == "$want" ]]; then
			continue
		fi
		echo "deps: npm ci in $dir"
		(cd "$dir" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error --ignore-scripts </dev/null >/dev/null)
		echo "$want" >"$stamp"
	done
}

packages=(
	qemu-user-static # test-arm, check-binaries: qemu-aarch64-static, qemu-arm-static
	file             # check-binaries
	python3-pymodbus # Modbus interop tests, with the two below: without them
	python3-serial   # Debian's pymodbus cannot be imported (it only recommends
	python3-serial-asyncio # them), and the pymodbus tests skip
	mbpoll           # Modbus interop tests
	socat            # serial/TCP plumbing in tests (Modbus RTU over a pty pair)
	gcc              # test-race: the race detector needs cgo; the open62541 client
	libc6-dev        # test-race, the open62541 client
	libssl-dev       # the open62541 client (cmd/edged/open62541_test.go)
	openssl          # PEM certificates, chains and CRLs as integrators make them (opcua/pki, cmd/edged)
	qemu-system-arm  # test-image: qemu-system-aarch64, qemu-system-arm
	cpio             # image-arm64, image-armv7: the initramfs
	e2fsprogs        # test-image: the data disk (mke2fs -d)
	mosquitto        # the Sparkplug tests' MQTT broker (internal/testutil/mosquitto)
	util-linux       # test-robust: taskset pins a probe to each CPU
)
# Node.js and npm for the node-opcua interop test, from Debian, only where
# the machine has none (a Node.js from elsewhere is kept as it is).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	packages+=(nodejs npm)
fi

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
	npm_deps
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
# An update that fails on one index (a mirror mid-sync) is not fatal; the
# install retries (scripts/lib/apt.sh).
apt_cmd=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600)
# shellcheck source=lib/apt.sh
source scripts/lib/apt.sh
if [[ ${DEPS_APT_UPDATED:-} != 1 ]]; then
	apt_update
fi
apt_retry install -y -q --no-install-recommends "${missing[@]}" </dev/null
npm_deps
