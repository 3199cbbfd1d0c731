"""Framing of the judge <-> candidate channel: 4-byte big-endian length, then JSON; size and depth limits.

A message larger than one frame (16 MiB) streams as several: every frame but the last has the
length's top bit set. A whole message is capped at MAX_MESSAGE; beyond that the sender gets
FrameTooLarge naming the limit (the candidate answers MemoryError, the test sees it)."""

import json
import os
import select
import struct
import sys
import time

MAX_FRAME = 16 << 20
MAX_MESSAGE = 64 << 20
_MORE = 1 << 31
MAX_DEPTH = 10000
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
    if len(data) > MAX_MESSAGE:
        raise FrameTooLarge(f"message of {len(data)} bytes exceeds the channel's limit of {MAX_MESSAGE >> 20} MiB")
    view = memoryview(data)
    while len(view) > MAX_FRAME:
        _write_all(fd, _HDR.pack(MAX_FRAME | _MORE), view[:MAX_FRAME])
        view = view[MAX_FRAME:]
    _write_all(fd, _HDR.pack(len(view)), view)


def _write_all(fd: int, header: bytes, body) -> None:
    # A small frame goes in one write; a big one without copying its body.
    parts = (memoryview(header + bytes(body)),) if len(body) < 65536 else (memoryview(header), memoryview(body))
    for buf in parts:
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
    parts, total = [], 0
    while True:
        (n,) = _HDR.unpack(_read_exact(fd, 4, deadline))
        more, n = bool(n & _MORE), n & ~_MORE
        total += n
        if n > MAX_FRAME or total > MAX_MESSAGE:
            raise FrameTooLarge(f"frame of {n} bytes announced (message {total}), limit {MAX_FRAME} per frame")
        parts.append(_read_exact(fd, n, deadline))
        if not more:
            break
    data = parts[0] if len(parts) == 1 else b"".join(parts)
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
