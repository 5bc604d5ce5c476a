/* Test double for the CUDA runtime (libcudart.so.12). NOT CUDA: it runs on the CPU, and
 * "device memory" is host memory. It implements only the entry points stackpin calls, with
 * the real C ABI; misbehaviour is driven by STACKPIN_FAKE_* environment variables, read at
 * every call (see README.md beside this file). No CUDA header is included: every type and
 * value below is declared here, and the comments name the header it mirrors. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#define API __declspec(dllexport)
#else
#define API __attribute__((visibility("default")))
#endif

/* driver_types.h: enum cudaError (cudaError_t). Only the values this double returns. */
typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidMemcpyDirection = 21,
} cudaError_t;

/* driver_types.h: enum cudaMemcpyKind (HostToHost=0 ... Default=4). */
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyDefault = 4 };

/* driver_types.h: enum cudaDeviceAttr. */
enum cudaDeviceAttr { cudaDevAttrComputeCapabilityMajor = 75, cudaDevAttrComputeCapabilityMinor = 76 };

/* driver_types.h: struct cudaDeviceProp. Opaque here; written by offset (CUDA 12 and 13 agree):
 * char name[256] at 0, size_t totalGlobalMem at 288. */
struct cudaDeviceProp;
enum { PROP_NAME_OFFSET = 0, PROP_NAME_SIZE = 256, PROP_TOTAL_MEM_OFFSET = 288, PROP_CLEARED = 1024 };

/* 256-byte aligned blocks, as cudaMalloc returns; the Windows C runtime has no aligned_alloc. */
#ifdef _WIN32
#include <malloc.h>
static void *device_alloc(size_t size) { return _aligned_malloc(size, 256); }
static void device_release(void *p) { _aligned_free(p); }
#else
static void *device_alloc(size_t size) { return aligned_alloc(256, size); }
static void device_release(void *p) { free(p); }
#endif

/* ---- knobs ------------------------------------------------------------------------------ */

static long long env_ll(const char *name, long long fallback) {
    const char *v = getenv(name);
    if (!v || !*v) return fallback;
    char *end = NULL;
    long long x = strtoll(v, &end, 10);
    return (end && *end == '\0') ? x : fallback;
}

static int device_count(void) { return (int)env_ll("STACKPIN_FAKE_CUDA_DEVICES", 1); }

/* STACKPIN_FAKE_CUDA_ERROR, or 35 (insufficient driver) when STACKPIN_FAKE_CUDA_DRIVER=0. */
static cudaError_t forced_error(void) {
    long long e = env_ll("STACKPIN_FAKE_CUDA_ERROR", 0);
    if (e == 0 && env_ll("STACKPIN_FAKE_CUDA_DRIVER", 12080) == 0) e = cudaErrorInsufficientDriver;
    return (cudaError_t)e;
}

/* ---- error state ------------------------------------------------------------------------ */

static _Thread_local cudaError_t last_error = cudaSuccess;
static _Thread_local int current_device = 0;

static cudaError_t ret(cudaError_t e) {
    if (e != cudaSuccess) last_error = e;
    return e;
}

/* Usable device ordinal? Returns the error to report, or cudaSuccess. */
static cudaError_t check_device(int device) {
    cudaError_t e = forced_error();
    if (e != cudaSuccess) return e;
    int n = device_count();
    if (n <= 0) return cudaErrorNoDevice;
    if (device < 0 || device >= n) return cudaErrorInvalidDevice;
    return cudaSuccess;
}

/* ---- allocation registry ---------------------------------------------------------------- */
/* Live cudaMalloc blocks, so cudaFree/cudaMemset can refuse foreign pointers and the cuDNN
 * double can check that it was handed "device" memory of sufficient size. */

typedef struct {
    unsigned char *ptr;
    size_t size;
} block;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static block *reg;
static size_t reg_len, reg_cap;

static int reg_add(unsigned char *p, size_t size) {
    int ok = 1;
    pthread_mutex_lock(&reg_lock);
    if (reg_len == reg_cap) {
        size_t cap = reg_cap ? 2 * reg_cap : 64;
        block *grown = realloc(reg, cap * sizeof *grown);
        if (grown) {
            reg = grown;
            reg_cap = cap;
        } else
            ok = 0;
    }
    if (ok) reg[reg_len++] = (block){p, size};
    pthread_mutex_unlock(&reg_lock);
    return ok;
}

static int reg_remove(const void *p) {
    int found = 0;
    pthread_mutex_lock(&reg_lock);
    for (size_t i = 0; i < reg_len; ++i)
        if (reg[i].ptr == p) {
            reg[i] = reg[--reg_len];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&reg_lock);
    return found;
}

/* Not part of CUDA: 1 when [p, p+bytes) lies inside one live cudaMalloc block. Looked up by the
 * cuDNN double (dlopen RTLD_NOLOAD + dlsym). */
API int stackpin_fake_cudart_owns(const void *p, size_t bytes) {
    const unsigned char *q = p;
    int found = 0;
    pthread_mutex_lock(&reg_lock);
    for (size_t i = 0; i < reg_len && !found; ++i)
        found = q >= reg[i].ptr && q <= reg[i].ptr + reg[i].size && bytes <= (size_t)(reg[i].ptr + reg[i].size - q);
    pthread_mutex_unlock(&reg_lock);
    return found;
}

/* ---- cuda_runtime_api.h ----------------------------------------------------------------- */

API cudaError_t cudaGetDeviceCount(int *count) {
    if (!count) return ret(cudaErrorInvalidValue);
    *count = 0;
    cudaError_t e = forced_error();
    if (e != cudaSuccess) return ret(e);
    int n = device_count();
    if (n <= 0) return ret(cudaErrorNoDevice);
    *count = n;
    return cudaSuccess;
}

API cudaError_t cudaSetDevice(int device) {
    cudaError_t e = check_device(device);
    if (e == cudaSuccess) current_device = device;
    return ret(e);
}

API cudaError_t cudaGetDevice(int *device) {
    if (!device) return ret(cudaErrorInvalidValue);
    *device = current_device;
    return cudaSuccess;
}

API cudaError_t cudaRuntimeGetVersion(int *runtimeVersion) {
    if (!runtimeVersion) return ret(cudaErrorInvalidValue);
    *runtimeVersion = (int)env_ll("STACKPIN_FAKE_CUDA_RUNTIME", 12080);
    return cudaSuccess;
}

/* Like the real one, no driver is not an error: the version reads 0. */
API cudaError_t cudaDriverGetVersion(int *driverVersion) {
    if (!driverVersion) return ret(cudaErrorInvalidValue);
    *driverVersion = (int)env_ll("STACKPIN_FAKE_CUDA_DRIVER", 12080);
    return cudaSuccess;
}

/* STACKPIN_FAKE_GPU_CC: "80" is 8.0, "120" is 12.0, "8.6" is 8.6. */
static void compute_capability(int *major, int *minor) {
    const char *v = getenv("STACKPIN_FAKE_GPU_CC");
    if (!v || !*v) v = "80";
    if (strchr(v, '.')) {
        *major = atoi(v);
        *minor = atoi(strchr(v, '.') + 1);
    } else {
        int cc = atoi(v);
        *major = cc / 10;
        *minor = cc % 10;
    }
}

API cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device) {
    if (!value) return ret(cudaErrorInvalidValue);
    cudaError_t e = check_device(device);
    if (e != cudaSuccess) return ret(e);
    int major, minor;
    compute_capability(&major, &minor);
    switch (attr) {
        case cudaDevAttrComputeCapabilityMajor: *value = major; return cudaSuccess;
        case cudaDevAttrComputeCapabilityMinor: *value = minor; return cudaSuccess;
        default: return ret(cudaErrorInvalidValue);
    }
}

API cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device) {
    if (!prop) return ret(cudaErrorInvalidValue);
    cudaError_t e = check_device(device);
    if (e != cudaSuccess) return ret(e);
    unsigned char *p = (unsigned char *)prop;
    memset(p, 0, PROP_CLEARED);
    const char *name = getenv("STACKPIN_FAKE_GPU_NAME");
    if (!name || !*name) name = "stackpin test double GPU";
    snprintf((char *)p + PROP_NAME_OFFSET, PROP_NAME_SIZE, "%s", name);
    size_t mem = (size_t)env_ll("STACKPIN_FAKE_GPU_MEM", 17179869184LL);
    memcpy(p + PROP_TOTAL_MEM_OFFSET, &mem, sizeof mem);
    return cudaSuccess;
}

/* CUDA 12 headers route cudaGetDeviceProperties to this symbol. */
API cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device) {
    return cudaGetDeviceProperties(prop, device);
}

/* Blocks are 256-byte aligned like real device allocations, and filled with 0xFF (a NaN in
 * float and half) so that reading memory nobody wrote shows up in results. */
API cudaError_t cudaMalloc(void **devPtr, size_t size) {
    if (!devPtr) return ret(cudaErrorInvalidValue);
    *devPtr = NULL;
    cudaError_t e = check_device(current_device);
    if (e != cudaSuccess) return ret(e);
    if (size == 0) return cudaSuccess;
    if (size > SIZE_MAX - 255) return ret(cudaErrorMemoryAllocation);
    unsigned char *p = device_alloc((size + 255) / 256 * 256);
    if (!p) return ret(cudaErrorMemoryAllocation);
    memset(p, 0xFF, size);
    if (!reg_add(p, size)) {
        device_release(p);
        return ret(cudaErrorMemoryAllocation);
    }
    *devPtr = p;
    return cudaSuccess;
}

API cudaError_t cudaFree(void *devPtr) {
    if (!devPtr) return cudaSuccess;
    if (!reg_remove(devPtr)) return ret(cudaErrorInvalidValue);
    device_release(devPtr);
    return cudaSuccess;
}

API cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind) {
    int k = (int)kind;
    if (k < cudaMemcpyHostToHost || k > cudaMemcpyDefault) return ret(cudaErrorInvalidMemcpyDirection);
    if (count == 0) return cudaSuccess;
    if (!dst || !src) return ret(cudaErrorInvalidValue);
    memmove(dst, src, count);
    return cudaSuccess;
}

API cudaError_t cudaMemset(void *devPtr, int value, size_t count) {
    if (count == 0) return cudaSuccess;
    if (!stackpin_fake_cudart_owns(devPtr, count)) return ret(cudaErrorInvalidValue);
    memset(devPtr, value, count);
    return cudaSuccess;
}

API cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

API cudaError_t cudaGetLastError(void) {
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

API const char *cudaGetErrorString(cudaError_t error) {
    switch (error) {
        case cudaSuccess: return "no error";
        case cudaErrorInvalidValue: return "invalid argument";
        case cudaErrorMemoryAllocation: return "out of memory";
        case cudaErrorInitializationError: return "initialization error";
        case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
        case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
        case cudaErrorNoDevice: return "no CUDA-capable device is detected";
        case cudaErrorInvalidDevice: return "invalid device ordinal";
        default: return "unrecognized error code";
    }
}
