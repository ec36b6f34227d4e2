/* SPDX-License-Identifier: Apache-2.0 */
// a device function the other file calls: needs the device link (separable compilation)
__device__ float twice(float x) { return 2.0f * x; }
