//go:build !linux

package configsvc

func lowerThreadPriority() {}
