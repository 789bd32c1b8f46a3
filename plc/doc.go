// Package plc is the scan engine of edged: it polls the devices (Modbus
// connections and buses, GPIO chips, all behind the Device interface) on a
// fixed cycle and publishes what it read as an immutable process image.
// It is driver-agnostic and knows nothing of OPC UA; a thin binding adapts
// an Image to the address space (package binding).
//
// How it works, and why, is in docs/scan-engine.md.
package plc
