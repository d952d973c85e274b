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

Devices cross as handles too: the server keeps every TTDevice it has handed out (the one it opened, and the
one-chip stage devices TTDevice.stage_devices makes of it), and each request names the device it is made of.
The client holds one CardBridge per device, all on the one server process: a stage device comes back from
stage_devices() as a CardBridge over that stage's TTDevice, and a tensor comes back as a BridgeTensor of the
CardBridge of the device that made it.

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
        self._tensor_type, self._device_type = TTTensor, TTDevice
        self.tensors: dict[int, object] = {}  # handle -> TTTensor
        self.devices: dict[int, object] = {}  # handle -> TTDevice: the one opened and every stage device handed out
        self.device_handle(self.device)

    def device_handle(self, device) -> int:
        handle = id(device)
        self.devices[handle] = device
        return handle

    def tensor_id(self, obj):
        if isinstance(obj, self._device_type):
            return ("device", self.device_handle(obj), obj.capabilities)
        if type(obj) is DeviceTensor and id(obj.device) in self.devices:
            # a view of a tensor's rows
            return ("view", id(obj.device), obj.shape, int(obj.data_format), obj.address)
        if not isinstance(obj, self._tensor_type):
            return None
        handle = id(obj)
        self.tensors[handle] = obj
        accessor = None if obj.freed else obj.accessor_args()
        return ("tensor", handle, self.device_handle(obj.device), obj.shape, int(obj.data_format), obj.address,
                obj.placements, accessor, obj.freed)

    def load_tensor(self, pid):
        if pid[0] == "device":
            return self.devices[pid[1]]
        if pid[0] == "view":  # a view of a tensor's first rows, made on the client (the card resolves it)
            _, device, shape, fmt, address = pid
            return DeviceTensor(tuple(shape), DataFormat(fmt), address, self.devices[device])
        return self.tensors[pid[1]]

    def per_chip_shapes(self, tensor) -> list[list[int]]:
        """Each chip's shape as ttnn reports it (ttnn.get_device_tensors)."""
        ttnn = tensor.device._ttnn
        if tensor.device.num_chips == 1:
            return [list(tensor.ttnn_tensor.shape)]
        return [list(s.shape) for s in ttnn.get_device_tensors(tensor.ttnn_tensor)]

    def handle(self, request):
        kind, device, name, args, kwargs = request
        if kind == "per_chip_shapes":
            return self.per_chip_shapes(*args)
        if kind == "chip_ids":  # the ttnn device ids of the chips the device drives
            return [int(c) for c in device.mesh.get_device_ids()]
        if kind == "forget":
            self.tensors.pop(args[0], None)
            return None
        value = getattr(device, name)
        if kind == "call":
            return value(*args, **kwargs)
        return ("callable", None) if callable(value) else ("value", value)

    def serve(self, read_fd: int, write_fd: int) -> None:
        _send(write_fd, ("ok", (id(self.device), self.device.capabilities)), self.tensor_id)
        while True:
            try:
                request = _receive(read_fd, self.load_tensor)
            except EOFError:
                break
            if request[0] == "close":  # the opened TTDevice's close; the reply says what ttnn holds afterwards
                self.device.close()
                stages = [d for d in self.devices.values() if d is not self.device]  # stage devices handed out
                closed = {"fabric_when_open": self.fabric_when_open, "mesh_open": not self.device.closed,
                          "stage_meshes_open": [not d.closed for d in stages],
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


class _Link:
    """The client's end of the pipes to one server: what crosses them, and the CardBridge and BridgeTensor standing
    for each device and tensor the server has handed out, by handle."""

    def __init__(self, proc: subprocess.Popen, write_fd: int, read_fd: int):
        self.proc, self.write_fd, self.read_fd = proc, write_fd, read_fd
        self.devices: dict[int, CardBridge] = {}
        self.tensors: dict[int, BridgeTensor] = {}
        self.kinds: dict[str, str] = {}  # TTDevice attribute -> "callable" or "value" (the same for every device)

    def tensor_id(self, obj):
        if isinstance(obj, CardBridge) and obj._link is self:
            return ("device", obj._handle)
        if isinstance(obj, BridgeTensor):
            return ("tensor", obj.handle)
        if isinstance(obj, DeviceTensor) and isinstance(obj.device, CardBridge) and obj.device._link is self:
            return ("view", obj.device._handle, obj.shape, int(obj.data_format), obj.address)  # a view of rows
        return None

    def load(self, pid):
        if pid[0] == "device":
            _, handle, capabilities = pid
            return self.devices.get(handle) or CardBridge._over(self, handle, capabilities)
        if pid[0] == "view":
            _, device, shape, fmt, address = pid
            return DeviceTensor(tuple(shape), DataFormat(fmt), address, self.devices[device])
        _, handle, device, shape, fmt, address, placements, accessor, freed = pid
        t = self.tensors.get(handle)
        if t is None or t.freed:
            t = BridgeTensor(tuple(shape), DataFormat(fmt), address, self.devices[device], handle=handle,
                             placements=placements, accessor=accessor or [])
            self.tensors[handle] = t
        t.placements, t.freed = placements, freed
        return t

    def reply(self):
        reply = _receive(self.read_fd, self.load)
        if reply[0] == "ok":
            return reply[1]
        _, name, message, remote_traceback = reply
        error = _BUILTIN_ERRORS.get(name, BridgeError)
        raise error(message if error is not BridgeError else f"{name}: {message}\n{remote_traceback}")

    def request(self, *request):
        if self.proc is None:
            raise RuntimeError("the card bridge is closed (the device that opened it was closed): open a new "
                               "CardBridge")
        _send(self.write_fd, request, self.tensor_id)
        return self.reply()

    def close(self, opener: "CardBridge"):
        """Closes the server's opened TTDevice (and with it its stage devices), then the server; what it reports."""
        if self.proc is None:
            return None
        try:
            return self.request("close", opener, "", (), {})
        finally:
            os.close(self.write_fd)
            os.close(self.read_fd)
            self.proc.wait(timeout=60)
            self.proc = None


class CardBridge:
    """TTDevice's surface, made by a TTDevice in a server process (see the module docstring): the device the server
    opened (this constructor), or one of its stage devices (what stage_devices() returns)."""

    def __init__(self, mesh_shape: tuple[int, int] = (1, 1), topology: str = "line", *, python: str | None = None,
                 env: dict | None = None):
        python = python or os.environ.get("TTPREFILL_BRIDGE_PYTHON")
        if not python:
            raise RuntimeError("CardBridge needs the ttnn environment's python: pass python= or set "
                               "TTPREFILL_BRIDGE_PYTHON (e.g. .venv-tt/bin/python)")
        to_server_r, to_server_w = os.pipe()
        from_server_r, from_server_w = os.pipe()
        mesh = f"{mesh_shape[0]}x{mesh_shape[1]}"
        proc = subprocess.Popen([python, __file__, str(to_server_r), str(from_server_w), mesh, topology],
                                pass_fds=(to_server_r, from_server_w), env=env)
        os.close(to_server_r)
        os.close(from_server_w)
        link = _Link(proc, to_server_w, from_server_r)
        handle, capabilities = link.reply()
        self._attach(link, handle, capabilities, opener=True)

    @classmethod
    def _over(cls, link: _Link, handle: int, capabilities) -> "CardBridge":
        """The CardBridge of a device the server handed out (a stage device), on the same server."""
        bridge = cls.__new__(cls)
        bridge._attach(link, handle, capabilities, opener=False)
        return bridge

    def _attach(self, link: _Link, handle: int, capabilities, *, opener: bool) -> None:
        self._link, self._handle, self._opener = link, handle, opener
        self.capabilities = capabilities
        self.grid = (GRID_X, GRID_Y)
        link.devices[handle] = self

    def _request(self, kind: str, name: str, args: tuple, kwargs: dict):
        return self._link.request(kind, self, name, args, kwargs)

    # ---- TTDevice's surface
    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        kinds = self._link.kinds
        kind = kinds.get(name)
        if kind is None:
            try:
                kind, value = self._request("attr", name, (), {})
            except BridgeError as e:
                raise AttributeError(name) from e
            kinds[name] = kind
            if kind == "value":
                return value
        if kind == "value":
            return self._request("attr", name, (), {})[1]
        return lambda *args, **kwargs: self._request("call", name, args, kwargs)

    def free(self, tensor) -> None:
        self._request("call", "free", (tensor,), {})
        tensor.freed = True
        self._link.tensors.pop(tensor.handle, None)
        self._request("forget", "", (tensor.handle,), {})

    def per_chip_shapes(self, tensor) -> list[list[int]]:
        return self._request("per_chip_shapes", "", (tensor,), {})

    def chip_ids(self) -> list[int]:
        """The ttnn device ids of the chips this device drives (its mesh's get_device_ids())."""
        return self._request("chip_ids", "", (), {})

    def close(self) -> None:
        """The opened device: closes the server's TTDevice (once; its stage devices with it) and the server;
        closed_state: the fabric it opened with, whether its mesh and its stage devices' are still open and the
        fabric configuration afterwards, as the server's ttnn reports them. A stage device: its close()."""
        if not self._opener:
            self._request("call", "close", (), {})
            return
        closed = self._link.close(self)
        if closed is not None:
            self.closed_state = closed

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


# The executor surface the device stack, MeshSplit and the pipeline stack call (device/executor.py, device/mesh.py's
# SimMesh, TTDevice.stage_devices), as methods of the class so that callers (and the tests' counters) see them like
# TTDevice's own.
FORWARDED = ("allocate", "upload", "write", "download", "download_shards", "read_pages", "write_pages",
             "write_shard", "read_shard_pages", "run", "run_per_chip", "all_gather", "reduce_scatter", "all_reduce",
             "worker_noc_coord", "view_rows", "stage_devices")
for _name in FORWARDED:
    setattr(CardBridge, _name, _forward(_name))


if __name__ == "__main__":
    # Run as the module `card_bridge`, not `__main__`, so that what it pickles names functions the client has.
    import card_bridge

    card_bridge.serve(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])
