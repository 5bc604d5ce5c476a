/* Test double for cuDNN's legacy convolution API (libcudnn.so.9, or libcudnn.so.8 when built
 * with -DFAKE_CUDNN_MAJOR=8). NOT cuDNN: it computes NCHW convolutions on the CPU, in float,
 * for float and half data. Only the entry points stackpin calls exist, with the real C ABI;
 * misbehaviour is driven by STACKPIN_FAKE_CUDNN_* environment variables read at every call
 * (see README.md beside this file). No cuDNN header is included: every type and value is
 * declared here, and the comments name the header it mirrors. */
#define _POSIX_C_SOURCE 200809L
#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_CUDNN_MAJOR
#define FAKE_CUDNN_MAJOR 9
#endif
#ifdef _WIN32
#define API __declspec(dllexport)
#else
#define API __attribute__((visibility("default")))
#endif

#if FAKE_CUDNN_MAJOR >= 9
/* cudnn_graph.h (9.x): cudnnStatus_t, categories of 1000. */
typedef enum {
    CUDNN_STATUS_SUCCESS = 0,
    CUDNN_STATUS_NOT_INITIALIZED = 1001,
    CUDNN_STATUS_BAD_PARAM = 2000,
    CUDNN_STATUS_NOT_SUPPORTED = 3000,
    CUDNN_STATUS_INTERNAL_ERROR = 4000,
    CUDNN_STATUS_ALLOC_FAILED = 4003, /* = CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED */
    CUDNN_STATUS_EXECUTION_FAILED = 5000,
} cudnnStatus_t;
#define DEFAULT_VERSION 91900 /* cudnn_version.h: MAJOR*10000 + MINOR*100 + PATCHLEVEL (9.19.0) */
#else
/* cudnn_ops_infer.h (8.x): cudnnStatus_t, small consecutive numbers. */
typedef enum {
    CUDNN_STATUS_SUCCESS = 0,
    CUDNN_STATUS_NOT_INITIALIZED = 1,
    CUDNN_STATUS_ALLOC_FAILED = 2,
    CUDNN_STATUS_BAD_PARAM = 3,
    CUDNN_STATUS_INTERNAL_ERROR = 4,
    CUDNN_STATUS_EXECUTION_FAILED = 8,
    CUDNN_STATUS_NOT_SUPPORTED = 9,
} cudnnStatus_t;
#define DEFAULT_VERSION 8907 /* cudnn_version.h (8.x): MAJOR*1000 + MINOR*100 + PATCHLEVEL (8.9.7) */
#endif

/* cudnn_graph.h */
typedef enum { CUDNN_DATA_FLOAT = 0, CUDNN_DATA_HALF = 2 } cudnnDataType_t;
typedef enum { CUDNN_TENSOR_NCHW = 0, CUDNN_TENSOR_NHWC = 1 } cudnnTensorFormat_t;
typedef enum { CUDNN_CONVOLUTION = 0, CUDNN_CROSS_CORRELATION = 1 } cudnnConvolutionMode_t;
typedef enum { CUDNN_DEFAULT_MATH = 0, CUDNN_FMA_MATH = 3 } cudnnMathType_t;
/* cudnn_ops.h: algorithms 0..2 are the ones this double offers; *_COUNT is the real count. */
typedef enum { CUDNN_DETERMINISTIC = 1 } cudnnDeterminism_t;
typedef enum { CUDNN_CONVOLUTION_FWD_ALGO_COUNT = 8 } cudnnConvolutionFwdAlgo_t;
typedef enum { CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT = 6 } cudnnConvolutionBwdDataAlgo_t;
typedef enum { CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT = 7 } cudnnConvolutionBwdFilterAlgo_t;

/* cudnn_cnn.h: the three perf-result structs (same layout, 48 bytes on LP64). */
typedef struct cudnnConvolutionFwdAlgoPerfStruct {
    cudnnConvolutionFwdAlgo_t algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t mathType;
    int reserved[3];
} cudnnConvolutionFwdAlgoPerf_t;
typedef struct cudnnConvolutionBwdDataAlgoPerfStruct {
    cudnnConvolutionBwdDataAlgo_t algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t mathType;
    int reserved[3];
} cudnnConvolutionBwdDataAlgoPerf_t;
typedef struct cudnnConvolutionBwdFilterAlgoPerfStruct {
    cudnnConvolutionBwdFilterAlgo_t algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t mathType;
    int reserved[3];
} cudnnConvolutionBwdFilterAlgoPerf_t;
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(cudnnConvolutionFwdAlgoPerf_t) == 48, "perf struct layout (cudnn_cnn.h)");
#endif

/* Opaque handles (cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h); their contents are this double's. */
enum { MAGIC_HANDLE = 0x48444e4c, MAGIC_TENSOR = 0x54454e53, MAGIC_FILTER = 0x46494c54, MAGIC_CONV = 0x434f4e56 };
typedef struct {
    unsigned magic;
    int set;
    cudnnDataType_t type;
    int d[4];
} desc4; /* n,c,h,w / k,c,r,s */
struct cudnnContext {
    unsigned magic;
};
struct cudnnTensorStruct {
    desc4 base;
};
struct cudnnFilterStruct {
    desc4 base;
};
struct cudnnConvolutionStruct {
    unsigned magic;
    int set, pad_h, pad_w, u, v, dil_h, dil_w;
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute;
    cudnnMathType_t math;
};
typedef struct cudnnContext *cudnnHandle_t;
typedef struct cudnnTensorStruct *cudnnTensorDescriptor_t;
typedef struct cudnnFilterStruct *cudnnFilterDescriptor_t;
typedef struct cudnnConvolutionStruct *cudnnConvolutionDescriptor_t;

/* ---- knobs ------------------------------------------------------------------------------ */

enum op { FWD, BWD_DATA, BWD_FILTER };
static const char *const op_name[] = {"fwd", "bwd_data", "bwd_filter"};
static const int op_algo_count[] = {CUDNN_CONVOLUTION_FWD_ALGO_COUNT, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                    CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT};
enum { OFFERED_ALGOS = 3, ALGO2_WORKSPACE = 1024 };

static long long env_ll(const char *name, long long fallback) {
    const char *v = getenv(name);
    if (!v || !*v) return fallback;
    char *end = NULL;
    long long x = strtoll(v, &end, 10);
    return (end && *end == '\0') ? x : fallback;
}

/* A per-operation knob: its value, or -1 when unset or STACKPIN_FAKE_CUDNN_ONLY names another op. */
static long long op_knob(const char *name, enum op op) {
    const char *only = getenv("STACKPIN_FAKE_CUDNN_ONLY");
    if (only && *only && strcmp(only, op_name[op]) != 0) return -1;
    return env_ll(name, -1);
}

/* ---- half precision (IEEE binary16 as uint16_t) ----------------------------------------- */

static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
    if (exp == 0) { /* zero or subnormal: man * 2^-24, exact in float */
        float f = ldexpf((float)man, -24);
        return sign ? -f : f;
    }
    bits = sign | (exp == 31 ? 0x7f800000u : (exp + 112) << 23) | man << 13;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Round to nearest, ties to even. */
static uint16_t float_to_half(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | 0x7e00u | ((a >> 13) & 0x3ffu); /* NaN, kept quiet */
    if (a >= 0x477ff000u) return sign | 0x7c00u;                       /* >= 65520: infinity */
    if (a >= 0x38800000u) {                                            /* normal half */
        uint32_t h = (a - 0x38000000u) >> 13, rest = a & 0x1fffu;      /* rebias 127 -> 15 */
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
        return sign | (uint16_t)h;
    }
    if (a <= 0x33000000u) return sign; /* <= 2^-25 rounds to (signed) zero */
    /* subnormal half: in units of 2^-24 the value is m >> (126 - e) */
    uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, shift = 126 - e;
    uint32_t q = m >> shift, rest = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (q & 1u))) ++q;
    return sign | (uint16_t)q;
}

static size_t elem_size(cudnnDataType_t t) { return t == CUDNN_DATA_HALF ? 2 : 4; }

static float load(const void *p, cudnnDataType_t t, size_t i) {
    if (t == CUDNN_DATA_HALF) return half_to_float(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

static void store(void *p, cudnnDataType_t t, size_t i, float v) {
    if (t == CUDNN_DATA_HALF)
        ((uint16_t *)p)[i] = float_to_half(v);
    else
        ((float *)p)[i] = v;
}

/* ---- version, errors, handle ------------------------------------------------------------ */

API size_t cudnnGetVersion(void) { return (size_t)env_ll("STACKPIN_FAKE_CUDNN_VERSION", DEFAULT_VERSION); }
API size_t cudnnGetCudartVersion(void) { return (size_t)env_ll("STACKPIN_FAKE_CUDNN_CUDART", 12080); }

API const char *cudnnGetErrorString(cudnnStatus_t status) {
    switch (status) {
        case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
        case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
        case CUDNN_STATUS_ALLOC_FAILED: return "CUDNN_STATUS_ALLOC_FAILED";
        case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
        case CUDNN_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
        case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
        case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
        default: return "CUDNN_UNKNOWN_STATUS";
    }
}

API cudnnStatus_t cudnnCreate(cudnnHandle_t *handle) {
    if (!handle) return CUDNN_STATUS_BAD_PARAM;
    long long forced = env_ll("STACKPIN_FAKE_CUDNN_CREATE", 0);
    if (forced != 0) return (cudnnStatus_t)forced;
    struct cudnnContext *h = calloc(1, sizeof *h);
    if (!h) return CUDNN_STATUS_ALLOC_FAILED;
    h->magic = MAGIC_HANDLE;
    *handle = h;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
    if (!handle || handle->magic != MAGIC_HANDLE) return CUDNN_STATUS_BAD_PARAM;
    handle->magic = 0;
    free(handle);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- descriptors ------------------------------------------------------------------------ */

static void *create_desc(size_t size, unsigned magic) {
    unsigned *p = calloc(1, size);
    if (p) *p = magic; /* every descriptor struct starts with its magic */
    return p;
}

static cudnnStatus_t destroy_desc(void *p, unsigned magic) {
    if (!p) return CUDNN_STATUS_SUCCESS;
    if (*(unsigned *)p != magic) return CUDNN_STATUS_BAD_PARAM;
    *(unsigned *)p = 0;
    free(p);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t set_desc4(desc4 *d, unsigned magic, cudnnTensorFormat_t format, cudnnDataType_t type, int a, int b,
                               int c, int e) {
    if (!d || d->magic != magic) return CUDNN_STATUS_BAD_PARAM;
    if (format == CUDNN_TENSOR_NHWC) return CUDNN_STATUS_NOT_SUPPORTED; /* valid, but not here */
    if (format != CUDNN_TENSOR_NCHW) return CUDNN_STATUS_BAD_PARAM;
    if (type != CUDNN_DATA_FLOAT && type != CUDNN_DATA_HALF) return CUDNN_STATUS_NOT_SUPPORTED;
    if (a <= 0 || b <= 0 || c <= 0 || e <= 0) return CUDNN_STATUS_BAD_PARAM;
    if ((double)a * b * c * e > 2147483647.0) return CUDNN_STATUS_NOT_SUPPORTED;
    *d = (desc4){magic, 1, type, {a, b, c, e}};
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *out) {
    if (!out) return CUDNN_STATUS_BAD_PARAM;
    *out = create_desc(sizeof **out, MAGIC_TENSOR);
    return *out ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

API cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *out) {
    if (!out) return CUDNN_STATUS_BAD_PARAM;
    *out = create_desc(sizeof **out, MAGIC_FILTER);
    return *out ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

API cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *out) {
    if (!out) return CUDNN_STATUS_BAD_PARAM;
    *out = create_desc(sizeof **out, MAGIC_CONV);
    return *out ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

API cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) { return destroy_desc(d, MAGIC_TENSOR); }
API cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) { return destroy_desc(d, MAGIC_FILTER); }
API cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) {
    return destroy_desc(d, MAGIC_CONV);
}

API cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t format,
                                             cudnnDataType_t dataType, int n, int c, int h, int w) {
    return set_desc4(d ? &d->base : NULL, MAGIC_TENSOR, format, dataType, n, c, h, w);
}

/* Note the argument order: data type before format, unlike the tensor setter. */
API cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t dataType,
                                             cudnnTensorFormat_t format, int k, int c, int h, int w) {
    return set_desc4(d ? &d->base : NULL, MAGIC_FILTER, format, dataType, k, c, h, w);
}

API cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int pad_h, int pad_w, int u, int v,
                                                  int dilation_h, int dilation_w, cudnnConvolutionMode_t mode,
                                                  cudnnDataType_t computeType) {
    if (!d || d->magic != MAGIC_CONV) return CUDNN_STATUS_BAD_PARAM;
    if (pad_h < 0 || pad_w < 0 || u <= 0 || v <= 0 || dilation_h <= 0 || dilation_w <= 0) return CUDNN_STATUS_BAD_PARAM;
    if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION) return CUDNN_STATUS_BAD_PARAM;
    if (computeType != CUDNN_DATA_FLOAT && computeType != CUDNN_DATA_HALF) return CUDNN_STATUS_NOT_SUPPORTED;
    *d = (struct cudnnConvolutionStruct){MAGIC_CONV, 1,          pad_h, pad_w,       u,      v,
                                         dilation_h, dilation_w, mode,  computeType, d->math};
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t mathType) {
    if (!d || d->magic != MAGIC_CONV) return CUDNN_STATUS_BAD_PARAM;
    if ((int)mathType < CUDNN_DEFAULT_MATH || (int)mathType > CUDNN_FMA_MATH) return CUDNN_STATUS_BAD_PARAM;
    d->math = mathType;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- problem geometry ------------------------------------------------------------------- */

typedef struct {
    int N, C, H, W, K, R, S, P, Q, ph, pw, sh, sw, dh, dw, flip;
    cudnnDataType_t type;
} geom;

static int out_extent(int in, int pad, int filter, int dil, int stride) {
    int span = (filter - 1) * dil + 1;
    return in + 2 * pad < span ? 0 : 1 + (in + 2 * pad - span) / stride;
}

/* Shared checks of x, w and conv; fills g except P/Q checks against y. */
static cudnnStatus_t input_geom(const struct cudnnConvolutionStruct *cd, const struct cudnnTensorStruct *xd,
                                const struct cudnnFilterStruct *wd, geom *g) {
    if (!cd || cd->magic != MAGIC_CONV || !cd->set) return CUDNN_STATUS_BAD_PARAM;
    if (!xd || xd->base.magic != MAGIC_TENSOR || !xd->base.set) return CUDNN_STATUS_BAD_PARAM;
    if (!wd || wd->base.magic != MAGIC_FILTER || !wd->base.set) return CUDNN_STATUS_BAD_PARAM;
    const int *x = xd->base.d, *w = wd->base.d;
    if (x[1] != w[1]) return CUDNN_STATUS_BAD_PARAM; /* channels must agree (group count 1) */
    *g = (geom){x[0],
                x[1],
                x[2],
                x[3],
                w[0],
                w[2],
                w[3],
                0,
                0,
                cd->pad_h,
                cd->pad_w,
                cd->u,
                cd->v,
                cd->dil_h,
                cd->dil_w,
                cd->mode == CUDNN_CONVOLUTION,
                xd->base.type};
    g->P = out_extent(g->H, g->ph, g->R, g->dh, g->sh);
    g->Q = out_extent(g->W, g->pw, g->S, g->dw, g->sw);
    return g->P > 0 && g->Q > 0 ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}

static cudnnStatus_t problem(const struct cudnnConvolutionStruct *cd, const struct cudnnTensorStruct *xd,
                             const struct cudnnFilterStruct *wd, const struct cudnnTensorStruct *yd, geom *g) {
    cudnnStatus_t st = input_geom(cd, xd, wd, g);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    if (!yd || yd->base.magic != MAGIC_TENSOR || !yd->base.set) return CUDNN_STATUS_BAD_PARAM;
    const int *y = yd->base.d;
    if (y[0] != g->N || y[1] != g->K || y[2] != g->P || y[3] != g->Q) return CUDNN_STATUS_BAD_PARAM;
    if (wd->base.type != g->type || yd->base.type != g->type) return CUDNN_STATUS_BAD_PARAM;
    if (g->type == CUDNN_DATA_FLOAT && cd->compute != CUDNN_DATA_FLOAT) return CUDNN_STATUS_NOT_SUPPORTED;
    return CUDNN_STATUS_SUCCESS;
}

API cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                                        const cudnnTensorDescriptor_t inputTensorDesc,
                                                        const cudnnFilterDescriptor_t filterDesc, int *n, int *c,
                                                        int *h, int *w) {
    geom g;
    if (!n || !c || !h || !w) return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = input_geom(convDesc, inputTensorDesc, filterDesc, &g);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    *n = g.N, *c = g.K, *h = g.P, *w = g.Q;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_algo(enum op op, int algo) {
    if (algo >= 0 && algo < OFFERED_ALGOS) return CUDNN_STATUS_SUCCESS;
    return algo >= 0 && algo < op_algo_count[op] ? CUDNN_STATUS_NOT_SUPPORTED : CUDNN_STATUS_BAD_PARAM;
}

/* ---- algorithm queries ------------------------------------------------------------------ */

static cudnnStatus_t max_count(cudnnHandle_t h, int *count, enum op op) {
    if (!h || h->magic != MAGIC_HANDLE || !count) return CUDNN_STATUS_BAD_PARAM;
    *count = op_algo_count[op];
    return CUDNN_STATUS_SUCCESS;
}
API cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t h, int *count) {
    return max_count(h, count, FWD);
}
API cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t h, int *count) {
    return max_count(h, count, BWD_DATA);
}
API cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t h, int *count) {
    return max_count(h, count, BWD_FILTER);
}

/* Fills algo/time/memory for the offered algorithms, fastest first: 2 (uses workspace), 1, 0. */
static cudnnStatus_t find(enum op op, cudnnHandle_t h, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd,
                          cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t yd, int requested, int *returned,
                          int algo[], float ms[], size_t mem[]) {
    geom g;
    if (!h || h->magic != MAGIC_HANDLE || !returned || requested < 1) return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = problem(cd, xd, wd, yd, &g);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    *returned = 0;
    if (op_knob("STACKPIN_FAKE_CUDNN_FIND_FAILS", op) == 1) return CUDNN_STATUS_NOT_SUPPORTED;
    double macs = (double)g.N * g.K * g.C * g.P * g.Q * g.R * g.S;
    float base = (float)(0.002 + macs / 2e9); /* ms, as if 2 TMAC/s */
    for (int i = 0; i < OFFERED_ALGOS; ++i) {
        algo[i] = OFFERED_ALGOS - 1 - i;
        ms[i] = base * (0.6f + 0.2f * (float)i);
        mem[i] = algo[i] == 2 ? ALGO2_WORKSPACE : 0;
    }
    *returned = requested < OFFERED_ALGOS ? requested : OFFERED_ALGOS;
    return CUDNN_STATUS_SUCCESS;
}

#define FILL_PERF(perf, n)                                                                \
    for (int i = 0; i < (n); ++i) {                                                       \
        memset(&(perf)[i], 0, sizeof(perf)[i]);                                           \
        (perf)[i].algo = algo[i], (perf)[i].status = CUDNN_STATUS_SUCCESS;                \
        (perf)[i].time = ms[i], (perf)[i].memory = mem[i];                                \
        (perf)[i].determinism = CUDNN_DETERMINISTIC, (perf)[i].mathType = convDesc->math; \
    }

API cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                       const cudnnFilterDescriptor_t wDesc,
                                                       const cudnnConvolutionDescriptor_t convDesc,
                                                       const cudnnTensorDescriptor_t yDesc,
                                                       const int requestedAlgoCount, int *returnedAlgoCount,
                                                       cudnnConvolutionFwdAlgoPerf_t *perfResults) {
    int algo[OFFERED_ALGOS];
    float ms[OFFERED_ALGOS];
    size_t mem[OFFERED_ALGOS];
    if (!perfResults) return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st =
        find(FWD, handle, xDesc, wDesc, convDesc, yDesc, requestedAlgoCount, returnedAlgoCount, algo, ms, mem);
    if (st == CUDNN_STATUS_SUCCESS) FILL_PERF(perfResults, *returnedAlgoCount);
    return st;
}

API cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
                                                            const cudnnTensorDescriptor_t dyDesc,
                                                            const cudnnConvolutionDescriptor_t convDesc,
                                                            const cudnnTensorDescriptor_t dxDesc,
                                                            const int requestedAlgoCount, int *returnedAlgoCount,
                                                            cudnnConvolutionBwdDataAlgoPerf_t *perfResults) {
    int algo[OFFERED_ALGOS];
    float ms[OFFERED_ALGOS];
    size_t mem[OFFERED_ALGOS];
    if (!perfResults) return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st =
        find(BWD_DATA, handle, dxDesc, wDesc, convDesc, dyDesc, requestedAlgoCount, returnedAlgoCount, algo, ms, mem);
    if (st == CUDNN_STATUS_SUCCESS) FILL_PERF(perfResults, *returnedAlgoCount);
    return st;
}

API cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithm(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                              const cudnnTensorDescriptor_t dyDesc,
                                                              const cudnnConvolutionDescriptor_t convDesc,
                                                              const cudnnFilterDescriptor_t dwDesc,
                                                              const int requestedAlgoCount, int *returnedAlgoCount,
                                                              cudnnConvolutionBwdFilterAlgoPerf_t *perfResults) {
    int algo[OFFERED_ALGOS];
    float ms[OFFERED_ALGOS];
    size_t mem[OFFERED_ALGOS];
    if (!perfResults) return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st =
        find(BWD_FILTER, handle, xDesc, dwDesc, convDesc, dyDesc, requestedAlgoCount, returnedAlgoCount, algo, ms, mem);
    if (st == CUDNN_STATUS_SUCCESS) FILL_PERF(perfResults, *returnedAlgoCount);
    return st;
}

static cudnnStatus_t workspace(enum op op, cudnnHandle_t h, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd,
                               cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t yd, int algo, size_t *bytes) {
    geom g;
    if (!h || h->magic != MAGIC_HANDLE || !bytes) return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = problem(cd, xd, wd, yd, &g);
    if (st == CUDNN_STATUS_SUCCESS) st = check_algo(op, algo);
    if (st == CUDNN_STATUS_SUCCESS) *bytes = algo == 2 ? ALGO2_WORKSPACE : 0;
    return st;
}

API cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                          const cudnnFilterDescriptor_t wDesc,
                                                          const cudnnConvolutionDescriptor_t convDesc,
                                                          const cudnnTensorDescriptor_t yDesc,
                                                          cudnnConvolutionFwdAlgo_t algo, size_t *sizeInBytes) {
    return workspace(FWD, handle, xDesc, wDesc, convDesc, yDesc, (int)algo, sizeInBytes);
}

API cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc,
    cudnnConvolutionBwdDataAlgo_t algo, size_t *sizeInBytes) {
    return workspace(BWD_DATA, handle, dxDesc, wDesc, convDesc, dyDesc, (int)algo, sizeInBytes);
}

API cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t gradDesc,
    cudnnConvolutionBwdFilterAlgo_t algo, size_t *sizeInBytes) {
    return workspace(BWD_FILTER, handle, xDesc, gradDesc, convDesc, dyDesc, (int)algo, sizeInBytes);
}

/* ---- execution -------------------------------------------------------------------------- */

enum { X, Wt, Y }; /* operand slots: input x (or dx), filter w (or dw), output y (or dy) */

/* One multiply-accumulate of the convolution relation
 *   y[n,k,p,q] ~ x[n,c, p*sh-ph+r*dh, q*sw-pw+s*dw] * w[k,c,r,s]   (r,s mirrored in CONVOLUTION mode)
 * where slot `o` accumulates the product of the other two slots. */
static inline void tap(const geom *g, float *const b[3], int o, int n, int k, int c, int p, int q, int r, int s) {
    int ih = p * g->sh - g->ph + r * g->dh, iw = q * g->sw - g->pw + s * g->dw;
    if (ih < 0 || ih >= g->H || iw < 0 || iw >= g->W) return;
    int rr = g->flip ? g->R - 1 - r : r, ss = g->flip ? g->S - 1 - s : s;
    size_t xi = (((size_t)n * g->C + c) * g->H + ih) * g->W + iw, wi = (((size_t)k * g->C + c) * g->R + rr) * g->S + ss,
           yi = (((size_t)n * g->K + k) * g->P + p) * g->Q + q;
    switch (o) {
        case Y: b[Y][yi] += b[X][xi] * b[Wt][wi]; break;
        case X: b[X][xi] += b[Y][yi] * b[Wt][wi]; break;
        default: b[Wt][wi] += b[X][xi] * b[Y][yi]; break;
    }
}

#define FOR(v, lim) for (int v = 0; v < (lim); ++v)

/* The three algorithms visit the same taps in different orders (so float rounding may differ
 * in the last bits, as between real algorithms). */
static void convolve(const geom *g, float *const b[3], int o, int algo) {
    /* one line of loops per order reads better than a staircase */
    /* clang-format off */
    switch (algo) {
        case 0: /* per output element of y */
            FOR(n, g->N) FOR(k, g->K) FOR(p, g->P) FOR(q, g->Q) FOR(c, g->C) FOR(r, g->R) FOR(s, g->S)
                tap(g, b, o, n, k, c, p, q, r, s);
            break;
        case 1: /* per image and filter tap */
            FOR(n, g->N) FOR(c, g->C) FOR(r, g->R) FOR(s, g->S) FOR(k, g->K) FOR(p, g->P) FOR(q, g->Q)
                tap(g, b, o, n, k, c, p, q, r, s);
            break;
        default: /* per filter tap, batch innermost */
            FOR(k, g->K) FOR(c, g->C) FOR(r, g->R) FOR(s, g->S) FOR(n, g->N) FOR(p, g->P) FOR(q, g->Q)
                tap(g, b, o, n, k, c, p, q, r, s);
            break;
    }
    /* clang-format on */
}

/* When the cudart double is loaded, operands must lie in its live cudaMalloc blocks, as on a
 * real GPU where a host pointer faults. With any other libcudart.so.12 (cudart64_12.dll),
 * nothing is checked. */
#ifdef _WIN32
static void *loaded_cudart(void) { return (void *)GetModuleHandleA("cudart64_12.dll"); }
static void *cudart_symbol(void *lib, const char *name) {
    /* ISO C has no cast from a function pointer to void *: copy its bytes, as dlsym's callers do */
    FARPROC f = GetProcAddress((HMODULE)lib, name);
    void *p = NULL;
    memcpy(&p, &f, sizeof p);
    return p;
}
static void release_cudart(void *lib) { (void)lib; /* GetModuleHandle takes no reference */ }
#else
static void *loaded_cudart(void) { return dlopen("libcudart.so.12", RTLD_NOW | RTLD_NOLOAD); }
static void *cudart_symbol(void *lib, const char *name) { return dlsym(lib, name); }
static void release_cudart(void *lib) { dlclose(lib); }
#endif
static int device_memory_ok(const void *const ptr[3], const size_t bytes[3], const void *ws, size_t ws_bytes) {
    static const char *const slot_name[] = {"x/dx", "w/dw", "y/dy"};
    void *lib = loaded_cudart();
    if (!lib) return 1;
    int ok = 1;
    void *sym = cudart_symbol(lib, "stackpin_fake_cudart_owns");
    if (sym) {
        int (*owns)(const void *, size_t);
        memcpy(&owns, &sym, sizeof owns);
        for (int i = 0; i < 3 && ok; ++i)
            if (!owns(ptr[i], bytes[i]))
                ok = 0,
                fprintf(stderr, "fake cudnn: %s is not a live cudaMalloc block of %zu bytes\n", slot_name[i], bytes[i]);
        if (ok && ws && ws_bytes && !owns(ws, ws_bytes))
            ok = 0, fprintf(stderr, "fake cudnn: workspace is not a live cudaMalloc block of %zu bytes\n", ws_bytes);
    }
    release_cudart(lib);
    return ok;
}

/* ptr[o] is the output (written), the other two are inputs; out = alpha*conv + beta*out. */
static cudnnStatus_t execute(enum op op, cudnnHandle_t h, const void *alpha, const void *beta,
                             cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd, cudnnTensorDescriptor_t yd,
                             cudnnConvolutionDescriptor_t cd, int algo, void *ws, size_t ws_bytes,
                             const void *const ptr[3], int o) {
    geom g;
    if (!h || h->magic != MAGIC_HANDLE || !alpha || !beta) return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = problem(cd, xd, wd, yd, &g);
    if (st == CUDNN_STATUS_SUCCESS) st = check_algo(op, algo);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    if (!ptr[0] || !ptr[1] || !ptr[2]) return CUDNN_STATUS_BAD_PARAM;
    if (algo == 2 && (!ws || ws_bytes < ALGO2_WORKSPACE)) return CUDNN_STATUS_BAD_PARAM;
    size_t count[3] = {(size_t)g.N * g.C * g.H * g.W, (size_t)g.K * g.C * g.R * g.S, (size_t)g.N * g.K * g.P * g.Q};
    size_t bytes[3] = {count[0] * elem_size(g.type), count[1] * elem_size(g.type), count[2] * elem_size(g.type)};
    if (!device_memory_ok(ptr, bytes, ws, ws_bytes)) return CUDNN_STATUS_EXECUTION_FAILED;
    if (op_knob("STACKPIN_FAKE_CUDNN_FAIL_ALGO", op) == algo) return CUDNN_STATUS_EXECUTION_FAILED;

    float *b[3];
    for (int i = 0; i < 3; ++i) b[i] = calloc(count[i] ? count[i] : 1, sizeof(float));
    if (!b[0] || !b[1] || !b[2])
        st = CUDNN_STATUS_ALLOC_FAILED;
    else {
        for (int i = 0; i < 3; ++i)
            if (i != o)
                for (size_t j = 0; j < count[i]; ++j) b[i][j] = load(ptr[i], g.type, j);
        convolve(&g, b, o, algo);
        if (algo == 2) memset(ws, 0x5a, ALGO2_WORKSPACE); /* the workspace really is used */
        float al = *(const float *)alpha, be = *(const float *)beta;
        void *out = (void *)ptr[o];
        for (size_t j = 0; j < count[o]; ++j) { /* beta == 0: the old output is not read */
            b[o][j] = al * b[o][j] + (be != 0.0f ? be * load(out, g.type, j) : 0.0f);
        }
        size_t victim = count[o] / 2;
        if (op_knob("STACKPIN_FAKE_CUDNN_WRONG_ALGO", op) == algo) b[o][victim] += 0.5f;
        if (op_knob("STACKPIN_FAKE_CUDNN_NAN_ALGO", op) == algo) b[o][victim] = NAN;
        for (size_t j = 0; j < count[o]; ++j) store(out, g.type, j, b[o][j]);
    }
    for (int i = 0; i < 3; ++i) free(b[i]);
    return st;
}

API cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc,
                                          const void *x, const cudnnFilterDescriptor_t wDesc, const void *w,
                                          const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo,
                                          void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
                                          const cudnnTensorDescriptor_t yDesc, void *y) {
    const void *ptr[3] = {x, w, y};
    return execute(FWD, handle, alpha, beta, xDesc, wDesc, yDesc, convDesc, (int)algo, workSpace, workSpaceSizeInBytes,
                   ptr, Y);
}

API cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void *alpha,
                                               const cudnnFilterDescriptor_t wDesc, const void *w,
                                               const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                               const cudnnConvolutionDescriptor_t convDesc,
                                               cudnnConvolutionBwdDataAlgo_t algo, void *workSpace,
                                               size_t workSpaceSizeInBytes, const void *beta,
                                               const cudnnTensorDescriptor_t dxDesc, void *dx) {
    const void *ptr[3] = {dx, w, dy};
    return execute(BWD_DATA, handle, alpha, beta, dxDesc, wDesc, dyDesc, convDesc, (int)algo, workSpace,
                   workSpaceSizeInBytes, ptr, X);
}

API cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void *alpha,
                                                 const cudnnTensorDescriptor_t xDesc, const void *x,
                                                 const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                 const cudnnConvolutionDescriptor_t convDesc,
                                                 cudnnConvolutionBwdFilterAlgo_t algo, void *workSpace,
                                                 size_t workSpaceSizeInBytes, const void *beta,
                                                 const cudnnFilterDescriptor_t dwDesc, void *dw) {
    const void *ptr[3] = {x, dw, dy};
    return execute(BWD_FILTER, handle, alpha, beta, xDesc, dwDesc, dyDesc, convDesc, (int)algo, workSpace,
                   workSpaceSizeInBytes, ptr, Wt);
}
