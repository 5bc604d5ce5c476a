/* Self-check of the CUDA runtime / cuDNN test doubles (not a gtest). Usage:
 *   selftest DOUBLES_DIR
 * where DOUBLES_DIR holds cuda12-cudnn9/{libcudart.so.12,libcudnn.so.9} and cudnn8/libcudnn.so.8.
 * It loads them with dlopen, calls them as a client would, checks convolutions against a naive
 * double-precision reference computed here, and drives every STACKPIN_FAKE_* knob once. Its
 * half-precision conversion is written differently from the double's, to cross-check it. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
static void check(int ok, const char *what) {
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    if (ok)
        ++passed;
    else
        ++failed;
}

/* ---- the API, as a client declares it (enums as int, handles as void*) ------------------- */

typedef struct {
    int algo, status;
    float time;
    size_t memory;
    int determinism, mathType, reserved[3];
} perf_t;
typedef void *H;

typedef struct {
    int (*GetDeviceCount)(int *);
    int (*SetDevice)(int);
    int (*GetDevice)(int *);
    int (*RuntimeGetVersion)(int *);
    int (*DriverGetVersion)(int *);
    int (*DeviceGetAttribute)(int *, int, int);
    int (*GetDeviceProperties)(void *, int);
    int (*GetDeviceProperties_v2)(void *, int);
    int (*Malloc)(void **, size_t);
    int (*Free)(void *);
    int (*Memcpy)(void *, const void *, size_t, int);
    int (*Memset)(void *, int, size_t);
    int (*DeviceSynchronize)(void);
    const char *(*GetErrorString)(int);
    int (*GetLastError)(void);
} cudart;

typedef struct {
    size_t (*GetVersion)(void);
    size_t (*GetCudartVersion)(void);
    const char *(*GetErrorString)(int);
    int (*Create)(H *);
    int (*Destroy)(H);
    int (*CreateTensorDescriptor)(H *);
    int (*SetTensor4dDescriptor)(H, int, int, int, int, int, int);
    int (*DestroyTensorDescriptor)(H);
    int (*CreateFilterDescriptor)(H *);
    int (*SetFilter4dDescriptor)(H, int, int, int, int, int, int);
    int (*DestroyFilterDescriptor)(H);
    int (*CreateConvolutionDescriptor)(H *);
    int (*DestroyConvolutionDescriptor)(H);
    int (*SetConvolution2dDescriptor)(H, int, int, int, int, int, int, int, int);
    int (*SetConvolutionMathType)(H, int);
    int (*GetConvolution2dForwardOutputDim)(H, H, H, int *, int *, int *, int *);
    int (*GetConvolutionForwardAlgorithmMaxCount)(H, int *);
    int (*GetConvolutionBackwardDataAlgorithmMaxCount)(H, int *);
    int (*GetConvolutionBackwardFilterAlgorithmMaxCount)(H, int *);
    int (*Find[3])(H, H, H, H, H, int, int *, perf_t *); /* fwd, bwd_data, bwd_filter */
    int (*WorkspaceSize[3])(H, H, H, H, H, int, size_t *);
    int (*Run[3])(H, const void *, H, const void *, H, const void *, H, int, void *, size_t, const void *, H, void *);
} cudnn;

static void *sym(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "selftest: missing symbol %s\n", name);
        exit(2);
    }
    return p;
}
#define BIND(lib, s, field, name)            \
    do {                                     \
        void *p_ = sym(lib, name);           \
        memcpy(&(s)->field, &p_, sizeof p_); \
    } while (0)

static void *open_lib(const char *dir, const char *sub, const char *file) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, file);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "selftest: %s\n", dlerror());
        exit(2);
    }
    return lib;
}

static void bind_cudart(void *l, cudart *r) {
    BIND(l, r, GetDeviceCount, "cudaGetDeviceCount");
    BIND(l, r, SetDevice, "cudaSetDevice");
    BIND(l, r, GetDevice, "cudaGetDevice");
    BIND(l, r, RuntimeGetVersion, "cudaRuntimeGetVersion");
    BIND(l, r, DriverGetVersion, "cudaDriverGetVersion");
    BIND(l, r, DeviceGetAttribute, "cudaDeviceGetAttribute");
    BIND(l, r, GetDeviceProperties, "cudaGetDeviceProperties");
    BIND(l, r, GetDeviceProperties_v2, "cudaGetDeviceProperties_v2");
    BIND(l, r, Malloc, "cudaMalloc");
    BIND(l, r, Free, "cudaFree");
    BIND(l, r, Memcpy, "cudaMemcpy");
    BIND(l, r, Memset, "cudaMemset");
    BIND(l, r, DeviceSynchronize, "cudaDeviceSynchronize");
    BIND(l, r, GetErrorString, "cudaGetErrorString");
    BIND(l, r, GetLastError, "cudaGetLastError");
}

static void bind_cudnn(void *l, cudnn *d) {
    BIND(l, d, GetVersion, "cudnnGetVersion");
    BIND(l, d, GetCudartVersion, "cudnnGetCudartVersion");
    BIND(l, d, GetErrorString, "cudnnGetErrorString");
    BIND(l, d, Create, "cudnnCreate");
    BIND(l, d, Destroy, "cudnnDestroy");
    BIND(l, d, CreateTensorDescriptor, "cudnnCreateTensorDescriptor");
    BIND(l, d, SetTensor4dDescriptor, "cudnnSetTensor4dDescriptor");
    BIND(l, d, DestroyTensorDescriptor, "cudnnDestroyTensorDescriptor");
    BIND(l, d, CreateFilterDescriptor, "cudnnCreateFilterDescriptor");
    BIND(l, d, SetFilter4dDescriptor, "cudnnSetFilter4dDescriptor");
    BIND(l, d, DestroyFilterDescriptor, "cudnnDestroyFilterDescriptor");
    BIND(l, d, CreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor");
    BIND(l, d, DestroyConvolutionDescriptor, "cudnnDestroyConvolutionDescriptor");
    BIND(l, d, SetConvolution2dDescriptor, "cudnnSetConvolution2dDescriptor");
    BIND(l, d, SetConvolutionMathType, "cudnnSetConvolutionMathType");
    BIND(l, d, GetConvolution2dForwardOutputDim, "cudnnGetConvolution2dForwardOutputDim");
    BIND(l, d, GetConvolutionForwardAlgorithmMaxCount, "cudnnGetConvolutionForwardAlgorithmMaxCount");
    BIND(l, d, GetConvolutionBackwardDataAlgorithmMaxCount, "cudnnGetConvolutionBackwardDataAlgorithmMaxCount");
    BIND(l, d, GetConvolutionBackwardFilterAlgorithmMaxCount, "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount");
    BIND(l, d, Find[0], "cudnnFindConvolutionForwardAlgorithm");
    BIND(l, d, Find[1], "cudnnFindConvolutionBackwardDataAlgorithm");
    BIND(l, d, Find[2], "cudnnFindConvolutionBackwardFilterAlgorithm");
    BIND(l, d, WorkspaceSize[0], "cudnnGetConvolutionForwardWorkspaceSize");
    BIND(l, d, WorkspaceSize[1], "cudnnGetConvolutionBackwardDataWorkspaceSize");
    BIND(l, d, WorkspaceSize[2], "cudnnGetConvolutionBackwardFilterWorkspaceSize");
    BIND(l, d, Run[0], "cudnnConvolutionForward");
    BIND(l, d, Run[1], "cudnnConvolutionBackwardData");
    BIND(l, d, Run[2], "cudnnConvolutionBackwardFilter");
}

/* ---- half precision, by arithmetic (the double does it on bits) ------------------------- */

static float h2f(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexpf((float)m, -24) : ldexpf((float)(1024 + m), e - 25);
    return (h & 0x8000) ? -v : v;
}

static uint16_t f2h(float f) { /* round to nearest even, via nearbyintf in the default rounding mode */
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    float a = fabsf(f);
    if (isnan(f)) return sign | 0x7e00;
    if (a >= 65520.0f) return sign | 0x7c00;
    if (a < 0x1p-14f) return sign | (uint16_t)nearbyintf(a * 0x1p24f);
    int e;
    float sc = nearbyintf(ldexpf(frexpf(a, &e), 11)); /* 11 significant bits, in [1024, 2048] */
    if (sc == 2048.0f) sc = 1024.0f, ++e;
    return (uint16_t)(sign | (e + 14) << 10 | (int)(sc - 1024.0f));
}

/* ---- convolution cases ------------------------------------------------------------------ */

enum { F32 = 0, F16 = 2, NCHW = 0, CONV = 0, XCORR = 1, H2D = 1, D2H = 2 };
enum { FWD, BWD_DATA, BWD_FILTER };
enum { X, W, Y };
typedef struct {
    int N, C, H, W, K, R, S, ph, pw, sh, sw, dh, dw, mode, type;
} prob;
typedef struct {
    int status, bad, nans;
    double maxerr;
} outcome;

static int out_h(const prob *p) { return 1 + (p->H + 2 * p->ph - ((p->R - 1) * p->dh + 1)) / p->sh; }
static int out_w(const prob *p) { return 1 + (p->W + 2 * p->pw - ((p->S - 1) * p->dw + 1)) / p->sw; }

static float rnd(unsigned *state) {
    *state = *state * 1664525u + 1013904223u;
    return (float)(*state >> 8) / 8388608.0f - 1.0f; /* [-1, 1), 24 random bits */
}

/* Naive reference of slot o from the other two slots, in double. Each op is written in its own
 * gather form, independent of the double's scatter loops. */
static void reference(const prob *p, int op, float *const v[3], double *out) {
    int P = out_h(p), Q = out_w(p);
    size_t i = 0;
#define WR(r) (p->mode == CONV ? p->R - 1 - (r) : (r))
#define WS(s) (p->mode == CONV ? p->S - 1 - (s) : (s))
#define XAT(n, c, h, w) v[X][(((size_t)(n)*p->C + (c)) * p->H + (h)) * p->W + (w)]
#define WAT(k, c, r, s) v[W][(((size_t)(k)*p->C + (c)) * p->R + WR(r)) * p->S + WS(s)]
#define YAT(n, k, a, b) v[Y][(((size_t)(n)*p->K + (k)) * P + (a)) * Q + (b)]
    if (op == FWD)
        for (int n = 0; n < p->N; ++n)
            for (int k = 0; k < p->K; ++k)
                for (int a = 0; a < P; ++a)
                    for (int b = 0; b < Q; ++b, ++i) {
                        double s = 0;
                        for (int c = 0; c < p->C; ++c)
                            for (int r = 0; r < p->R; ++r)
                                for (int t = 0; t < p->S; ++t) {
                                    int h = a * p->sh - p->ph + r * p->dh, w = b * p->sw - p->pw + t * p->dw;
                                    if (h >= 0 && h < p->H && w >= 0 && w < p->W)
                                        s += (double)XAT(n, c, h, w) * WAT(k, c, r, t);
                                }
                        out[i] = s;
                    }
    else if (op == BWD_DATA)
        for (int n = 0; n < p->N; ++n)
            for (int c = 0; c < p->C; ++c)
                for (int h = 0; h < p->H; ++h)
                    for (int w = 0; w < p->W; ++w, ++i) {
                        double s = 0;
                        for (int k = 0; k < p->K; ++k)
                            for (int r = 0; r < p->R; ++r)
                                for (int t = 0; t < p->S; ++t) {
                                    int ah = h + p->ph - r * p->dh, aw = w + p->pw - t * p->dw;
                                    if (ah < 0 || aw < 0 || ah % p->sh || aw % p->sw || ah / p->sh >= P ||
                                        aw / p->sw >= Q)
                                        continue;
                                    s += (double)YAT(n, k, ah / p->sh, aw / p->sw) * WAT(k, c, r, t);
                                }
                        out[i] = s;
                    }
    else
        for (int k = 0; k < p->K; ++k)
            for (int c = 0; c < p->C; ++c)
                for (int r = 0; r < p->R; ++r)
                    for (int t = 0; t < p->S; ++t) {
                        double s = 0;
                        for (int n = 0; n < p->N; ++n)
                            for (int a = 0; a < P; ++a)
                                for (int b = 0; b < Q; ++b) {
                                    int h = a * p->sh - p->ph + r * p->dh, w = b * p->sw - p->pw + t * p->dw;
                                    if (h >= 0 && h < p->H && w >= 0 && w < p->W)
                                        s += (double)XAT(n, c, h, w) * YAT(n, k, a, b);
                                }
                        out[(((size_t)k * p->C + c) * p->R + r) * p->S + t] = s;
                    }
}

static void *to_device(const cudart *rt, const float *v, size_t n, int type, int host_only) {
    size_t es = type == F16 ? 2 : 4;
    unsigned char *tmp = malloc(n * es);
    for (size_t i = 0; i < n; ++i) {
        if (type == F16) {
            uint16_t h = f2h(v[i]);
            memcpy(tmp + 2 * i, &h, 2);
        } else
            memcpy(tmp + 4 * i, &v[i], 4);
    }
    if (host_only) return tmp;
    void *d = NULL;
    if (rt->Malloc(&d, n * es) != 0 || rt->Memcpy(d, tmp, n * es, H2D) != 0) d = NULL;
    free(tmp);
    return d;
}

static void from_device(const cudart *rt, const void *d, float *v, size_t n, int type) {
    size_t es = type == F16 ? 2 : 4;
    unsigned char *tmp = malloc(n * es);
    rt->Memcpy(tmp, d, n * es, D2H);
    for (size_t i = 0; i < n; ++i) {
        if (type == F16) {
            uint16_t h;
            memcpy(&h, tmp + 2 * i, 2);
            v[i] = h2f(h);
        } else
            memcpy(&v[i], tmp + 4 * i, 4);
    }
    free(tmp);
}

typedef struct {
    H h, x, w, y, conv;
} descs;

static int make_descs(const cudnn *d, const prob *p, descs *s) {
    int st = d->Create(&s->h);
    if (st) return st;
    d->CreateTensorDescriptor(&s->x);
    d->CreateTensorDescriptor(&s->y);
    d->CreateFilterDescriptor(&s->w);
    d->CreateConvolutionDescriptor(&s->conv);
    if ((st = d->SetTensor4dDescriptor(s->x, NCHW, p->type, p->N, p->C, p->H, p->W))) return st;
    if ((st = d->SetFilter4dDescriptor(s->w, p->type, NCHW, p->K, p->C, p->R, p->S))) return st;
    if ((st = d->SetConvolution2dDescriptor(s->conv, p->ph, p->pw, p->sh, p->sw, p->dh, p->dw, p->mode, F32)))
        return st;
    if ((st = d->SetConvolutionMathType(s->conv, 0))) return st;
    return d->SetTensor4dDescriptor(s->y, NCHW, p->type, p->N, p->K, out_h(p), out_w(p));
}

static void free_descs(const cudnn *d, descs *s) {
    d->DestroyTensorDescriptor(s->x);
    d->DestroyTensorDescriptor(s->y);
    d->DestroyFilterDescriptor(s->w);
    d->DestroyConvolutionDescriptor(s->conv);
    d->Destroy(s->h);
}

/* One call of op with algo: out = alpha*conv + beta*out. ws_bytes < 0 asks the API for the
 * workspace size; host_ptrs passes host memory instead of cudaMalloc blocks. */
static outcome run(const cudart *rt, const cudnn *d, const prob *p, int op, int algo, float alpha, float beta,
                   long ws_bytes, int host_ptrs) {
    outcome res = {0, 0, 0, 0.0};
    descs s = {0};
    if ((res.status = make_descs(d, p, &s))) {
        free_descs(d, &s);
        return res;
    }
    size_t n[3] = {(size_t)p->N * p->C * p->H * p->W, (size_t)p->K * p->C * p->R * p->S,
                   (size_t)p->N * p->K * out_h(p) * out_w(p)};
    int o = op == FWD ? Y : op == BWD_DATA ? X : W;
    float *v[3];
    void *dev[3];
    unsigned seed = 12345u + 7u * (unsigned)op;
    for (int i = 0; i < 3; ++i) {
        v[i] = malloc(n[i] * sizeof(float));
        for (size_t j = 0; j < n[i]; ++j) {
            v[i][j] = rnd(&seed);
            if (p->type == F16) v[i][j] = h2f(f2h(v[i][j])); /* the values the double will see */
        }
        dev[i] = to_device(rt, v[i], n[i], p->type, host_ptrs);
    }
    double *ref = malloc(n[o] * sizeof(double));
    reference(p, op, v, ref);
    size_t ws_size = 0;
    if (ws_bytes < 0) {
        if (op == FWD)
            d->WorkspaceSize[0](s.h, s.x, s.w, s.conv, s.y, algo, &ws_size);
        else if (op == BWD_DATA)
            d->WorkspaceSize[1](s.h, s.w, s.y, s.conv, s.x, algo, &ws_size);
        else
            d->WorkspaceSize[2](s.h, s.x, s.y, s.conv, s.w, algo, &ws_size);
    } else
        ws_size = (size_t)ws_bytes;
    void *ws = NULL;
    if (ws_size) rt->Malloc(&ws, ws_size);
    if (op == FWD)
        res.status = d->Run[0](s.h, &alpha, s.x, dev[X], s.w, dev[W], s.conv, algo, ws, ws_size, &beta, s.y, dev[Y]);
    else if (op == BWD_DATA)
        res.status = d->Run[1](s.h, &alpha, s.w, dev[W], s.y, dev[Y], s.conv, algo, ws, ws_size, &beta, s.x, dev[X]);
    else
        res.status = d->Run[2](s.h, &alpha, s.x, dev[X], s.y, dev[Y], s.conv, algo, ws, ws_size, &beta, s.w, dev[W]);
    if (res.status == 0) {
        float *got = malloc(n[o] * sizeof(float));
        if (host_ptrs)
            memcpy(got, dev[o], n[o] * sizeof(float)); /* not reached when the check works */
        else
            from_device(rt, dev[o], got, n[o], p->type);
        double atol = p->type == F16 ? 2e-3 : 1e-4, rtol = p->type == F16 ? 2e-3 : 1e-4;
        for (size_t j = 0; j < n[o]; ++j) {
            double want = alpha * ref[j] + beta * v[o][j], err = fabs(got[j] - want);
            if (isnan(got[j])) {
                ++res.nans;
                continue;
            }
            if (err > res.maxerr) res.maxerr = err;
            if (err > atol + rtol * fabs(want)) ++res.bad;
        }
        free(got);
    }
    for (int i = 0; i < 3; ++i) {
        free(v[i]);
        if (host_ptrs)
            free(dev[i]);
        else
            rt->Free(dev[i]);
    }
    rt->Free(ws);
    free(ref);
    free_descs(d, &s);
    return res;
}

/* Padding, stride and dilation all differ between height and width. y: 2x4x3x3. */
static const prob base = {2, 3, 7, 8, 4, 3, 2, 1, 2, 2, 3, 2, 3, XCORR, F32};

/* All three algorithms correct for op? */
static int all_algos_ok(const cudart *rt, const cudnn *d, const prob *p, int op, float alpha, float beta) {
    int ok = 1;
    for (int algo = 0; algo < 3; ++algo) {
        outcome r = run(rt, d, p, op, algo, alpha, beta, -1, 0);
        if (r.status || r.bad || r.nans) {
            printf("     op %d algo %d: status %d, %d wrong, %d NaN, max error %g\n", op, algo, r.status, r.bad, r.nans,
                   r.maxerr);
            ok = 0;
        }
    }
    return ok;
}

static int find_status(const cudnn *d, const prob *p, int op, int *count, perf_t perf[8]) {
    descs s = {0};
    int st = make_descs(d, p, &s);
    if (!st) {
        if (op == FWD)
            st = d->Find[0](s.h, s.x, s.w, s.conv, s.y, 8, count, perf);
        else if (op == BWD_DATA)
            st = d->Find[1](s.h, s.w, s.y, s.conv, s.x, 8, count, perf);
        else
            st = d->Find[2](s.h, s.x, s.y, s.conv, s.w, 8, count, perf);
    }
    free_descs(d, &s);
    return st;
}

/* Exhaustive half path: x holds all 65536 half patterns, w is one tap; compare bit for bit. */
static int half_exhaustive(const cudart *rt, const cudnn *d, uint16_t weight) {
    prob p = {1, 1, 256, 256, 1, 1, 1, 0, 0, 1, 1, 1, 1, XCORR, F16};
    descs s = {0};
    int ok = make_descs(d, &p, &s) == 0;
    uint16_t *h = malloc(65536 * 2);
    for (unsigned i = 0; i < 65536; ++i) h[i] = (uint16_t)i;
    void *x = NULL, *w = NULL, *y = NULL;
    float one = 1.0f, zero = 0.0f;
    rt->Malloc(&x, 65536 * 2);
    rt->Malloc(&w, 2);
    rt->Malloc(&y, 65536 * 2);
    rt->Memcpy(x, h, 65536 * 2, H2D);
    rt->Memcpy(w, &weight, 2, H2D);
    ok = ok && d->Run[0](s.h, &one, s.x, x, s.w, w, s.conv, 0, NULL, 0, &zero, s.y, y) == 0;
    rt->Memcpy(h, y, 65536 * 2, D2H);
    for (unsigned i = 0; i < 65536 && ok; ++i) {
        uint16_t want = f2h(h2f((uint16_t)i) * h2f(weight)); /* exact product, one rounding */
        int same =
            h[i] == want || ((h[i] & 0x7fff) == 0 && (want & 0x7fff) == 0) || (isnan(h2f(h[i])) && isnan(h2f(want)));
        if (!same) printf("     half %04x * %04x: got %04x want %04x\n", i, weight, h[i], want), ok = 0;
    }
    rt->Free(x);
    rt->Free(w);
    rt->Free(y);
    free(h);
    free_descs(d, &s);
    return ok;
}

/* ---- the checks ------------------------------------------------------------------------- */

static void test_cudart(const cudart *rt) {
    int n = -1, v = -1, a = -1, b = -1;
    check(rt->GetDeviceCount(&n) == 0 && n == 1, "cudart: one device by default");
    setenv("STACKPIN_FAKE_CUDA_DEVICES", "0", 1);
    check(rt->GetDeviceCount(&n) == 100 && n == 0, "cudart: DEVICES=0 gives cudaErrorNoDevice and count 0");
    setenv("STACKPIN_FAKE_CUDA_DEVICES", "2", 1);
    check(rt->GetDeviceCount(&n) == 0 && n == 2 && rt->SetDevice(1) == 0 && rt->GetDevice(&v) == 0 && v == 1 &&
              rt->SetDevice(2) == 101 && rt->SetDevice(0) == 0,
          "cudart: DEVICES=2, cudaSetDevice/cudaGetDevice");
    unsetenv("STACKPIN_FAKE_CUDA_DEVICES");
    void *p = &p;
    rt->GetLastError();
    setenv("STACKPIN_FAKE_CUDA_ERROR", "35", 1);
    check(rt->GetDeviceCount(&n) == 35 && n == 0 && rt->SetDevice(0) == 35 && rt->Malloc(&p, 16) == 35 && !p &&
              rt->GetLastError() == 35 && rt->GetLastError() == 0,
          "cudart: ERROR=35 from count, set, malloc; last error");
    unsetenv("STACKPIN_FAKE_CUDA_ERROR");
    check(rt->RuntimeGetVersion(&a) == 0 && a == 12080 && rt->DriverGetVersion(&b) == 0 && b == 12080,
          "cudart: runtime and driver 12080 by default");
    setenv("STACKPIN_FAKE_CUDA_RUNTIME", "12040", 1);
    setenv("STACKPIN_FAKE_CUDA_DRIVER", "0", 1);
    check(rt->RuntimeGetVersion(&a) == 0 && a == 12040 && rt->DriverGetVersion(&b) == 0 && b == 0 &&
              rt->GetDeviceCount(&n) == 35,
          "cudart: RUNTIME=12040; DRIVER=0 reads 0 and makes the count fail with 35");
    unsetenv("STACKPIN_FAKE_CUDA_RUNTIME");
    unsetenv("STACKPIN_FAKE_CUDA_DRIVER");
    int ok = rt->DeviceGetAttribute(&a, 75, 0) == 0 && a == 8 && rt->DeviceGetAttribute(&b, 76, 0) == 0 && b == 0;
    setenv("STACKPIN_FAKE_GPU_CC", "86", 1);
    ok = ok && rt->DeviceGetAttribute(&a, 75, 0) == 0 && a == 8 && rt->DeviceGetAttribute(&b, 76, 0) == 0 && b == 6;
    setenv("STACKPIN_FAKE_GPU_CC", "120", 1);
    ok = ok && rt->DeviceGetAttribute(&a, 75, 0) == 0 && a == 12 && rt->DeviceGetAttribute(&b, 76, 0) == 0 && b == 0;
    unsetenv("STACKPIN_FAKE_GPU_CC");
    check(ok && rt->DeviceGetAttribute(&a, 16, 0) == 1 && rt->DeviceGetAttribute(&a, 75, 1) == 101,
          "cudart: compute capability 8.0 / GPU_CC=86 / GPU_CC=120; other attributes invalid");
    unsigned char *prop = malloc(4096);
    memset(prop, 0xab, 4096);
    size_t mem = 0;
    ok = rt->GetDeviceProperties(prop, 0) == 0 && strcmp((char *)prop, "stackpin test double GPU") == 0;
    memcpy(&mem, prop + 288, sizeof mem);
    ok = ok && mem == 17179869184ull && prop[287] == 0 && prop[296] == 0 && prop[1023] == 0 && prop[1024] == 0xab;
    setenv("STACKPIN_FAKE_GPU_NAME", "NVIDIA H200", 1);
    setenv("STACKPIN_FAKE_GPU_MEM", "150754820096", 1);
    ok = ok && rt->GetDeviceProperties_v2(prop, 0) == 0 && strcmp((char *)prop, "NVIDIA H200") == 0;
    memcpy(&mem, prop + 288, sizeof mem);
    check(ok && mem == 150754820096ull && prop[4095] == 0xab,
          "cudart: properties name/totalGlobalMem, GPU_NAME/GPU_MEM");
    unsetenv("STACKPIN_FAKE_GPU_NAME");
    unsetenv("STACKPIN_FAKE_GPU_MEM");
    free(prop);
    char in[64] = "device memory round trip", out[64] = {0};
    void *d = NULL;
    ok = rt->Malloc(&d, sizeof in) == 0 && d && ((uintptr_t)d & 255) == 0 && rt->Memcpy(d, in, sizeof in, H2D) == 0 &&
         rt->Memcpy(out, d, sizeof out, D2H) == 0 && strcmp(in, out) == 0 && rt->Memset(d, 7, 8) == 0 &&
         rt->Memcpy(out, d, 8, 4) == 0 && out[7] == 7 && rt->DeviceSynchronize() == 0 && rt->Free(d) == 0;
    check(ok && rt->Free(in) == 1 && rt->Memset(in, 0, 4) == 1 && rt->Memcpy(out, in, 4, 9) == 21 &&
              strstr(rt->GetErrorString(100), "no CUDA-capable device") && rt->GetLastError() == 21,
          "cudart: malloc/memcpy/memset/free, foreign pointers refused, error strings");
}

static void test_cudnn9(const cudart *rt, const cudnn *d) {
    H h = NULL;
    check(d->GetVersion() == 91900 && d->GetCudartVersion() == 12080, "cudnn9: version 91900, cudart 12080");
    setenv("STACKPIN_FAKE_CUDNN_VERSION", "90100", 1);
    setenv("STACKPIN_FAKE_CUDNN_CUDART", "12020", 1);
    check(d->GetVersion() == 90100 && d->GetCudartVersion() == 12020, "cudnn9: CUDNN_VERSION / CUDNN_CUDART overrides");
    unsetenv("STACKPIN_FAKE_CUDNN_VERSION");
    unsetenv("STACKPIN_FAKE_CUDNN_CUDART");
    setenv("STACKPIN_FAKE_CUDNN_CREATE", "1001", 1);
    int ok = d->Create(&h) == 1001 && strcmp(d->GetErrorString(1001), "CUDNN_STATUS_NOT_INITIALIZED") == 0;
    unsetenv("STACKPIN_FAKE_CUDNN_CREATE");
    check(ok && d->Create(&h) == 0 && d->Destroy(h) == 0, "cudnn9: CREATE=1001 fails cudnnCreate, then it works");

    descs s = {0};
    int n, c, hh, w, cnt[3] = {0};
    ok = make_descs(d, &base, &s) == 0 && d->GetConvolution2dForwardOutputDim(s.conv, s.x, s.w, &n, &c, &hh, &w) == 0 &&
         n == 2 && c == 4 && hh == 3 && w == 3 && d->GetConvolutionForwardAlgorithmMaxCount(s.h, &cnt[0]) == 0 &&
         d->GetConvolutionBackwardDataAlgorithmMaxCount(s.h, &cnt[1]) == 0 &&
         d->GetConvolutionBackwardFilterAlgorithmMaxCount(s.h, &cnt[2]) == 0;
    free_descs(d, &s);
    check(ok && cnt[0] == 8 && cnt[1] == 6 && cnt[2] == 7, "cudnn9: output dims 2x4x3x3, max algorithm counts 8/6/7");
    ok = 1;
    for (int op = 0; op < 3; ++op) {
        perf_t perf[8];
        int got = 0;
        ok = ok && find_status(d, &base, op, &got, perf) == 0 && got == 3;
        for (int i = 0; ok && i < got; ++i)
            ok = perf[i].status == 0 && perf[i].algo == 2 - i && perf[i].memory == (perf[i].algo == 2 ? 1024u : 0u) &&
                 perf[i].time > 0 && (i == 0 || perf[i].time >= perf[i - 1].time) && perf[i].determinism == 1;
    }
    check(ok, "cudnn9: Find* lists algorithms 2,1,0 by time, algorithm 2 with 1024 bytes");

    static const char *const opname[] = {"forward", "backward data", "backward filter"};
    char what[128];
    prob half = base;
    half.type = F16;
    for (int op = 0; op < 3; ++op) {
        snprintf(what, sizeof what, "cudnn9: float %s, algorithms 0-2 match the reference", opname[op]);
        check(all_algos_ok(rt, d, &base, op, 1.0f, 0.0f), what);
    }
    for (int op = 0; op < 3; ++op) {
        snprintf(what, sizeof what, "cudnn9: half %s, algorithms 0-2 match the reference", opname[op]);
        check(all_algos_ok(rt, d, &half, op, 1.0f, 0.0f), what);
    }
    prob conv = base;
    conv.mode = CONV;
    check(all_algos_ok(rt, d, &base, FWD, 0.5f, 2.0f) && all_algos_ok(rt, d, &half, BWD_FILTER, -1.5f, 0.25f) &&
              all_algos_ok(rt, d, &conv, BWD_DATA, 1.0f, 1.0f),
          "cudnn9: alpha/beta blending; CUDNN_CONVOLUTION mode");
    check(half_exhaustive(rt, d, 0x3e00) && half_exhaustive(rt, d, 0x2e66),
          "cudnn9: all 65536 half inputs times 1.5 and 0.1 round to nearest even");
    check(
        run(rt, d, &base, FWD, 2, 1, 0, 512, 0).status == 2000 && run(rt, d, &base, FWD, 2, 1, 0, 1024, 0).status == 0,
        "cudnn9: algorithm 2 with a 512-byte workspace is CUDNN_STATUS_BAD_PARAM");
    check(run(rt, d, &base, FWD, 0, 1, 0, -1, 1).status == 5000, "cudnn9: host pointers fail with EXECUTION_FAILED");

    setenv("STACKPIN_FAKE_CUDNN_WRONG_ALGO", "1", 1);
    outcome r1 = run(rt, d, &base, FWD, 1, 1, 0, -1, 0), r0 = run(rt, d, &base, FWD, 0, 1, 0, -1, 0);
    check(r1.status == 0 && r1.bad == 1 && fabs(r1.maxerr - 0.5) < 1e-3 && r0.bad == 0,
          "cudnn9: WRONG_ALGO=1 perturbs one element by 0.5, algorithm 0 unaffected");
    unsetenv("STACKPIN_FAKE_CUDNN_WRONG_ALGO");
    setenv("STACKPIN_FAKE_CUDNN_NAN_ALGO", "0", 1);
    outcome nan0 = run(rt, d, &half, BWD_FILTER, 0, 1, 0, -1, 0), nan2 = run(rt, d, &half, BWD_FILTER, 2, 1, 0, -1, 0);
    check(nan0.status == 0 && nan0.nans == 1 && nan2.nans == 0,
          "cudnn9: NAN_ALGO=0 writes one NaN (half, backward filter)");
    unsetenv("STACKPIN_FAKE_CUDNN_NAN_ALGO");
    setenv("STACKPIN_FAKE_CUDNN_FAIL_ALGO", "2", 1);
    check(run(rt, d, &base, BWD_DATA, 2, 1, 0, -1, 0).status == 5000 &&
              run(rt, d, &base, BWD_DATA, 1, 1, 0, -1, 0).status == 0,
          "cudnn9: FAIL_ALGO=2 gives CUDNN_STATUS_EXECUTION_FAILED (5000)");
    setenv("STACKPIN_FAKE_CUDNN_FAIL_ALGO", "0", 1);
    setenv("STACKPIN_FAKE_CUDNN_ONLY", "bwd_data", 1);
    check(run(rt, d, &base, FWD, 0, 1, 0, -1, 0).status == 0 &&
              run(rt, d, &base, BWD_DATA, 0, 1, 0, -1, 0).status == 5000 &&
              run(rt, d, &base, BWD_FILTER, 0, 1, 0, -1, 0).status == 0,
          "cudnn9: ONLY=bwd_data limits FAIL_ALGO to backward data");
    unsetenv("STACKPIN_FAKE_CUDNN_FAIL_ALGO");
    unsetenv("STACKPIN_FAKE_CUDNN_ONLY");
    setenv("STACKPIN_FAKE_CUDNN_FIND_FAILS", "1", 1);
    perf_t perf[8];
    int got = -1;
    ok = 1;
    for (int op = 0; op < 3; ++op) ok = ok && find_status(d, &base, op, &got, perf) == 3000 && got == 0;
    unsetenv("STACKPIN_FAKE_CUDNN_FIND_FAILS");
    check(ok && find_status(d, &base, FWD, &got, perf) == 0 && got == 3,
          "cudnn9: FIND_FAILS=1 makes Find* NOT_SUPPORTED (3000)");
}

static void test_cudnn8(const cudart *rt, const cudnn *d) {
    H h = NULL;
    check(d->GetVersion() == 8907 && strcmp(d->GetErrorString(3), "CUDNN_STATUS_BAD_PARAM") == 0,
          "cudnn8: version 8907, 8.x status names");
    setenv("STACKPIN_FAKE_CUDNN_CREATE", "1", 1);
    check(d->Create(&h) == 1, "cudnn8: CREATE=1 (8.x NOT_INITIALIZED) fails cudnnCreate");
    unsetenv("STACKPIN_FAKE_CUDNN_CREATE");
    check(all_algos_ok(rt, d, &base, FWD, 1, 0), "cudnn8: float forward, algorithms 0-2 match the reference");
    setenv("STACKPIN_FAKE_CUDNN_FAIL_ALGO", "1", 1);
    setenv("STACKPIN_FAKE_CUDNN_FIND_FAILS", "1", 1);
    perf_t perf[8];
    int got;
    check(run(rt, d, &base, BWD_FILTER, 1, 1, 0, -1, 0).status == 8 && find_status(d, &base, FWD, &got, perf) == 9 &&
              run(rt, d, &base, FWD, 2, 1, 0, 100, 0).status == 3,
          "cudnn8: 8.x numbers: EXECUTION_FAILED 8, NOT_SUPPORTED 9, BAD_PARAM 3");
    unsetenv("STACKPIN_FAKE_CUDNN_FAIL_ALGO");
    unsetenv("STACKPIN_FAKE_CUDNN_FIND_FAILS");
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DOUBLES_DIR\n", argv[0]);
        return 2;
    }
    cudart rt;
    cudnn d9, d8;
    bind_cudart(open_lib(argv[1], "cuda12-cudnn9", "libcudart.so.12"), &rt);
    bind_cudnn(open_lib(argv[1], "cuda12-cudnn9", "libcudnn.so.9"), &d9);
    bind_cudnn(open_lib(argv[1], "cudnn8", "libcudnn.so.8"), &d8);
    test_cudart(&rt);
    test_cudnn9(&rt, &d9);
    test_cudnn8(&rt, &d8);
    printf("selftest: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
