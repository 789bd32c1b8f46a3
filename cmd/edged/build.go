package main

import (
	"os"
	"runtime/debug"
	"time"
)

// buildNumber and buildDate are stamped at build time like version:
// -ldflags "-X main.buildNumber=<commit> -X main.buildDate=<RFC 3339>"
// (the Makefile uses the commit and its date, so that a build is
// reproducible).
var buildNumber, buildDate string

// buildStamp returns BuildInfo's BuildNumber and BuildDate: those stamped
// by the linker; else the VCS revision and commit time that go build
// records; else the version and the modification time of the executable,
// which the linker wrote.
func buildStamp() (string, time.Time) {
	number := buildNumber
	date, _ := time.Parse(time.RFC3339, buildDate)
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && number == "":
				number = s.Value
			case s.Key == "vcs.time" && date.IsZero():
				date, _ = time.Parse(time.RFC3339, s.Value)
			}
		}
	}
	if number == "" {
		number = version
	}
	if date.IsZero() {
		if exe, err := os.Executable(); err == nil {
			if fi, err := os.Stat(exe); err == nil {
				date = fi.ModTime()
			}
		}
	}
	return number, date.UTC()
}
