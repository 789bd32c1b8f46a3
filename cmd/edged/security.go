package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/uasc"
	"github.com/edged/edged/opcua/users"
)

// DefaultDataDir is where edged keeps its certificates on the gateway;
// UserPKIDir, inside it, the trust list of X.509 user certificates.
const (
	DefaultDataDir = "/var/lib/edged"
	UserPKIDir     = "user-pki"
)

// ownCredentials hands the server its certificate and key, read again
// from the data folder when the certificate file changed (after `edged
// pki renew`), so that a renewal needs no restart.
type ownCredentials struct {
	store    *pki.Store
	certType string // pki.CertTypeRSA, "nistP256", ...
	mu       sync.Mutex
	cur      *uasc.Credentials
	stamp    time.Time
	size     int64
}

func (o *ownCredentials) get() *uasc.Credentials {
	fi, err := os.Stat(o.store.OwnCertPathOf(o.certType))
	o.mu.Lock()
	defer o.mu.Unlock()
	if err == nil && (!fi.ModTime().Equal(o.stamp) || fi.Size() != o.size) {
		if c, err := o.load(); err == nil {
			o.cur, o.stamp, o.size = c, fi.ModTime(), fi.Size()
		}
	}
	return o.cur
}

func (o *ownCredentials) load() (*uasc.Credentials, error) {
	if o.certType == pki.CertTypeRSA {
		der, key, err := o.store.LoadOwn()
		if err != nil {
			return nil, err
		}
		return uasc.NewCredentials(der, key)
	}
	der, key, err := o.store.LoadOwnEC(o.certType)
	if err != nil {
		return nil, err
	}
	return uasc.NewECCredentials(der, key)
}

// eccCredentials are the credentials of the ECC certificate types.
type eccCredentials map[string]*ownCredentials

func (e eccCredentials) get(certType string) *uasc.Credentials {
	if o := e[certType]; o != nil {
		return o.get()
	}
	return nil
}

// ensureECC makes edged's ECC application certificates at the first
// start, one per certificate type of secpol.AllECC, with the RSA one's
// names.
func ensureECC(store *pki.Store, tpl pki.Template, out io.Writer) (eccCredentials, error) {
	e := eccCredentials{}
	for _, p := range secpol.AllECC {
		t := p.CertificateType()
		if e[t] != nil {
			continue
		}
		der, _, created, err := store.EnsureOwnEC(t, p.Curve(), tpl)
		if err != nil {
			return nil, fmt.Errorf("application certificate %s: %w", t, err)
		}
		if created {
			fmt.Fprintf(out, "edged: created the %s application certificate %s (thumbprint %s)\n", t, store.OwnCertPathOf(t), pki.ThumbprintHex(der))
		}
		o := &ownCredentials{store: store, certType: t}
		if o.get() == nil {
			return nil, fmt.Errorf("the %s application certificate and key do not belong together", t)
		}
		e[t] = o
	}
	return e, nil
}

// prime takes the certificate and key just read, so that the first get
// does not read and parse them again: an RSA key's checks are much of a
// start on a slow core.
func (o *ownCredentials) prime(der []byte, key *rsa.PrivateKey) {
	fi, err := os.Stat(o.store.OwnCertPathOf(o.certType))
	if err != nil {
		return
	}
	if c, err := uasc.NewCredentials(der, key); err == nil {
		o.mu.Lock()
		o.cur, o.stamp, o.size = c, fi.ModTime(), fi.Size()
		o.mu.Unlock()
	}
}

// ownTemplate is what edged's application instance certificate holds:
// its ApplicationUri, the host names and addresses clients reach it by.
func ownTemplate(cfg config, hostname string) pki.Template {
	t := pki.Template{
		ApplicationURI: server.DefaultApplicationURI,
		CommonName:     "edged@" + hostname,
		Organization:   "edged",
	}
	addHost := func(h string) {
		if h == "" {
			return
		}
		if ip := net.ParseIP(h); ip != nil {
			for _, x := range t.IPs {
				if x.Equal(ip) {
					return
				}
			}
			t.IPs = append(t.IPs, ip)
			return
		}
		for _, x := range t.DNSNames {
			if x == h {
				return
			}
		}
		t.DNSNames = append(t.DNSNames, h)
	}
	addHost(hostname)
	addHost(cfg.advertiseHost)
	if h, _, err := net.SplitHostPort(cfg.listen); err == nil && !isWildcard(h) {
		addHost(h)
	} else if addrs, err := net.InterfaceAddrs(); err == nil {
		// Listening on every interface: every address it has now.
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				addHost(n.IP.String())
			}
		}
	}
	return t
}

// followNames makes edged's own self-signed certificate of a certificate
// type again, with its key and validity, when it does not name hosts
// (the host name or the addresses changed: DHCP, a renamed gateway) but
// is otherwise valid. A certificate signed by a CA (UpdateCertificate)
// is left alone: only its CA can name new hosts.
func followNames(store *pki.Store, certType string, der []byte, tpl pki.Template, hosts []string) ([]byte, bool) {
	c, err := x509.ParseCertificate(der)
	if err != nil || !bytes.Equal(c.RawIssuer, c.RawSubject) || len(c.Subject.Organization) != 1 || c.Subject.Organization[0] != tpl.Organization {
		return nil, false
	}
	now := time.Now()
	if now.Before(c.NotBefore) || now.After(c.NotAfter) || pki.ApplicationURI(c) != tpl.ApplicationURI {
		return nil, false
	}
	_, key, err := store.LoadOwnOf(certType)
	if err != nil {
		return nil, false
	}
	tpl.NotBefore, tpl.Validity = c.NotBefore, c.NotAfter.Sub(c.NotBefore)
	var nd []byte
	switch k := key.(type) {
	case *rsa.PrivateKey:
		tpl.Key = k
		nd, _, err = pki.NewCertificate(tpl)
	case *ecdsa.PrivateKey:
		tpl.ECKey = k
		nd, _, err = pki.NewECCertificate(tpl, k.Curve)
	default:
		tpl.ECKey = key
		nd, _, err = pki.NewECCertificate(tpl, nil)
	}
	if err != nil || len(pki.CheckOwn(nd, tpl.ApplicationURI, hosts, now)) > 0 || store.SaveOwnOf(certType, nd, key) != nil {
		return nil, false
	}
	return nd, true
}

// checkOwn says at every start what does not fit in edged's certificate
// of a certificate type, and makes a self-signed one again with the
// names of now (followNames); it returns the certificate to serve.
func checkOwn(store *pki.Store, certType string, der []byte, tpl pki.Template, hosts []string, dataDir string, out io.Writer) []byte {
	probs := pki.CheckOwn(der, tpl.ApplicationURI, hosts, time.Now())
	if len(probs) == 0 {
		return der
	}
	name := "the application certificate"
	renew := "edged pki renew --data-dir " + dataDir
	if certType != pki.CertTypeRSA {
		name = "the " + certType + " application certificate"
		renew = "edged pki --type " + certType + " renew --data-dir " + dataDir
	}
	if nd, ok := followNames(store, certType, der, tpl, hosts); ok {
		fmt.Fprintf(out, "edged: %s did not fit (%s): edged made it again with its key and the names of now; thumbprint %s; clients that trusted the old one must trust this one\n",
			name, strings.Join(probs, "; "), pki.ThumbprintHex(nd))
		return nd
	}
	fmt.Fprintf(out, "edged: WARNING: %s %s does not fit: %s; `%s` makes a new one\n",
		name, store.OwnCertPathOf(certType), strings.Join(probs, "; "), renew)
	return der
}

// setupSecurity opens the data folder, makes edged's certificate at the
// first start, says what is wrong with it at every start, and returns the
// server's security configuration.
func setupSecurity(cfg config, hostname string, out io.Writer, log func(st *pki.Store, trustCommand string)) (*server.Security, error) {
	store, err := pki.Open(cfg.dataDir)
	if err != nil {
		return nil, fmt.Errorf("--data-dir %s: %w", cfg.dataDir, err)
	}
	tpl := ownTemplate(cfg, hostname)
	der, key, created, err := store.EnsureOwn(tpl)
	if err != nil {
		return nil, fmt.Errorf("--data-dir %s: application certificate: %w", cfg.dataDir, err)
	}
	certFile := store.OwnCertPath()
	if created {
		fmt.Fprintf(out, "edged: created the application certificate %s (thumbprint %s)\n", certFile, pki.ThumbprintHex(der))
	}
	hosts := append(append([]string(nil), tpl.DNSNames...), ipStrings(tpl.IPs)...)
	if cfg.advertiseHost != "" {
		hosts = []string{cfg.advertiseHost}
	}
	der = checkOwn(store, pki.CertTypeRSA, der, tpl, hosts, cfg.dataDir, out)
	for _, p := range store.Problems() {
		fmt.Fprintf(out, "edged: WARNING: PKI file not read: %s\n", p)
	}
	own := &ownCredentials{store: store, certType: pki.CertTypeRSA}
	own.prime(der, key)
	if own.get() == nil {
		return nil, fmt.Errorf("--data-dir %s: the application certificate and key do not belong together", cfg.dataDir)
	}
	ecc, err := ensureECC(store, tpl, out)
	if err != nil {
		return nil, fmt.Errorf("--data-dir %s: %w", cfg.dataDir, err)
	}
	for _, t := range certTypes()[1:] {
		if c := ecc.get(t); c != nil {
			checkOwn(store, t, c.Certificate, tpl, hosts, cfg.dataDir, out)
		}
	}
	if log != nil {
		log(store, "edged pki --data-dir "+cfg.dataDir+" trust")
	}
	var names []string
	for _, p := range secpol.All {
		names = append(names, p.Name())
	}
	for _, p := range secpol.AllECC {
		names = append(names, p.Name())
	}
	fmt.Fprintf(out, "edged: secure endpoints %s, each Sign and SignAndEncrypt; certificate %s; trusted client certificates in %s\n",
		strings.Join(names, ", "), pki.ThumbprintHex(der), store.Path(pki.TrustedCerts))
	anon := "refused"
	if cfg.anonymous != 0 {
		var rs []string
		for _, r := range cfg.anonymous.List() {
			rs = append(rs, r.String())
		}
		anon = "role " + strings.Join(rs, ",")
	}
	fmt.Fprintf(out, "edged: users in %s (edged user add); anonymous sessions: %s\n", filepath.Join(cfg.dataDir, users.FileName), anon)
	if cfg.allowInsecure {
		fmt.Fprintln(out, "edged: WARNING: --allow-insecure: SecurityPolicy None is offered for sessions too; anyone on the network can read and write without a certificate")
	}
	userCerts, err := pki.OpenTrustList(filepath.Join(cfg.dataDir, UserPKIDir))
	if err != nil {
		return nil, fmt.Errorf("--data-dir %s: %w", cfg.dataDir, err)
	}
	if log != nil {
		log(userCerts, "edged pki --users --data-dir "+cfg.dataDir+" trust")
	}
	return &server.Security{
		CheckUserCertificate: func(leaf *x509.Certificate, chain []*x509.Certificate) error {
			return userCerts.Verify(leaf, chain)
		},
		Credentials:    own.get,
		ECCCredentials: ecc.get,
		CheckCertificate: func(leaf *x509.Certificate, chain []*x509.Certificate) error {
			return store.Verify(leaf, chain)
		},
		AllowInsecure:  cfg.allowInsecure,
		TrustStore:     store,
		UserTrustStore: userCerts,
		UserNames:      true,
		NoAnonymous:    cfg.anonymous == 0,
	}, nil
}

func ipStrings(ips []net.IP) []string {
	var s []string
	for _, ip := range ips {
		s = append(s, ip.String())
	}
	return s
}
