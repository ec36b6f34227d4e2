/* stub_outparams_wheels.c -- stub_outparams.c for the libraries that ship as wheels of their own
 * (built with the pinned wheels' headers): every stub function of theirs that hands back a string
 * or a name buffer through an out-parameter, called when its library cannot be had (run with
 * CUDALOAD_SOURCES=override and no override). Prints <name>=<its return code> (cuFile's: the
 * CUfileOpError of its CUfileError_t) and <name>_text=1 when the out-parameter holds a text of
 * libcudaload within the buffer's length. */
#define _GNU_SOURCE /* cufile.h: loff_t */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cufile.h>
#include <cupti.h>
#include <nccl.h>
#include <nvml.h>

#define POISON ((const char *)(uintptr_t)0x1)
static const char prefix[] = "libcudaload: ";

static int text_ok(const char *s) {
    return s && s != POISON && strncmp(s, prefix, sizeof prefix - 1) == 0 && strlen(s) < 512;
}

/* buf (n bytes, len given to the call) holds a text of libcudaload ended within len, and the
 * bytes past len are untouched */
static int buf_ok(const char *buf, size_t n, size_t len) {
    const char *end = memchr(buf, 0, len);
    if (!end || strncmp(buf, prefix, len - 1 < sizeof prefix - 1 ? len - 1 : sizeof prefix - 1) != 0) return 0;
    for (size_t i = len; i < n; i++)
        if (buf[i] != 'X') return 0;
    return 1;
}

#define STR(name, call)                                                                                                \
    do {                                                                                                               \
        const char *s = POISON;                                                                                        \
        int rc = (int)(call);                                                                                          \
        printf("%s=%d\n%s_text=%d\n", name, rc, name, text_ok(s));                                                     \
    } while (0)
/* rc: how the call's status reads as a number (cuFile's is a struct) */
#define BUF_AS(name, len, rc_of, call)                                                                                 \
    do {                                                                                                               \
        char buf[128];                                                                                                 \
        memset(buf, 'X', sizeof buf);                                                                                  \
        int rc = rc_of(call);                                                                                          \
        printf("%s=%d\n%s_text=%d\n", name, rc, name, buf_ok(buf, sizeof buf, len));                                   \
    } while (0)
#define AS_INT(x) ((int)(x))
#define CUFILE_ERR(x) ((int)(x).err)
#define BUF(name, len, call) BUF_AS(name, len, AS_INT, call)

int main(void) {
    int n = 0;
    STR("ncclParamGetParameter", ncclParamGetParameter("NCCL_DEBUG", &s, &n));
    STR("ncclParamGetStr", ncclParamGetStr(NULL, &s));
    STR("pncclParamGetParameter", pncclParamGetParameter("NCCL_DEBUG", &s, &n));
    STR("pncclParamGetStr", pncclParamGetStr(NULL, &s));
    STR("cuptiGetCallbackName", cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, 1, &s));
    STR("cuptiGetErrorMessage", cuptiGetErrorMessage(CUPTI_ERROR_UNKNOWN, &s));
    STR("cuptiGetResultString", cuptiGetResultString(CUPTI_ERROR_UNKNOWN, &s));
    nvmlDevice_t dev = NULL;
    BUF("nvmlDeviceGetBoardPartNumber", 64, nvmlDeviceGetBoardPartNumber(dev, buf, 64));
    BUF("nvmlDeviceGetInforomImageVersion", 64, nvmlDeviceGetInforomImageVersion(dev, buf, 64));
    BUF("nvmlDeviceGetInforomVersion", 64, nvmlDeviceGetInforomVersion(dev, NVML_INFOROM_OEM, buf, 64));
    BUF("nvmlDeviceGetName", 64, nvmlDeviceGetName(dev, buf, 64));
    BUF("nvmlDeviceGetSerial", 64, nvmlDeviceGetSerial(dev, buf, 64));
    BUF("nvmlDeviceGetUUID", 64, nvmlDeviceGetUUID(dev, buf, 64));
    BUF("nvmlDeviceGetVbiosVersion", 64, nvmlDeviceGetVbiosVersion(dev, buf, 64));
    BUF("nvmlSystemGetDriverVersion", 64, nvmlSystemGetDriverVersion(buf, 64));
    BUF("nvmlSystemGetNVMLVersion", 64, nvmlSystemGetNVMLVersion(buf, 64));
    BUF("nvmlSystemGetProcessName", 64, nvmlSystemGetProcessName(1, buf, 64));
    BUF("nvmlVgpuInstanceGetMdevUUID", 64, nvmlVgpuInstanceGetMdevUUID(0, buf, 64));
    BUF("nvmlVgpuInstanceGetUUID", 64, nvmlVgpuInstanceGetUUID(0, buf, 64));
    BUF("nvmlVgpuInstanceGetVmDriverVersion", 64, nvmlVgpuInstanceGetVmDriverVersion(0, buf, 64));
    nvmlVgpuVmIdType_t vm_type;
    BUF("nvmlVgpuInstanceGetVmID", 64, nvmlVgpuInstanceGetVmID(0, buf, 64, &vm_type));
    BUF("nvmlVgpuTypeGetLicense", 64, nvmlVgpuTypeGetLicense(0, buf, 64));
    BUF_AS("cuFileGetParameterString", 64, CUFILE_ERR, cuFileGetParameterString(CUFILE_PARAM_LOGGING_LEVEL, buf, 64));
    return 0;
}
