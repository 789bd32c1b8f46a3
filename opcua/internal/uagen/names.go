package main

import (
	"go/token"
	"strings"
	"unicode"
)

// initialisms are the words of schema names that Go spells in capitals.
// A word starts with its capital letter and ends where a lower-case letter
// does not follow; a plural "s" stays lower case (ServerUris → ServerURIs).
var initialisms = []string{"Id", "Uri", "Url", "Xml"}

// goName turns a schema name into a Go identifier: the PascalCase of the
// schema with the initialisms capitalised (ReadValueId → ReadValueID,
// EndpointUrl → EndpointURL, DiscoveryUrls → DiscoveryURLs) and
// underscores removed (PriorityValue_DSCP → PriorityValueDSCP).
func goName(s string) string {
	s = strings.ReplaceAll(s, "_", "")
	var b strings.Builder
	for i := 0; i < len(s); {
		w := initialismAt(s, i)
		if w == "" {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString(strings.ToUpper(w))
		i += len(w)
		if i < len(s) && s[i] == 's' && !isLowerAt(s, i+1) {
			b.WriteByte('s')
			i++
		}
	}
	return b.String()
}

// initialismAt returns the initialism word that starts at s[i], "" if none.
func initialismAt(s string, i int) string {
	for _, w := range initialisms {
		if !strings.HasPrefix(s[i:], w) {
			continue
		}
		j := i + len(w)
		if !isLowerAt(s, j) || (s[j] == 's' && !isLowerAt(s, j+1)) {
			return w
		}
	}
	return ""
}

func isLowerAt(s string, i int) bool { return i < len(s) && 'a' <= s[i] && s[i] <= 'z' }

// isExportedIdent reports whether s can be used as an exported Go
// identifier as it stands.
func isExportedIdent(s string) bool {
	if !token.IsIdentifier(s) || !token.IsExported(s) {
		return false
	}
	for _, r := range s {
		if r > unicode.MaxASCII {
			return false
		}
	}
	return true
}
