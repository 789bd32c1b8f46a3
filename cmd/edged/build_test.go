package main

import (
	"io"
	"testing"
	"time"
)

func TestBuildStamp(t *testing.T) {
	defer func(n, d string) { buildNumber, buildDate = n, d }(buildNumber, buildDate)
	buildNumber, buildDate = "", ""
	n, d := buildStamp()
	if n == "" || d.Year() < 2020 {
		t.Errorf("unstamped build: BuildNumber %q, BuildDate %v", n, d)
	}
	buildNumber, buildDate = "0123abc", "2026-11-30T08:15:00+01:00"
	n, d = buildStamp()
	if want := time.Date(2026, 11, 30, 7, 15, 0, 0, time.UTC); n != "0123abc" || !d.Equal(want) {
		t.Errorf("stamped build: BuildNumber %q, BuildDate %v, want 0123abc, %v", n, d, want)
	}
	if c := serverConfig(config{}, "opc.tcp://localhost:4840", io.Discard); c.BuildNumber != n || !c.BuildDate.Equal(d) {
		t.Errorf("server BuildInfo: BuildNumber %q, BuildDate %v", c.BuildNumber, c.BuildDate)
	}
}
