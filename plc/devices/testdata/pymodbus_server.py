#!/usr/bin/python3
"""A Modbus TCP server on pymodbus (Debian python3-pymodbus, 3.0) with a
fixed map of values encoded here, independently of edged's driver, for
plc/devices' TestPymodbus and TestPymodbusRTU. Usage:

  pymodbus_server.py PORT          Modbus TCP on 127.0.0.1:PORT, every unit id
  pymodbus_server.py rtu DEVICE    Modbus RTU on the serial DEVICE (a pty of
                                   socat), 19200 8N1, units 1 (the map below)
                                   and 2 (holding register 0 = 2222)

Every value is packed with Python's struct module and laid out in the
byte/word order named; the Go test expects exactly these values.

Holding registers (0-based, 64 of them; anything above is exception 2):
  0      int16   -1234                ABCD
  1      uint16  54321                BADC
  2..3   int32   -123456789           CDAB
  4..5   uint32  3000000000           BADC
  6..7   float32 123.456              DCBA
  8..11  float64 -9876.54321          ABCD
  12..15 int64   -1234567890123       CDAB
  16..19 uint64  12345678901234567890 DCBA
  20..23 string  "edged-gw"           ABCD (8 characters in 4 registers)
  24     uint16  0x0008               (bit 3 set: bool bits)
  25     uint16  13824                (scaled 0..27648 -> 0..10: 5.0)
  26..27 float32 50.0                 ABCD (scaled 0..100 -> 0..1: 0.5)
  28     uint16  0                    (written by the test)
  30..31 float32 0                    (written by the test, CDAB)
  32     uint16  0x0101               (bit 4 written by the test)
  60     uint16  4242
Input registers: 0 int16 -1000 (scaled -1000..1000 -> -10..10: -10.0), 1 uint16 7
Coils: 0 on, 1 off, 2 on; 10 written by the test
Discrete inputs: 0 off, 1 on
"""
import struct
import sys

from pymodbus.datastore import (ModbusSequentialDataBlock, ModbusServerContext,
                                ModbusSlaveContext)
from pymodbus.server import StartTcpServer


def order(b, o):
    """Reorders the big-endian bytes b (ABCD...) into order o."""
    regs = [b[i:i + 2] for i in range(0, len(b), 2)]
    if o in ("CDAB", "DCBA"):
        regs.reverse()
    if o in ("BADC", "DCBA"):
        regs = [r[::-1] for r in regs]
    return b"".join(regs)


def put(hr, addr, fmt, v, o="ABCD"):
    b = order(struct.pack(">" + fmt, v), o)
    for i in range(0, len(b), 2):
        hr[addr + i // 2] = (b[i] << 8) | b[i + 1]


hr = [0] * 64
put(hr, 0, "h", -1234)
put(hr, 1, "H", 54321, "BADC")
put(hr, 2, "i", -123456789, "CDAB")
put(hr, 4, "I", 3000000000, "BADC")
put(hr, 6, "f", 123.456, "DCBA")
put(hr, 8, "d", -9876.54321)
put(hr, 12, "q", -1234567890123, "CDAB")
put(hr, 16, "Q", 12345678901234567890, "DCBA")
s = b"edged-gw"
for i in range(4):
    hr[20 + i] = (s[2 * i] << 8) | s[2 * i + 1]
hr[24] = 0x0008
hr[25] = 13824
put(hr, 26, "f", 50.0)
hr[32] = 0x0101
hr[60] = 4242
ir = [0] * 64
put(ir, 0, "h", -1000)
ir[1] = 7
co = [False] * 64
co[0] = co[2] = True
di = [False] * 64
di[1] = True

unit1 = ModbusSlaveContext(
    hr=ModbusSequentialDataBlock(0, hr), ir=ModbusSequentialDataBlock(0, ir),
    co=ModbusSequentialDataBlock(0, co), di=ModbusSequentialDataBlock(0, di),
    zero_mode=True)
if sys.argv[1] == "rtu":
    from pymodbus.server import StartSerialServer
    from pymodbus.transaction import ModbusRtuFramer
    hr2 = [0] * 16
    hr2[0] = 2222
    unit2 = ModbusSlaveContext(
        hr=ModbusSequentialDataBlock(0, hr2), ir=ModbusSequentialDataBlock(0, [0] * 16),
        co=ModbusSequentialDataBlock(0, [False] * 16), di=ModbusSequentialDataBlock(0, [False] * 16),
        zero_mode=True)
    ctx = ModbusServerContext(slaves={1: unit1, 2: unit2}, single=False)
    print("ready", flush=True)
    StartSerialServer(context=ctx, framer=ModbusRtuFramer, port=sys.argv[2],
                      baudrate=19200, bytesize=8, parity="N", stopbits=1)
else:
    ctx = ModbusServerContext(slaves=unit1, single=True)
    print("ready", flush=True)
    StartTcpServer(context=ctx, address=("127.0.0.1", int(sys.argv[1])))
