package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	pconfig "github.com/edged/edged/plc/config"
)

// overlay is the gateway's root file system overlay, shared by the
// Buildroot image and the QEMU test image.
var overlay = filepath.Join("..", "..", "buildroot", "board", "edged", "rootfs-overlay")

// TestImageDefaultConfig: the image's default configuration is valid and
// is the built-in simulator's, so that a new image serves it.
func TestImageDefaultConfig(t *testing.T) {
	c, err := pconfig.Load(filepath.Join(overlay, "etc", "edged", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := pconfig.Simulator()
	a, _ := json.Marshal(c)
	b, _ := json.Marshal(&want)
	var x, y any
	json.Unmarshal(a, &x)
	json.Unmarshal(b, &y)
	if !reflect.DeepEqual(x, y) {
		t.Fatal("etc/edged/config.json is not the simulator's configuration (regenerate it from pconfig.Simulator)")
	}
}

// TestImageScripts: the init scripts are valid POSIX shell.
func TestImageScripts(t *testing.T) {
	for _, f := range []string{
		filepath.Join(overlay, "etc", "init.d", "S90edged"),
		filepath.Join(overlay, "etc", "edged", "edged.conf"),
		filepath.Join("..", "..", "scripts", "image", "rcS"),
	} {
		if _, err := os.Stat(f); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("sh", "-n", f).CombinedOutput(); err != nil {
			t.Errorf("sh -n %s: %v\n%s", f, err, out)
		}
	}
}
