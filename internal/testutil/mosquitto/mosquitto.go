// Package mosquitto runs Debian's mosquitto broker for tests and
// benchmarks: on loopback ports of its own, started and stopped by PID.
// Start (for a test) stops it when the test ends, and where mosquitto is
// not installed skips the test, or fails it in CI (package peer).
package mosquitto

import (
	"errors"
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
	bin    string
	prefix []string
	conf   string
	ports  []int
	cmd    *exec.Cmd
	log    string
}

// ErrMissing is Run's error when mosquitto is not installed.
var ErrMissing = errors.New("mosquitto not installed (Debian mosquitto; scripts/deps.sh installs it)")

// Start starts a broker for test t with one plain listener and one per
// tls entry, and stops it when the test ends.
func Start(t testing.TB, tls ...TLS) *Broker {
	t.Helper()
	b, err := Run(t.TempDir(), "", tls...)
	if errors.Is(err, ErrMissing) {
		peer.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	return b
}

// Run starts a broker whose files are in dir, run after the words of
// prefix (e.g. "taskset -c 1"), with one plain listener and one per tls
// entry. The caller stops it.
func Run(dir, prefix string, tls ...TLS) (*Broker, error) {
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/mosquitto"); serr != nil {
			return nil, ErrMissing
		}
		bin = "/usr/sbin/mosquitto"
	}
	b := &Broker{bin: bin, prefix: strings.Fields(prefix), conf: filepath.Join(dir, "mosquitto.conf"), log: filepath.Join(dir, "mosquitto.log")}
	var conf strings.Builder
	conf.WriteString("per_listener_settings false\nallow_anonymous true\npersistence false\nlog_dest stderr\nset_tcp_nodelay true\n")
	if os.Geteuid() == 0 {
		conf.WriteString("user root\n") // keep the rights to read the caller's files
	}
	for i := 0; i <= len(tls); i++ {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		b.ports = append(b.ports, p)
		fmt.Fprintf(&conf, "listener %d 127.0.0.1\n", p)
		if i > 0 {
			l := tls[i-1]
			fmt.Fprintf(&conf, "cafile %s\ncertfile %s\nkeyfile %s\nrequire_certificate %t\n", l.CAFile, l.CertFile, l.KeyFile, l.RequireCertificate)
		}
	}
	if err := os.WriteFile(b.conf, []byte(conf.String()), 0o600); err != nil {
		return nil, err
	}
	return b, b.Restart()
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// URL is the URL of listener i (0 the plain one): tcp:// or ssl://.
func (b *Broker) URL(i int) string {
	scheme := "tcp"
	if i > 0 {
		scheme = "ssl"
	}
	return fmt.Sprintf("%s://127.0.0.1:%d", scheme, b.ports[i])
}

// Restart starts the broker (again, on the same ports) and waits until
// every listener takes connections.
func (b *Broker) Restart() error {
	if b.cmd != nil {
		return nil
	}
	logf, err := os.OpenFile(b.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	argv := append(append([]string(nil), b.prefix...), b.bin, "-c", b.conf)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("mosquitto: %w", err)
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
				b.Kill()
				return fmt.Errorf("mosquitto does not listen on %d: %v\n%s", p, err, b.Log())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
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
