// The Python lock (PEP 751): the round trip, and what the reader refuses in a file another machine
// or a person wrote.
#include <gtest/gtest.h>

#include <string>

#include "core/python/python_env.hpp"
#include "format/pip_report.hpp"
#include "format/pylock.hpp"
#include "format/simple_index.hpp"
#include "model/pylock.hpp"
#include "util/url.hpp"

namespace pylock_test {

namespace {
using util::ErrorCode;

const std::string k_sha(64, 'a');

model::PyLock sample() {
  model::PyLock l;
  l.created_by = "stackpin";
  l.requires_python = "==3.12.*";
  l.environments = {model::python_marker(model::Platform::linux_x86_64), model::python_marker(model::Platform::windows_x86_64)};
  model::PyPackage torch;
  torch.name = "torch";
  torch.version = "2.9.0+cu130";
  torch.index = "https://download.pytorch.org/whl/cu130";
  torch.wheels.push_back({"torch-2.9.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl",
                          "https://download.pytorch.org/whl/cu130/torch-2.9.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl",
                          900,
                          k_sha,
                          {}});
  torch.wheels.push_back({"torch-2.9.0+cu130-cp312-cp312-win_amd64.whl",
                          "https://download.pytorch.org/whl/cu130/torch-2.9.0%2Bcu130-cp312-cp312-win_amd64.whl",
                          800,
                          std::string(64, 'b'),
                          {}});
  model::PyPackage cudnn;
  cudnn.name = "nvidia-cudnn-cu13";
  cudnn.version = "9.13.0.50";
  cudnn.marker = model::python_marker(model::Platform::linux_x86_64);
  cudnn.wheels.push_back({"nvidia_cudnn_cu13-9.13.0.50-py3-none-manylinux_2_27_x86_64.whl",
                          "https://pypi.example/nvidia_cudnn_cu13-9.13.0.50-py3-none-manylinux_2_27_x86_64.whl",
                          70,
                          std::string(64, 'c'),
                          {}});
  l.packages = {cudnn, torch};
  return l;
}

util::Error refused(const std::string& text) {
  auto r = format::parse_pylock(text, "pylock.t.toml");
  EXPECT_FALSE(r) << text;
  return r ? util::Error(ErrorCode::internal, "parsed") : r.error();
}

const std::string k_head = "lock-version = \"1.0\"\ncreated-by = \"someone\"\n";

}  // namespace

TEST(PyLock, RendersAndReadsBackTheSameLock) {
  auto l = sample();
  std::string text = format::render_pylock(l);
  auto back = format::parse_pylock(text, "pylock.t.toml");
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->packages.size(), 2u);
  EXPECT_EQ(back->requires_python, "==3.12.*");
  EXPECT_EQ(back->environments, l.environments);
  EXPECT_EQ(back->packages[1].wheels[0].url, l.packages[1].wheels[0].url);
  EXPECT_EQ(back->packages[1].wheels[1].sha256, std::string(64, 'b'));
  EXPECT_EQ(back->packages[0].marker, l.packages[0].marker);
  EXPECT_EQ(format::render_pylock(*back), text);
  // the marker decides where a package is installed
  EXPECT_NE(back->package_for("nvidia_cudnn_cu13", model::Platform::linux_x86_64), nullptr);
  EXPECT_EQ(back->package_for("nvidia-cudnn-cu13", model::Platform::windows_x86_64), nullptr);
  EXPECT_NE(back->package_for("Torch", model::Platform::windows_x86_64), nullptr);
}

TEST(PyLock, NamesAndMarkers) {
  EXPECT_EQ(model::normalize_python_name("Nvidia_CUDNN.cu13"), "nvidia-cudnn-cu13");
  EXPECT_EQ(model::normalize_python_name("a--b__c"), "a-b-c");
  auto w = model::parse_wheel_name("nvidia_cudnn_cu13-9.13.0.50-1-py3-none-manylinux_2_27_x86_64.whl");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->name, "nvidia_cudnn_cu13");
  EXPECT_EQ(w->platform, "manylinux_2_27_x86_64");
  EXPECT_FALSE(model::parse_wheel_name("torch-2.9.0.tar.gz"));
  EXPECT_FALSE(model::parse_wheel_name("../torch-2.9.0-py3-none-any.whl"));
  EXPECT_FALSE(model::parse_wheel_name("torch--py3-none-any.whl"));
  auto all = std::vector<model::Platform>{model::Platform::linux_x86_64, model::Platform::linux_sbsa, model::Platform::windows_x86_64};
  EXPECT_EQ(model::platforms_of_marker("", all), all);
  EXPECT_EQ(model::platforms_of_marker(model::python_marker(model::Platform::windows_x86_64), all),
            std::vector<model::Platform>{model::Platform::windows_x86_64});
}

TEST(PyLock, RefusesWhatCannotBeInstalledByHash) {
  const std::string pkg = "\n[[packages]]\nname = \"torch\"\nversion = \"2.9.0\"\n";
  const std::string wheel_head = "\n[[packages.wheels]]\nurl = \"https://x.example/torch-2.9.0-py3-none-any.whl\"\nsize = 10\n";
  // no hash
  auto e = refused(k_head + pkg + wheel_head);
  EXPECT_EQ(e.code, ErrorCode::invalid);
  EXPECT_NE(e.message.find("no `hashes`"), std::string::npos) << e.message;
  // a short hash
  e = refused(k_head + pkg + wheel_head + "hashes = { sha256 = \"abc\" }\n");
  EXPECT_NE(e.message.find("64 lower-case hex"), std::string::npos) << e.message;
  // an sdist
  e = refused(k_head + pkg + "sdist = { url = \"https://x.example/torch-2.9.0.tar.gz\", hashes = { sha256 = \"" + k_sha + "\" } }\n" +
              wheel_head + "hashes = { sha256 = \"" + k_sha + "\" }\n");
  EXPECT_NE(e.message.find("wheels only"), std::string::npos) << e.message;
  // a wheel of another package
  e = refused(k_head + pkg +
              "\n[[packages.wheels]]\nurl = \"https://x.example/numpy-2.0.0-py3-none-any.whl\"\nsize = 10\nhashes = { sha256 = \"" + k_sha +
              "\" }\n");
  EXPECT_NE(e.message.find("not torch 2.9.0"), std::string::npos) << e.message;
  // a name that is not the URL's file
  e = refused(k_head + pkg +
              "\n[[packages.wheels]]\nname = \"torch-2.9.0-py3-none-any.whl\"\nurl = \"https://x.example/evil.whl\"\nsize = 10\nhashes = { "
              "sha256 = \"" +
              k_sha + "\" }\n");
  EXPECT_NE(e.message.find("is not the file its URL names"), std::string::npos) << e.message;
  // a URL scheme pip would run something for, a local path, another lock version, a package twice
  e = refused(k_head + pkg +
              "\n[[packages.wheels]]\nurl = \"git+https://x.example/torch-2.9.0-py3-none-any.whl\"\nsize = 1\nhashes = { sha256 = \"" +
              k_sha + "\" }\n");
  EXPECT_NE(e.message.find("not an http(s):// or file:/// URL"), std::string::npos) << e.message;
  e = refused(k_head + pkg + "\n[[packages.wheels]]\npath = \"torch-2.9.0-py3-none-any.whl\"\nsize = 1\nhashes = { sha256 = \"" + k_sha +
              "\" }\n");
  EXPECT_NE(e.message.find("by URL"), std::string::npos) << e.message;
  e = refused("lock-version = \"2.0\"\ncreated-by = \"x\"\n");
  EXPECT_NE(e.message.find("is not 1.x"), std::string::npos) << e.message;
  const std::string whole = pkg + wheel_head + "hashes = { sha256 = \"" + k_sha + "\" }\n";
  e = refused(k_head + whole + whole);
  EXPECT_NE(e.message.find("listed twice"), std::string::npos) << e.message;
  ASSERT_TRUE(e.where);
  EXPECT_EQ(e.where->file, "pylock.t.toml");
  // unknown keys are errors; tool tables are not
  e = refused(k_head + "colour = 1\n");
  EXPECT_NE(e.message.find("colour"), std::string::npos) << e.message;
  EXPECT_TRUE(format::parse_pylock(k_head + "[tool.other]\nx = 1\n" + whole, "p"));
}

TEST(PyLock, MarkersAreOnlyTheOnesStackpinWritesAndOverlapsAreFound) {
  const std::string linux = model::python_marker(model::Platform::linux_x86_64);
  const std::string windows = model::python_marker(model::Platform::windows_x86_64);
  auto pkg = [&](const std::string& marker, const std::string& version = "9.13.0.50") {
    return "\n[[packages]]\nname = \"nvidia-cudnn-cu13\"\nversion = \"" + version + "\"\nmarker = \"" + marker +
           "\"\n\n[[packages.wheels]]\nurl = \"https://x.example/nvidia_cudnn_cu13-" + version +
           "-py3-none-any.whl\"\nsize = 1\nhashes = { sha256 = \"" + k_sha + "\" }\n";
  };
  EXPECT_TRUE(format::parse_pylock(k_head + pkg(linux), "p"));
  EXPECT_TRUE(format::parse_pylock(k_head + pkg("(" + linux + ") or (" + windows + ")"), "p"));
  // one platform's marker negated would name exactly that platform by its text: refused
  for (const std::string& bad :
       {"not (" + linux + ")", linux + " and python_version < '3.10'",
        std::string("sys_platform == \\\"linux\\\" and platform_machine == \\\"x86_64\\\""), "(" + linux + ") or (" + linux + ")"}) {
    auto e = refused(k_head + pkg(bad));
    EXPECT_NE(e.message.find("is not a marker stackpin writes"), std::string::npos) << bad << ": " << e.message;
  }
  // two versions of a package for overlapping targets, however written
  auto e = refused(k_head + pkg(linux) + pkg("(" + windows + ") or (" + linux + ")", "9.14.0.64"));
  EXPECT_NE(e.message.find("listed twice for the same environments"), std::string::npos) << e.message;
  EXPECT_TRUE(format::parse_pylock(k_head + pkg(linux) + pkg(windows, "9.14.0.64"), "p"));
}

TEST(PyLock, AUrlHidingControlCharactersIsRefused) {
  auto e = refused(k_head +
                   "\n[[packages]]\nname = \"torch\"\nversion = \"2.9.0\"\n\n[[packages.wheels]]\n"
                   "url = \"file:///tmp/torch-2.9.0-py3-none-any.whl%00/etc/passwd\"\nsize = 1\nhashes = { sha256 = \"" +
                   k_sha + "\" }\n");
  EXPECT_NE(e.message.find("control characters"), std::string::npos) << e.message;
}

TEST(PyLock, UrlsAsWheelsAreNamedByThem) {
  EXPECT_EQ(model::url_file_name("https://h.example/whl/cu130/torch-2.9.0%2Bcu130-cp312-cp312-win_amd64.whl#sha256=ab"),
            "torch-2.9.0+cu130-cp312-cp312-win_amd64.whl");
  EXPECT_EQ(util::percent_decode("a%2b%2Bb%zz%4"), "a++b%zz%4");
  EXPECT_EQ(model::file_url_path("file:///srv/wheels/a%20b.whl"), "/srv/wheels/a b.whl");
  EXPECT_EQ(model::file_url_path("file:///C:/wheels/x.whl"), "C:/wheels/x.whl");
  EXPECT_EQ(model::file_url_path("https://h.example/x.whl"), "");
}

TEST(PyLock, IndexPagesGiveTheirFilesHashesAndAbsoluteUrls) {
  const std::string page = "https://h.example/simple/torch/";
  auto files = format::parse_simple_index(
      "<html><body>\n"
      "<a href=\"../../files/torch-2.9.0%2Bcu130-py3-none-any.whl#sha256=" +
          std::string(64, 'A') +
          "\">x</a>\n"
          "<A HREF='/whl/torch-2.8.0-py3-none-any.whl?x=1&amp;y=2#md5=00'>y</A>\n"
          "<a data-requires-python=\"&gt;=3.9\" href=https://cdn.example/torch-2.7.0-py3-none-any.whl>z</a>\n"
          "<area href=\"nope.whl\"><a name=\"no-href\">n</a><a href=\"../\">up</a>\n"
          "<a href=\"torch-2.6.0-py3-none-any.whl#sha256=short\">w</a>",
      page);
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0].file, "torch-2.9.0+cu130-py3-none-any.whl");
  EXPECT_EQ(files[0].url, "https://h.example/files/torch-2.9.0%2Bcu130-py3-none-any.whl");
  EXPECT_EQ(files[0].sha256, std::string(64, 'a'));
  EXPECT_EQ(files[1].url, "https://h.example/whl/torch-2.8.0-py3-none-any.whl?x=1&y=2");
  EXPECT_EQ(files[1].file, "torch-2.8.0-py3-none-any.whl");
  EXPECT_TRUE(files[1].sha256.empty());
  EXPECT_EQ(files[2].url, "https://cdn.example/torch-2.7.0-py3-none-any.whl");
  EXPECT_EQ(files[3].url, "https://h.example/simple/torch/torch-2.6.0-py3-none-any.whl");
  EXPECT_TRUE(files[3].sha256.empty());  // not 64 hex digits
}

TEST(PyLock, PipsReportIsReadAsUntrustedInput) {
  const std::string sha = std::string(64, 'c');
  auto ok = format::parse_pip_report(
      "{\"version\": \"1\", \"install\": [{\"download_info\": {\"url\": \"https://h.example/Foo_Bar-1.0-py3-none-any.whl\", "
      "\"archive_info\": {\"hash\": \"sha256=" +
          sha + "\"}}, \"metadata\": {\"name\": \"Foo_Bar\", \"version\": \"1.0\"}}]}",
      "(test)");
  ASSERT_TRUE(ok) << ok.error().message;
  ASSERT_EQ(ok->size(), 1u);
  EXPECT_EQ((*ok)[0].name, "foo-bar");
  EXPECT_EQ((*ok)[0].sha256, sha);
  for (const std::string& bad :
       {std::string("not json"), std::string("{\"version\": \"2\", \"install\": []}"),
        std::string("{\"version\": \"1\", \"install\": [{\"download_info\": {\"url\": \"git+https://x\", "
                    "\"vcs_info\": {}}, \"metadata\": {\"name\": \"x\", \"version\": \"1\"}}]}"),
        std::string("{\"version\": \"1\", \"install\": [{\"download_info\": {\"url\": \"https://x/x-1-py3-none-any.whl\", "
                    "\"archive_info\": {\"hashes\": {\"sha256\": \"zz\"}}}, \"metadata\": {\"name\": \"x\", \"version\": \"1\"}}]}")}) {
    auto r = format::parse_pip_report(bad, "(test)");
    EXPECT_FALSE(r) << bad;
  }
  auto list = format::parse_pip_list("WARNING: something\n[{\"name\": \"Torch\", \"version\": \"2.9.0\"}]\n");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->at("torch"), "2.9.0");
}

TEST(PyLock, APlatformInstallsItsOwnWheelBeforeAPureOne) {
  model::PyLock l;
  l.path = "pylock.t.toml";
  model::PyPackage p;
  p.name = "numpy";
  p.version = "2.0.0";
  p.wheels.push_back({"numpy-2.0.0-py3-none-any.whl", "https://x.example/numpy-2.0.0-py3-none-any.whl", 1, k_sha, {}});
  p.wheels.push_back({"numpy-2.0.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
                      "https://x.example/numpy-2.0.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
                      1,
                      k_sha,
                      {}});
  l.packages = {p};
  auto linux = core::pinned_wheels(l, model::Platform::linux_x86_64);
  ASSERT_TRUE(linux) << linux.error().message;
  EXPECT_EQ(linux->at(0).wheel->name, p.wheels[1].name);
  auto windows = core::pinned_wheels(l, model::Platform::windows_x86_64);
  ASSERT_TRUE(windows) << windows.error().message;
  EXPECT_EQ(windows->at(0).wheel->name, p.wheels[0].name);
  EXPECT_EQ(windows->at(0).requirement, "numpy @ " + p.wheels[0].url + " --hash=sha256:" + k_sha);
  l.environments = {model::python_marker(model::Platform::linux_x86_64)};
  auto none = core::pinned_wheels(l, model::Platform::windows_arm64);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, util::ErrorCode::unsupported);
}

}  // namespace pylock_test
