/* SPDX-License-Identifier: Apache-2.0 */
/* consumer.c -- the smallest user of libcudaload's API, built by tests/cmake/CMakeLists.txt.
 * Prints key=value: the version and the runtime's status and version. */
#include <stdio.h>

#include <cudaload_tables.h>

int main(void) {
    cudaload_options o;
    cudaload_options_init(&o);
    o.flags = CUDALOAD_FLAG_DRIVER_OPTIONAL;
    cudaload_status st = cudaload_init(&o);
    cudaload_library_info rt = {.size = sizeof rt};
    cudaload_get_library_info(CUDALOAD_LIB_CUDART, &rt);
    printf("version=%s\ninit=%d\ncudart_status=%d\ncudart_version=%d\n", cudaload_version_string(), (int)st,
           (int)rt.status, rt.version);
    return 0;
}
