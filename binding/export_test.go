package binding

import "time"

// SetDiagnosticsClock replaces the clock that decides when the
// Diagnostics cache is refreshed.
func SetDiagnosticsClock(b *Binding, now func() time.Time) {
	b.diag.mu.Lock()
	b.diag.now = now
	b.diag.mu.Unlock()
}
