package gpio_test

import (
	"fmt"

	"github.com/edged/edged/board"
	"github.com/edged/edged/drivers/gpio"
)

// The simulated board: what is written to DO1 is read on DI1.
func Example() {
	b := board.Sim()
	d, err := gpio.Open(b, gpio.NewSim(b), []gpio.PinConfig{
		{Name: "DI1", Debounce: 2},
		{Name: "DO1"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	for cycle := 0; cycle < 3; cycle++ {
		if cycle == 1 {
			_ = d.Write("DO1", true)
		}
		for _, r := range d.Scan() {
			fmt.Printf("cycle %d %s=%v err=%v\n", cycle, r.Name, r.Value, r.Err)
		}
	}
	// Output:
	// cycle 0 DI1=false err=<nil>
	// cycle 0 DO1=false err=<nil>
	// cycle 1 DI1=false err=<nil>
	// cycle 1 DO1=true err=<nil>
	// cycle 2 DI1=true err=<nil>
	// cycle 2 DO1=true err=<nil>
}
