// Package peer finds the external programs the interop tests run against
// (pymodbus, mbpoll, socat, node, a C compiler, ...). Where one is missing
// a test skips on a developer's machine but fails in CI (CI set): a green
// CI run must have run every interop test.
package peer

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// inCI reports whether the tests run in CI (the CI variable is set).
func inCI() bool { return os.Getenv("CI") != "" }

// Missing ends t for a missing peer: Fatal in CI, Skip elsewhere.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if inCI() {
		t.Fatalf("CI needs this peer: "+format, args...)
	}
	t.Skipf(format, args...)
}

// Command returns the path of program name, or ends t with Missing,
// naming the Debian package that has it.
func Command(t testing.TB, name, debianPackage string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "%s not installed (Debian %s; scripts/deps.sh installs it)", name, debianPackage)
	}
	return path
}

// Python returns a Python 3 interpreter that imports all of modules
// (/usr/bin/python3 first: the one on PATH may be a virtualenv without
// Debian's packages), or ends t with Missing.
func Python(t testing.TB, debianPackages string, modules ...string) string {
	t.Helper()
	imp := "import " + strings.Join(modules, ", ")
	var last []byte
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		out, err := exec.Command(py, "-c", imp).CombinedOutput()
		if err == nil {
			return py
		}
		last = out
	}
	Missing(t, "no python3 that can %q (Debian %s; scripts/deps.sh installs them): %s", imp, debianPackages, last)
	return ""
}
