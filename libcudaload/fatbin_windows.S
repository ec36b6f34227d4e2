/* SPDX-License-Identifier: Apache-2.0 */
/* fatbin_windows.S -- fatbin.S for the Windows build (mingw-w64, PE/COFF): the same fatbin, built
 * by nvcc from the kernels/ sources, embedded in a read-only data section. COFF has no .hidden nor
 * GNU-stack note: the symbols stay internal because libcudaload.a exports nothing by .def file. */
    .section .rdata$cudaload_fatbin,"dr"
    .balign 16
    .globl cl_fatbin_start
cl_fatbin_start:
    .incbin CL_FATBIN_PATH
    .globl cl_fatbin_end
cl_fatbin_end:
    .byte 0
