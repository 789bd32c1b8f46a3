package server

// Pace is pace, for the tests of package server_test.
var Pace = pace
