/* Test double for NVML (nvml.dll, libnvidia-ml.so.1). NOT NVIDIA's library: it answers the few
 * calls stackpin makes from what STACKPIN_FAKE_NVML_* environment variables say, read at every
 * call. No NVML header is included: every declaration below is written out, and the comments name
 * what it mirrors in nvml.h.
 *   STACKPIN_FAKE_NVML_DRIVER  the driver version nvmlSystemGetDriverVersion reports ("572.16")
 *   STACKPIN_FAKE_NVML_GPUS    the GPUs, "NAME=MAJOR.MINOR" separated by ';'
 *                              ("NVIDIA RTX A4000=8.6;Tesla P100-PCIE-16GB=6.0"); none when unset */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#define API __declspec(dllexport)
#else
#define API __attribute__((visibility("default")))
#endif

/* nvml.h: nvmlReturn_t values this double returns; nvmlDevice_t is an opaque pointer. */
enum { NVML_SUCCESS = 0, NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_INSUFFICIENT_SIZE = 7, NVML_ERROR_NOT_FOUND = 6 };
typedef struct fake_device *nvmlDevice_t;

#define MAX_GPUS 8
struct fake_device {
    char name[96];
    int major, minor;
};
static struct fake_device devices[MAX_GPUS];

/* The GPUs of STACKPIN_FAKE_NVML_GPUS, parsed again at every call. */
static unsigned parse_gpus(void) {
    const char *v = getenv("STACKPIN_FAKE_NVML_GPUS");
    unsigned n = 0;
    if (!v) return 0;
    while (*v && n < MAX_GPUS) {
        const char *end = strchr(v, ';');
        size_t len = end ? (size_t)(end - v) : strlen(v);
        const char *eq = memchr(v, '=', len);
        if (eq && (size_t)(eq - v) < sizeof devices[n].name) {
            memcpy(devices[n].name, v, (size_t)(eq - v));
            devices[n].name[eq - v] = '\0';
            if (sscanf(eq + 1, "%d.%d", &devices[n].major, &devices[n].minor) == 2) ++n;
        }
        if (!end) break;
        v = end + 1;
    }
    return n;
}

/* nvml.h: nvmlReturn_t nvmlInit_v2(void); nvmlReturn_t nvmlShutdown(void); */
API int nvmlInit_v2(void) { return NVML_SUCCESS; }
API int nvmlShutdown(void) { return NVML_SUCCESS; }

/* nvml.h: nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length); */
API int nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    const char *v = getenv("STACKPIN_FAKE_NVML_DRIVER");
    if (!v) v = "572.16";
    if (!version || length <= strlen(v)) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(version, v);
    return NVML_SUCCESS;
}

/* nvml.h: nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount); */
API int nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    *count = parse_gpus();
    return NVML_SUCCESS;
}

/* nvml.h: nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device); */
API int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    if (!device || index >= parse_gpus()) return NVML_ERROR_INVALID_ARGUMENT;
    *device = &devices[index];
    return NVML_SUCCESS;
}

/* nvml.h: nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length); */
API int nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
    if (!device || !name) return NVML_ERROR_INVALID_ARGUMENT;
    if (length <= strlen(device->name)) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(name, device->name);
    return NVML_SUCCESS;
}

/* nvml.h: nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor); */
API int nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor) {
    if (!device || !major || !minor) return NVML_ERROR_INVALID_ARGUMENT;
    *major = device->major;
    *minor = device->minor;
    return NVML_SUCCESS;
}
