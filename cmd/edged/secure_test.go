package main

import (
	"bytes"
	"context"
	"crypto/rsa"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
)

// startSecure starts edged as it runs by default, secure, with the data
// folder dir.
func startSecure(t *testing.T, dir string, args ...string) (string, *lockedBuffer) {
	t.Helper()
	cfg, err := parseFlags(append([]string{"--data-dir", dir, "--listen", "127.0.0.1:0"}, args...), fixedHostname("gw01"), io.Discard)
	if err != nil {
		t.Fatal(err)
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

// dialSecure connects gopcua over policy and mode with cert and key.
func dialSecure(ctx context.Context, url string, ep *gua.EndpointDescription, uri string, cert []byte, key *rsa.PrivateKey) (*opcua.Client, error) {
	c, err := opcua.NewClient(url, opcua.SecurityFromEndpoint(ep, gua.UserTokenTypeAnonymous),
		opcua.Certificate(cert), opcua.PrivateKey(key), opcua.ApplicationURI(uri),
		opcua.AuthAnonymous(), opcua.AutoReconnect(false))
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
	url, out := startSecure(t, dir)
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
