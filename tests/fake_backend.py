"""A second CPU-like backend for tests that need two devices: the CPU client under another device kind.

It also shows how narrow the Runtime interface is: a backend is a Runtime that counts its devices and
makes a Client per device.
"""

from numr_array.backends.cpu import CpuClient, CpuRuntime


class FakeRuntime(CpuRuntime):
    name = "fake"

    def device_count(self) -> int:
        return 2

    def create_client(self, device) -> CpuClient:
        return CpuClient(device)


def create_runtime() -> FakeRuntime:
    return FakeRuntime()
