package devices

import "github.com/edged/edged/plc"

// Blocks returns the number of block reads in the plan of a Modbus device
// (made by its last Bind), and false for another device.
func Blocks(d plc.Device) (int, bool) {
	m, ok := d.(*modbusDevice)
	if !ok {
		return 0, false
	}
	return len(m.blocks), true
}
