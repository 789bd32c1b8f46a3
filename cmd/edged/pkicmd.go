package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/edged/edged/internal/atomicfile"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
)

// pkiMain runs `edged pki ...`: the technician's view of the data
// folder's certificates. What it changes counts at the next handshake of
// a running edged.
func pkiMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("edged pki", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("data-dir", DefaultDataDir, "edged's data `folder`")
	userList := fs.Bool("users", false, "act on the trust list of X.509 user certificates ("+UserPKIDir+"/) instead of the application certificates'")
	certType := fs.String("type", pki.CertTypeRSA, "the application certificate `type` show-own and renew act on: "+strings.Join(certTypes(), ", ")+", or all")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: edged pki [--data-dir DIR] COMMAND\n\n"+
			"  list                       the trusted, issuer and rejected certificates\n"+
			"  trust THUMBPRINT|FILE      trust a rejected certificate, or a certificate file (DER or PEM;\n"+
			"                             of a chain the CA certificates go to issuers/, CRLs to the\n"+
			"                             crl folder of their CA)\n"+
			"  reject THUMBPRINT          stop trusting a certificate (it moves to rejected/)\n"+
			"  show-own                   edged's own certificate of --type: thumbprint, names, validity\n"+
			"  renew                      a new key and certificate of --type for edged, with the names of the old one\n\nFlags:\n")
		fs.PrintDefaults()
	}
	rest, code := parseCommand(fs, args)
	if rest == nil {
		return code
	}
	open := pki.Open
	root := *dir
	if *userList {
		open, root = pki.OpenTrustList, filepath.Join(*dir, UserPKIDir)
	}
	store, err := open(root)
	if err != nil {
		fmt.Fprintf(stderr, "edged pki: --data-dir %s: %v\n", *dir, err)
		return 1
	}
	types := []string{*certType}
	if *certType == "all" {
		types = certTypes()
	} else if !slices.Contains(certTypes(), *certType) {
		fmt.Fprintf(stderr, "edged pki: --type %s: not a certificate type (%s, or all)\n", *certType, strings.Join(certTypes(), ", "))
		return 2
	}
	for _, t := range types {
		if err = runPKI(store, t, rest, stdout); err != nil || (rest[0] != "show-own" && rest[0] != "renew") {
			break
		}
	}
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "edged pki: %v\n", err)
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "edged pki: %v\n", err)
		return 1
	}
	return 0
}

// certTypes are the application certificate types edged has: RSA and
// one per ECC curve.
func certTypes() []string {
	t := []string{pki.CertTypeRSA}
	for _, p := range secpol.AllECC {
		if !slices.Contains(t, p.CertificateType()) {
			t = append(t, p.CertificateType())
		}
	}
	return t
}

func runPKI(s *pki.Store, certType string, args []string, out io.Writer) error {
	need := func(n int) error {
		if len(args) != n+1 {
			return &usageError{msg: fmt.Sprintf("%s takes %d argument(s); see edged pki --help", args[0], n)}
		}
		return nil
	}
	switch args[0] {
	case "list":
		if err := need(0); err != nil {
			return err
		}
		for _, d := range []string{pki.TrustedCerts, pki.IssuerCerts, pki.RejectedDir} {
			fmt.Fprintf(out, "%s:\n", d)
			for _, f := range s.Certs(d) {
				fmt.Fprintf(out, "  %s  (%s)\n", pki.Describe(f.Cert), filepath.Base(f.Path))
			}
		}
		if probs := s.Problems(); len(probs) > 0 {
			fmt.Fprintf(out, "not read (edged ignores these files):\n")
			for _, p := range probs {
				fmt.Fprintf(out, "  %s\n", p)
			}
		}
		return nil
	case "trust":
		if err := need(1); err != nil {
			return err
		}
		return trust(s, args[1], out)
	case "reject":
		if err := need(1); err != nil {
			return err
		}
		f, ok := s.Find(pki.TrustedCerts, args[1])
		if !ok {
			return fmt.Errorf("no trusted certificate with thumbprint %s (see edged pki list)", args[1])
		}
		if err := atomicfile.WriteFile(filepath.Join(s.Path(pki.RejectedDir), pki.RejectedName(f.Cert.Raw)), f.Cert.Raw, 0o644); err != nil {
			return err
		}
		if err := f.Remove(); err != nil {
			return err
		}
		fmt.Fprintf(out, "no longer trusted: %s\n", pki.Describe(f.Cert))
		return nil
	case "show-own":
		if err := need(0); err != nil {
			return err
		}
		der, _, err := s.LoadOwnOf(certType)
		if err != nil {
			return fmt.Errorf("no %s application certificate yet (edged makes it at its first start): %w", certType, err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return err
		}
		var ips []string
		for _, ip := range c.IPAddresses {
			ips = append(ips, ip.String())
		}
		fmt.Fprintf(out, "type        %s\nthumbprint  %s\nsubject     %s\nuri         %s\ndns         %s\nip          %s\nvalid       %s .. %s\nfile        %s\n",
			certType, pki.ThumbprintHex(der), c.Subject, pki.ApplicationURI(c), strings.Join(c.DNSNames, ", "), strings.Join(ips, ", "),
			c.NotBefore.UTC().Format("2006-01-02 15:04"), c.NotAfter.UTC().Format("2006-01-02 15:04"),
			s.OwnCertPathOf(certType))
		return nil
	case "renew":
		if err := need(0); err != nil {
			return err
		}
		return renew(s, certType, out)
	}
	return &usageError{msg: fmt.Sprintf("unknown command %q; see edged pki --help", args[0])}
}

// trust moves a rejected certificate (by thumbprint) into trusted/certs,
// or puts what a certificate file holds (DER or PEM: a certificate, a
// chain, CRLs) into the store, saying where each went.
func trust(s *pki.Store, what string, out io.Writer) error {
	if f, ok := s.Find(pki.RejectedDir, what); ok {
		if err := atomicfile.WriteFile(filepath.Join(s.Path(pki.TrustedCerts), pki.RejectedName(f.Cert.Raw)), f.Cert.Raw, 0o644); err != nil {
			return err
		}
		os.Remove(f.Path)
		fmt.Fprintf(out, "trusted: %s\n", pki.Describe(f.Cert))
		return nil
	}
	if _, err := os.Stat(what); err != nil {
		return fmt.Errorf("%s is neither the thumbprint of a rejected certificate (see edged pki list) nor a certificate file", what)
	}
	c, err := pki.ReadCertFile(what)
	if err != nil {
		return err
	}
	placed, err := s.Import(c)
	if err != nil {
		return fmt.Errorf("%s: %w; nothing was changed", what, err)
	}
	for _, p := range placed {
		switch {
		case p.Cert != nil && p.Dir == pki.TrustedCerts:
			fmt.Fprintf(out, "trusted: %s\n", pki.Describe(p.Cert))
		case p.Cert != nil:
			fmt.Fprintf(out, "issuer (not trusted by itself, used to build chains): %s\n", pki.Describe(p.Cert))
		default:
			fmt.Fprintf(out, "CRL of %s, to %s\n", p.CRL.Issuer, p.Dir)
		}
		if p.Note != "" {
			fmt.Fprintf(out, "  note: %s\n", p.Note)
		}
	}
	return nil
}

// parseCommand parses the flags of a subcommand, which may come before,
// between or after its words, and returns the words; nil with the exit
// code after --help (0), a bad flag or no words (2).
func parseCommand(fs *flag.FlagSet, args []string) ([]string, int) {
	var rest []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, 0
			}
			return nil, 2
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(rest) == 0 {
		fs.Usage()
		return nil, 2
	}
	return rest, 0
}

// renew replaces edged's key and certificate by new ones with the old
// certificate's names (ApplicationUri, host names, addresses) and a new
// validity. A running edged uses them from its next handshake; clients
// that trusted the old certificate must trust the new one.
func renew(s *pki.Store, certType string, out io.Writer) error {
	der, _, err := s.LoadOwnOf(certType)
	if err != nil {
		return fmt.Errorf("no %s application certificate to renew (edged makes it at its first start): %w", certType, err)
	}
	old, err := x509.ParseCertificate(der)
	if err != nil {
		return err
	}
	tpl := pki.Template{
		ApplicationURI: pki.ApplicationURI(old),
		CommonName:     old.Subject.CommonName,
		DNSNames:       old.DNSNames,
		IPs:            old.IPAddresses,
	}
	if len(old.Subject.Organization) > 0 {
		tpl.Organization = old.Subject.Organization[0]
	}
	var nder []byte
	var key crypto.Signer
	if certType == pki.CertTypeRSA {
		nder, key, err = pki.NewCertificate(tpl)
	} else if pub, ok := old.PublicKey.(*ecdsa.PublicKey); ok {
		nder, key, err = pki.NewECCertificate(tpl, pub.Curve)
	} else if _, ok := old.PublicKey.(ed25519.PublicKey); ok {
		nder, key, err = pki.NewECCertificate(tpl, nil)
	} else {
		err = fmt.Errorf("the %s application certificate has no ECDSA or Ed25519 key", certType)
	}
	if err != nil {
		return err
	}
	if err := s.SaveOwnOf(certType, nder, key); err != nil {
		return err
	}
	c, _ := x509.ParseCertificate(nder)
	fmt.Fprintf(out, "renewed %s: %s (was %s); clients that trusted the old certificate must trust this one\n", certType, pki.Describe(c), pki.ThumbprintHex(der))
	return nil
}
