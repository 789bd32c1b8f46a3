//go:build !linux

package board

import (
	"errors"
	"time"
)

// Watchdog needs Linux.
type Watchdog struct{}

// OpenWatchdog needs Linux.
func OpenWatchdog(string, time.Duration) (*Watchdog, error) {
	return nil, errors.New("board: a watchdog needs Linux")
}

func (w *Watchdog) Timeout() time.Duration { return 0 }
func (w *Watchdog) Feed() error            { return nil }
func (w *Watchdog) Close() error           { return nil }
