/* SPDX-License-Identifier: Apache-2.0 */
// the module's entry point: the vendored library's answer
int fft_status(void);
extern "C" __attribute__((visibility("default"))) int ext_entry(void) { return fft_status(); }
