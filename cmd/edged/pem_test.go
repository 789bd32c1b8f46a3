package main

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/peer"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"
)

// TestTrustNodeOPCUAOwnCertificate is the integrator's case of issue 40:
// node-opcua's client makes its own certificate (PEM) at its first start
// and is rejected; `edged pki trust` of that very file lets it in, with no
// restart and no conversion.
func TestTrustNodeOPCUAOwnCertificate(t *testing.T) {
	node := nodeOPCUAClient(t)
	dir := t.TempDir()
	url, _ := startSecure(t, dir, true)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env := []string{"EDGED_PKI=" + filepath.Join(t.TempDir(), "pki")}
	type result struct {
		CertificateFile string
		Read            *nodeStatus
		Error           string
	}
	connect := func() result {
		t.Helper()
		r := runNodeClientEnv(t, ctx, env, node, url, "owncert")
		r.scenario(t, "owncert")
		var res result
		r.get(t, "owncert", "result", 0, &res)
		return res
	}
	first := connect()
	if first.Error == "" {
		t.Fatalf("node-opcua connected with a certificate edged does not trust: %+v", first)
	}
	b, err := os.ReadFile(first.CertificateFile)
	if err != nil || !strings.HasPrefix(string(b), "-----BEGIN CERTIFICATE-----") {
		t.Fatalf("node-opcua's certificate %s is not the PEM file expected: %v\n%.80s", first.CertificateFile, err, b)
	}
	code, o, e := edged(t, "pki", "--data-dir", dir, "trust", first.CertificateFile)
	if code != 0 || !strings.Contains(o, "trusted: ") {
		t.Fatalf("edged pki trust %s: exit %d: %s%s", first.CertificateFile, code, o, e)
	}
	second := connect()
	if second.Error != "" || second.Read == nil || !second.Read.is(gua.StatusOK) {
		t.Fatalf("after trusting its PEM file, node-opcua: %+v", second)
	}
}

// TestTrustPEMFiles: `edged pki trust FILE` (and --users) with PEM files as
// openssl writes them — a chain whose CA goes to issuers/, the CA's CRL —
// and with bad files, each refused with a message naming the file and what
// it holds, the store unchanged; a gopcua client with the openssl-made
// certificate and key then connects.
func TestTrustPEMFiles(t *testing.T) {
	openssl := peer.Command(t, "openssl", "openssl")
	dir := t.TempDir()
	url, _ := startSecure(t, dir, true)
	files := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(openssl, args...)
		cmd.Dir = files
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("openssl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	const uri = "urn:edged:test:openssl"
	os.WriteFile(filepath.Join(files, "leaf.ext"), []byte("subjectAltName=URI:"+uri+",DNS:localhost\n"+
		"keyUsage=critical,digitalSignature,nonRepudiation,keyEncipherment,dataEncipherment\n"+
		"extendedKeyUsage=clientAuth\nbasicConstraints=critical,CA:FALSE\n"), 0o644)
	os.WriteFile(filepath.Join(files, "ca.cnf"), []byte("[ca]\ndefault_ca = t\n[t]\ndatabase = index.txt\ncrlnumber = crlnumber\ndefault_md = sha256\ndefault_crl_days = 30\n"), 0o644)
	os.WriteFile(filepath.Join(files, "index.txt"), nil, 0o644)
	os.WriteFile(filepath.Join(files, "crlnumber"), []byte("01\n"), 0o644)
	run("req", "-x509", "-newkey", "rsa:3072", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "30",
		"-subj", "/CN=plant CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
	run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=openssl client")
	run("x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "30", "-sha256",
		"-extfile", "leaf.ext", "-out", "client.pem")
	run("ca", "-config", "ca.cnf", "-keyfile", "ca.key", "-cert", "ca.pem", "-gencrl", "-out", "ca.crl.pem")
	cat := func(name string, parts ...string) string {
		var b []byte
		for _, p := range parts {
			x, _ := os.ReadFile(filepath.Join(files, p))
			b = append(b, x...)
		}
		path := filepath.Join(files, name)
		os.WriteFile(path, b, 0o644)
		return path
	}
	chain := cat("chain.pem", "client.pem", "ca.pem")
	listing := func() string {
		_, o, _ := edged(t, "pki", "--data-dir", dir, "list")
		return o
	}
	before := listing()
	for _, bad := range []struct{ file, want string }{
		{cat("key.pem", "client.key"), "key.pem: PEM block 1 (PRIVATE KEY) is a private key"},
		{cat("cert-and-key.pem", "client.pem", "client.key"), "cert-and-key.pem: PEM block 2 (PRIVATE KEY) is a private key"},
		{cat("csr.pem", "client.csr"), "csr.pem: PEM block 1 (CERTIFICATE REQUEST) is not a certificate or CRL"},
		{cat("index.txt", "index.txt"), "index.txt: the file is empty"},
		{cat("ca.cnf", "ca.cnf"), "ca.cnf: neither PEM nor a DER certificate or CRL"},
	} {
		code, o, e := edged(t, "pki", "--data-dir", dir, "trust", bad.file)
		if code != 1 || !strings.Contains(e, bad.want) {
			t.Errorf("edged pki trust %s: exit %d, %q%q; want exit 1 and %q", filepath.Base(bad.file), code, o, e, bad.want)
		}
	}
	if after := listing(); after != before {
		t.Fatalf("refused files changed the store:\n%s\nwas\n%s", after, before)
	}

	code, o, e := edged(t, "pki", "--data-dir", dir, "trust", chain)
	if code != 0 || !strings.Contains(o, "trusted: ") || !strings.Contains(o, "issuer (not trusted by itself") {
		t.Fatalf("edged pki trust chain.pem: exit %d: %s%s", code, o, e)
	}
	if code, o, e := edged(t, "pki", "--data-dir", dir, "trust", filepath.Join(files, "ca.crl.pem")); code != 0 || !strings.Contains(o, "CRL of CN=plant CA, to "+pki.IssuerCRL) {
		t.Fatalf("edged pki trust ca.crl.pem: exit %d: %s%s", code, o, e)
	}
	if l := listing(); strings.Contains(l, "not read") {
		t.Fatalf("edged pki list after the imports:\n%s", l)
	}

	// The client, with openssl's PEM certificate and key.
	cb, _ := os.ReadFile(filepath.Join(files, "client.pem"))
	blk, _ := pem.Decode(cb)
	kb, _ := os.ReadFile(filepath.Join(files, "client.key"))
	kblk, _ := pem.Decode(kb)
	k, err := x509.ParsePKCS8PrivateKey(kblk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	eps, err := opcua.GetEndpoints(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := opcua.SelectEndpoint(eps, secpol.URIBasic256Sha256, gua.MessageSecurityModeSignAndEncrypt)
	if err != nil {
		t.Fatal(err)
	}
	c, err := dialSecure(ctx, url, ep, uri, blk.Bytes, k.(*rsa.PrivateKey))
	if err != nil {
		t.Fatalf("the client of chain.pem: %v", err)
	}
	c.Close(ctx)

	// The user trust list takes PEM alike.
	if code, o, e := edged(t, "pki", "--users", "--data-dir", dir, "trust", filepath.Join(files, "client.pem")); code != 0 || !strings.Contains(o, "trusted: ") {
		t.Fatalf("edged pki --users trust client.pem: exit %d: %s%s", code, o, e)
	}
}
