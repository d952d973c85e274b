"""The card path's executor (TTDevice) in one process, driven from another: the engine needs torch, which the
ttnn environment (.venv-tt) must not hold, and ttnn's wheel does not install into the main .venv (Python 3.11).

    client (main .venv: engine, device stack, MeshSplit)  --pipes-->  server (.venv-tt: TTDevice)

CardBridge stands where TTDevice would in the client: every method call and attribute read is sent to the
server, which makes it on a real TTDevice (on ttnn's mock cluster in the tests) and sends back the result or
the exception. Tensors cross as handles: the server keeps each TTTensor, the client holds a BridgeTensor with
the same shape, format, DRAM address, placements and TensorAccessorArgs, and a Program that names
BridgeTensors is rebuilt on the server around the TTTensors they stand for (a plain DeviceTensor on the
bridge, a view of a tensor's rows from TTDevice.view_rows, crosses either way as its description). Arrays cross as raw bytes (the two
environments' numpy versions pickle arrays differently).

    python card_bridge.py READ_FD WRITE_FD ROWSxCOLS TOPOLOGY     (the server; CardBridge starts it)
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import subprocess
import sys
import traceback
from dataclasses import dataclass, field

import numpy as np

from ttprefill.device.mesh_placement import REPLICATE, global_shape
from ttprefill.device.program import GRID_X, GRID_Y, DataFormat
from ttprefill.device.tensor import DeviceTensor

_LENGTH = struct.Struct("<Q")


def _array(data: bytes, dtype: str, shape: tuple) -> np.ndarray:
    return np.frombuffer(data, dtype=np.dtype(dtype)).reshape(shape).copy()


def _scalar(value, dtype: str):
    return np.dtype(dtype).type(value)


def _reduce_numpy(obj):
    if isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        return _array, (a.tobytes(), a.dtype.str, a.shape)
    if isinstance(obj, np.generic):
        return _scalar, (obj.item(), obj.dtype.str)
    return NotImplemented


class _Pickler(pickle.Pickler):
    def __init__(self, buffer, tensor_id):
        super().__init__(buffer, protocol=pickle.HIGHEST_PROTOCOL)
        self._tensor_id = tensor_id

    def persistent_id(self, obj):
        return self._tensor_id(obj)

    def reducer_override(self, obj):
        return _reduce_numpy(obj)


class _Unpickler(pickle.Unpickler):
    def __init__(self, buffer, load_tensor):
        super().__init__(buffer)
        self._load_tensor = load_tensor

    def persistent_load(self, pid):
        return self._load_tensor(pid)


def _send(fd: int, obj, tensor_id) -> None:
    buffer = io.BytesIO()
    _Pickler(buffer, tensor_id).dump(obj)
    data = buffer.getvalue()
    os.write(fd, _LENGTH.pack(len(data)))
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_exact(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError("the other side of the card bridge closed its pipe")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _receive(fd: int, load_tensor):
    n, = _LENGTH.unpack(_read_exact(fd, _LENGTH.size))
    return _Unpickler(io.BytesIO(_read_exact(fd, n)), load_tensor).load()


# --------------------------------------------------------------------------- the server (.venv-tt)
class _Server:
    def __init__(self, mesh_shape: tuple[int, int], topology: str):
        from ttprefill.device.tt_device import TTDevice, TTTensor

        self.device = TTDevice(mesh_shape, topology=topology)
        self.fabric_when_open = str(self.device._ttnn.get_fabric_config())
        self._tensor_type = TTTensor
        self.tensors: dict[int, object] = {}  # handle -> TTTensor

    def tensor_id(self, obj):
        if isinstance(obj, DeviceTensor) and type(obj) is DeviceTensor and obj.device is self.device:
            return ("view", obj.shape, int(obj.data_format), obj.address)  # a view of a tensor's rows
        if not isinstance(obj, self._tensor_type):
            return None
        handle = id(obj)
        self.tensors[handle] = obj
        accessor = None if obj.freed else obj.accessor_args()
        return ("tensor", handle, obj.shape, int(obj.data_format), obj.address, obj.placements, accessor, obj.freed)

    def load_tensor(self, pid):
        if pid[0] == "view":  # a view of a tensor's first rows, made on the client (the card resolves it)
            _, shape, fmt, address = pid
            return DeviceTensor(tuple(shape), DataFormat(fmt), address, self.device)
        return self.tensors[pid[1]]

    def per_chip_shapes(self, tensor) -> list[list[int]]:
        """Each chip's shape as ttnn reports it (ttnn.get_device_tensors)."""
        ttnn = self.device._ttnn
        if self.device.num_chips == 1:
            return [list(tensor.ttnn_tensor.shape)]
        return [list(s.shape) for s in ttnn.get_device_tensors(tensor.ttnn_tensor)]

    def handle(self, request):
        kind, name, args, kwargs = request
        if kind == "per_chip_shapes":
            return self.per_chip_shapes(*args)
        if kind == "forget":
            self.tensors.pop(args[0], None)
            return None
        value = getattr(self.device, name)
        if kind == "call":
            return value(*args, **kwargs)
        return ("callable", None) if callable(value) else ("value", value)

    def serve(self, read_fd: int, write_fd: int) -> None:
        _send(write_fd, ("ok", self.device.capabilities), self.tensor_id)
        while True:
            try:
                request = _receive(read_fd, self.load_tensor)
            except EOFError:
                break
            if request[0] == "close":  # TTDevice.close; the reply says what ttnn holds afterwards
                self.device.close()
                closed = {"fabric_when_open": self.fabric_when_open, "mesh_open": not self.device.closed,
                          "fabric_after_close": str(self.device._ttnn.get_fabric_config())}
                _send(write_fd, ("ok", closed), self.tensor_id)
                break
            try:
                reply = ("ok", self.handle(request))
            except Exception as e:
                reply = ("error", type(e).__name__, str(e), traceback.format_exc())
            _send(write_fd, reply, self.tensor_id)


def serve(read_fd: int, write_fd: int, mesh: str, topology: str) -> None:
    rows, cols = (int(v) for v in mesh.split("x"))
    try:
        server = _Server((rows, cols), topology)
    except Exception as e:
        _send(write_fd, ("error", type(e).__name__, str(e), traceback.format_exc()), lambda obj: None)
        return
    server.serve(read_fd, write_fd)


# --------------------------------------------------------------------------- the client (main .venv)
@dataclass
class BridgeTensor(DeviceTensor):
    """A TTTensor held by the server: its description here, its handle to name it there."""

    handle: int = 0
    placements: tuple = REPLICATE
    accessor: list = field(default_factory=list, repr=False)

    @property
    def global_shape(self) -> tuple[int, ...]:
        return global_shape(self.shape, self.placements, self.device.capabilities.mesh_shape)

    def accessor_args(self) -> list[int]:
        return list(self.accessor)


class BridgeError(RuntimeError):
    """An exception the server raised, whose type the client does not have."""


_BUILTIN_ERRORS = {e.__name__: e for e in (ValueError, TypeError, RuntimeError, KeyError, NotImplementedError)}


class CardBridge:
    """TTDevice's surface, made by a TTDevice in a server process (see the module docstring)."""

    def __init__(self, mesh_shape: tuple[int, int] = (1, 1), topology: str = "line", *, python: str | None = None,
                 env: dict | None = None):
        python = python or os.environ.get("TTPREFILL_BRIDGE_PYTHON")
        if not python:
            raise RuntimeError("CardBridge needs the ttnn environment's python: pass python= or set "
                               "TTPREFILL_BRIDGE_PYTHON (e.g. .venv-tt/bin/python)")
        to_server_r, to_server_w = os.pipe()
        from_server_r, from_server_w = os.pipe()
        mesh = f"{mesh_shape[0]}x{mesh_shape[1]}"
        self._proc = subprocess.Popen([python, __file__, str(to_server_r), str(from_server_w), mesh, topology],
                                      pass_fds=(to_server_r, from_server_w), env=env)
        os.close(to_server_r)
        os.close(from_server_w)
        self._write, self._read = to_server_w, from_server_r
        self._tensors: dict[int, BridgeTensor] = {}
        self._kinds: dict[str, str] = {}
        self.capabilities = self._reply()
        self.grid = (GRID_X, GRID_Y)

    # ---- wire
    def _tensor_id(self, obj):
        if isinstance(obj, BridgeTensor):
            return ("tensor", obj.handle)
        if isinstance(obj, DeviceTensor) and obj.device is self:  # a view the client made of a tensor's rows
            return ("view", obj.shape, int(obj.data_format), obj.address)
        return None

    def _load_tensor(self, pid):
        if pid[0] == "view":
            _, shape, fmt, address = pid
            return DeviceTensor(tuple(shape), DataFormat(fmt), address, self)
        _, handle, shape, fmt, address, placements, accessor, freed = pid
        t = self._tensors.get(handle)
        if t is None or t.freed:
            t = BridgeTensor(tuple(shape), DataFormat(fmt), address, self, handle=handle, placements=placements,
                             accessor=accessor or [])
            self._tensors[handle] = t
        t.placements, t.freed = placements, freed
        return t

    def _reply(self):
        reply = _receive(self._read, self._load_tensor)
        if reply[0] == "ok":
            return reply[1]
        _, name, message, remote_traceback = reply
        error = _BUILTIN_ERRORS.get(name, BridgeError)
        raise error(message if error is not BridgeError else f"{name}: {message}\n{remote_traceback}")

    def _request(self, *request):
        _send(self._write, request, self._tensor_id)
        return self._reply()

    # ---- TTDevice's surface
    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        kind = self._kinds.get(name)
        if kind is None:
            try:
                kind, value = self._request("attr", name, (), {})
            except BridgeError as e:
                raise AttributeError(name) from e
            self._kinds[name] = kind
            if kind == "value":
                return value
        if kind == "value":
            return self._request("attr", name, (), {})[1]
        return lambda *args, **kwargs: self._request("call", name, args, kwargs)

    def free(self, tensor) -> None:
        self._request("call", "free", (tensor,), {})
        tensor.freed = True
        self._tensors.pop(tensor.handle, None)
        self._request("forget", "", (tensor.handle,), {})

    def per_chip_shapes(self, tensor) -> list[list[int]]:
        return self._request("per_chip_shapes", "", (tensor,), {})

    def close(self) -> None:
        """Closes the server's TTDevice (once); closed_state: the fabric it opened with, whether its mesh is
        still open and the fabric configuration afterwards, as the server's ttnn reports them."""
        if self._proc is not None:
            try:
                self.closed_state = self._request("close", "", (), {})
            finally:
                os.close(self._write)
                os.close(self._read)
                self._proc.wait(timeout=60)
                self._proc = None

    def __enter__(self) -> "CardBridge":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _forward(name: str):
    def method(self, *args, **kwargs):
        return self._request("call", name, args, kwargs)

    method.__name__ = name
    method.__doc__ = f"TTDevice.{name}, made by the server."
    return method


# The executor surface the device stack and MeshSplit call (device/executor.py, device/mesh.py's SimMesh), as
# methods of the class so that callers (and the tests' counters) see them like TTDevice's own.
FORWARDED = ("allocate", "upload", "write", "download", "download_shards", "read_pages", "write_pages",
             "write_shard", "read_shard_pages", "run", "run_per_chip", "all_gather", "reduce_scatter", "all_reduce",
             "worker_noc_coord", "view_rows")
for _name in FORWARDED:
    setattr(CardBridge, _name, _forward(_name))


if __name__ == "__main__":
    # Run as the module `card_bridge`, not `__main__`, so that what it pickles names functions the client has.
    import card_bridge

    card_bridge.serve(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])
