"""Runs a chunk's micro-batches as coroutines, so that the device sees their programs and collectives in the order
that lets one micro-batch's collective run beside the other's programs.

Each micro-batch is a plain function that issues its layers' programs and collectives and calls `pause()` at
the points where the other micro-batch should issue its next piece (device_stack.LayerRunner's phase points: after
a block's gather, after its first projection, after its reduce-scatter). Exactly one stream runs at any time; at a
pause the turn passes to the next stream that has not finished, round robin, so the issue order is deterministic
and the streams never run concurrently (each runs on a thread of its own only to keep its call stack across the
pause; a thread hands the turn on and blocks). The first stream runs `head_start` pieces before the second
starts, which puts the second half a block behind: A's reduce-scatter is followed by B's first projection, A's
gather by B's programs up to its reduce-scatter (device/sub_device_timing.MICRO_BATCH_ORDER).

The streams run in copies of the caller's context (contextvars: the compute grid the planners read,
hw.compute_sub_device). An exception in a stream ends it, and the others at their next pause; the first exception
is raised to the caller. An interrupt of the caller's wait (Ctrl-C) cancels the streams the same way: run() lets
the one issuing finish its piece and every other unwind, then re-raises, so no stream is left blocked or still
issuing work after run() returns.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Sequence


class _Cancelled(Exception):
    """Unwinds a stream at its pause once another stream has failed (its work would be thrown away)."""


class _Stream:
    def __init__(self, index: int, body: Callable[[], None], context: contextvars.Context):
        self.index, self.body, self.context = index, body, context
        self.turn = threading.Event()
        self.done = False
        self.error: BaseException | None = None
        self.pieces = 0  # pauses passed


class Interleaver:
    """run(bodies): each body called once, interleaved at its pause() calls; pause() outside run is a no-op."""

    def __init__(self, head_start: int = 1):
        self.head_start = head_start
        self._streams: list[_Stream] = []
        self._local = threading.local()
        self._finished = threading.Event()
        self._cancelled = False  # run()'s wait was interrupted: every stream unwinds at its next pause

    def pause(self) -> None:
        stream = getattr(self._local, "stream", None)
        if stream is None or len(self._streams) < 2:
            return
        if self._stopping():
            raise _Cancelled
        stream.pieces += 1
        if stream.index == 0 and stream.pieces <= self.head_start:
            return  # the first stream's head start: the others have not started yet
        nxt = self._next_after(stream)
        if nxt is stream:
            return
        stream.turn.clear()
        self._hand_to(nxt)
        stream.turn.wait()
        if self._stopping():
            raise _Cancelled

    def run(self, bodies: Sequence[Callable[[], None]]) -> None:
        if len(bodies) == 1:
            bodies[0]()
            return
        self._streams = [_Stream(i, b, contextvars.copy_context()) for i, b in enumerate(bodies)]
        self._finished.clear()
        self._cancelled = False
        threads = [threading.Thread(target=self._thread, args=(s,), name=f"micro-batch-{s.index}", daemon=True)
                   for s in self._streams]
        started: list[threading.Thread] = []  # an interrupt may come while they start
        try:
            for t in threads:
                t.start()
                started.append(t)
            self._hand_to(self._streams[0])
            self._finished.wait()
        except BaseException:
            self._cancel(started)
            raise
        finally:
            for t in started:
                t.join()
            errors = [s.error for s in self._streams if s.error is not None]
            self._streams = []
        if errors:
            raise errors[0]

    def _cancel(self, threads: list[threading.Thread]) -> None:
        """Unwinds every stream: the one issuing stops at its next pause, the waiting ones wake and stop. The
        turns are set again until all have ended, since a stream may clear its own turn after a first setting."""
        self._cancelled = True
        while any(t.is_alive() for t in threads):
            for s in self._streams:
                s.turn.set()
            for t in threads:
                t.join(timeout=0.01)

    def _stopping(self) -> bool:
        return self._cancelled or any(s.error is not None for s in self._streams)

    def _thread(self, stream: _Stream) -> None:
        stream.turn.wait()
        self._local.stream = stream
        try:
            # a stream handed its first turn by one that failed never starts (its work would be thrown away)
            if not self._stopping():
                stream.context.run(stream.body)
        except _Cancelled:
            pass
        except BaseException as error:  # noqa: BLE001 - raised to the caller of run()
            stream.error = error
        finally:
            stream.done = True
            self._local.stream = None
            nxt = self._next_after(stream)
            if nxt is None:
                self._finished.set()
            else:
                self._hand_to(nxt)

    def _hand_to(self, stream: _Stream) -> None:
        stream.turn.set()

    def _next_after(self, stream: _Stream) -> _Stream | None:
        n = len(self._streams)
        for k in range(1, n + 1):
            s = self._streams[(stream.index + k) % n]
            if not s.done:
                return s
        return None
