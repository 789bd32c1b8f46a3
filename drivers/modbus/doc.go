// Package modbus is edged's Modbus master (client) driver: transports for
// Modbus TCP and Modbus RTU, a data model of typed points, a request
// planner and the mapping of Modbus failures to OPC UA status codes. It
// knows nothing of the scan engine (plc/) or the OPC UA stack (opcua/); the
// scan engine calls it.
//
// How it works, and why, is in docs/modbus.md.
package modbus
