// The framework check runs a short Python program in the user's interpreter: it imports the
// framework, asks which cuDNN it uses, runs one convolution on the GPU against the framework's
// own CPU result (with cuDNN's benchmark mode on, so that every algorithm is tried), and lists
// the cuDNN files mapped into its process (Linux: /proc/self/maps; Windows: the process's modules): the framework's bundled copy
// (torch/lib, nvidia-cudnn-cu* wheels) often hides the system cuDNN, and this shows which one really ran.
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "model/version.hpp"
#include "probe/convtest.hpp"
#include "probe/program.hpp"
#include "process.hpp"

namespace probe {

namespace {

const char* k_script = R"PY(
import json, os, sys
fw = sys.argv[1]
out = {"framework": fw, "installed": False, "gpu": False, "ran": False}
def loaded_windows_cudnn():
    libs = []
    try:
        import ctypes
        from ctypes import wintypes
        k32, psapi = ctypes.WinDLL("kernel32"), ctypes.WinDLL("psapi")
        k32.GetCurrentProcess.restype = wintypes.HANDLE
        psapi.EnumProcessModules.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.HMODULE), wintypes.DWORD, ctypes.POINTER(wintypes.DWORD)]
        psapi.GetModuleFileNameExW.argtypes = [wintypes.HANDLE, wintypes.HMODULE, wintypes.LPWSTR, wintypes.DWORD]
        proc = k32.GetCurrentProcess()
        mods = (wintypes.HMODULE * 4096)()
        need = wintypes.DWORD()
        if psapi.EnumProcessModules(proc, mods, ctypes.sizeof(mods), ctypes.byref(need)):
            buf = ctypes.create_unicode_buffer(32768)
            for i in range(min(need.value // ctypes.sizeof(wintypes.HMODULE), 4096)):
                if psapi.GetModuleFileNameExW(proc, mods[i], buf, 32768):
                    p = buf.value
                    if os.path.basename(p).lower().startswith("cudnn") and p not in libs:
                        libs.append(p)
    except Exception:
        pass
    return libs
def loaded_cudnn():
    if os.name == "nt":
        return loaded_windows_cudnn()
    libs = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 6 and os.path.basename(parts[5]).startswith("libcudnn") and parts[5] not in libs:
                    libs.append(parts[5])
    except OSError:
        pass
    return libs
try:
    if fw == "torch":
        import torch
        out.update(installed=True, version=str(torch.__version__))
        out["gpu"] = bool(torch.cuda.is_available())
        v = torch.backends.cudnn.version()
        out["cudnn_raw"] = int(v) if v else 0
        if out["gpu"]:
            torch.backends.cudnn.benchmark = True
            g = torch.Generator().manual_seed(0)
            x = torch.randn(1, 3, 7, 9, generator=g)
            w = torch.randn(4, 3, 3, 3, generator=g)
            ref = torch.nn.functional.conv2d(x, w, padding=1)
            got = torch.nn.functional.conv2d(x.cuda(), w.cuda(), padding=1).cpu()
            out["max_abs_err"] = float((got - ref).abs().max())
            out["non_finite"] = not bool(torch.isfinite(got).all())
            out["ran"] = True
    elif fw == "tensorflow":
        import tensorflow as tf
        out.update(installed=True, version=str(tf.__version__))
        gpus = tf.config.list_physical_devices("GPU")
        out["gpu"] = bool(gpus)
        out["cudnn_text"] = str(tf.sysconfig.get_build_info().get("cudnn_version", ""))
        if gpus:
            x = tf.random.stateless_normal([1, 7, 9, 3], seed=[1, 2])
            w = tf.random.stateless_normal([3, 3, 3, 4], seed=[3, 4])
            with tf.device("/CPU:0"):
                ref = tf.nn.conv2d(x, w, 1, "SAME")
            with tf.device("/GPU:0"):
                got = tf.nn.conv2d(x, w, 1, "SAME")
            out["max_abs_err"] = float(tf.reduce_max(tf.abs(got - ref)))
            out["non_finite"] = not bool(tf.reduce_all(tf.math.is_finite(got)))
            out["ran"] = True
    elif fw == "onnxruntime":
        import onnxruntime as ort
        out.update(installed=True, version=str(ort.__version__))
        out["gpu"] = "CUDAExecutionProvider" in ort.get_available_providers()
        if out["gpu"]:
            import numpy as np
            from onnx import TensorProto, helper
            rng = np.random.default_rng(0)
            x = rng.standard_normal((1, 3, 7, 9)).astype(np.float32)
            w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
            node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])
            graph = helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                                      [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.flatten())])
            model = helper.make_model(graph).SerializeToString()
            ref = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
            got = ort.InferenceSession(model, providers=[("CUDAExecutionProvider", {"cudnn_conv_algo_search": "EXHAUSTIVE"})]).run(None, {"x": x})[0]
            out["max_abs_err"] = float(abs(got - ref).max())
            out["non_finite"] = not bool(np.isfinite(got).all())
            out["ran"] = True
    else:
        out["error"] = "unknown framework " + fw
except ImportError as e:
    out["error"] = "ImportError: " + str(e)
except Exception as e:
    out["error"] = type(e).__name__ + ": " + str(e)
out["loaded_cudnn"] = loaded_cudnn()
print("STACKPIN-FRAMEWORK " + json.dumps(out))
)PY";

// A minimal reader for the flat JSON object the script prints (strings, numbers, booleans and one
// array of strings): the probe layer stays free of the JSON library.
std::string field(const std::string& j, const std::string& key) {
  std::smatch m;
  std::regex re("\"" + key + "\": (\"((?:[^\"\\\\]|\\\\.)*)\"|true|false|-?[0-9.eE+-]+|null)");
  if (!std::regex_search(j, m, re)) return {};
  if (m[2].matched) return m[2].str();
  return m[1].str();
}

std::vector<std::string> string_array(const std::string& j, const std::string& key) {
  std::vector<std::string> out;
  auto pos = j.find("\"" + key + "\": [");
  if (pos == std::string::npos) return out;
  auto end = j.find(']', pos);
  std::string body = j.substr(pos, end - pos);
  std::regex re("\"((?:[^\"\\\\]|\\\\.)*)\"");
  for (auto it = std::sregex_iterator(body.begin() + static_cast<long>(key.size()) + 2, body.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1].str());
  return out;
}

}  // namespace

model::FrameworkRun run_framework(const std::string& framework, const std::string& python) {
  model::FrameworkRun r;
  r.framework = framework;
  r.python = python;
  auto exe = find_program(python, util::SystemEnv());
  if (!exe) {
    r.error = "cannot run " + python + ": not found on PATH";
    return r;
  }
  // importing a framework and trying every convolution algorithm can take minutes on a cold cache
  auto c = detail::run_captured({*exe, "-c", k_script, framework}, 15 * 60 * 1000, 4 << 20);
  std::string out = std::move(c.out);
  auto pos = out.find("STACKPIN-FRAMEWORK ");
  if (pos == std::string::npos) {
    r.error = !c.started    ? "cannot run " + python + ": " + c.error
              : c.timed_out ? c.error
                            : python + " did not complete the framework check (exit status " + std::to_string(c.exit_code) + ")";
    return r;
  }
  std::string j = out.substr(pos + 19);
  r.installed = field(j, "installed") == "true";
  r.version = field(j, "version");
  r.gpu = field(j, "gpu") == "true";
  r.ran = field(j, "ran") == "true";
  r.non_finite = field(j, "non_finite") == "true";
  r.error = field(j, "error");
  if (auto e = field(j, "max_abs_err"); !e.empty()) r.max_abs_err = std::strtod(e.c_str(), nullptr);
  if (auto raw = field(j, "cudnn_raw"); !raw.empty() && raw != "0") {
    auto v = model::decode_cudnn_version(std::strtoull(raw.c_str(), nullptr, 10));
    if (v) r.cudnn_version = v->text();
  }
  if (auto t = field(j, "cudnn_text"); !t.empty()) r.cudnn_version = t;
  r.loaded_cudnn = string_array(j, "loaded_cudnn");
  return r;
}

}  // namespace probe
