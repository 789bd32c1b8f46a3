package gpio

import "path/filepath"

func hasGPIOChip() bool {
	m, _ := filepath.Glob("/dev/gpiochip*")
	return len(m) > 0
}
