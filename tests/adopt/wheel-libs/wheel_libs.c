/* SPDX-License-Identifier: Apache-2.0 */
/* wheel_libs.c -- one call into CUPTI, cuDNN and NCCL (test_adopt.c); prints their answers. */
#include <stdio.h>

#include <cudnn.h>
#include <cupti.h>
#include <nccl.h>

int main(void) {
    uint32_t cupti = 0;
    int nccl = 0;
    int rc_cupti = (int)cuptiGetVersion(&cupti), rc_nccl = (int)ncclGetVersion(&nccl);
    printf("cupti=%d/%u\ncudnn=%zu\nnccl=%d/%d\n", rc_cupti, cupti, cudnnGetVersion(), rc_nccl, nccl);
    return rc_cupti != 0 || rc_nccl != 0 || cudnnGetVersion() == 0;
}
