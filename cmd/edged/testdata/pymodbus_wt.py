#!/usr/bin/python3
"""The Modbus TCP device of cmd/edged's TestPymodbusWriteThrough, on
pymodbus (Debian python3-pymodbus, 3.0), and an independent client that
dumps what that device holds. Usage:

  pymodbus_wt.py serve PORT   serve unit 1 on 127.0.0.1:PORT; prints "ready"
                              once it listens, exits (status 1) if it cannot
  pymodbus_wt.py dump PORT    read holding registers 0..63 and coils 0..63
                              of 127.0.0.1:PORT with pymodbus's own client
                              and print two lines:
                                hr V0 V1 ... V63   (registers, decimal)
                                co B0 B1 ... B63   (coils, 0 or 1)

The datastore has 64 holding registers and 64 coils (0-based addresses);
any address above is answered with exception 2 (Illegal Data Address).
Initial values, chosen so that a write that must not reach the device
(or must keep a register's other bits) shows if it did:

  hr 0      uint16  1111
  hr 2..3   int32   0 (written CDAB by the test)
  hr 4..5   float32 0 (written ABCD by the test)
  hr 8      uint16  0x0101 (bit 5 written by the test)
  hr 10     uint16  500 (scaled 0..1000 -> 0..100: 50.0)
  hr 12..13 string  "ab" padded with zeros
  hr 20     uint16  2020 (a read-only tag)
  co 0 off, co 1 on (its neighbour, which must stay on)
"""
import asyncio
import sys


def serve(port):
    from pymodbus.datastore import (ModbusSequentialDataBlock,
                                    ModbusServerContext, ModbusSlaveContext)
    hr = [0] * 64
    hr[0] = 1111
    hr[8] = 0x0101
    hr[10] = 500
    hr[12] = (ord("a") << 8) | ord("b")
    hr[20] = 2020
    co = [False] * 64
    co[1] = True
    unit = ModbusSlaveContext(
        hr=ModbusSequentialDataBlock(0, hr),
        ir=ModbusSequentialDataBlock(0, [0] * 64),
        co=ModbusSequentialDataBlock(0, co),
        di=ModbusSequentialDataBlock(0, [False] * 64),
        zero_mode=True)
    ctx = ModbusServerContext(slaves=unit, single=True)
    asyncio.run(run(ctx, port))


async def run(ctx, port):
    """Serves ctx on port, saying "ready" once the socket listens."""
    from pymodbus.server import StartAsyncTcpServer
    # SO_REUSEADDR: the test restarts the server on the same port, where
    # the killed one's connections may still be in TIME_WAIT.
    server = await StartAsyncTcpServer(context=ctx, address=("127.0.0.1", port),
                                       allow_reuse_address=True, defer_start=True)
    task = asyncio.ensure_future(server.serve_forever())
    await asyncio.wait([task, server.serving], return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        task.result()  # the bind error
        sys.exit("serve: the server ended before it listened")
    print("ready", flush=True)
    await task


def dump(port):
    from pymodbus.client import ModbusTcpClient
    c = ModbusTcpClient("127.0.0.1", port=port, timeout=10)
    if not c.connect():
        sys.exit("dump: cannot connect to 127.0.0.1:%d" % port)
    r = c.read_holding_registers(0, 64, slave=1)
    if r.isError():
        sys.exit("dump: read holding registers: %s" % r)
    b = c.read_coils(0, 64, slave=1)
    if b.isError():
        sys.exit("dump: read coils: %s" % b)
    c.close()
    print("hr " + " ".join(str(v) for v in r.registers))
    print("co " + " ".join("1" if v else "0" for v in b.bits[:64]))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("serve", "dump"):
        sys.exit(__doc__)
    {"serve": serve, "dump": dump}[sys.argv[1]](int(sys.argv[2]))
