// Package scripts tests the decision logic of the project's shell scripts
// with stubbed commands.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// aptStub is a fake apt-get and apt-cache: each call appends its arguments
// to calls.log; the answers come from the scenario's files: update.rc,
// download.rc (one exit code per line, one line per call, the last
// repeated) and depends.out (apt-cache depends' output, one file per
// call as depends.out.N, else depends.out).
const aptStub = `#!/usr/bin/env bash
dir=$(dirname "$0")
echo "$(basename "$0") $*" >>"$dir/calls.log"
while [[ $1 == -o ]]; do shift 2; done
next() { # the next exit code of $1.rc: line n for the n-th call
	local f=$dir/$1.rc n
	n=$(grep -c "^apt-get .*\b$1\b" "$dir/calls.log")
	sed -n "${n}p" "$f" | grep . || tail -1 "$f"
}
case "$(basename "$0") $1" in
"apt-cache depends")
	n=$(grep -c '^apt-cache depends' "$dir/calls.log")
	cat "$dir/depends.out.$n" 2>/dev/null || cat "$dir/depends.out" 2>/dev/null
	exit 0 ;;
"apt-get update")
	rc=$(next update)
	if [[ $rc != 0 ]]; then
		echo "E: Failed to fetch http://deb.debian.org/debian-security/dists/bookworm-security/main/binary-armhf/Packages.xz  File has unexpected size (66256 != 66212). Mirror sync in progress? [IP: 151.101.2.132 80]"
		echo "E: Some index files failed to download. They have been ignored, or old ones used instead."
	fi
	exit "$rc" ;;
"apt-get download"|"apt-get install")
	rc=$(next "$1")
	if [[ $rc != 0 ]]; then
		echo "E: Unable to locate package ${@: -1}"
		exit "$rc"
	fi
	[[ $1 == download ]] || exit 0
	shift
	for p in "$@"; do touch "$(echo "$p" | tr ':' '_')_1.0_fake.deb"; done
	exit 0 ;;
esac
echo "stub: unexpected call" >&2
exit 99
`

type aptScenario struct {
	update, download, install string // exit codes, one per line
	depends                   []string
}

// runApt runs body in bash with scripts/lib/apt.sh sourced and the stubs
// first on PATH (sleep recorded, not slept); it returns the exit code, the
// output and the calls made.
func runApt(t *testing.T, sc aptScenario, body string) (int, string, []string) {
	t.Helper()
	stub := t.TempDir()
	write := func(name, text string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(stub, name), []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("apt-get", aptStub, 0o755)
	write("apt-cache", aptStub, 0o755)
	write("sleep", "#!/bin/sh\necho \"sleep $*\" >>\"$(dirname \"$0\")/calls.log\"\n", 0o755)
	write("update.rc", sc.update+"\n", 0o644)
	write("download.rc", sc.download+"\n", 0o644)
	write("install.rc", sc.install+"\n", 0o644)
	write("calls.log", "", 0o644)
	for i, d := range sc.depends {
		write("depends.out."+string(rune('1'+i)), d, 0o644)
	}
	lib, err := filepath.Abs("lib/apt.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "set -euo pipefail; source "+lib+"; "+body)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PATH="+stub+":"+os.Getenv("PATH"), "STUB="+stub, "APT_WAITS=10 30 60")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(filepath.Join(stub, "calls.log"))
	return code, string(out), strings.Split(strings.TrimSpace(string(log)), "\n")
}

const kernelDepends = "linux-image-armmp:armhf\n  Depends: linux-image-6.1.0-50-armmp:armhf\n"

// TestAptMirrorSync: the decisions of scripts/lib/apt.sh, which image.sh,
// deps.sh and .ci/run share, while a Debian mirror is syncing.
func TestAptMirrorSync(t *testing.T) {
	const image = `mkdir cache; image_debs armhf armmp cache; ls cache`
	t.Run("update fails on one index: the download goes on", func(t *testing.T) {
		code, out, calls := runApt(t, aptScenario{update: "100", download: "0", depends: []string{kernelDepends}}, image)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		want := []string{"apt-get -o DPkg::Lock::Timeout=600 update -q", "apt-cache depends linux-image-armmp:armhf",
			"apt-get -o DPkg::Lock::Timeout=600 download linux-image-6.1.0-50-armmp:armhf busybox-static:armhf"}
		if strings.Join(calls, "\n") != strings.Join(want, "\n") {
			t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
		}
		if !strings.Contains(out, "update exited 100; going on") || !strings.Contains(out, "Mirror sync in progress?") {
			t.Errorf("the failed update is not reported with apt's message:\n%s", out)
		}
		if !strings.Contains(out, "linux-image-6.1.0-50-armmp_armhf_1.0_fake.deb") {
			t.Errorf("no kernel .deb in the cache:\n%s", out)
		}
	})
	t.Run("download fails twice: retried after longer waits", func(t *testing.T) {
		code, out, calls := runApt(t, aptScenario{update: "0", download: "100\n100\n0", depends: []string{kernelDepends}}, image)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		var sleeps, downloads, updates int
		var waits []string
		for _, c := range calls {
			switch {
			case strings.HasPrefix(c, "sleep "):
				sleeps++
				waits = append(waits, strings.TrimPrefix(c, "sleep "))
			case strings.Contains(c, " download "):
				downloads++
			case strings.Contains(c, " update "):
				updates++
			}
		}
		if downloads != 3 || sleeps != 2 || strings.Join(waits, ",") != "10,30" || updates != 3 {
			t.Fatalf("%d downloads, %d updates, waits %v; want 3, 3 (the first and one per retry), 10,30:\n%s", downloads, updates, waits, strings.Join(calls, "\n"))
		}
	})
	t.Run("the kernel's index is missing at first", func(t *testing.T) {
		code, out, calls := runApt(t, aptScenario{update: "100\n0", download: "0", depends: []string{"", kernelDepends}}, image)
		if code != 0 || !strings.Contains(out, "no index names the kernel") {
			t.Fatalf("exit %d:\n%s\ncalls:\n%s", code, out, strings.Join(calls, "\n"))
		}
	})
	t.Run("the packages cannot be had: apt's message", func(t *testing.T) {
		code, out, calls := runApt(t, aptScenario{update: "100", download: "100", depends: []string{kernelDepends}}, image)
		if code != 100 {
			t.Fatalf("exit %d, want apt's 100:\n%s", code, out)
		}
		if !strings.Contains(out, "E: Unable to locate package") || !strings.Contains(out, "after 3 retries") {
			t.Fatalf("the failure does not give apt's message:\n%s", out)
		}
		n := 0
		for _, c := range calls {
			if strings.Contains(c, " download ") {
				n++
			}
		}
		if n != 4 {
			t.Fatalf("%d downloads, want 4 (1 + 3 retries)", n)
		}
	})
	t.Run("no kernel in any index: apt-cache's answer", func(t *testing.T) {
		code, out, _ := runApt(t, aptScenario{update: "0", download: "0"}, image)
		if code == 0 || !strings.Contains(out, "name no kernel for linux-image-armmp:armhf") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
	t.Run("cached .debs are used whatever the indexes say", func(t *testing.T) {
		code, out, calls := runApt(t, aptScenario{update: "100", download: "100"},
			`mkdir cache; touch cache/linux-image-6.1.0-50-armmp_6.1.1_armhf.deb cache/busybox-static_1.35_armhf.deb; image_debs armhf armmp cache`)
		if code != 0 || len(calls) != 1 || calls[0] != "" {
			t.Fatalf("exit %d, calls %q:\n%s", code, calls, out)
		}
	})
	t.Run("install (deps.sh, .ci/run) after a failed update", func(t *testing.T) {
		code, out, calls := runApt(t, aptScenario{update: "100", install: "100\n0"}, `apt_update; apt_retry install -y socat`)
		if code != 0 || len(calls) != 5 || !strings.HasSuffix(calls[4], "install -y socat") {
			t.Fatalf("exit %d, calls:\n%s\n%s", code, strings.Join(calls, "\n"), out)
		}
	})
}
