#!/usr/bin/env python3
"""A pymodbus server with known values, for drivers/modbus's interop tests.

    pymodbus_server.py tcp PORT           Modbus TCP on 127.0.0.1:PORT
    pymodbus_server.py rtu DEVICE BAUD    Modbus RTU, 8N1, on a serial device (a socat pty:
                                          Linux ptys refuse the parity bit, so no parity)

Unit id 1 (tcp: every unit id). Addresses are 0-based (zero_mode=True).
The values are encoded here with Python's struct, independently of the Go
code; pymodbus_values.go in the tests lists the same values.

Holding registers (big-endian, ABCD):
    0  int16   -12345
    1  uint16  54321
    2  int32   -123456789
    4  uint32  3123456789
    6  int64   -1234567890123456789
    10 uint64  12345678901234567890
    14 float32 -3.25e7
    16 float64 6.02214076e23
    20 string  "pymodbus" (4 registers)
    24 0x2000  (bit 13 set)
    100..299   zero, for the tests' writes
Input registers:
    0  float32 123.456 word-swapped (CDAB)
    2  uint16  0x1234
    3  int32   -2 (DCBA)
Coils: 1 at 1, 3, 4, 10; 0 elsewhere (300 coils).
Discrete inputs: 1 at 3 and 7 (300 inputs).
Prints "ready" on stdout when it is about to serve.
"""
import struct
import sys

from pymodbus.datastore import (ModbusSequentialDataBlock, ModbusServerContext,
                                ModbusSlaveContext)


def regs(fmt, v):
    b = struct.pack(">" + fmt, v)
    return [int.from_bytes(b[i:i + 2], "big") for i in range(0, len(b), 2)]


def main():
    hr = [0] * 300
    for addr, fmt, v in [(0, "h", -12345), (1, "H", 54321), (2, "i", -123456789),
                         (4, "I", 3123456789), (6, "q", -1234567890123456789),
                         (10, "Q", 12345678901234567890), (14, "f", -3.25e7),
                         (16, "d", 6.02214076e23)]:
        r = regs(fmt, v)
        hr[addr:addr + len(r)] = r
    s = b"pymodbus"
    hr[20:24] = [int.from_bytes(s[i:i + 2], "big") for i in range(0, 8, 2)]
    hr[24] = 0x2000
    ir = [0] * 300
    f = regs("f", 123.456)
    ir[0:2] = [f[1], f[0]]
    ir[2] = 0x1234
    le = struct.pack("<i", -2)  # D C B A
    ir[3:5] = [int.from_bytes(le[0:2], "big"), int.from_bytes(le[2:4], "big")]
    co = [False] * 300
    for i in (1, 3, 4, 10):
        co[i] = True
    di = [False] * 300
    for i in (3, 7):
        di[i] = True
    store = ModbusSlaveContext(
        di=ModbusSequentialDataBlock(0, di), co=ModbusSequentialDataBlock(0, co),
        hr=ModbusSequentialDataBlock(0, hr), ir=ModbusSequentialDataBlock(0, ir),
        zero_mode=True)
    mode = sys.argv[1]
    if mode == "tcp":
        from pymodbus.server import StartTcpServer
        context = ModbusServerContext(slaves=store, single=True)
        print("ready", flush=True)
        StartTcpServer(context=context, address=("127.0.0.1", int(sys.argv[2])),
                       allow_reuse_address=True)
    elif mode == "rtu":
        from pymodbus.framer.rtu_framer import ModbusRtuFramer
        from pymodbus.server import StartSerialServer
        context = ModbusServerContext(slaves={1: store}, single=False)
        print("ready", flush=True)
        StartSerialServer(context=context, framer=ModbusRtuFramer, port=sys.argv[2],
                          baudrate=int(sys.argv[3]), bytesize=8, parity="N",
                          stopbits=1, timeout=0.005)
    else:
        sys.exit("usage: pymodbus_server.py tcp PORT | rtu DEVICE BAUD")


if __name__ == "__main__":
    main()
