package config_test

import (
	"fmt"

	"github.com/edged/edged/plc/config"
)

func ExampleConfig_Validate() {
	c := config.Simulator()
	c.Devices[0].Tags[0].Address = "4x0001"
	c.Devices[0].Tags[3].Type = config.Float32 // Toggle, on a coil
	fmt.Println(c.Validate())
	// Output:
	// config: 2 problems:
	// 	devices[sim].tags[Counter].address: "4x0001" is not a Modbus address: 'x' is not a digit
	// 	devices[sim].tags[Toggle].type: float32 on coils: only bool
}
