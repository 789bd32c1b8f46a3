package config

import "sort"

//go:generate go run ./internal/genunits -in ../../../shared/opcua-schema/UNECE_to_OPCUA.csv -out zz_units.go

// Unit is an engineering unit of the UNECE table that OPC UA uses for the
// EngineeringUnits property (an EUInformation with NamespaceUri
// "http://www.opcfoundation.org/UA/units/un/cefact").
type Unit struct {
	// Code is the UNECE common code, e.g. "CEL".
	Code string
	// UnitID is the OPC UA UnitId derived from the code.
	UnitID int32
	// DisplayName is the symbol, e.g. "°C".
	DisplayName string
	// Description is the name, e.g. "degree Celsius".
	Description string
}

// LookupUnit returns the unit with the UNECE code (case-sensitive).
func LookupUnit(code string) (Unit, bool) {
	i := sort.Search(len(units), func(i int) bool { return units[i].Code >= code })
	if i < len(units) && units[i].Code == code {
		return units[i], true
	}
	return Unit{}, false
}

// NumUnits returns the number of known units.
func NumUnits() int { return len(units) }
