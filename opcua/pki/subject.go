package pki

import (
	"crypto/x509/pkix"
	"fmt"
	"strings"
)

// ParseSubjectName parses the SubjectName argument of
// CreateSigningRequest (OPC 10000-12 §7.7.6): name=value pairs separated
// by '/' (as the specification writes it, "CN=Gateway/O=Plant") or by
// ',' (as X.500 writes it); names CN, O, OU, DC, L, S (or ST) and C; a
// value may be in double quotes, and then holds separators. An empty
// string is no subject (nil).
func ParseSubjectName(s string) (*pkix.Name, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var n pkix.Name
	for len(s) > 0 {
		s = strings.TrimLeft(s, " ")
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return nil, fmt.Errorf("pki: subject name: %q is not name=value", s)
		}
		key := strings.ToUpper(strings.TrimSpace(s[:eq]))
		s = s[eq+1:]
		var val string
		if strings.HasPrefix(s, `"`) {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("pki: subject name: unterminated quote in %s", key)
			}
			val, s = s[1:1+end], s[2+end:]
			if s != "" && s[0] != '/' && s[0] != ',' {
				return nil, fmt.Errorf("pki: subject name: text after the quoted value of %s", key)
			}
		} else {
			end := strings.IndexAny(s, "/,")
			if end < 0 {
				end = len(s)
			}
			val, s = strings.TrimSpace(s[:end]), s[end:]
			if strings.ContainsRune(val, '"') {
				return nil, fmt.Errorf("pki: subject name: a quote inside the value of %s", key)
			}
		}
		if s != "" {
			s = s[1:]
		}
		if val == "" {
			return nil, fmt.Errorf("pki: subject name: %s is empty", key)
		}
		switch key {
		case "CN":
			if n.CommonName != "" {
				return nil, fmt.Errorf("pki: subject name: CN given twice")
			}
			n.CommonName = val
		case "O":
			n.Organization = append(n.Organization, val)
		case "OU":
			n.OrganizationalUnit = append(n.OrganizationalUnit, val)
		case "DC":
			n.ExtraNames = append(n.ExtraNames, pkix.AttributeTypeAndValue{Type: oidDomainComponent, Value: val})
		case "L":
			n.Locality = append(n.Locality, val)
		case "S", "ST":
			n.Province = append(n.Province, val)
		case "C":
			n.Country = append(n.Country, val)
		default:
			return nil, fmt.Errorf("pki: subject name: unknown attribute %q (CN, O, OU, DC, L, S, C)", key)
		}
	}
	return &n, nil
}

// oidDomainComponent is the DC attribute (RFC 4519).
var oidDomainComponent = []int{0, 9, 2342, 19200300, 100, 1, 25}
