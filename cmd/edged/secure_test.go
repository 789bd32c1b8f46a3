package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/internal/testkeys"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
)

// startSecure starts edged as it runs by default, secure, with the data
// folder dir; seed puts a certificate with a test key there first, else
// edged makes its own.
func startSecure(t *testing.T, dir string, seed bool, args ...string) (string, *lockedBuffer) {
	t.Helper()
	cfg, err := parseFlags(append([]string{"--data-dir", dir, "--listen", "127.0.0.1:0"}, args...), fixedHostname("gw01"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if seed {
		seedDataDir(t, cfg)
	}
	conf, err := loadConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := new(lockedBuffer)
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, cfg, conf, out) }()
	t.Cleanup(func() {
		cancel()
		<-errc
	})
	return waitFor(t, out, endpointLine)[1], out
}

// clientCert makes a client application certificate for gopcua.
func clientCert(t *testing.T, uri string, bits int) ([]byte, *rsa.PrivateKey) {
	t.Helper()
	der, key, err := pki.NewCertificate(pki.Template{ApplicationURI: uri, CommonName: "gopcua test client", Bits: bits})
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}

// dialSecure connects gopcua over policy and mode with cert and key,
// anonymously or, with auth, as a user.
func dialSecure(ctx context.Context, url string, ep *gua.EndpointDescription, uri string, cert []byte, key *rsa.PrivateKey, auth ...opcua.Option) (*opcua.Client, error) {
	tt := gua.UserTokenTypeAnonymous
	if len(auth) > 0 {
		tt = gua.UserTokenTypeUserName
	} else {
		auth = []opcua.Option{opcua.AuthAnonymous()}
	}
	opts := append(auth, opcua.SecurityFromEndpoint(ep, tt),
		opcua.Certificate(cert), opcua.PrivateKey(key), opcua.ApplicationURI(uri), opcua.AutoReconnect(false))
	c, err := opcua.NewClient(url, opts...)
	if err != nil {
		return nil, err
	}
	if err := c.Connect(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// TestSecureByDefault: edged offers the six secure endpoints and no
// session over None; a client's certificate is rejected until it is
// trusted, then it connects on every endpoint without a restart.
func TestSecureByDefault(t *testing.T) {
	dir := t.TempDir()
	url, out := startSecure(t, dir, false)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	own, err := os.ReadFile(filepath.Join(dir, pki.OwnCerts, "edged.der"))
	if err != nil {
		t.Fatalf("no application certificate made at the first start: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, pki.OwnPrivate, "edged.pem")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("private key: %v, mode %v", err, fi.Mode().Perm())
	}

	eps, err := opcua.GetEndpoints(ctx, url)
	if err != nil {
		t.Fatalf("GetEndpoints over None: %v", err)
	}
	if len(eps) != 6 {
		t.Fatalf("%d endpoints, want the 6 secure ones", len(eps))
	}
	for _, ep := range eps {
		if ep.SecurityMode == gua.MessageSecurityModeNone || !bytes.Equal(ep.ServerCertificate, own) {
			t.Fatalf("endpoint %s %v: not secure, or without our certificate", ep.SecurityPolicyURI, ep.SecurityMode)
		}
	}

	// No session over None.
	if c, err := opcua.NewClient(url, opcua.SecurityPolicy("None"), opcua.AuthAnonymous(), opcua.AutoReconnect(false)); err == nil {
		if err := c.Connect(ctx); !errors.Is(err, gua.StatusBadSecurityPolicyRejected) {
			t.Fatalf("a session over None: %v, want Bad_SecurityPolicyRejected", err)
		}
		c.Close(ctx)
	}

	const uri = "urn:edged:test:gopcua"
	cert, key := clientCert(t, uri, 2048)
	ep, err := opcua.SelectEndpoint(eps, secpol.URIBasic256Sha256, gua.MessageSecurityModeSignAndEncrypt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dialSecure(ctx, url, ep, uri, cert, key); err == nil {
		t.Fatal("an untrusted client connected")
	}
	thumb := pki.ThumbprintHex(cert)
	line := waitFor(t, out, regexp.MustCompile(`client certificate rejected.*`+thumb+`.*`))[0]
	for _, want := range []string{"BadCertificateUntrusted", uri, "edged pki trust --data-dir " + dir + " " + thumb} {
		if !strings.Contains(line, want) {
			t.Errorf("the rejection's log line does not say %q:\n%s", want, line)
		}
	}
	rejected := filepath.Join(dir, pki.RejectedDir, pki.RejectedName(cert))
	if _, err := os.Stat(rejected); err != nil {
		t.Fatalf("not saved to rejected/: %v", err)
	}
	// `edged pki list` shows it as rejected; the command of the log line
	// trusts it; no restart.
	if code, list, _ := edged(t, "pki", "--data-dir", dir, "list"); code != 0 || !strings.Contains(list[strings.Index(list, pki.RejectedDir):], thumb) {
		t.Fatalf("edged pki list: exit %d:\n%s", code, list)
	}
	if code, o, e := edged(t, "pki", "--data-dir", dir, "trust", thumb); code != 0 || !strings.Contains(o, "trusted: "+thumb) {
		t.Fatalf("edged pki trust: exit %d: %s%s", code, o, e)
	}
	if _, err := os.Stat(rejected); err == nil {
		t.Fatal("the trusted certificate stayed in rejected/")
	}
	for _, ep := range eps {
		c, err := dialSecure(ctx, url, ep, uri, cert, key)
		if err != nil {
			t.Fatalf("%s %v: %v", ep.SecurityPolicyURI, ep.SecurityMode, err)
		}
		v, err := c.Node(gua.NewStringNodeID(2, "sim.Counter")).Value(ctx)
		if err != nil || v == nil {
			t.Fatalf("%s %v: Read: %v", ep.SecurityPolicyURI, ep.SecurityMode, err)
		}
		c.Close(ctx)
	}

	// Rejected again: refused at the next handshake.
	if code, _, e := edged(t, "pki", "--data-dir", dir, "reject", thumb); code != 0 {
		t.Fatalf("edged pki reject: exit %d: %s", code, e)
	}
	if _, err := dialSecure(ctx, url, ep, uri, cert, key); err == nil {
		t.Fatal("connected after edged pki reject")
	}
	edged(t, "pki", "--data-dir", dir, "trust", thumb)
	if code, o, _ := edged(t, "pki", "--data-dir", dir, "show-own"); code != 0 || !strings.Contains(o, pki.ThumbprintHex(own)) || !strings.Contains(o, "urn:edged:server") {
		t.Fatalf("edged pki show-own: exit %d:\n%s", code, o)
	}

	// A certificate whose URI is not the client's ApplicationUri.
	if _, err := dialSecure(ctx, url, ep, "urn:someone:else", cert, key); !errors.Is(err, gua.StatusBadCertificateURIInvalid) {
		t.Fatalf("a wrong ApplicationUri: %v, want Bad_CertificateUriInvalid", err)
	}
}

// TestUsersAndRoles: users added with `edged user` log in with their
// passwords (decrypted from the legacy token format, on Sign and on
// SignAndEncrypt) and get their roles' rights; anonymous sessions
// observe; a wrong password is Bad_UserAccessDenied and logged without
// the password.
func TestUsersAndRoles(t *testing.T) {
	dir := t.TempDir()
	user := func(stdinText string, args ...string) {
		t.Helper()
		stdin = strings.NewReader(stdinText)
		defer func() { stdin = os.Stdin }()
		if code, o, e := edged(t, append([]string{"user", "--data-dir", dir}, args...)...); code != 0 {
			t.Fatalf("edged user %v: exit %d: %s%s", args, code, o, e)
		}
	}
	user("op-password\n", "add", "op", "--role", "Operator")
	user("watch-password\n", "add", "watcher", "--role", "Observer")
	if code, o, _ := edged(t, "user", "--data-dir", dir, "list"); code != 0 || !strings.Contains(o, "op\tOperator") || !strings.Contains(o, "watcher\tObserver") {
		t.Fatalf("edged user list: exit %d:\n%s", code, o)
	}
	url, out := startSecure(t, dir, true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	const uri = "urn:edged:test:gopcua"
	cert, key := clientCert(t, uri, 2048)
	certFile := filepath.Join(t.TempDir(), "client.der")
	os.WriteFile(certFile, cert, 0o644)
	if code, o, e := edged(t, "pki", "--data-dir", dir, "trust", certFile); code != 0 {
		t.Fatalf("edged pki trust FILE: exit %d: %s%s", code, o, e)
	}
	eps, err := opcua.GetEndpoints(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	setpoint := gua.NewStringNodeID(2, "sim.Setpoint")
	write := func(c *opcua.Client) gua.StatusCode {
		t.Helper()
		resp, err := c.Write(ctx, &gua.WriteRequest{NodesToWrite: []*gua.WriteValue{{
			NodeID: setpoint, AttributeID: gua.AttributeIDValue,
			Value: &gua.DataValue{EncodingMask: gua.DataValueValue, Value: gua.MustVariant(float32(42.5))},
		}}})
		if err != nil {
			t.Fatalf("Write: %v", err)
		}
		return resp.Results[0]
	}
	call := func(c *opcua.Client) gua.StatusCode {
		t.Helper()
		res, err := c.Call(ctx, &gua.CallMethodRequest{ObjectID: gua.MustParseNodeID("ns=2;s=sim"),
			MethodID: gua.MustParseNodeID("ns=2;s=sim.WriteCommand"), InputArguments: []*gua.Variant{gua.MustVariant(uint16(5))}})
		if err != nil {
			t.Fatalf("Call: %v", err)
		}
		return res.StatusCode
	}
	userAccess := func(c *opcua.Client) byte {
		t.Helper()
		v, err := c.Node(setpoint).Attribute(ctx, gua.AttributeIDUserAccessLevel)
		if err != nil {
			t.Fatalf("UserAccessLevel: %v", err)
		}
		return v.Value().(byte)
	}
	for _, mode := range []gua.MessageSecurityMode{gua.MessageSecurityModeSign, gua.MessageSecurityModeSignAndEncrypt} {
		for _, pol := range []string{secpol.URIBasic256Sha256, secpol.URIAes256Sha256RsaPss} {
			ep, err := opcua.SelectEndpoint(eps, pol, mode)
			if err != nil {
				t.Fatal(err)
			}
			name := pol[strings.Index(pol, "#")+1:] + "/" + mode.String()
			op, err := dialSecure(ctx, url, ep, uri, cert, key, opcua.AuthUsername("op", "op-password"))
			if err != nil {
				t.Fatalf("%s: op: %v", name, err)
			}
			if st := write(op); st != gua.StatusOK {
				t.Errorf("%s: op's Write: %v", name, st)
			}
			if st := call(op); st != gua.StatusOK {
				t.Errorf("%s: op's Call: %v", name, st)
			}
			if al := userAccess(op); al&3 != 3 {
				t.Errorf("%s: op's UserAccessLevel %#x, want read and write", name, al)
			}
			op.Close(ctx)

			w, err := dialSecure(ctx, url, ep, uri, cert, key, opcua.AuthUsername("watcher", "watch-password"))
			if err != nil {
				t.Fatalf("%s: watcher: %v", name, err)
			}
			if st := write(w); st != gua.StatusBadUserAccessDenied {
				t.Errorf("%s: watcher's Write: %v, want Bad_UserAccessDenied", name, st)
			}
			if st := call(w); st != gua.StatusBadUserAccessDenied {
				t.Errorf("%s: watcher's Call: %v, want Bad_UserAccessDenied", name, st)
			}
			if al := userAccess(w); al&3 != 1 {
				t.Errorf("%s: watcher's UserAccessLevel %#x, want read only", name, al)
			}
			w.Close(ctx)
		}
	}

	ep, _ := opcua.SelectEndpoint(eps, secpol.URIBasic256Sha256, gua.MessageSecurityModeSignAndEncrypt)
	anon, err := dialSecure(ctx, url, ep, uri, cert, key)
	if err != nil {
		t.Fatalf("anonymous: %v", err)
	}
	if st := write(anon); st != gua.StatusBadUserAccessDenied {
		t.Errorf("anonymous Write: %v, want Bad_UserAccessDenied", st)
	}
	anon.Close(ctx)

	if _, err := dialSecure(ctx, url, ep, uri, cert, key, opcua.AuthUsername("op", "not-the-password")); !errors.Is(err, gua.StatusBadUserAccessDenied) {
		t.Fatalf("a wrong password: %v, want Bad_UserAccessDenied", err)
	}
	line := waitFor(t, out, regexp.MustCompile(`ActivateSession rejected.*user=op.*`))[0]
	if strings.Contains(out.String(), "not-the-password") || !strings.Contains(line, "BadUserAccessDenied") {
		t.Fatalf("the rejection's log line: %s", line)
	}
}

// TestNodeOPCUASecure: the node-opcua client on all six secure endpoints,
// anonymously and with a user name, with client keys of 2048, 3072 and
// 4096 bits. The user (Operator) writes; the anonymous session (edged's
// default role, Observer) is refused the write.
func TestNodeOPCUASecure(t *testing.T) {
	node := nodeOPCUAClient(t)
	dir := t.TempDir()
	stdin = strings.NewReader("node-password\n")
	code, _, e := edged(t, "user", "--data-dir", dir, "add", "nodeuser", "--role", "Operator")
	stdin = os.Stdin
	if code != 0 {
		t.Fatalf("edged user add: %s", e)
	}
	url, _ := startSecure(t, dir, true)
	for _, bits := range []int{2048, 3072, 4096} {
		t.Run(fmt.Sprintf("key%d", bits), func(t *testing.T) {
			const uri = "urn:edged:test:node-opcua"
			der, key, err := pki.NewCertificate(pki.Template{ApplicationURI: uri, CommonName: "node-opcua", DNSNames: []string{"localhost"}, Key: testkeys.RSA(bits)})
			if err != nil {
				t.Fatal(err)
			}
			files := t.TempDir()
			certFile, keyFile := filepath.Join(files, "cert.pem"), filepath.Join(files, "key.pem")
			kb, _ := x509.MarshalPKCS8PrivateKey(key)
			os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
			os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600)
			os.WriteFile(filepath.Join(dir, pki.TrustedCerts, fmt.Sprintf("node%d.der", bits)), der, 0o644)

			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			r := runNodeClientEnv(t, ctx, []string{"EDGED_CERT=" + certFile, "EDGED_KEY=" + keyFile, "EDGED_PKI=" + filepath.Join(files, "pki"),
				"EDGED_APP_URI=" + uri, "EDGED_USER=nodeuser", "EDGED_PASS=node-password"}, node, url, "secure")
			r.scenario(t, "secure")
			n := 0
			for _, l := range r.lines {
				if l.Scenario != "secure" || l.Ev != "result" {
					continue
				}
				var res struct {
					Policy, Mode, Token string
					Read, Write         *nodeStatus
					Error               string
				}
				if err := json.Unmarshal(l.raw, &res); err != nil {
					t.Fatal(err)
				}
				n++
				name := res.Policy + "/" + res.Mode + "/" + res.Token
				switch {
				case res.Error != "":
					t.Errorf("%s: %s", name, res.Error)
				case res.Read == nil || !res.Read.is(gua.StatusOK):
					t.Errorf("%s: Read %v", name, res.Read)
				case res.Token == "username" && !res.Write.is(gua.StatusOK):
					t.Errorf("%s: the Operator's Write: %v", name, res.Write)
				case res.Token == "anonymous" && !res.Write.is(gua.StatusBadUserAccessDenied):
					t.Errorf("%s: the anonymous Write: %v, want Bad_UserAccessDenied", name, res.Write)
				default:
					t.Logf("%s: Read %s, Write %s", name, res.Read.Status, res.Write.Status)
				}
			}
			if n != 12 {
				t.Fatalf("%d results, want 12 (3 policies × 2 modes × 2 tokens)\nstderr:\n%s", n, tail(r.stderr, 4000))
			}
		})
	}
}

// TestOpen62541Secure: the open62541 v1.5.7 client on all six secure
// endpoints, anonymously and with a user name, with client keys of 2048,
// 3072 and 4096 bits; it trusts edged's certificate alone, so edged's
// certificate passes open62541's own checks (URI, host address, usage).
func TestOpen62541Secure(t *testing.T) {
	client := open62541Client(t)
	dir := t.TempDir()
	stdin = strings.NewReader("o62-password\n")
	code, _, e := edged(t, "user", "--data-dir", dir, "add", "o62user", "--role", "Operator")
	stdin = os.Stdin
	if code != 0 {
		t.Fatalf("edged user add: %s", e)
	}
	url, _ := startSecure(t, dir, true)
	for _, bits := range []int{2048, 3072, 4096} {
		t.Run(fmt.Sprintf("key%d", bits), func(t *testing.T) {
			const uri = "urn:edged:test:open62541"
			der, key, err := pki.NewCertificate(pki.Template{ApplicationURI: uri, CommonName: "open62541", Key: testkeys.RSA(bits)})
			if err != nil {
				t.Fatal(err)
			}
			files := t.TempDir()
			kb, _ := x509.MarshalPKCS8PrivateKey(key)
			os.WriteFile(filepath.Join(files, "cert.der"), der, 0o644)
			os.WriteFile(filepath.Join(files, "key.der"), kb, 0o600)
			os.WriteFile(filepath.Join(dir, pki.TrustedCerts, fmt.Sprintf("o62-%d.der", bits)), der, 0o644)

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, client, url, "secure")
			cmd.Env = append(os.Environ(), "EDGED_CERT="+filepath.Join(files, "cert.der"), "EDGED_KEY="+filepath.Join(files, "key.der"),
				"EDGED_SERVER_CERT="+filepath.Join(dir, pki.OwnCerts, "edged.der"), "EDGED_APP_URI="+uri,
				"EDGED_USER=o62user", "EDGED_PASS=o62-password")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.Output()
			if err != nil {
				t.Errorf("open62541 client: %v\n%s", err, tail(stderr.String(), 4000))
			}
			n := 0
			sc := bufio.NewScanner(bytes.NewReader(stdout))
			for sc.Scan() {
				var r struct {
					Ev, Policy, Mode, Token string
					Connect, Read, Write    uint32
				}
				if json.Unmarshal(sc.Bytes(), &r) != nil || r.Ev != "result" {
					continue
				}
				n++
				name := r.Policy + "/" + r.Mode + "/" + r.Token
				switch {
				case r.Connect != 0:
					t.Errorf("%s: connect %v", name, gua.StatusCode(r.Connect))
				case r.Read != 0:
					t.Errorf("%s: Read %v", name, gua.StatusCode(r.Read))
				case r.Token == "username" && r.Write != 0:
					t.Errorf("%s: the Operator's Write: %v", name, gua.StatusCode(r.Write))
				case r.Token == "anonymous" && gua.StatusCode(r.Write) != gua.StatusBadUserAccessDenied:
					t.Errorf("%s: the anonymous Write: %v, want Bad_UserAccessDenied", name, gua.StatusCode(r.Write))
				default:
					t.Logf("%s: Read Good, Write %v", name, gua.StatusCode(r.Write))
				}
			}
			if n != 12 {
				t.Fatalf("%d results, want 12\nstderr:\n%s", n, tail(stderr.String(), 4000))
			}
		})
	}
}
