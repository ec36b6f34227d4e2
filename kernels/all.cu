/* SPDX-License-Identifier: Apache-2.0 */
// all.cu -- the one translation unit nvcc compiles into libcudaload's fatbin.
#include "saxpy.cu"
#include "sgemm.cu"
