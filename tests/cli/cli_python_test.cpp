// The Python half of a stack through the real binary: `lock` resolves the frameworks with pip
// against a PEP 503 index served on 127.0.0.1 (wheels built at test time) into a PEP 751 lock whose
// every wheel is pinned by URL, size and SHA-256; `lock --check` names a wheel the index lost or
// changed; --locked refuses a Python lock edited by hand; `apply` installs exactly the lock into a
// venv, all or nothing, and a second run changes nothing.
#include <gtest/gtest.h>

#include <string>

#include "format/lock_file.hpp"
#include "format/pylock.hpp"
#include "http_server.hpp"
#include "test_support.hpp"
#include "util/fs.hpp"
#include "wheels.hpp"

namespace cli_python_test {

using testing_support::contains;
using testing_support::HttpServer;
using testing_support::ScratchDir;
using testing_support::stackpin;

namespace {
namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) { ASSERT_TRUE(util::write_file_atomic(p, text).ok()) << p; }

// Stand-ins for torch 2.9.0+cu130 and the NVIDIA wheels it pulls in on Linux.
struct WheelSet {
  fixtures::WheelSpec torch_linux, torch_windows, cudnn, cudart, filelock;
  std::vector<fs::path> paths;
  explicit WheelSet(const fs::path& dir, const std::string& cudnn_version = "9.13.0.50") {
    const std::string linux_only = "; sys_platform == \"linux\"";
    torch_linux = {"torch",
                   "2.9.0+cu130",
                   "py3-none-manylinux_2_28_x86_64",
                   {"nvidia-cudnn-cu13==" + cudnn_version + linux_only, "nvidia-cuda-runtime-cu13==13.0.96" + linux_only, "filelock"},
                   {{"torch/__init__.py", fixtures::Kind::file, "__version__ = '2.9.0+cu130'\n"}}};
    torch_windows = torch_linux;
    torch_windows.tag = "py3-none-win_amd64";
    cudnn = {"nvidia-cudnn-cu13",
             cudnn_version,
             "py3-none-manylinux_2_27_x86_64",
             {},
             {{"nvidia/cudnn/lib/libcudnn.so.9", fixtures::Kind::file, "cudnn " + cudnn_version}}};
    cudart = {"nvidia-cuda-runtime-cu13",
              "13.0.96",
              "py3-none-manylinux_2_27_x86_64",
              {},
              {{"nvidia/cuda_runtime/lib/libcudart.so.13", fixtures::Kind::file, "cudart"}}};
    filelock = {"filelock", "3.20.0", "py3-none-any", {}, {{"filelock/__init__.py", fixtures::Kind::file, ""}}};
    for (const auto* s : {&torch_linux, &torch_windows, &cudnn, &cudart, &filelock}) paths.push_back(fixtures::make_wheel(dir, *s).path);
  }
};

std::string manifest(const std::string& index, const std::string& python, const std::string& targets) {
  return "schema = 1\nname = \"py-stack\"\n[cuda]\nversion = \"13.0.2\"\n[driver]\nlinux = \"580.95.05\"\n[cudnn]\nversion = "
         "\"9.13.0.50\"\ncuda = 13\n"
         "[frameworks]\ntorch = \"2.9.0\"\n[python]\nversion = \"" +
         python + "\"\nindex = \"" + index + "\"\n" + targets;
}

const model::PyPackage* package(const model::PyLock& l, const std::string& name) {
  for (const auto& p : l.packages)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace

TEST(CliPython, LockPinsEveryWheelAndCheckNamesWhatTheIndexLost) {
  if (auto why = testing_support::python_tools_missing(); !why.empty()) GTEST_SKIP() << why;
  ScratchDir dir;
  WheelSet wheels(dir.path() / "wheels");
  HttpServer server;
  testing_support::serve_wheel_index(server, wheels.paths);
  const fs::path m = dir.path() / "m.toml";
  write(m, manifest(server.url("/simple"), testing_support::python_minor_version(),
                    "[targets.linux]\nprefix = \"/opt/cudnn\"\n[targets.windows]\nprefix = 'C:\\cudnn'\n"));

  auto lock = stackpin({"lock", m.string()});
  ASSERT_EQ(lock.exit_code, 0) << testing_support::show(lock);
  EXPECT_TRUE(contains(lock.out, "pylock.py-stack.toml")) << lock.out;
  const fs::path py = dir.path() / "pylock.py-stack.toml";
  auto pl = format::load_pylock(py);
  ASSERT_TRUE(pl) << pl.error().message;
  EXPECT_EQ(pl->environments.size(), 2u);
  const auto* torch = package(*pl, "torch");
  ASSERT_NE(torch, nullptr);
  EXPECT_EQ(torch->version, "2.9.0+cu130");
  EXPECT_TRUE(torch->marker.empty()) << torch->marker;  // on both targets
  ASSERT_EQ(torch->wheels.size(), 2u);
  for (const auto& w : torch->wheels) {
    auto fixture = fixtures::info(dir.path() / "wheels" / w.name);
    EXPECT_EQ(w.sha256, fixture.sha256) << w.name;
    EXPECT_EQ(w.size, fixture.size) << w.name;
    EXPECT_TRUE(contains(w.url, server.base())) << w.url;
  }
  const auto* cudnn = package(*pl, "nvidia-cudnn-cu13");
  ASSERT_NE(cudnn, nullptr);
  EXPECT_EQ(cudnn->version, "9.13.0.50");
  EXPECT_EQ(cudnn->marker, model::python_marker(model::Platform::linux_x86_64));
  ASSERT_NE(package(*pl, "filelock"), nullptr);
  EXPECT_EQ(package(*pl, "filelock")->index, server.url("/simple"));
  // the stack's lock records the Python lock's SHA-256
  auto sl = format::load_lock(dir.path() / "m.lock");
  ASSERT_TRUE(sl) << sl.error().message;
  EXPECT_EQ(sl->python_lock, "pylock.py-stack.toml");
  EXPECT_EQ(sl->python_lock_sha256, fixtures::info(py).sha256);

  // check holds the wheels' libraries against the system half
  auto judged = stackpin({"check", m.string(), "--explain"});
  EXPECT_EQ(judged.exit_code, 0) << testing_support::show(judged);
  EXPECT_TRUE(contains(judged.out, "python.cudnn")) << judged.out;
  EXPECT_TRUE(contains(judged.out, "the frameworks load cuDNN 9.13.0.50 from this wheel")) << judged.out;
  EXPECT_TRUE(contains(judged.out, "python.driver")) << judged.out;
  EXPECT_TRUE(contains(judged.out, "cudart 13.0.96 is CUDA 13.0.")) << judged.out;

  // a second lock changes nothing; --check finds the index as it was
  const std::string before = testing_support::read_text(py);
  auto again = stackpin({"lock", m.string()});
  ASSERT_EQ(again.exit_code, 0) << testing_support::show(again);
  EXPECT_TRUE(contains(again.out, "unchanged")) << again.out;
  EXPECT_EQ(testing_support::read_text(py), before);
  auto check = stackpin({"lock", "--check", m.string()});
  EXPECT_EQ(check.exit_code, 0) << testing_support::show(check);

  // the index loses the cuDNN wheel and serves another torch under the same name
  auto others = wheels.paths;
  others.erase(std::remove_if(others.begin(), others.end(), [](const fs::path& p) { return contains(p.filename().string(), "cudnn"); }),
               others.end());
  fixtures::WheelSpec changed = wheels.torch_windows;
  changed.files.push_back({"torch/extra.py", fixtures::Kind::file, "x = 1\n"});
  const fs::path changed_dir = dir.path() / "changed";
  auto changed_info = fixtures::make_wheel(changed_dir, changed);
  for (auto& p : others)
    if (p.filename() == changed_info.path.filename()) p = changed_info.path;
  testing_support::serve_wheel_index(server, others);
  server.serve("/simple/nvidia-cudnn-cu13/", "<!DOCTYPE html><html><body></body></html>\n");  // the project stays, its file is gone
  auto lost = stackpin({"lock", "--check", m.string()});
  EXPECT_EQ(lost.exit_code, 1) << testing_support::show(lost);
  EXPECT_TRUE(contains(lost.err, "nvidia-cudnn-cu13 9.13.0.50: nvidia_cudnn_cu13-9.13.0.50-py3-none-manylinux_2_27_x86_64.whl is gone"))
      << lost.err;
  EXPECT_TRUE(contains(lost.err, "torch-2.9.0+cu130-py3-none-win_amd64.whl changed")) << lost.err;
  EXPECT_TRUE(contains(lost.err, changed_info.sha256)) << lost.err;
  EXPECT_TRUE(contains(lost.err, "pylock.py-stack.toml:")) << lost.err;
  EXPECT_EQ(testing_support::read_text(py), before);  // --check writes nothing

  // a Python lock edited by hand is refused by every --locked command
  write(py, before + "\n# edited\n");
  auto edited = stackpin({"fetch", m.string(), "--locked", "--cache-dir", (dir.path() / "cache").string()});
  EXPECT_EQ(edited.exit_code, 1) << testing_support::show(edited);
  EXPECT_TRUE(contains(edited.err, "is not the Python lock")) << edited.err;
  EXPECT_TRUE(contains(edited.err, "m.lock")) << edited.err;
  auto checked = stackpin({"check", m.string()});
  EXPECT_EQ(checked.exit_code, 1) << testing_support::show(checked);
  EXPECT_TRUE(contains(checked.out, "python.lock")) << checked.out;
}

TEST(CliPython, AWheelWhoseIndexGivesNoHashIsHashedFromItsBytes) {
  if (auto why = testing_support::python_tools_missing(); !why.empty()) GTEST_SKIP() << why;
  ScratchDir dir;
  WheelSet wheels(dir.path() / "wheels");
  HttpServer server;
  // a newer filelock on the index: [python] packages keeps the one the manifest pins
  auto paths = wheels.paths;
  paths.push_back(fixtures::make_wheel(dir.path() / "wheels", {"filelock", "3.99.0", "py3-none-any", {}, {}}).path);
  testing_support::serve_wheel_index(server, paths, false);
  const fs::path m = dir.path() / "m.toml";
  write(m, manifest(server.url("/simple"), testing_support::python_minor_version(),
                    "packages = [\"filelock==3.20.0\"]\n[targets.linux]\nprefix = \"/opt/cudnn\"\n[targets.docker]\nbase_image = "
                    "\"nvidia/cuda:13.0.2-runtime-ubuntu24.04\"\n"));
  auto lock = stackpin({"lock", m.string()});
  ASSERT_EQ(lock.exit_code, 0) << testing_support::show(lock);
  auto pl = format::load_pylock(dir.path() / "pylock.py-stack.toml");
  ASSERT_TRUE(pl) << pl.error().message;
  ASSERT_EQ(pl->environments.size(), 1u);
  const auto* cudnn = package(*pl, "nvidia-cudnn-cu13");
  ASSERT_NE(cudnn, nullptr);
  ASSERT_EQ(cudnn->wheels.size(), 1u);
  EXPECT_TRUE(cudnn->marker.empty());
  EXPECT_EQ(cudnn->wheels[0].sha256, fixtures::info(dir.path() / "wheels" / cudnn->wheels[0].name).sha256);
  ASSERT_NE(package(*pl, "filelock"), nullptr);
  EXPECT_EQ(package(*pl, "filelock")->version, "3.20.0");
  // only the Linux wheel of torch: the manifest has no Windows target
  ASSERT_NE(package(*pl, "torch"), nullptr);
  EXPECT_EQ(package(*pl, "torch")->wheels.size(), 1u);

  // --locked, the generators install the Python lock's wheels by hash and nothing else
  auto docker = stackpin({"generate", "dockerfile", m.string(), "--locked", "-o", (dir.path() / "Dockerfile").string()});
  ASSERT_EQ(docker.exit_code, 0) << testing_support::show(docker);
  const std::string dockerfile = testing_support::read_text(dir.path() / "Dockerfile");
  const auto* torch = package(*pl, "torch");
  ASSERT_NE(torch, nullptr);
  EXPECT_TRUE(contains(dockerfile, "'torch @ " + torch->wheels[0].url + " --hash=sha256:" + torch->wheels[0].sha256 + "'")) << dockerfile;
  EXPECT_TRUE(contains(dockerfile, "--require-hashes --no-deps --no-index")) << dockerfile;
  EXPECT_FALSE(contains(dockerfile, "PYTORCH_INDEX_URL")) << dockerfile;
  auto conda = stackpin({"generate", "conda", m.string(), "--locked", "-o", (dir.path() / "environment.yml").string()});
  ASSERT_EQ(conda.exit_code, 0) << testing_support::show(conda);
  const std::string env = testing_support::read_text(dir.path() / "environment.yml");
  EXPECT_TRUE(contains(env, "nvidia-cudnn-cu13 @ " + cudnn->wheels[0].url + " --hash=sha256:" + cudnn->wheels[0].sha256)) << env;
  EXPECT_TRUE(contains(env, "- \"--no-index\"")) << env;

  // a release the index does not have: pip's own words, and nothing written
  std::string text = manifest(server.url("/simple"), testing_support::python_minor_version(), "[targets.linux]\nprefix = \"/opt/cudnn\"\n");
  text.replace(text.find("torch = \"2.9.0\""), 15, "torch = \"2.9.1\"");
  const fs::path m2 = dir.path() / "other" / "m.toml";
  fs::create_directories(m2.parent_path());
  write(m2, text);
  auto missing = stackpin({"lock", m2.string()});
  EXPECT_EQ(missing.exit_code, 1) << testing_support::show(missing);
  EXPECT_TRUE(contains(missing.err, "pip could not resolve the frameworks")) << missing.err;
  EXPECT_TRUE(contains(missing.err, "torch==2.9.1")) << missing.err;
  EXPECT_FALSE(fs::exists(m2.parent_path() / "m.lock"));
  EXPECT_FALSE(fs::exists(m2.parent_path() / "pylock.py-stack.toml"));
}

TEST(CliPython, ApplyInstallsExactlyTheLockIntoAVenvAllOrNothing) {
  if (auto why = testing_support::python_tools_missing(); !why.empty()) GTEST_SKIP() << why;
  ScratchDir dir;
  WheelSet wheels(dir.path() / "wheels");
  HttpServer server;
  testing_support::serve_wheel_index(server, wheels.paths);
  const std::string py = testing_support::python_minor_version();
  // the Python half alone: the machine keeps its own CUDA and cuDNN
  const fs::path m = dir.path() / "m.toml";
  write(m,
        "schema = 1\nname = \"py-only\"\n[cuda]\nversion = \"13.0.2\"\n[driver]\nlinux = \"580.95.05\"\n[frameworks]\ntorch = \"2.9.0\"\n"
        "[python]\nversion = \"" +
            py + "\"\nindex = \"" + server.url("/simple") + "\"\nvenv = \"env\"\n");
  // the user's pip settings change nothing: pip runs --isolated (were PIP_NO_INDEX honoured, nothing would resolve)
  const std::vector<std::string> user_pip_settings{"PIP_NO_INDEX=1", "PIP_EXTRA_INDEX_URL=http://127.0.0.1:9/not-an-index"};
  auto lock = stackpin({"lock", m.string()}, user_pip_settings);
  ASSERT_EQ(lock.exit_code, 0) << testing_support::show(lock);

  auto apply = stackpin({"apply", m.string()}, user_pip_settings);
  ASSERT_EQ(apply.exit_code, 0) << testing_support::show(apply);
  EXPECT_TRUE(contains(apply.out, "created ")) << apply.out;
  const fs::path env = dir.path() / "env";
  const fs::path python = env / "bin" / "python";
  auto imported = testing_support::run_process({python.string(), "-c", "import torch, filelock; print(torch.__version__)"});
  EXPECT_EQ(imported.exit_code, 0) << testing_support::show(imported);
  EXPECT_TRUE(contains(imported.out, "2.9.0+cu130")) << imported.out;
  auto listed = testing_support::run_process({python.string(), "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"});
  for (const char* want : {"torch==2.9.0+cu130", "nvidia-cudnn-cu13==9.13.0.50", "nvidia-cuda-runtime-cu13==13.0.96", "filelock==3.20.0"})
    EXPECT_TRUE(contains(listed.out, want)) << want << "\n" << listed.out;

  // a second run changes nothing: the environment is the same directory, untouched (the same
  // directory named with a trailing slash too)
  write(env / "kept-by-a-second-run", "x");
  auto again = stackpin({"apply", m.string(), "--venv", env.string() + "/"}, user_pip_settings);
  ASSERT_EQ(again.exit_code, 0) << testing_support::show(again);
  EXPECT_TRUE(contains(again.out, "nothing to do")) << again.out;
  EXPECT_TRUE(fs::exists(env / "kept-by-a-second-run"));

  // an environment that drifted is rebuilt; when pip refuses a wheel (its server now sends other
  // bytes than the lock pins) the previous environment comes back as it was
  auto removed = testing_support::run_process({python.string(), "-m", "pip", "uninstall", "-y", "filelock"});
  ASSERT_EQ(removed.exit_code, 0) << testing_support::show(removed);
  const std::string torch_file = fixtures::wheel_file_name(wheels.torch_linux);
  std::string tampered = testing_support::read_text(dir.path() / "wheels" / torch_file);
  tampered[tampered.size() / 2] ^= 0x20;
  std::string encoded = torch_file;
  encoded.replace(encoded.find('+'), 1, "%2B");
  server.serve("/files/" + torch_file, tampered);
  server.serve("/files/" + encoded, tampered);
  auto refused = stackpin({"apply", m.string()}, user_pip_settings);
  EXPECT_EQ(refused.exit_code, 1) << testing_support::show(refused);
  EXPECT_TRUE(contains(refused.out + refused.err, "the previous environment is back")) << testing_support::show(refused);
  EXPECT_TRUE(contains(refused.out + refused.err, "HASH")) << testing_support::show(refused);
  EXPECT_TRUE(fs::exists(env / "kept-by-a-second-run"));
  EXPECT_FALSE(fs::exists(dir.path() / "env.stackpin-previous"));
  EXPECT_EQ(testing_support::run_process({python.string(), "-c", "import torch"}).exit_code, 0);

  // with the right bytes again, the rebuilt environment holds the lock exactly
  testing_support::serve_wheel_index(server, wheels.paths);
  auto rebuilt = stackpin({"apply", m.string()}, user_pip_settings);
  ASSERT_EQ(rebuilt.exit_code, 0) << testing_support::show(rebuilt);
  EXPECT_TRUE(contains(rebuilt.out, "rebuilt ")) << rebuilt.out;
  EXPECT_FALSE(fs::exists(env / "kept-by-a-second-run"));
  EXPECT_EQ(testing_support::run_process({python.string(), "-c", "import filelock"}).exit_code, 0);

  // a directory that is not a virtual environment is never replaced
  const fs::path project = dir.path() / "project";
  fs::create_directories(project);
  write(project / "notes.txt", "mine");
  auto refused_dir = stackpin({"apply", m.string(), "--venv", project.string()}, user_pip_settings);
  EXPECT_EQ(refused_dir.exit_code, 2) << testing_support::show(refused_dir);
  EXPECT_TRUE(contains(refused_dir.out + refused_dir.err, "is not a virtual environment")) << testing_support::show(refused_dir);
  EXPECT_EQ(testing_support::read_text(project / "notes.txt"), "mine");
  EXPECT_FALSE(fs::exists(dir.path() / "project.stackpin-previous"));

  // without the Python lock there is nothing to install from
  fs::remove(dir.path() / "m.lock");
  auto unlocked = stackpin({"apply", m.string(), "--venv", (dir.path() / "other").string()}, user_pip_settings);
  EXPECT_EQ(unlocked.exit_code, 1) << testing_support::show(unlocked);
  EXPECT_TRUE(contains(unlocked.out + unlocked.err, "no Python lock")) << testing_support::show(unlocked);
  EXPECT_FALSE(fs::exists(dir.path() / "other"));
}

}  // namespace cli_python_test
