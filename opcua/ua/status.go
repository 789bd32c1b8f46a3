package ua

import "strconv"

// StatusCode is an OPC UA status code (OPC 10000-4 §7.39). The top two bits
// give the severity: Good (00), Uncertain (01) or Bad (10). The low 16 bits
// are info bits and flags and are not part of the code's identity.
//
// A StatusCode is an error, so it passes through Go error handling and
// reaches the wire unchanged: errors.Is(err, StatusBadTimeout) and
// errors.As(err, &code) both work, also through wrapping.
type StatusCode uint32

// Error returns the symbolic name and description, for example
// "BadTimeout (0x800A0000): The operation timed out.".
func (s StatusCode) Error() string {
	name, desc := s.lookup()
	if name == "" {
		return "StatusCode 0x" + strconv.FormatUint(uint64(s), 16)
	}
	return name + " (0x" + hex32(uint32(s)) + "): " + desc
}

// String returns the symbolic name, or the hexadecimal code when unknown.
func (s StatusCode) String() string {
	if name, _ := s.lookup(); name != "" {
		return name
	}
	return "0x" + hex32(uint32(s))
}

// Name returns the symbolic name ("BadTimeout"), "" when unknown.
func (s StatusCode) Name() string {
	name, _ := s.lookup()
	return name
}

// Description returns the specification's description, "" when unknown.
func (s StatusCode) Description() string {
	_, desc := s.lookup()
	return desc
}

// Code returns the code without its info bits (the low 16 bits).
func (s StatusCode) Code() StatusCode { return s & 0xFFFF0000 }

// IsGood reports whether the severity is Good.
func (s StatusCode) IsGood() bool { return s&0xC0000000 == 0 }

// IsUncertain reports whether the severity is Uncertain.
func (s StatusCode) IsUncertain() bool { return s&0xC0000000 == 0x40000000 }

// IsBad reports whether the severity is Bad.
func (s StatusCode) IsBad() bool { return s&0x80000000 != 0 }

// Is makes errors.Is match a code with other info bits.
func (s StatusCode) Is(target error) bool {
	t, ok := target.(StatusCode)
	return ok && t.Code() == s.Code()
}

func (s StatusCode) lookup() (name, desc string) {
	if e, ok := statusCodeTable[s.Code()]; ok {
		return e.name, e.desc
	}
	return "", ""
}

type statusCodeInfo struct{ name, desc string }

func hex32(v uint32) string {
	const digits = "0123456789ABCDEF"
	var b [8]byte
	for i := 7; i >= 0; i-- {
		b[i] = digits[v&0xF]
		v >>= 4
	}
	return string(b[:])
}
