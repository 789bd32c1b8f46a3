# shellcheck shell=bash
# apt-get as the project's scripts use it (scripts/deps.sh, scripts/image.sh,
# .ci/run), tolerant of a Debian mirror that is syncing: `apt-get update`
# exits 100 when any one index fails ("File has unexpected size ... Mirror
# sync in progress?"), though the indexes that loaded are usable. So:
#   - an update that fails is reported and not fatal: what needs the
#     packages goes on with the indexes there are;
#   - only the download or install itself failing is retried, after an
#     update and a longer wait each time (APT_WAITS, seconds);
#   - .debs already in a cache are used whatever the indexes say;
#   - when the packages cannot be had, the failure is apt's own message.
# Sourced, not run. The caller may set the array apt_cmd (default
# apt-get with a lock timeout; deps.sh prefixes sudo) and APT_WAITS.

if [[ -z ${apt_cmd+x} ]]; then
	apt_cmd=(apt-get -o DPkg::Lock::Timeout=600)
fi
APT_WAITS=${APT_WAITS:-10 30 60 120}

# apt_update runs apt-get update; on failure it prints apt's errors and
# warnings and returns 0 anyway.
apt_update() {
	local out rc=0
	out=$("${apt_cmd[@]}" update -q 2>&1) || rc=$?
	if ((rc != 0)); then
		echo "apt: apt-get update exited $rc; going on with the package indexes that loaded:" >&2
		grep -E '^(E|W|Err):' <<<"$out" | sed 's/^/apt:   /' >&2 || true
	fi
	return 0
}

# apt_retry runs "${apt_cmd[@]}" "$@" (a download or an install); when it
# fails it updates the indexes, waits and tries again, once per entry of
# APT_WAITS. It returns apt's last exit code, after printing its output.
apt_retry() {
	local out rc wait
	for wait in $APT_WAITS last; do
		rc=0
		out=$("${apt_cmd[@]}" "$@" 2>&1) || rc=$?
		if ((rc == 0)); then
			[[ -z $out ]] || printf '%s\n' "$out"
			return 0
		fi
		if [[ $wait == last ]]; then
			printf '%s\n' "$out" >&2
			echo "apt: apt-get $* failed (exit $rc) after $(wc -w <<<"$APT_WAITS") retries" >&2
			return "$rc"
		fi
		echo "apt: apt-get $* failed (exit $rc): $(grep -E '^E:' <<<"$out" | head -1); again in ${wait}s" >&2
		sleep "$wait"
		apt_update
	done
}

# have_debs reports whether dir holds a .deb of each of the package name
# patterns (e.g. 'linux-image-*_armhf' 'busybox-static_*_armhf').
have_debs() {
	local dir=$1 p
	shift
	for p in "$@"; do
		compgen -G "$dir/${p}.deb" >/dev/null || return 1
	done
}

# image_debs puts into cache the .debs of the QEMU test image of Debian
# architecture deb: the kernel that linux-image-KFLAVOUR depends on and
# busybox-static. A cache that has them is used as it is.
image_debs() {
	local deb=$1 kflavour=$2 cache=$3 kpkg wait
	if have_debs "$cache" "linux-image-*_$deb" "busybox-static_*_$deb"; then
		return 0
	fi
	[[ -e $cache/.updated ]] || { apt_update && touch "$cache/.updated"; }
	# The kernel's versioned package, from the indexes; an index still
	# missing (the mirror is syncing) is waited for like a download.
	for wait in $APT_WAITS last; do
		kpkg=$(apt-cache depends "linux-image-$kflavour:$deb" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
		[[ -n $kpkg || $wait == last ]] && break
		echo "apt: no index names the kernel of linux-image-$kflavour:$deb yet; again in ${wait}s" >&2
		sleep "$wait"
		apt_update
	done
	if [[ -z $kpkg ]]; then
		echo "apt: the package indexes name no kernel for linux-image-$kflavour:$deb:" >&2
		apt-cache depends "linux-image-$kflavour:$deb" >&2 || true
		return 1
	fi
	(cd "$cache" && apt_retry download "$kpkg" "busybox-static:$deb")
}
