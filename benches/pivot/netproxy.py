"""A remote link made on this machine (issue 20, item 2): a loopback TCP proxy that delays
every byte by half a round trip and caps throughput, each direction on its own, like a
network path. This kernel has no `tc netem`, so it is done in userspace.

    python3 benches/pivot/netproxy.py --listen 15432 --to 127.0.0.1:5432 --rtt-ms 20 --mbit 100

Each direction is modelled as a link: a chunk read at time t leaves when the link is free
(serialisation: bytes * 8 / mbit) and arrives after its delay. The whole round trip is
spent on the way back (server to client): asyncio sleeps in whole milliseconds, so two
half-delays of 0.5 ms would each round up and give a 2 ms round trip instead of 1 ms; for
request/response protocols only the sum matters. At most `--buffer-kb` are in
flight per direction, so a fast sender is slowed by TCP's own flow control, as on a real
path. `--mbit 0` = no cap. Loopback only: it refuses to listen on anything else.
"""

import argparse
import asyncio
import collections
import sys
import time

CHUNK = 64 * 1024


class Link:
    """One direction: pace to `mbit` and delay by `delay` seconds."""

    def __init__(self, delay, mbit, buffer_bytes):
        self.delay = delay
        self.rate = mbit * 1e6 / 8 if mbit > 0 else 0.0  # bytes per second
        self.free_at = 0.0  # when the link has sent everything queued so far
        self.queue = collections.deque()
        self.queued = 0
        self.buffer_bytes = buffer_bytes
        self.more = asyncio.Event()
        self.room = asyncio.Event()
        self.room.set()

    async def pump(self, reader, writer):
        """Read from `reader` as fast as the buffer lets; a second task delivers."""
        deliver = asyncio.ensure_future(self.deliver(writer))
        try:
            while True:
                data = await reader.read(CHUNK)
                now = time.monotonic()
                if self.rate and data:
                    self.free_at = max(self.free_at, now) + len(data) / self.rate
                    due = self.free_at + self.delay
                else:
                    due = max(self.free_at, now) + self.delay
                self.queue.append((due, data))
                self.queued += len(data)
                self.more.set()
                if not data:
                    break
                while self.queued > self.buffer_bytes:
                    self.room.clear()
                    await self.room.wait()
        except (ConnectionError, OSError):
            self.queue.append((0.0, b""))
            self.more.set()
        await deliver

    async def deliver(self, writer):
        try:
            while True:
                while not self.queue:
                    self.more.clear()
                    await self.more.wait()
                due, data = self.queue.popleft()
                self.queued -= len(data)
                self.room.set()
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:
                    if writer.can_write_eof():
                        writer.write_eof()
                    break
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()


async def serve(args):
    host, port = args.to.rsplit(":", 1)
    delay = args.rtt_ms / 1000.0
    buffer_bytes = args.buffer_kb * 1024

    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(host, int(port))
        except OSError as e:
            print(f"netproxy: cannot reach {args.to}: {e}", file=sys.stderr)
            client_writer.close()
            return
        up = Link(0.0, args.mbit, buffer_bytes)
        down = Link(delay, args.mbit, buffer_bytes)
        await asyncio.gather(up.pump(client_reader, server_writer),
                             down.pump(server_reader, client_writer))

    server = await asyncio.start_server(handle, "127.0.0.1", args.listen)
    print(f"netproxy: 127.0.0.1:{args.listen} -> {args.to}, rtt {args.rtt_ms} ms, "
          f"{args.mbit or 'uncapped'} Mbit/s per direction", file=sys.stderr, flush=True)
    async with server:
        await server.serve_forever()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--listen", type=int, required=True, help="port on 127.0.0.1")
    ap.add_argument("--to", required=True, help="host:port of the server (loopback)")
    ap.add_argument("--rtt-ms", type=float, default=0.0)
    ap.add_argument("--mbit", type=float, default=0.0, help="cap per direction; 0 = none")
    ap.add_argument("--buffer-kb", type=int, default=4096, help="bytes in flight per direction")
    args = ap.parse_args()
    if args.to.rsplit(":", 1)[0] not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("netproxy: loopback only (--to 127.0.0.1:PORT)")
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
