// Package mosquitto runs Debian's mosquitto broker for tests and
// benchmarks: on loopback ports of its own, started and stopped by PID,
// stopped when the test ends. Where mosquitto is not installed the test
// skips, or fails in CI (package peer).
package mosquitto

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/peer"
)

// TLS is a listener's TLS: PEM files.
type TLS struct {
	CAFile, CertFile, KeyFile string
	// RequireCertificate makes clients present a certificate the CA
	// signed.
	RequireCertificate bool
}

// Broker is one mosquitto process (restartable on the same ports).
type Broker struct {
	t     testing.TB
	bin   string
	conf  string
	ports []int
	cmd   *exec.Cmd
	log   string
}

// Start starts a broker with one plain listener and one per tls entry.
func Start(t testing.TB, tls ...TLS) *Broker {
	t.Helper()
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/mosquitto"); serr == nil {
			bin = "/usr/sbin/mosquitto"
		} else {
			peer.Missing(t, "mosquitto not installed (Debian mosquitto; scripts/deps.sh installs it)")
		}
	}
	dir := t.TempDir()
	b := &Broker{t: t, bin: bin, conf: filepath.Join(dir, "mosquitto.conf"), log: filepath.Join(dir, "mosquitto.log")}
	var conf strings.Builder
	conf.WriteString("per_listener_settings false\nallow_anonymous true\npersistence false\nlog_dest stderr\n")
	if os.Geteuid() == 0 {
		conf.WriteString("user root\n") // keep the rights to read the test's files
	}
	for i := 0; i <= len(tls); i++ {
		p := freePort(t)
		b.ports = append(b.ports, p)
		fmt.Fprintf(&conf, "listener %d 127.0.0.1\n", p)
		if i > 0 {
			l := tls[i-1]
			fmt.Fprintf(&conf, "cafile %s\ncertfile %s\nkeyfile %s\nrequire_certificate %t\n", l.CAFile, l.CertFile, l.KeyFile, l.RequireCertificate)
		}
	}
	if err := os.WriteFile(b.conf, []byte(conf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	b.Start()
	t.Cleanup(b.Stop)
	return b
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// URL is the URL of listener i (0 the plain one): tcp:// or ssl://.
func (b *Broker) URL(i int) string {
	scheme := "tcp"
	if i > 0 {
		scheme = "ssl"
	}
	return fmt.Sprintf("%s://127.0.0.1:%d", scheme, b.ports[i])
}

// Start starts the broker (again) and waits until every listener takes
// connections.
func (b *Broker) Start() {
	b.t.Helper()
	if b.cmd != nil {
		return
	}
	logf, err := os.OpenFile(b.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(b.bin, "-c", b.conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		b.t.Fatalf("mosquitto: %v", err)
	}
	b.cmd = cmd
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range b.ports {
		for {
			c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(b.log)
				b.t.Fatalf("mosquitto does not listen on %d: %v\n%s", p, err, log)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// Stop stops the broker as an operator would (SIGTERM) and waits for it.
func (b *Broker) Stop() { b.signal(syscall.SIGTERM) }

// Kill kills the broker (SIGKILL), as a crash or a power cut would.
func (b *Broker) Kill() { b.signal(syscall.SIGKILL) }

func (b *Broker) signal(s syscall.Signal) {
	if b.cmd == nil {
		return
	}
	b.cmd.Process.Signal(s)
	b.cmd.Wait()
	b.cmd = nil
}

// Log returns what the broker logged.
func (b *Broker) Log() string {
	out, _ := os.ReadFile(b.log)
	return string(out)
}
