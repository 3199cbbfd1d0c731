"""Framing of the judge <-> candidate channel: 4-byte big-endian length, then JSON; size and depth limits."""

import json
import os
import select
import struct
import sys
import time

MAX_FRAME = 16 << 20
MAX_DEPTH = 2000
_HDR = struct.Struct(">I")


class ChannelClosed(Exception):
    """The other side went away (EOF or a broken socket)."""


class ProtocolError(Exception):
    """The other side sent something that is not a valid frame or value."""


class FrameTimeout(Exception):
    """No complete frame before the deadline."""


class FrameTooLarge(ProtocolError):
    pass


def send_frame(fd: int, obj) -> None:
    with _deep_enough():
        data = json.dumps(obj, separators=(",", ":"), allow_nan=True).encode()
    if len(data) > MAX_FRAME:
        raise FrameTooLarge(f"message of {len(data)} bytes exceeds {MAX_FRAME}")
    buf = memoryview(_HDR.pack(len(data)) + data)
    while buf:
        try:
            n = os.write(fd, buf)
        except (BrokenPipeError, ConnectionResetError, OSError) as e:
            raise ChannelClosed(str(e)) from None
        buf = buf[n:]


def _read_exact(fd: int, n: int, deadline: float) -> bytes:
    chunks, left = [], n
    while left:
        wait = deadline - time.monotonic()
        if wait <= 0:
            raise FrameTimeout()
        ready, _, _ = select.select([fd], [], [], min(wait, 3600))
        if not ready:
            continue
        try:
            chunk = os.read(fd, min(left, 1 << 20))
        except (ConnectionResetError, OSError) as e:
            raise ChannelClosed(str(e)) from None
        if not chunk:
            raise ChannelClosed("end of stream")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def recv_frame(fd: int, deadline: float = float("inf")):
    (n,) = _HDR.unpack(_read_exact(fd, 4, deadline))
    if n > MAX_FRAME:
        raise FrameTooLarge(f"frame of {n} bytes announced, limit {MAX_FRAME}")
    data = _read_exact(fd, n, deadline)
    try:
        with _deep_enough():
            return json.loads(data)
    except (ValueError, RecursionError) as e:
        raise ProtocolError(f"unparsable frame: {e}") from None


class _deep_enough:
    """Room for MAX_DEPTH nested values inside the codec only; the code around it keeps Python's
    default limit (a task that tests for RecursionError sees the usual one)."""

    def __enter__(self):
        self.saved = sys.getrecursionlimit()
        sys.setrecursionlimit(self.saved + 4 * MAX_DEPTH)

    def __exit__(self, *exc):
        sys.setrecursionlimit(self.saved)
