/* SPDX-License-Identifier: Apache-2.0 */
/* fatbin.S -- embeds the kernels' fatbin (built by nvcc from the kernels/ sources) in the library,
 * so there is no separate file to find at run time. Symbols are hidden: only libcudaload's
 * own code (kernels_device.c) sees them. CL_FATBIN_PATH is set by the Makefile. */
    .section .rodata.cudaload_fatbin,"a",@progbits
    .balign 16
    .globl cl_fatbin_start
    .hidden cl_fatbin_start
cl_fatbin_start:
    .incbin CL_FATBIN_PATH
    .globl cl_fatbin_end
    .hidden cl_fatbin_end
cl_fatbin_end:
    .byte 0
    .section .note.GNU-stack,"",@progbits
