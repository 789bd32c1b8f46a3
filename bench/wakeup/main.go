// Command wakeup measures how late this machine wakes a process that does
// nothing but sleep to 5 ms deadlines, the way edged's scan engine does
// (a timer, then the last millisecond with nanosleep): the floor under
// the scan's overruns that no code in edged can lower (docs/robustness.md).
//
//	go run ./bench/wakeup -for 10m
//
// With -events it also prints a line for every late wake-up of a period
// or more, "overrun <unix ns of the wake-up> <cycles missed>", as it
// comes: the robustness suite runs it beside edged to tell the machine's
// stalls from edged's.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"
)

func main() {
	dur := flag.Duration("for", time.Minute, "how long to measure")
	period := flag.Duration("period", 5*time.Millisecond, "the cycle")
	events := flag.Bool("events", false, "print each overrun as it comes")
	flag.Parse()
	out := bufio.NewWriter(os.Stdout)
	t0 := time.Now()
	timer := time.NewTimer(0)
	var cycles, late1, late2, lateN, missed int
	var worst time.Duration
	for n := int64(0); time.Since(t0) < *dur; n++ {
		<-timer.C
		due := t0.Add(time.Duration(n) * *period)
		if d := time.Until(due); d > 0 {
			ts := syscall.NsecToTimespec(int64(d))
			syscall.Nanosleep(&ts, nil)
		}
		now := time.Now()
		late := now.Sub(due)
		worst = max(worst, late)
		switch {
		case late >= *period:
			m := int64(late / *period)
			lateN++
			missed += int(m)
			n += m // skip the missed slots, as the engine does
			if *events {
				fmt.Fprintf(out, "overrun %d %d\n", now.UnixNano(), m)
				out.Flush()
			}
		case late >= 2*time.Millisecond:
			late2++
		case late >= time.Millisecond:
			late1++
		}
		cycles++
		timer.Reset(time.Until(t0.Add(time.Duration(n+1)**period)) - time.Millisecond)
	}
	fmt.Fprintf(out, "wakeup: %d cycles of %v in %v: %d woke 1-2 ms late, %d 2 ms to a period late, %d a period or more, missing %d cycles (the engine's overruns); latest %v\n",
		cycles, *period, *dur, late1, late2, lateN, missed, worst.Round(time.Microsecond))
	out.Flush()
}
