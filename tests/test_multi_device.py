"""``to_device`` between two devices of a backend that copies device to device (``runtime.PeerCopy``, as CUDA
does between GPUs), shown on the fake backend's two CPU-like devices given a peer copy: the copy skips the
host, a strided source is made dense first, and a capture refuses only copies to or from its own device.
(The CUDA side, on two real GPUs: tests/cuda/test_multi_device.py.)"""

import numpy as np
import pytest

import numr_array as xp
from numr_array import _transfer
from numr_array.backends.cpu import CpuClient
from numr_array.runtime import PeerCopy


class PeerCpuClient(CpuClient, PeerCopy):
    """The CPU client with a peer copy that records its calls."""

    def __init__(self, device):
        super().__init__(device)
        self.peer_copies: list = []

    def copy_to_peer(self, src, dst, peer) -> None:
        assert src.is_contiguous() and dst.is_contiguous() and type(peer) is PeerCpuClient and peer is not self
        self.peer_copies.append((src.shape, str(peer.device)))
        np.copyto(peer.host_view(dst), self.host_view(src))


@pytest.fixture
def peers(fake_backend, monkeypatch):
    devs = [xp._device.parse_device(f"fake:{i}") for i in range(2)]
    for d in devs:
        monkeypatch.setattr(d, "_client", PeerCpuClient(d))
    return devs


def no_host(*args, **kwargs):
    raise AssertionError("to_device between two peers went through the host")


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.complex64, np.bool_])
def test_to_device_between_peers_copies_without_the_host(peers, monkeypatch, dtype):
    d0, d1 = peers
    a = (np.arange(60) % 7 - 3).astype(dtype).reshape(6, 10)
    x = xp.asarray(a, device=d0)
    with monkeypatch.context() as m:
        m.setattr(_transfer, "to_numpy", no_host)
        m.setattr(_transfer, "from_numpy", no_host)
        y = x.to_device(d1)
        z = x[::2, 3:].to_device(d1)  # a strided view: made dense on fake:0, then copied
        back = y.to_device(d0)
    assert d0.client.peer_copies == [((6, 10), "fake:1"), ((3, 7), "fake:1")]
    assert d1.client.peer_copies == [((6, 10), "fake:0")]
    assert (y.device, z.device, back.device) == (d1, d1, d0)
    assert d1.client.host_view(y).tobytes() == a.tobytes()
    assert d1.client.host_view(z).tobytes() == np.ascontiguousarray(a[::2, 3:]).tobytes()
    assert d0.client.host_view(back).tobytes() == a.tobytes()


def test_to_device_between_peers_of_empty_and_0d_arrays(peers):
    d0, d1 = peers
    e = xp.asarray(np.zeros((0, 3), np.float32), device=d0).to_device(d1)
    s = xp.asarray(np.float64(2.5), device=d0).to_device(d1)
    assert (e.device, e.shape, s.device, s.shape) == (d1, (0, 3), d1, ())
    assert d1.client.host_view(s).item() == 2.5


def test_to_device_to_another_backend_goes_through_the_host(peers):
    # the peer copy is for devices of one backend: fake -> cpu is a host copy
    d0, _ = peers
    h = xp.asarray(np.arange(4.0), device=d0).to_device("cpu")
    assert d0.client.peer_copies == [] and np.asarray(h).tolist() == [0, 1, 2, 3]


def test_a_capture_refuses_to_device_only_to_or_from_its_device(peers):
    d0, d1 = peers
    x0 = xp.asarray(np.arange(4.0), device=d0)
    x1 = xp.asarray(np.arange(4.0) + 10, device=d1)
    out = xp.empty((4,), dtype=xp.float64, device=d0)
    with xp.capture(device=d0) as g:
        xp.add(x0, 1.0, out=out)
        h = x1.to_device("cpu")  # another device's data: copied now, eagerly
    assert np.asarray(h).tolist() == [10, 11, 12, 13]
    x0[...] = xp.asarray(np.full(4, 5.0), device=d0)
    g.replay()
    assert d0.client.host_view(out).tolist() == [6, 6, 6, 6]
    for source, target in ((x1, d0), (x0, d1)):
        with pytest.raises(xp.CaptureError, match="to_device"):
            with xp.capture(device=d0):
                source.to_device(target)
    assert d0.client.peer_copies == d1.client.peer_copies == []
