package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/edged/edged/drivers/modbus"
)

// Area is a Modbus data area, as the driver defines it; its value is the
// area's leading digit in the Modicon notation.
type Area = modbus.Area

// Modbus areas.
const (
	Coils            = modbus.Coils
	DiscreteInputs   = modbus.DiscreteInputs
	InputRegisters   = modbus.InputRegisters
	HoldingRegisters = modbus.HoldingRegisters
)

// ParseAddress parses a Modbus address with the driver's parser
// (modbus.ParsePointAddress), so a configuration accepts exactly the
// addresses the driver does, and returns its area and 0-based protocol
// address. Accepted forms:
//
//	"40001"   5 digits: area digit (0, 1, 3, 4) and a 1-based number 1..9999
//	"400001"  6 digits: area digit and a 1-based number 1..65536
//	"hr:0"    0-based: an area (co, di, ir, hr, or its name) and 0..65535
func ParseAddress(s string) (Area, int, error) {
	a, off, err := modbus.ParsePointAddress(s)
	if err != nil {
		// The driver's message names the address; say it in the
		// configuration's words: `"4x0001" is not a Modbus address: …`.
		why := strings.TrimPrefix(err.Error(), "modbus: address "+strconv.Quote(s)+": ")
		why = strings.TrimPrefix(why, "modbus: ")
		return 0, 0, fmt.Errorf("%q is not a Modbus address: %s", s, why)
	}
	return a, int(off), nil
}

// FormatAddress returns the 0-based form of an address, "hr:0".
func FormatAddress(a Area, offset int) string {
	var p string
	switch a {
	case Coils:
		p = "co"
	case DiscreteInputs:
		p = "di"
	case InputRegisters:
		p = "ir"
	case HoldingRegisters:
		p = "hr"
	default:
		p = a.String()
	}
	return p + ":" + strconv.Itoa(offset)
}
