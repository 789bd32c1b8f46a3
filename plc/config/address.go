package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Area is a Modbus data area; its value is the area's leading digit in the
// Modicon notation.
type Area int

// Modbus areas.
const (
	Coils            Area = 0
	DiscreteInputs   Area = 1
	InputRegisters   Area = 3
	HoldingRegisters Area = 4
)

func (a Area) String() string {
	switch a {
	case Coils:
		return "coils"
	case DiscreteInputs:
		return "discrete inputs"
	case InputRegisters:
		return "input registers"
	case HoldingRegisters:
		return "holding registers"
	}
	return fmt.Sprintf("Area(%d)", int(a))
}

// IsBit tells whether a holds bits (coils, discrete inputs).
func (a Area) IsBit() bool { return a == Coils || a == DiscreteInputs }

// Writable tells whether a can be written (coils, holding registers).
func (a Area) Writable() bool { return a == Coils || a == HoldingRegisters }

var areaPrefixes = map[string]Area{"co": Coils, "di": DiscreteInputs, "ir": InputRegisters, "hr": HoldingRegisters}

// ParseAddress parses a Modbus address and returns its area and 0-based
// protocol address. Accepted forms:
//
//	"40001"   5 digits: area digit (0, 1, 3, 4) and a 1-based number 1..9999
//	"400001"  6 digits: area digit and a 1-based number 1..65536
//	"hr:0"    0-based: co, di, ir or hr, a colon and 0..65535
func ParseAddress(s string) (Area, int, error) {
	if p, n, ok := strings.Cut(s, ":"); ok {
		a, known := areaPrefixes[p]
		if !known {
			return 0, 0, fmt.Errorf("%q is not a Modbus address: area %q is not co, di, ir or hr", s, p)
		}
		v, err := strconv.ParseUint(n, 10, 16)
		if err != nil {
			return 0, 0, fmt.Errorf("%q is not a Modbus address: the 0-based offset must be 0..65535", s)
		}
		return a, int(v), nil
	}
	if len(s) != 5 && len(s) != 6 {
		return 0, 0, fmt.Errorf("%q is not a Modbus address (want e.g. 40001, 400001 or hr:0)", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, 0, fmt.Errorf("%q is not a Modbus address (want e.g. 40001, 400001 or hr:0)", s)
		}
	}
	var a Area
	switch s[0] {
	case '0', '1', '3', '4':
		a = Area(s[0] - '0')
	default:
		return 0, 0, fmt.Errorf("%q is not a Modbus address: first digit %c is not an area (0 coils, 1 discrete inputs, 3 input registers, 4 holding registers)", s, s[0])
	}
	n, _ := strconv.Atoi(s[1:])
	limit := 9999
	if len(s) == 6 {
		limit = 65536
	}
	if n < 1 || n > limit {
		return 0, 0, fmt.Errorf("%q is not a Modbus address: number %d is outside 1..%d (the notation is 1-based)", s, n, limit)
	}
	return a, n - 1, nil
}

// FormatAddress returns the 0-based form of an address, "hr:0".
func FormatAddress(a Area, offset int) string {
	for p, x := range areaPrefixes {
		if x == a {
			return p + ":" + strconv.Itoa(offset)
		}
	}
	return fmt.Sprintf("%v:%d", a, offset)
}
