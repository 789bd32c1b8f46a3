package plc

import "time"

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

// Tag is one process variable as the engine sees it.
type Tag struct {
	// Device is the name of the device (Config.Devices) that serves it.
	Device string
	// Name is unique within its device.
	Name string
	// Type is the type of the values in the image; drivers deliver
	// Values of this type.
	Type Type
	// Access says whether Engine.Write accepts writes to it.
	Access Access
	// Scan is the tag's scan class: how often it is read, a positive
	// multiple of Config.Period; 0 is every cycle.
	Scan time.Duration
	// Address is for the driver only (a Modbus register, a GPIO line
	// name); the engine does not look at it.
	Address string
}
