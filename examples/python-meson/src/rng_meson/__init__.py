# SPDX-License-Identifier: Apache-2.0
"""rng_meson: cuRAND and a CUDA kernel in a C extension built with meson-python, against libcudaload.

    >>> import torch, rng_meson
    >>> x = torch.empty(1000, device="cuda")
    >>> rng_meson.uniform(x.data_ptr(), x.numel(), seed=7)   # x ~ U[-1, 1)
    >>> rng_meson.curand_version(), rng_meson.library_path("curand")
    (10401, '.../site-packages/nvidia/cu13/lib/libcurand.so.10')

The module links no CUDA library: on the first cuRAND or runtime call, libcudaload (embedded)
finds libcurand and libcudart in this site-packages' nvidia wheels, conda, CUDA_HOME or the system.
"""
from ._rng import curand_version, library_path, uniform

__all__ = ["curand_version", "library_path", "uniform"]
