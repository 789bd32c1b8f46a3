package pki

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Contents is what a certificate or CRL file holds, in file order.
type Contents struct {
	Certs []*x509.Certificate
	CRLs  []*x509.RevocationList
}

// ReadCertFile reads a file of certificates and CRLs, DER or PEM (see
// ParseCertFile); its errors name the file.
func ReadCertFile(path string) (Contents, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Contents{}, err
	}
	if !fi.Mode().IsRegular() {
		return Contents{}, fmt.Errorf("%s: not a regular file", path)
	}
	if fi.Size() > maxFileSize {
		return Contents{}, fmt.Errorf("%s: larger than %d bytes: not a certificate or CRL file", path, maxFileSize)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Contents{}, err
	}
	c, err := ParseCertFile(b)
	if err != nil {
		return Contents{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseCertFile parses the contents of a certificate or CRL file: DER (one
// certificate, several certificates back to back, or one CRL) or PEM with
// CERTIFICATE, TRUSTED CERTIFICATE and X509 CRL blocks, text around the
// blocks allowed (as `openssl x509 -text` writes it). Anything else — a
// private key, a signing request, bytes that are neither — is an error
// that says what was found; nothing is returned then.
func ParseCertFile(b []byte) (Contents, error) {
	var out Contents
	if len(bytes.TrimSpace(b)) == 0 {
		return out, errors.New("the file is empty")
	}
	if !bytes.Contains(b, []byte("-----BEGIN ")) {
		return parseDER(b)
	}
	rest := b
	for n := 1; ; n++ {
		blk, r := pem.Decode(rest) // skips text before the block
		if blk == nil {
			if n == 1 {
				return Contents{}, errors.New("it has a PEM header (-----BEGIN) but no complete PEM block")
			}
			break
		}
		rest = r
		what := fmt.Sprintf("PEM block %d (%s)", n, blk.Type)
		switch {
		case blk.Type == "CERTIFICATE" || blk.Type == "TRUSTED CERTIFICATE" || blk.Type == "X509 CERTIFICATE":
			// OpenSSL's TRUSTED CERTIFICATE appends its trust settings
			// to the DER: ParseCertificates would refuse the tail.
			der, err := firstDER(blk.Bytes)
			if err != nil {
				return Contents{}, fmt.Errorf("%s: %w", what, err)
			}
			c, err := x509.ParseCertificate(der)
			if err != nil {
				return Contents{}, fmt.Errorf("%s: %w", what, err)
			}
			out.Certs = append(out.Certs, c)
		case blk.Type == "X509 CRL":
			l, err := x509.ParseRevocationList(blk.Bytes)
			if err != nil {
				return Contents{}, fmt.Errorf("%s: %w", what, err)
			}
			out.CRLs = append(out.CRLs, l)
		case strings.HasSuffix(blk.Type, "PRIVATE KEY"):
			return Contents{}, fmt.Errorf("%s is a private key, not a certificate: give the certificate alone (the key stays with its owner)", what)
		default:
			return Contents{}, fmt.Errorf("%s is not a certificate or CRL", what)
		}
	}
	if bytes.Contains(rest, []byte("-----BEGIN ")) {
		return Contents{}, errors.New("a PEM block after the last complete one is broken")
	}
	return out, nil
}

// parseDER parses DER certificates (one or several back to back) or one
// DER CRL.
func parseDER(b []byte) (Contents, error) {
	if cs, err := x509.ParseCertificates(b); err == nil && len(cs) > 0 {
		return Contents{Certs: cs}, nil
	}
	if l, err := x509.ParseRevocationList(b); err == nil {
		return Contents{CRLs: []*x509.RevocationList{l}}, nil
	}
	if _, err := x509.ParseCertificate(b); err != nil && len(b) > 0 && b[0] == 0x30 {
		return Contents{}, fmt.Errorf("neither PEM nor a DER certificate or CRL: %w", err)
	}
	head := b[:min(len(b), 8)]
	return Contents{}, fmt.Errorf("neither PEM nor a DER certificate or CRL (it begins with % x)", head)
}

// firstDER returns the first DER element of b (a SEQUENCE with its
// length), without what follows.
func firstDER(b []byte) ([]byte, error) {
	if len(b) < 2 || b[0] != 0x30 {
		return nil, errors.New("not DER")
	}
	n, hdr := int(b[1]), 2
	if n&0x80 != 0 {
		k := n & 0x7f
		if k == 0 || k > 4 || len(b) < 2+k {
			return nil, errors.New("not DER")
		}
		n = 0
		for _, c := range b[2 : 2+k] {
			n = n<<8 | int(c)
		}
		hdr += k
	}
	if n < 0 || hdr+n > len(b) {
		return nil, errors.New("truncated DER")
	}
	return b[:hdr+n], nil
}
