package modbus

import (
	"fmt"
	"strconv"
)

// Area is one of the four Modbus data areas.
type Area uint8

// The Modbus data areas. The numbers are the leading digit of the
// "Modicon" notation (0xxxx coils, 1xxxx discrete inputs, 3xxxx input
// registers, 4xxxx holding registers).
const (
	Coils            Area = 0
	DiscreteInputs   Area = 1
	InputRegisters   Area = 3
	HoldingRegisters Area = 4
)

// String returns the area's name.
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
	return "area(" + strconv.Itoa(int(a)) + ")"
}

// IsBit reports whether the area holds bits (coils, discrete inputs).
func (a Area) IsBit() bool { return a == Coils || a == DiscreteInputs }

// Valid reports whether a is one of the four areas.
func (a Area) Valid() bool {
	return a == Coils || a == DiscreteInputs || a == InputRegisters || a == HoldingRegisters
}

// Writable reports whether the area can be written (coils, holding registers).
func (a Area) Writable() bool { return a == Coils || a == HoldingRegisters }

// ParseArea parses "coil(s)", "discrete input(s)"/"di", "input register(s)"/"ir",
// "holding register(s)"/"hr" and the leading digits "0", "1", "3", "4".
func ParseArea(s string) (Area, error) {
	switch s {
	case "coil", "coils", "co", "0":
		return Coils, nil
	case "discrete input", "discrete inputs", "discrete", "di", "1":
		return DiscreteInputs, nil
	case "input register", "input registers", "input", "ir", "3":
		return InputRegisters, nil
	case "holding register", "holding registers", "holding", "hr", "4":
		return HoldingRegisters, nil
	}
	return 0, fmt.Errorf("modbus: unknown area %q (want coils, discrete inputs, input registers or holding registers)", s)
}

// ParseAddress parses a Modbus address in the Modicon notation and returns
// the area and the 0-based protocol address (the number sent on the wire).
//
// Five-digit form: the first digit is the area, the other four a 1-based
// number 1..9999: "00001" = coil 0, "10001" = discrete input 0,
// "30001" = input register 0, "40001" = holding register 0, "40100" =
// holding register 99.
//
// Six-digit (extended) form: first digit the area, five digits 1..65536:
// "400001" = holding register 0, "465536" = holding register 65535.
//
// Anything else — other lengths, a bad first digit, offset 0, non-digits —
// is an error that quotes the input. For the 0-based form, use the Area
// constants and an address directly, or ParsePointAddress.
func ParseAddress(s string) (Area, uint16, error) {
	var width int
	switch len(s) {
	case 5:
		width = 4
	case 6:
		width = 5
	default:
		return 0, 0, fmt.Errorf("modbus: address %q: want 5 digits (e.g. 40001) or 6 digits (e.g. 400001)", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, 0, fmt.Errorf("modbus: address %q: %q is not a digit", s, s[i])
		}
	}
	var a Area
	switch s[0] {
	case '0':
		a = Coils
	case '1':
		a = DiscreteInputs
	case '3':
		a = InputRegisters
	case '4':
		a = HoldingRegisters
	default:
		return 0, 0, fmt.Errorf("modbus: address %q: first digit %q is not an area (0 coils, 1 discrete inputs, 3 input registers, 4 holding registers)", s, s[0])
	}
	n, _ := strconv.Atoi(s[1:]) // digits only, at most 5: cannot fail or overflow
	limit := 9999
	if width == 5 {
		limit = 65536
	}
	if n < 1 || n > limit {
		return 0, 0, fmt.Errorf("modbus: address %q: number %d out of range 1..%d (the notation is 1-based)", s, n, limit)
	}
	return a, uint16(n - 1), nil
}

// FormatAddress returns the six-digit notation of a 0-based address
// ("400001" for holding register 0).
func FormatAddress(a Area, addr uint16) string {
	return fmt.Sprintf("%d%05d", a, int(addr)+1)
}

// ParsePointAddress accepts either notation: the Modicon forms of
// ParseAddress, or "<area>:<0-based address>" such as "hr:0", "coils:17",
// "ir:65535".
func ParsePointAddress(s string) (Area, uint16, error) {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			a, err := ParseArea(s[:i])
			if err != nil {
				return 0, 0, fmt.Errorf("modbus: address %q: %w", s, err)
			}
			n, err := strconv.ParseUint(s[i+1:], 10, 16)
			if err != nil {
				return 0, 0, fmt.Errorf("modbus: address %q: 0-based address must be 0..65535", s)
			}
			return a, uint16(n), nil
		}
	}
	return ParseAddress(s)
}
