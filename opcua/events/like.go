package events

import "unicode/utf8"

// like reports whether s matches pattern p of the Like operator (OPC
// 10000-4 §7.7.3): % any run of characters, _ any one character, [list]
// one character of the list (ranges as a-z), [^list] one not of it, \ the
// next character as it is. An unterminated [ and a trailing \ stand for
// themselves. It interprets p as it goes, without allocating; a % is
// retried from the last one only, as glob matchers do, so a match costs at
// most len(s)×len(p) steps.
func like(s, p string) bool {
	si, pi := 0, 0
	star, mark := -1, 0 // the pattern after the last %, and where s was then
	for si < len(s) {
		if pi < len(p) {
			if p[pi] == '%' {
				pi++
				star, mark = pi, si
				continue
			}
			if n, ok := one(s[si:], p[pi:]); ok {
				_, w := utf8.DecodeRuneInString(s[si:])
				si += w
				pi += n
				continue
			}
		}
		if star < 0 {
			return false
		}
		_, w := utf8.DecodeRuneInString(s[mark:])
		mark += w
		si, pi = mark, star
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	return pi == len(p)
}

// one matches the first character of s against the pattern element at
// the start of p (not %): its length in p, and whether it matched.
func one(s, p string) (int, bool) {
	c, _ := utf8.DecodeRuneInString(s)
	switch p[0] {
	case '_':
		return 1, true
	case '\\':
		if len(p) == 1 {
			return 1, c == '\\'
		}
		r, w := utf8.DecodeRuneInString(p[1:])
		return 1 + w, c == r
	case '[':
		if n, in, ok := class(p, c); ok {
			return n, in
		}
		return 1, c == '['
	}
	r, w := utf8.DecodeRuneInString(p)
	return w, c == r
}

// class matches c against the list at the start of p ("[...]"): the
// list's length, whether c is in it (or not, for [^...]), and false when
// the list is not closed.
func class(p string, c rune) (n int, in bool, ok bool) {
	i := 1
	neg := false
	if i < len(p) && p[i] == '^' {
		neg = true
		i++
	}
	first := true
	for i < len(p) {
		if p[i] == ']' && !first {
			return i + 1, in != neg, true
		}
		first = false
		lo, w := utf8.DecodeRuneInString(p[i:])
		i += w
		hi := lo
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			hi, w = utf8.DecodeRuneInString(p[i+1:])
			i += 1 + w
		}
		if lo <= c && c <= hi {
			in = true
		}
	}
	return 0, false, false
}
