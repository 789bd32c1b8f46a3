package main

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/internal/testutil/testkeys"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
)

// freePort is a loopback TCP port nothing listens on (just now).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestOpen62541ReverseConnect: the open62541 v1.5.7 client listens for
// reverse connections; edged, started with --reverse-connect, dials it,
// and the client opens its secure channel and session over edged's
// sockets (the discovery channel with None, then the policy's), reads,
// writes and reads back as an Operator, and subscribes.
func TestOpen62541ReverseConnect(t *testing.T) {
	client := open62541Client(t)
	const uri = "urn:edged:test:open62541"
	der, key, err := pki.NewCertificate(pki.Template{ApplicationURI: uri, CommonName: "open62541", Key: testkeys.RSA(2048)})
	if err != nil {
		t.Fatal(err)
	}
	files := t.TempDir()
	kb, _ := x509.MarshalPKCS8PrivateKey(key)
	os.WriteFile(filepath.Join(files, "cert.der"), der, 0o644)
	os.WriteFile(filepath.Join(files, "key.der"), kb, 0o600)
	// The ECC run: the enhanced ECC_nistP256_AesGcm with a P-256 client
	// certificate, the user's password an EccEncryptedSecret.
	eder, ekey, err := pki.NewECCertificate(pki.Template{ApplicationURI: uri, CommonName: "open62541 ecc"}, secpol.EccNistP256AesGcm.Curve())
	if err != nil {
		t.Fatal(err)
	}
	ekb, _ := x509.MarshalPKCS8PrivateKey(ekey)
	os.WriteFile(filepath.Join(files, "ecc-cert.der"), eder, 0o644)
	os.WriteFile(filepath.Join(files, "ecc-key.der"), ekb, 0o600)
	for _, c := range []struct {
		policy, mode string
		ecc          bool
	}{
		{"Basic256Sha256", "SignAndEncrypt", false},
		{"Aes256_Sha256_RsaPss", "Sign", false},
		{"ECC_nistP256_AesGcm", "SignAndEncrypt", true},
	} {
		t.Run(c.policy+"/"+c.mode, func(t *testing.T) {
			der, certFile, keyFile, srvCert := der, "cert.der", "key.der", "edged.der"
			if c.ecc {
				der, certFile, keyFile, srvCert = eder, "ecc-cert.der", "ecc-key.der", "edged-nistP256.der"
			}
			dir := t.TempDir()
			edgedUser(t, dir, "o62-password\n", "add", "o62user", "--role", "Operator")
			cfg, err := parseFlags([]string{"--data-dir", dir}, fixedHostname("gw01"), nil)
			if err != nil {
				t.Fatal(err)
			}
			seedDataDir(t, cfg)
			os.WriteFile(filepath.Join(dir, pki.TrustedCerts, "o62.der"), der, 0o644)

			port := freePort(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, client, "reverse", strconv.Itoa(port), c.policy, c.mode)
			cmd.Env = append(os.Environ(), "EDGED_CERT="+filepath.Join(files, certFile), "EDGED_KEY="+filepath.Join(files, keyFile),
				"EDGED_SERVER_CERT="+filepath.Join(dir, pki.OwnCerts, srvCert), "EDGED_APP_URI="+uri,
				"EDGED_USER=o62user", "EDGED_PASS=o62-password")
			stdout, stderr := new(lockedBuffer), new(lockedBuffer)
			cmd.Stdout, cmd.Stderr = stdout, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// edged after the client listens: its first dial is answered.
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
				if strings.Contains(stdout.String(), `"listening"`) || time.Now().After(deadline) {
					break
				}
			}
			_, out := startSecure(t, dir, false, "--reverse-connect", "opc.tcp://127.0.0.1:"+strconv.Itoa(port))
			err = cmd.Wait()
			if err != nil {
				t.Errorf("open62541 client: %v\nstdout:\n%s\nstderr:\n%s\nedged:\n%s", err, stdout.String(), tail(stderr.String(), 4000), tail(out.String(), 4000))
			}
			var res struct {
				Ev                                   string
				Connect, Read, Write, Readback, Diag uint32
				ReverseConnections                   uint32 `json:"reverse_connections"`
				Listens                              int
			}
			var sub struct {
				Ev     string
				Values int
			}
			sc := bufio.NewScanner(strings.NewReader(stdout.String()))
			for sc.Scan() {
				var ev struct{ Ev string }
				json.Unmarshal(sc.Bytes(), &ev)
				switch ev.Ev {
				case "result":
					json.Unmarshal(sc.Bytes(), &res)
				case "subscribe":
					json.Unmarshal(sc.Bytes(), &sub)
				}
			}
			switch {
			case res.Ev != "result":
				t.Fatalf("no result from the client:\n%s", stdout.String())
			case res.Connect != 0:
				t.Fatalf("connect over reverse connect: %v", gua.StatusCode(res.Connect))
			case res.Read != 0 || res.Write != 0 || res.Readback != 0 || res.Diag != 0:
				t.Errorf("read %v, write %v, read back %v, diagnostics %v", gua.StatusCode(res.Read), gua.StatusCode(res.Write),
					gua.StatusCode(res.Readback), gua.StatusCode(res.Diag))
			case res.ReverseConnections < 1 || res.Listens < 2:
				t.Errorf("edged served %d reverse connections during the session, the client listened %d times; want ≥ 1 and ≥ 2 (discovery, then the secure channel)",
					res.ReverseConnections, res.Listens)
			case sub.Ev != "subscribe" || sub.Values < 10:
				t.Errorf("subscription over reverse connect: %+v", sub)
			default:
				t.Logf("%s/%s over reverse connect: session as Operator, read, write, read back, %d values in 2 s subscribed; %d listens",
					c.policy, c.mode, sub.Values, res.Listens)
			}
		})
	}
}
