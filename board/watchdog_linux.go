package board

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// The watchdog ioctls of linux/watchdog.h; x/sys/unix lacks
// WDIOC_SETTIMEOUT: _IOWR('W', 6, int).
const (
	wdiocKeepAlive  = 0x80045705 // _IOR('W', 5, int)
	wdiocSetTimeout = 0xc0045706 // _IOWR('W', 6, int)
	wdiocGetTimeout = 0x80045707 // _IOR('W', 7, int)
)

// Watchdog is an open hardware watchdog (/dev/watchdog): once open, the
// board resets unless Feed is called within the timeout; Close disarms it
// (the magic close) for a clean shutdown.
type Watchdog struct {
	f       *os.File
	timeout time.Duration
}

// OpenWatchdog opens the watchdog device at path and sets its timeout
// (whole seconds, at least 1); the driver may round it, and Timeout says
// what it took.
func OpenWatchdog(path string, timeout time.Duration) (*Watchdog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("board: watchdog: %w", err)
	}
	secs := int(max(timeout.Round(time.Second)/time.Second, 1))
	if err := unix.IoctlSetPointerInt(int(f.Fd()), wdiocSetTimeout, secs); err != nil {
		// Some drivers have a fixed timeout: keep theirs, feed it often.
		secs = 0
	}
	w := &Watchdog{f: f, timeout: time.Duration(secs) * time.Second}
	if secs == 0 {
		w.timeout = timeout
	} else if got, err := unix.IoctlGetInt(int(f.Fd()), wdiocGetTimeout); err == nil && got > 0 {
		w.timeout = time.Duration(got) * time.Second
	}
	return w, w.Feed()
}

// Timeout is the watchdog's timeout.
func (w *Watchdog) Timeout() time.Duration { return w.timeout }

// Feed restarts the watchdog's countdown.
func (w *Watchdog) Feed() error {
	if _, err := unix.IoctlRetInt(int(w.f.Fd()), wdiocKeepAlive); err != nil {
		// The write form every driver takes.
		if _, werr := w.f.Write([]byte{0}); werr != nil {
			return fmt.Errorf("board: watchdog: %w", werr)
		}
	}
	return nil
}

// Close disarms the watchdog (writes the magic 'V', then closes): a clean
// shutdown does not reset the board.
func (w *Watchdog) Close() error {
	w.f.Write([]byte("V"))
	return w.f.Close()
}
