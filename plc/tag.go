package plc

import (
	"math"
	"time"

	"github.com/edged/edged/opcua/ua/status"
)

// Handle identifies a tag: its index in Config.Tags, and its index in every
// Image. A binding uses it as the variable's handle in the address space.
type Handle uint32

// Access is a tag's access mode.
type Access uint8

// Access modes.
const (
	Read      Access = iota // inputs: read every scan, never written
	ReadWrite               // read every scan, and writable with Engine.Write
)

// String returns "read" or "read-write".
func (a Access) String() string {
	if a == ReadWrite {
		return "read-write"
	}
	return "read"
}

// Tag is one process variable as the engine sees it. (Its fields are in
// the order that packs them: 80 bytes.)
type Tag struct {
	// Device is the name of the device (Config.Devices) that serves it.
	Device string
	// Name is unique within its device.
	Name string
	// Address is for the driver only (a Modbus register, a GPIO line
	// name); the engine does not look at it.
	Address string
	// Scan is the tag's scan class: how often it is read, a positive
	// multiple of Config.Period; 0 is every cycle.
	Scan time.Duration
	// WriteMin and WriteMax, when set, bound the numbers Engine.Write
	// accepts: a value beyond them is Bad_OutOfRange, never clamped.
	WriteMin, WriteMax *float64
	// Type is the type of the values in the image; drivers deliver
	// Values of this type.
	Type Type
	// Access says whether Engine.Write accepts writes to it.
	Access Access
	// NonFinite lets Engine.Write accept NaN and ±Inf for a float tag;
	// without it they are Bad_OutOfRange (a PLC rarely expects them).
	NonFinite bool
}

// checkWrite is the status of writing v, already of t's type, to t: Good,
// or Bad_OutOfRange for NaN or ±Inf (unless t.NonFinite) and for a number
// beyond t's write limits.
func (t *Tag) checkWrite(v Value) Status {
	if t.Type == Bool || t.Type == String {
		return status.Good
	}
	x := v.Float64()
	if math.IsNaN(x) || math.IsInf(x, 0) {
		if t.NonFinite {
			return status.Good
		}
		return status.BadOutOfRange
	}
	if (t.WriteMin != nil && x < *t.WriteMin) || (t.WriteMax != nil && x > *t.WriteMax) {
		return status.BadOutOfRange
	}
	return status.Good
}
