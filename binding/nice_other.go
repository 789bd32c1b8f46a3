//go:build !linux

package binding

func lowerThreadPriority() {}
