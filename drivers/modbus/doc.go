// Package modbus is edged's Modbus master (client) driver: transports for
// Modbus TCP and Modbus RTU, a data model of typed points, a request
// planner and the mapping of Modbus failures to OPC UA status codes. It
// knows nothing of the scan engine (plc/) or the OPC UA stack (opcua/); the
// scan engine calls it.
//
// # Framing and transports
//
// The framing is github.com/goburrow/modbus v0.1.0's (its TCP packager, and
// its RTU packager with the CRC check), used through modbus.NewClient2 with
// this package's own transports, because goburrow's transports have defects:
// its TCP transporter keeps a late reply in the socket after a timeout so
// every later transaction id mismatches, and its RTU transporter is not
// goroutine-safe and sleeps a fixed delay per request. Every call here
// takes a context.Context whose deadline bounds the transaction.
//
//   - TCP (NewTCP) is one connection; TCP.Client(unit) returns a Client per
//     unit id behind it. After any failed transaction other than a Modbus
//     exception response the connection is closed and reopened, with
//     exponential back-off on consecutive failures.
//   - RTU (NewRTU) is one serial bus (RS-485); RTU.Client(unit) returns a
//     Client per unit id on it; transactions of all of them run one after
//     another, in the order asked, through the bus's queue. See RTU for the timing.
//
// # Values
//
// A read returns the raw response data (registers as on the wire, 2 bytes
// each; bits packed least significant bit first). Point.Decode turns the
// data of a block into a Value — a small value type that holds any numeric
// type in 64 bits; decoding allocates nothing except for strings.
// Point.EncodeRegisters is the reverse for writes, with range checks.
// See Order for the byte and word orders, with a worked example, Scaling
// for engineering units, ParseAddress for the "40001"/"400001" notation.
//
// # Planning
//
// Plan merges points into the fewest block reads per (unit, area); the scan
// engine re-plans by calling it again when the configuration changes.
//
// # Status
//
// Every device call returns nil or an *Error carrying an OPC UA status
// code; ExceptionStatus documents the table. StatusOf(err) gives the
// status of any error.
//
// # Statistics
//
// Client.Stats (per unit id) and TCP.Stats / RTU.Stats (per link) count
// requests, errors, timeouts, exceptions and reconnects and hold the last
// error, the last round-trip time and the link state, in atomic types that
// are safe on 32-bit ARM.
//
// # Not supported
//
// Broadcast (unit id 0: a write with no response), RS-485 adapters that echo
// what they send, Modbus ASCII and RTU-over-TCP framing, and function codes
// other than 1, 2, 3, 4, 5, 6, 15 and 16 on Client. A Bit point is written
// by read-modify-write of its register (not function code 22), which is not
// atomic on the device.
package modbus
