package main

import (
	"errors"
	"flag"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/opcua/server"
)

func fixedHostname(name string) func() (string, error) {
	return func() (string, error) { return name, nil }
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		args       []string
		listen     string
		advertise  string
		version    bool
		wantErrFor string // flag the usage error must name; "" = no error
	}{
		{args: nil, listen: ":4840", advertise: "gw01"},
		{args: []string{"--listen", ":4841"}, listen: ":4841", advertise: "gw01"},
		{args: []string{"-listen=0.0.0.0:4840"}, listen: "0.0.0.0:4840", advertise: "gw01"},
		{args: []string{"--listen", "[::]:4840"}, listen: "[::]:4840", advertise: "gw01"},
		{args: []string{"--listen", "127.0.0.1:4841"}, listen: "127.0.0.1:4841", advertise: "127.0.0.1"},
		{args: []string{"--listen", "[::1]:4841"}, listen: "[::1]:4841", advertise: "::1"},
		{args: []string{"--listen", "localhost:0"}, listen: "localhost:0", advertise: "localhost"},
		{args: []string{"--endpoint-host", "plc-gw.example"}, listen: ":4840", advertise: "plc-gw.example"},
		{args: []string{"--endpoint-host", "[fd00::7]"}, listen: ":4840", advertise: "fd00::7"},
		{args: []string{"--endpoint-host", "fd00::7"}, listen: ":4840", advertise: "fd00::7"},
		// An explicit --endpoint-host wins over the listen host (NAT, DNS names).
		{args: []string{"--listen", "10.0.0.5:4840", "--endpoint-host", "gw.plant"}, listen: "10.0.0.5:4840", advertise: "gw.plant"},
		// --endpoint-host "" means the default.
		{args: []string{"--endpoint-host", ""}, listen: ":4840", advertise: "gw01"},
		{args: []string{"--version"}, listen: ":4840", version: true},
		{args: []string{"--listen", "4840"}, wantErrFor: "--listen"},
		{args: []string{"--listen", "host:port"}, wantErrFor: "--listen"},
		{args: []string{"--listen", ":70000"}, wantErrFor: "--listen"},
		{args: []string{"--listen", ":"}, wantErrFor: "--listen"},
		{args: []string{"--listen", "::1:4840"}, wantErrFor: "--listen"},
		{args: []string{"--endpoint-host", "opc.tcp://gw:4840"}, wantErrFor: "--endpoint-host"},
		{args: []string{"--endpoint-host", "gw:4840"}, wantErrFor: "--endpoint-host"},
		{args: []string{"--endpoint-host", "[gw]"}, wantErrFor: "--endpoint-host"},
		{args: []string{"--no-such-flag"}, wantErrFor: "-no-such-flag"},
		{args: []string{"--listen"}, wantErrFor: "-listen"},
		{args: []string{"extra"}, wantErrFor: "extra"},
		{args: []string{"--max-sessions", "0"}, wantErrFor: "--max-sessions"},
		{args: []string{"--max-connections", "-1"}, wantErrFor: "--max-connections"},
		{args: []string{"--max-sessions", "x"}, wantErrFor: "-max-sessions"},
		{args: []string{"--import-csv", "tags.csv"}, wantErrFor: "--csv-device"},
		{args: []string{"--csv-device", "plc1"}, wantErrFor: "--import-csv"},
		{args: []string{"--report-every", "-1s"}, wantErrFor: "--report-every"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cfg, err := parseFlags(tt.args, fixedHostname("gw01"), io.Discard)
			if tt.wantErrFor != "" {
				if err == nil || !isUsageError(err) {
					t.Fatalf("err = %v, want a usage error", err)
				}
				if !strings.Contains(err.Error(), tt.wantErrFor) {
					t.Errorf("error %q does not name %s", err, tt.wantErrFor)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if cfg.showVersion != tt.version || cfg.listen != tt.listen || (!tt.version && cfg.advertiseHost != tt.advertise) {
				t.Errorf("got %+v, want listen=%q advertise=%q version=%t", cfg, tt.listen, tt.advertise, tt.version)
			}
		})
	}
}

// TestParseFlagsHostnameFails: without a host name a client can use (an
// error, empty, the kernel's "(none)", localhost) the endpoint URL names
// the machine's first address.
func TestParseFlagsHostnameFails(t *testing.T) {
	want := firstAddress()
	if net.ParseIP(want) == nil {
		t.Fatalf("firstAddress %q is not an address", want)
	}
	for _, h := range []func() (string, error){
		func() (string, error) { return "", errors.New("no name") },
		fixedHostname(""), fixedHostname("(none)"), fixedHostname("localhost"),
	} {
		cfg, err := parseFlags(nil, h, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.advertiseHost != want {
			t.Errorf("advertiseHost = %q, want %q", cfg.advertiseHost, want)
		}
	}
	if !usableHostname("gw-01.plant") || usableHostname("(none)") || usableHostname("a b") {
		t.Error("usableHostname")
	}
}

func TestParseFlagsHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help", "-help"} {
		var out strings.Builder
		_, err := parseFlags([]string{arg}, fixedHostname("gw01"), &out)
		if !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s: err = %v, want flag.ErrHelp", arg, err)
		}
		for _, want := range []string{"-version", "-listen", "-endpoint-host", "-max-sessions", "-max-connections",
			"-data-efficient", "-read-spin", "-config", "-import-csv", "-csv-device", "-board", "-check-config", "-report-every",
			`default ":4840"`, `default "gw01"`, "Usage: edged"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: help does not mention %q:\n%s", arg, want, out.String())
			}
		}
	}
}

func TestEndpointURL(t *testing.T) {
	tests := []struct {
		host string
		port int
		want string
	}{
		{"gw01", 4840, "opc.tcp://gw01:4840"},
		{"127.0.0.1", 4841, "opc.tcp://127.0.0.1:4841"},
		{"::1", 4840, "opc.tcp://[::1]:4840"},
		{"fd00::7", 48400, "opc.tcp://[fd00::7]:48400"},
		{"fe80::1%eth0", 4840, "opc.tcp://[fe80::1%25eth0]:4840"},
		{"::ffff:10.0.0.1", 4840, "opc.tcp://[::ffff:10.0.0.1]:4840"},
	}
	for _, tt := range tests {
		if got := endpointURL(tt.host, tt.port); got != tt.want {
			t.Errorf("endpointURL(%q, %d) = %q, want %q", tt.host, tt.port, got, tt.want)
		}
	}
}

// TestEndpointFromFlags checks the whole path from command line to URL.
func TestEndpointFromFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "opc.tcp://gw01:4840"},
		{[]string{"--listen", ":4840"}, "opc.tcp://gw01:4840"},
		{[]string{"--listen", "0.0.0.0:4840"}, "opc.tcp://gw01:4840"},
		{[]string{"--listen", "127.0.0.1:4841"}, "opc.tcp://127.0.0.1:4841"},
		{[]string{"--listen", "[::1]:4840"}, "opc.tcp://[::1]:4840"},
		{[]string{"--listen", "[::]:4840", "--endpoint-host", "fd00::7"}, "opc.tcp://[fd00::7]:4840"},
	}
	for _, tt := range tests {
		cfg, err := parseFlags(tt.args, fixedHostname("gw01"), io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		_, port, _ := net.SplitHostPort(cfg.listen)
		p, _ := strconv.Atoi(port)
		if got := endpointURL(cfg.advertiseHost, p); got != tt.want {
			t.Errorf("%v: endpoint %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestIsWildcard(t *testing.T) {
	for host, want := range map[string]bool{
		"": true, "0.0.0.0": true, "::": true,
		"127.0.0.1": false, "::1": false, "localhost": false, "gw01": false,
	} {
		if got := isWildcard(host); got != want {
			t.Errorf("isWildcard(%q) = %t, want %t", host, got, want)
		}
	}
}

func TestParseFlagsServerOptions(t *testing.T) {
	cfg, err := parseFlags(nil, fixedHostname("gw01"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.maxSessions != server.DefaultMaxSessions || cfg.maxConnections != server.DefaultMaxConnections || cfg.dataEfficient {
		t.Errorf("defaults %+v", cfg)
	}
	cfg, err = parseFlags([]string{"--max-sessions", "7", "--max-connections=9", "--data-efficient"}, fixedHostname("gw01"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.maxSessions != 7 || cfg.maxConnections != 9 || !cfg.dataEfficient {
		t.Errorf("got %+v", cfg)
	}
	if cfg.readSpin != 0 {
		t.Errorf("--read-spin defaults to %v, want 0", cfg.readSpin)
	}
	cfg, err = parseFlags([]string{"--read-spin", "50us"}, fixedHostname("gw01"), io.Discard)
	if err != nil || cfg.readSpin != 50*time.Microsecond {
		t.Errorf("--read-spin 50us: %v, %v", cfg.readSpin, err)
	}
	for _, bad := range []string{"-1us", "2s"} {
		if _, err := parseFlags([]string{"--read-spin", bad}, fixedHostname("gw01"), io.Discard); err == nil || !strings.Contains(err.Error(), "--read-spin") {
			t.Errorf("--read-spin %s: err = %v, want one naming the flag", bad, err)
		}
	}
}
