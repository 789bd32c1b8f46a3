package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// edged runs realMain with args and returns its exit code, stdout and
// stderr.
func edged(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := realMain(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const example = "../../plc/config/testdata/example.json"

func TestCheckConfig(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "configuration OK: 2 devices, 15 tags"}, // the built-in simulator's
		{[]string{"--config", example}, "configuration OK: 3 devices, 17 tags"},
		{[]string{"--config", example, "--import-csv", "../../plc/config/testdata/tags.csv", "--csv-device", "plc1"}, "configuration OK: 3 devices, 22 tags"},
		{[]string{"--import-csv", "../../plc/config/testdata/tags.csv", "--csv-device", "sim"}, "configuration OK: 2 devices, 20 tags"},
		{[]string{"--config", example, "--board", "rpi4"}, "configuration OK"},
	} {
		code, out, errOut := edged(t, append([]string{"--check-config"}, c.args...)...)
		if code != 0 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 0 and %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestBadConfig: a configuration that cannot be used exits with code 2
// and names every problem by device, tag and field.
func TestBadConfig(t *testing.T) {
	bad := writeFile(t, "bad.json", `{
  "version": 1, "base_cycle_ms": 5, "scan_classes": {"fast": 1}, "board": "sim",
  "devices": [{"name": "plc1", "kind": "modbus-tcp", "no_comm_timeout_ms": 3000,
    "modbus_tcp": {"address": "10.0.0.1:502", "unit_id": 1, "timeout_ms": 500, "order": "ABCD", "max_registers": 125, "max_bits": 2000, "max_gap": 10},
    "tags": [
      {"name": "Temp", "type": "int16", "address": "4x0001", "scan_class": "fast", "access": "read"},
      {"name": "Speed", "type": "float32", "address": "hr:0", "scan_class": "often", "access": "read"}
    ]}]
}`)
	unknown := writeFile(t, "unknown.json", `{"version": 1, "base_cycle": 5}`)
	badCSV := writeFile(t, "bad.csv", "name,type,address,scan_class,access\nX,float99,hr:0,fast,read\n")
	// A data folder with a certificate and no configuration version: the
	// file is read, and no key is made for each case (slow under
	// emulation). A refused configuration stores nothing.
	dir := t.TempDir()
	cfg, err := parseFlags([]string{"--data-dir", dir}, os.Hostname, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	seedDataDir(t, cfg)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--config", bad}, []string{"--config " + bad, "devices[plc1].tags[Temp].address", "devices[plc1].tags[Speed].scan_class"}},
		{[]string{"--config", bad, "--board", "nope"}, []string{"devices[plc1].tags[Temp].address", "board"}},
		{[]string{"--config", unknown}, []string{"--config " + unknown, "base_cycle"}},
		{[]string{"--config", filepath.Join(t.TempDir(), "missing.json")}, []string{"missing.json", "no such file"}},
		{[]string{"--import-csv", badCSV, "--csv-device", "sim"}, []string{"--import-csv " + badCSV, "float99"}},
		{[]string{"--import-csv", "../../plc/config/testdata/tags.csv", "--csv-device", "nosuch"}, []string{"nosuch"}},
	} {
		for _, check := range []bool{true, false} {
			args := c.args
			if check {
				args = append([]string{"--check-config"}, args...)
			}
			code, _, errOut := edged(t, append(args, "--listen", "127.0.0.1:0", "--data-dir", dir)...)
			if code != 2 {
				t.Errorf("%v: exit %d, want 2; stderr %q", args, code, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("%v: stderr does not name %q:\n%s", args, w, errOut)
				}
			}
		}
	}
}
