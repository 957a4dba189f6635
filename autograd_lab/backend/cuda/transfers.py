"""Counting the copies between host (CPU) memory and the GPU.

Every copy a CudaArray makes between host and device is recorded here, so a test can show that
a computation stayed on the GPU:

    >>> from autograd_lab.backend.cuda import count_transfers, from_numpy
    >>> x = from_numpy(np.ones(3))            # one host -> device copy (outside the block)
    >>> with count_transfers() as moved:
    ...     y = (x * 2).sum()                  # kernels only
    >>> moved.host_to_device, moved.device_to_host
    (0, 0)

Why care: a copy over PCIe is tens of times slower than reading GPU memory, and an op that quietly
round-trips through the host (an `np.asarray` somewhere) is the classic bug of a GPU port. PyTorch
makes such copies explicit (`.cpu()`, `.item()`, `.to("cuda")`); so do we, and we count them.

The module-level counters (`transfers.host_to_device`, ...) count since the program started.
"""

import contextlib

host_to_device = 0  # number of copies
device_to_host = 0
bytes_host_to_device = 0  # and their sizes
bytes_device_to_host = 0
_open_counts = []  # the TransferCount of every count_transfers() block now open


class TransferCount:
    """Copies made inside one `count_transfers()` block."""

    def __init__(self):
        self.host_to_device = self.device_to_host = 0
        self.bytes_host_to_device = self.bytes_device_to_host = 0

    def __repr__(self):
        return (
            f"TransferCount(host_to_device={self.host_to_device} "
            f"({self.bytes_host_to_device} bytes), device_to_host={self.device_to_host} "
            f"({self.bytes_device_to_host} bytes))"
        )


def record_host_to_device(nbytes):
    global host_to_device, bytes_host_to_device
    host_to_device += 1
    bytes_host_to_device += nbytes
    for count in _open_counts:
        count.host_to_device += 1
        count.bytes_host_to_device += nbytes


def record_device_to_host(nbytes):
    global device_to_host, bytes_device_to_host
    device_to_host += 1
    bytes_device_to_host += nbytes
    for count in _open_counts:
        count.device_to_host += 1
        count.bytes_device_to_host += nbytes


@contextlib.contextmanager
def count_transfers():
    """Count the host<->device copies made inside the block; yields a TransferCount."""
    count = TransferCount()
    _open_counts.append(count)
    try:
        yield count
    finally:
        _open_counts.remove(count)
