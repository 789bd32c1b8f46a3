package plc_test

import (
	"context"
	"fmt"
	"time"

	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/plctest"
)

// An engine over one device, a write and its read-back, with a
// subscriber woken by each image.
func Example() {
	dev := &plctest.Fake{}
	e, err := plc.New(plc.Config{
		Period:  5 * time.Millisecond,
		Devices: []plc.DeviceConfig{{Name: "sim", Device: dev}},
		Tags: []plc.Tag{
			{Device: "sim", Name: "Counter", Type: plc.UInt32},
			{Device: "sim", Name: "Setpoint", Type: plc.Float32, Access: plc.ReadWrite, Scan: 100 * time.Millisecond},
		},
	})
	if err != nil {
		panic(err)
	}
	sp, _ := e.Lookup("sim", "Setpoint")
	wake := make(chan struct{}, 1)
	e.Subscribe(func(*plc.Image) {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.Run(ctx) }()

	for e.Image().Cycle() == 0 {
		<-wake
	}
	fmt.Println(e.Image().Status(sp).String())
	written := make(chan plc.Status, 1)
	fmt.Println(e.Write(sp, plc.Float64Value(21.5), func(st plc.Status) { written <- st }).String())
	fmt.Println((<-written).String())
	// The cycle that wrote read the value back, though Setpoint is in
	// the 100 ms class.
	for range wake {
		if s := e.Image().Sample(sp); s.Value.Float32() == 21.5 {
			fmt.Println(s.Status.String(), s.Value)
			break
		}
	}
	cancel()
	<-done
	// Output:
	// Good
	// Good
	// Good
	// Good 21.5
}
