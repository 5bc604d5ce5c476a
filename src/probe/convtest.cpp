// Runs the convolution cases. For each device, operation (forward, backward-data,
// backward-filter), data type (float32; float16 storage with float32 accumulation) and shape,
// cudnnFind* lists every algorithm cuDNN offers; each one that cuDNN reports as runnable is then
// run on its own with its own workspace, copied back and compared with the CPU reference, the way
// `torch.backends.cudnn.benchmark = True` exercises them all (the NaN trap of batch-1, odd-sized
// inputs only shows there). Times are those of a second, warm run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

#include "cuda_api.hpp"
#include "loader.hpp"
#include "model/version.hpp"
#include "probe/convtest.hpp"
#include "reference.hpp"

namespace probe {

using namespace detail;

std::string cuda_version_text(int v) {
  if (v <= 0) return {};
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

namespace {

struct Shapes {
  static std::vector<ConvShape> all(bool quick) {
    std::vector<ConvShape> s;
    // batch 1, odd spatial sizes: the shape behind the seeds' NaN reports
    ConvShape a;
    a.n = 1;
    a.c = 3;
    a.h = 7;
    a.w = 9;
    a.k = 4;
    a.r = 3;
    a.s = 3;
    a.pad_h = a.pad_w = 1;
    s.push_back(a);
    if (quick) return s;
    ConvShape b;
    b.n = 2;
    b.c = 8;
    b.h = 16;
    b.w = 16;
    b.k = 16;
    b.r = 3;
    b.s = 3;
    b.pad_h = b.pad_w = 1;
    b.stride_h = b.stride_w = 2;
    s.push_back(b);
    ConvShape c;
    c.n = 1;
    c.c = 16;
    c.h = 13;
    c.w = 11;
    c.k = 8;
    c.r = 5;
    c.s = 5;
    c.pad_h = c.pad_w = 2;
    c.dil_h = c.dil_w = 1;
    s.push_back(c);
    ConvShape d;
    d.n = 4;
    d.c = 32;
    d.h = 14;
    d.w = 14;
    d.k = 32;
    d.r = 1;
    d.s = 1;
    s.push_back(d);
    ConvShape e;
    e.n = 1;
    e.c = 4;
    e.h = 15;
    e.w = 15;
    e.k = 4;
    e.r = 3;
    e.s = 3;
    e.pad_h = e.pad_w = 2;
    e.dil_h = e.dil_w = 2;
    s.push_back(e);
    return s;
  }
};

struct Desc {
  const Cudnn& d;
  void* x = nullptr;
  void* y = nullptr;
  void* w = nullptr;
  void* conv = nullptr;
  explicit Desc(const Cudnn& dnn) : d(dnn) {}
  ~Desc() {
    if (x) d.DestroyTensorDescriptor(x);
    if (y) d.DestroyTensorDescriptor(y);
    if (w) d.DestroyFilterDescriptor(w);
    if (conv) d.DestroyConvolutionDescriptor(conv);
  }
};

struct DeviceBuffer {
  const CudaRuntime& rt;
  void* p = nullptr;
  explicit DeviceBuffer(const CudaRuntime& r) : rt(r) {}
  ~DeviceBuffer() {
    if (p) rt.Free(p);
  }
  int alloc(std::size_t n) { return rt.Malloc(&p, n ? n : 1); }
};

class Runner {
 public:
  Runner(const CudaRuntime& rt, const Cudnn& dnn, Handle h, int device, model::ConvReport& report)
      : m_rt(rt), m_dnn(dnn), m_handle(h), m_device(device), m_report(report) {}

  // One case: its descriptors, inputs and CPU reference, then every algorithm cuDNN offers for it.
  void run(const ConvShape& s, const std::string& op, bool half);

 private:
  // The one convolution of a case, ready to run: descriptors, inputs on the device, the reference.
  struct Case {
    const ConvShape& s;
    const std::string& op;
    bool half;
    Desc desc;
    std::vector<double> ref, mag;  // the reference output and each element's sum of |products|
    std::size_t out_n = 0;         // output elements
    std::size_t esize = 4;         // bytes per element on the device
    DeviceBuffer a, b, out;        // the two inputs and the output
  };
  bool describe(Case& k);
  bool upload_inputs(Case& k);
  std::vector<AlgoPerf> find_algorithms(Case& k, bool& ok);
  void run_algorithm(Case& k, const AlgoPerf& p);
  void compare(model::ConvCase& c, const std::vector<float>& got, const Case& k) const;

  model::ConvCase base(const ConvShape& s, const std::string& op, bool half) const {
    model::ConvCase c;
    c.device = m_device;
    c.op = op;
    c.dtype = half ? "float16" : "float32";
    c.shape = s.text();
    return c;
  }
  void fail(model::ConvCase c, const std::string& why) {
    c.ok = false;
    c.detail = why;
    m_report.cases.push_back(std::move(c));
  }

  const CudaRuntime& m_rt;
  const Cudnn& m_dnn;
  Handle m_handle;
  int m_device;
  model::ConvReport& m_report;
};

std::vector<unsigned char> to_device_format(const std::vector<float>& v, bool half) {
  std::vector<unsigned char> out(v.size() * (half ? 2 : 4));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (half) {
      std::uint16_t h = float_to_half(v[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    } else {
      std::memcpy(out.data() + 4 * i, &v[i], 4);
    }
  }
  return out;
}

std::vector<float> from_device_format(const std::vector<unsigned char>& b, bool half) {
  std::vector<float> out(b.size() / (half ? 2 : 4));
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (half) {
      std::uint16_t h;
      std::memcpy(&h, b.data() + 2 * i, 2);
      out[i] = half_to_float(h);
    } else {
      std::memcpy(&out[i], b.data() + 4 * i, 4);
    }
  }
  return out;
}

// Values as the device sees them (float16 rounding applied), so the reference uses the same inputs.
std::vector<float> device_values(std::vector<float> v, bool half) {
  if (half)
    for (auto& x : v) x = half_to_float(float_to_half(x));
  return v;
}

void Runner::run(const ConvShape& s, const std::string& op, bool half) {
  Case k{s, op, half, Desc(m_dnn), {}, {}, 0, half ? 2u : 4u, DeviceBuffer(m_rt), DeviceBuffer(m_rt), DeviceBuffer(m_rt)};
  if (!describe(k) || !upload_inputs(k)) return;
  bool ok = false;
  auto algos = find_algorithms(k, ok);
  if (!ok) return;
  int runnable = 0;
  for (const auto& p : algos) {
    if (p.status != 0) continue;  // not supported for this configuration: cuDNN says so itself
    ++runnable;
    run_algorithm(k, p);
  }
  if (runnable == 0) fail(base(s, op, half), "cuDNN offered no runnable algorithm for this case");
}

// The tensor, filter and convolution descriptors, and cuDNN's output size against the reference's.
bool Runner::describe(Case& k) {
  const ConvShape& s = k.s;
  int dtype = k.half ? k_half : k_float;
  auto& desc = k.desc;
  auto check = [&](int status, const char* what) {
    if (status != 0) {
      fail(base(s, k.op, k.half), std::string(what) + ": " + cudnn_status_name(m_dnn, status));
      return false;
    }
    return true;
  };
  if (!check(m_dnn.CreateTensorDescriptor(&desc.x), "cudnnCreateTensorDescriptor") ||
      !check(m_dnn.SetTensor4dDescriptor(desc.x, k_nchw, dtype, s.n, s.c, s.h, s.w), "cudnnSetTensor4dDescriptor(x)") ||
      !check(m_dnn.CreateFilterDescriptor(&desc.w), "cudnnCreateFilterDescriptor") ||
      !check(m_dnn.SetFilter4dDescriptor(desc.w, dtype, k_nchw, s.k, s.c, s.r, s.s), "cudnnSetFilter4dDescriptor") ||
      !check(m_dnn.CreateConvolutionDescriptor(&desc.conv), "cudnnCreateConvolutionDescriptor") ||
      !check(m_dnn.SetConvolution2dDescriptor(desc.conv, s.pad_h, s.pad_w, s.stride_h, s.stride_w, s.dil_h, s.dil_w, k_cross_correlation,
                                              k_float),
             "cudnnSetConvolution2dDescriptor") ||
      !check(m_dnn.SetConvolutionMathType(desc.conv, k.half ? k_tensor_op_math : k_default_math), "cudnnSetConvolutionMathType"))
    return false;
  int on = 0, oc = 0, oh = 0, ow = 0;
  if (!check(m_dnn.GetConvolution2dForwardOutputDim(desc.conv, desc.x, desc.w, &on, &oc, &oh, &ow),
             "cudnnGetConvolution2dForwardOutputDim"))
    return false;
  if (on != s.n || oc != s.k || oh != s.p() || ow != s.q()) {
    fail(base(s, k.op, k.half), "cuDNN computes output " + std::to_string(on) + "x" + std::to_string(oc) + "x" + std::to_string(oh) + "x" +
                                    std::to_string(ow) + ", the reference " + std::to_string(s.n) + "x" + std::to_string(s.k) + "x" +
                                    std::to_string(s.p()) + "x" + std::to_string(s.q()));
    return false;
  }
  return check(m_dnn.CreateTensorDescriptor(&desc.y), "cudnnCreateTensorDescriptor") &&
         check(m_dnn.SetTensor4dDescriptor(desc.y, k_nchw, dtype, s.n, s.k, s.p(), s.q()), "cudnnSetTensor4dDescriptor(y)");
}

// The inputs (pseudo-random, seeded by the shape), the double-precision reference, and the
// inputs and an output buffer on the device.
bool Runner::upload_inputs(Case& k) {
  const ConvShape& s = k.s;
  std::uint32_t seed = static_cast<std::uint32_t>(s.n * 131 + s.c * 31 + s.h * 7 + s.k);
  std::vector<float> x = device_values(pseudo_random(s.x_size(), seed), k.half);
  std::vector<float> w = device_values(pseudo_random(s.w_size(), seed + 1), k.half);
  std::vector<float> dy = device_values(pseudo_random(s.y_size(), seed + 2), k.half);
  const std::vector<float>* in_a = nullptr;
  const std::vector<float>* in_b = nullptr;
  if (k.op == "fwd") {
    ref_forward(s, x, w, k.ref, k.mag);
    k.out_n = s.y_size(), in_a = &x, in_b = &w;
  } else if (k.op == "bwd_data") {
    ref_backward_data(s, w, dy, k.ref, k.mag);
    k.out_n = s.x_size(), in_a = &w, in_b = &dy;
  } else {
    ref_backward_filter(s, x, dy, k.ref, k.mag);
    k.out_n = s.w_size(), in_a = &x, in_b = &dy;
  }
  auto ha = to_device_format(*in_a, k.half), hb = to_device_format(*in_b, k.half);
  int st = 0;
  if ((st = k.a.alloc(ha.size())) || (st = k.b.alloc(hb.size())) || (st = k.out.alloc(k.out_n * k.esize))) {
    fail(base(s, k.op, k.half), "cudaMalloc: " + cuda_error_name(m_rt, st));
    return false;
  }
  if ((st = m_rt.Memcpy(k.a.p, ha.data(), ha.size(), k_memcpy_h2d)) || (st = m_rt.Memcpy(k.b.p, hb.data(), hb.size(), k_memcpy_h2d))) {
    fail(base(s, k.op, k.half), "cudaMemcpy: " + cuda_error_name(m_rt, st));
    return false;
  }
  return true;
}

// Every algorithm cudnnFind* offers for the case (as torch.backends.cudnn.benchmark = True asks).
std::vector<AlgoPerf> Runner::find_algorithms(Case& k, bool& ok) {
  ok = false;
  const auto& desc = k.desc;
  int max_algos = 0;
  auto count_fn = k.op == "fwd" ? m_dnn.GetFwdMaxCount : k.op == "bwd_data" ? m_dnn.GetBwdDataMaxCount : m_dnn.GetBwdFilterMaxCount;
  if (int st = count_fn(m_handle, &max_algos); st != 0) {
    fail(base(k.s, k.op, k.half), std::string("cudnnGet*AlgorithmMaxCount: ") + cudnn_status_name(m_dnn, st));
    return {};
  }
  std::vector<AlgoPerf> perf(static_cast<std::size_t>(std::max(max_algos, 1)));
  int returned = 0, st = 0;
  if (k.op == "fwd")
    st = m_dnn.FindFwd(m_handle, desc.x, desc.w, desc.conv, desc.y, max_algos, &returned, perf.data());
  else if (k.op == "bwd_data")
    st = m_dnn.FindBwdData(m_handle, desc.w, desc.y, desc.conv, desc.x, max_algos, &returned, perf.data());
  else
    st = m_dnn.FindBwdFilter(m_handle, desc.x, desc.y, desc.conv, desc.w, max_algos, &returned, perf.data());
  if (st != 0) {
    const char* what = k.op == "fwd"        ? "cudnnFindConvolutionForwardAlgorithm"
                       : k.op == "bwd_data" ? "cudnnFindConvolutionBackwardDataAlgorithm"
                                            : "cudnnFindConvolutionBackwardFilterAlgorithm";
    fail(base(k.s, k.op, k.half), std::string(what) + ": " + cudnn_status_name(m_dnn, st));
    return {};
  }
  perf.resize(static_cast<std::size_t>(std::max(0, std::min(returned, static_cast<int>(perf.size())))));
  ok = true;
  return perf;
}

// One algorithm: its workspace, a run checked against the reference, and a second run timed.
void Runner::run_algorithm(Case& k, const AlgoPerf& p) {
  const auto& desc = k.desc;
  model::ConvCase c = base(k.s, k.op, k.half);
  c.algo = p.algo;
  std::size_t ws_size = 0;
  int st = 0;
  if (k.op == "fwd")
    st = m_dnn.FwdWorkspace(m_handle, desc.x, desc.w, desc.conv, desc.y, p.algo, &ws_size);
  else if (k.op == "bwd_data")
    st = m_dnn.BwdDataWorkspace(m_handle, desc.w, desc.y, desc.conv, desc.x, p.algo, &ws_size);
  else
    st = m_dnn.BwdFilterWorkspace(m_handle, desc.x, desc.y, desc.conv, desc.w, p.algo, &ws_size);
  if (st) {
    c.status = cudnn_status_name(m_dnn, st);
    fail(c, "workspace size query failed: " + c.status);
    return;
  }
  DeviceBuffer ws(m_rt);
  if (ws_size && (st = ws.alloc(ws_size))) {
    fail(c, "cudaMalloc of a " + std::to_string(ws_size) + "-byte workspace: " + cuda_error_name(m_rt, st));
    return;
  }
  float alpha = 1.0f, beta = 0.0f;
  auto launch = [&]() {
    if (k.op == "fwd")
      return m_dnn.Forward(m_handle, &alpha, desc.x, k.a.p, desc.w, k.b.p, desc.conv, p.algo, ws.p, ws_size, &beta, desc.y, k.out.p);
    if (k.op == "bwd_data")
      return m_dnn.BackwardData(m_handle, &alpha, desc.w, k.a.p, desc.y, k.b.p, desc.conv, p.algo, ws.p, ws_size, &beta, desc.x, k.out.p);
    return m_dnn.BackwardFilter(m_handle, &alpha, desc.x, k.a.p, desc.y, k.b.p, desc.conv, p.algo, ws.p, ws_size, &beta, desc.w, k.out.p);
  };
  m_rt.Memset(k.out.p, 0, k.out_n * k.esize);
  st = launch();
  int sync = m_rt.DeviceSynchronize();
  if (st || sync) {
    c.status = st ? cudnn_status_name(m_dnn, st) : cuda_error_name(m_rt, sync);
    fail(c, "the algorithm failed: " + c.status);
    return;
  }
  std::vector<unsigned char> host(k.out_n * k.esize);
  if ((st = m_rt.Memcpy(host.data(), k.out.p, host.size(), k_memcpy_d2h))) {
    fail(c, "cudaMemcpy back: " + cuda_error_name(m_rt, st));
    return;
  }
  auto t0 = std::chrono::steady_clock::now();
  launch();
  m_rt.DeviceSynchronize();
  c.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  c.gflops = c.ms > 0 ? k.s.flops() / (c.ms * 1e6) : 0;
  compare(c, from_device_format(host, k.half), k);
  m_report.cases.push_back(std::move(c));
}

// Each output element against the reference: |got - ref| <= rtol x sum|products| + atol, and no
// NaN or Inf. float16 storage: per-value rounding of the output (2^-11) plus accumulation;
// float32: TF32 products.
void Runner::compare(model::ConvCase& c, const std::vector<float>& got, const Case& k) const {
  double rtol = k.half ? 4e-3 : 2e-3, atol = k.half ? 1e-3 : 1e-5;
  double worst = 0;
  std::size_t worst_i = 0;
  for (std::size_t j = 0; j < got.size(); ++j) {
    if (!std::isfinite(got[j])) {
      c.non_finite = true;
      worst_i = j;
      break;
    }
    double err = std::fabs(got[j] - k.ref[j]);
    double tol = rtol * k.mag[j] + atol;
    if (err > c.max_abs_err) c.max_abs_err = err;
    if (err / tol > worst) {
      worst = err / tol;
      worst_i = j;
      c.tolerance = tol;
    }
  }
  c.status = "CUDNN_STATUS_SUCCESS";
  if (c.non_finite) {
    c.ok = false;
    c.detail = "output element " + std::to_string(worst_i) + " is " + (std::isnan(got[worst_i]) ? "NaN" : "Inf");
  } else if (worst > 1.0) {
    c.ok = false;
    c.detail = "output element " + std::to_string(worst_i) + " is " + std::to_string(got[worst_i]) + ", the reference " +
               std::to_string(k.ref[worst_i]) + " (error " + std::to_string(std::fabs(got[worst_i] - k.ref[worst_i])) + " > tolerance " +
               std::to_string(c.tolerance) + ")";
  } else {
    c.ok = true;
  }
}

}  // namespace

model::ConvReport run_convtest(const ConvOptions& o) {
  model::ConvReport report;
  // cuDNN first: the CUDA version it was built with says which runtime an application using it
  // loads (libcudart.so.<major>), so that one is tried first.
  Loaded dnn_lib = open_library("cuDNN", o.cudnn_path, cudnn_library_names());
  report.cudnn = dnn_lib.info;
  Cudnn dnn;
  bool dnn_ok = false;
  int built_major = 0;
  if (dnn_lib.handle) {
    auto missing = bind(dnn_lib.handle, dnn);
    if (!missing.empty()) {
      report.cudnn.error = "missing entry points: " + missing.front() + (missing.size() > 1 ? " and others" : "");
    } else {
      report.cudnn_version_raw = dnn.GetVersion();
      auto decoded = model::decode_cudnn_version(report.cudnn_version_raw);
      report.cudnn_version = decoded ? decoded->text() : std::to_string(report.cudnn_version_raw);
      int built = static_cast<int>(dnn.GetCudartVersion());
      report.cudnn_built_with_cuda = cuda_version_text(built);
      built_major = built / 1000;
      dnn_ok = true;
    }
  }
  Loaded rt_lib = open_library("CUDA runtime", o.cudart_path, cudart_library_names(built_major));
  report.cudart = rt_lib.info;
  std::string driver_build = kernel_driver_version();
  if (!rt_lib.handle) {
    report.nothing_to_run = "no CUDA runtime could be loaded";
    return report;
  }
  CudaRuntime rt;
  auto missing_rt = bind(rt_lib.handle, rt);
  if (!missing_rt.empty()) {
    report.cudart.error = "missing entry points: " + missing_rt.front() + (missing_rt.size() > 1 ? " and others" : "");
    report.nothing_to_run = "the CUDA runtime lacks entry points stackpin needs";
    return report;
  }
  int v = 0;
  if (rt.RuntimeGetVersion(&v) == 0) report.runtime_version = cuda_version_text(v);
  v = 0;
  rt.DriverGetVersion(&v);
  report.driver_version = cuda_version_text(v);
  if (!driver_build.empty()) report.driver_version += (report.driver_version.empty() ? "" : " / ") + std::string("driver ") + driver_build;

  int count = 0;
  int st = rt.GetDeviceCount(&count);
  if (st != 0 || count == 0) {
    if (st == k_cuda_insufficient_driver)
      report.nothing_to_run = "the NVIDIA driver is missing or older than this CUDA runtime needs (" + cuda_error_name(rt, st) + ")";
    else if (st == k_cuda_no_device || count == 0)
      report.nothing_to_run = "no CUDA-capable GPU is visible (" + (st ? cuda_error_name(rt, st) : std::string("0 devices")) + ")";
    else
      report.nothing_to_run = "CUDA reports no usable GPU: " + cuda_error_name(rt, st);
    return report;
  }
  for (int i = 0; i < count; ++i) {
    model::GpuInfo g;
    g.index = i;
    rt.DeviceGetAttribute(&g.cc_major, k_attr_cc_major, i);
    rt.DeviceGetAttribute(&g.cc_minor, k_attr_cc_minor, i);
    std::vector<unsigned char> prop(4096, 0);  // larger than any cudaDeviceProp
    if (rt.GetDeviceProperties(prop.data(), i) == 0) {
      g.name.assign(reinterpret_cast<const char*>(prop.data()), strnlen(reinterpret_cast<const char*>(prop.data()), 256));
      std::memcpy(&g.memory, prop.data() + 288, sizeof(std::size_t));  // totalGlobalMem follows name, uuid, luid, mask
    }
    report.gpus.push_back(g);
  }
  if (!dnn_ok) return report;
  for (const auto& g : report.gpus) {
    if (o.device && *o.device != g.index) continue;
    if ((st = rt.SetDevice(g.index)) != 0) {
      model::ConvCase c;
      c.device = g.index;
      c.op = "setup";
      c.detail = "cudaSetDevice: " + cuda_error_name(rt, st);
      report.cases.push_back(c);
      continue;
    }
    Handle h = nullptr;
    st = dnn.Create(&h);
    if (st != 0) {
      model::ConvCase c;
      c.device = g.index;
      c.op = "setup";
      c.status = cudnn_status_name(dnn, st);
      c.detail = "cudnnCreate: " + c.status;
      report.cases.push_back(c);
      continue;
    }
    Runner runner(rt, dnn, h, g.index, report);
    for (const auto& s : Shapes::all(o.quick))
      for (const char* op : {"fwd", "bwd_data", "bwd_filter"})
        for (bool half : {false, true}) runner.run(s, op, half);
    dnn.Destroy(h);
  }
  return report;
}

}  // namespace probe
