# SPDX-License-Identifier: Apache-2.0
"""scale_cmake: a CUDA kernel in a C extension built with scikit-build-core, against libcudaload.

    >>> import torch, scale_cmake
    >>> x = torch.ones(1000, device="cuda")
    >>> scale_cmake.scale(x.data_ptr(), x.numel(), 3.0)   # x *= 3 by this module's kernel
    >>> scale_cmake.runtime_version(), scale_cmake.runtime_path()
    (13000, '.../site-packages/nvidia/cu13/lib/libcudart.so.13')

The module links no CUDA library: on the first CUDA call, libcudaload (embedded) finds
libcudart in this site-packages' nvidia wheels, conda, CUDA_HOME or the system.
"""
from ._scale import runtime_path, runtime_version, scale

__all__ = ["runtime_path", "runtime_version", "scale"]
