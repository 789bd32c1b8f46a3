//go:build !linux

package sched

import "runtime"

// Yielder yields with runtime.Gosched where there is no eventfd.
type Yielder struct{}

// New returns a Yielder.
func New() *Yielder { return &Yielder{} }

// Yield lets the other goroutines run.
func (y *Yielder) Yield() { runtime.Gosched() }

// Close does nothing.
func (y *Yielder) Close() {}
