// Command wakeup measures how late this machine wakes a process that does
// nothing but sleep to 5 ms deadlines, the way edged's scan engine does
// (a timer, then the last millisecond with nanosleep): the floor under
// the scan's overruns that no code in edged can lower (docs/robustness.md).
//
//	go run ./internal/robust/wakeup -for 10m
package main

import (
	"flag"
	"fmt"
	"time"

	"syscall"
)

func main() {
	dur := flag.Duration("for", time.Minute, "how long to measure")
	period := flag.Duration("period", 5*time.Millisecond, "the cycle")
	flag.Parse()
	t0 := time.Now()
	timer := time.NewTimer(0)
	var cycles, late1, late2, overruns int
	var worst time.Duration
	for n := int64(0); time.Since(t0) < *dur; n++ {
		<-timer.C
		due := t0.Add(time.Duration(n) * *period)
		if d := time.Until(due); d > 0 {
			ts := syscall.NsecToTimespec(int64(d))
			syscall.Nanosleep(&ts, nil)
		}
		late := time.Since(due)
		worst = max(worst, late)
		switch {
		case late >= *period:
			overruns++
			n += int64(late / *period) // skip the missed slots, as the engine does
		case late >= 2*time.Millisecond:
			late2++
		case late >= time.Millisecond:
			late1++
		}
		cycles++
		timer.Reset(time.Until(t0.Add(time.Duration(n+1)**period)) - time.Millisecond)
	}
	fmt.Printf("wakeup: %d cycles of %v in %v: %d woke 1-2 ms late, %d 2 ms to a period late, %d a period or more (overruns); latest %v\n",
		cycles, *period, *dur, late1, late2, overruns, worst.Round(time.Microsecond))
}
