module github.com/edged/edged

go 1.26

// gopcua is imported only by opcua/ua/gopcua_test.go, to cross-check our
// codec against an independent implementation; no binary links it.
require github.com/gopcua/opcua v0.8.0
