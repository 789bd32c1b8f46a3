package ua

import "github.com/edged/edged/opcua/ua/status"

// Helpers for servers that answer service messages into reused values.

// IsValid reports whether t is one of the four TimestampsToReturn.
func (t TimestampsToReturn) IsValid() bool {
	return t >= TimestampsToReturnSource && t <= TimestampsToReturnNeither
}

// CheckOperations is the service result for a request with n operations
// and a server limit: Bad_NothingToDo for none, Bad_TooManyOperations
// above the limit, nil otherwise.
func CheckOperations(n int, limit uint32) error {
	switch {
	case n == 0:
		return status.BadNothingToDo
	case uint64(n) > uint64(limit):
		return status.BadTooManyOperations
	}
	return nil
}

// Resize returns s with length n, reusing its array (and the values in
// it) when it is large enough: a response's results reused from one
// request to the next.
func Resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return append(s[:cap(s)], make([]T, n-cap(s))...)
}
