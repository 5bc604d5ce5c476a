// stackpin sbom --dest DIR: the SPDX 2.3 document of a staged toolkit and cuDNN, checked against
// the SPDX 2.3 JSON schema with a real validator and against the staged bytes; a tree changed
// since staging and a tree with nothing staged are refused.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <map>

#include "fixtures.hpp"
#include "test_support.hpp"
#include "tree.hpp"

namespace cli_sbom_test {

namespace fs = std::filesystem;
using nlohmann::json;
using testing_support::read_text;
using testing_support::ScratchDir;
using testing_support::stackpin;

namespace {

struct Staged {
  ScratchDir dir;
  fs::path dest;
  std::map<std::string, fixtures::Info> archives;
  Staged() {
    fs::path a = dir.path() / "archives";
    archives["cuda_cudart"] = fixtures::make_cuda_component(a, "cuda_cudart", "12.4.127");
    archives["cuda_nvcc"] = fixtures::make_cuda_component(a, "cuda_nvcc", "12.4.131");
    archives["cudnn"] = fixtures::make_cudnn_linux(a, "9.1.0.70", 12);
    std::string cudnn_pin =
        "[cudnn]\nversion = \"9.1.0.70\"\ncuda = 12\n\n[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\n"
        "file = \"" +
        archives["cudnn"].path.filename().string() + "\"\nsha256 = \"" + archives["cudnn"].sha256 +
        "\"\nsize = " + std::to_string(archives["cudnn"].size) + "\n";
    testing_support::write_file(
        dir.path() / "stack.toml",
        fixtures::local_toolkit_manifest("12.4.1", {"cudart", "nvcc"},
                                         {{"cuda_cudart", archives["cuda_cudart"]}, {"cuda_nvcc", archives["cuda_nvcc"]}}, cudnn_pin));
    dest = dir.path() / "tree ü";
    auto r =
        stackpin({"stage", (dir.path() / "stack.toml").string(), "--archives", a.string(), "--target", "linux", "--dest", dest.string()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  }
};

}  // namespace

TEST(SbomCli, DescribesEveryArchiveAndStagedFileAndValidates) {
  Staged s;
  fs::path out = s.dir.path() / "sbom.spdx.json";
  auto r = stackpin({"sbom", "--dest", s.dest.string(), "-o", out.string()}, {"SOURCE_DATE_EPOCH=1767225600"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "") << "every file belongs to an archive, version.json to stackpin";
  auto doc = json::parse(read_text(out));
  EXPECT_EQ(doc["spdxVersion"], "SPDX-2.3");
  EXPECT_EQ(doc["creationInfo"]["created"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(doc["creationInfo"]["creators"][0].get<std::string>().rfind("Tool: stackpin-", 0), 0u);

  // one package per archive, with its SHA-256 and NVIDIA's licence name
  std::map<std::string, json> packages;
  for (const auto& p : doc["packages"]) packages[p["name"]] = p;
  ASSERT_EQ(packages.size(), 3u) << doc["packages"].dump(1);
  for (const auto& [name, info] : s.archives) {
    ASSERT_TRUE(packages.count(name)) << name;
    EXPECT_EQ(packages[name]["checksums"][0]["checksumValue"], info.sha256) << name;
    EXPECT_EQ(packages[name]["packageFileName"], info.path.filename().string()) << name;
  }
  EXPECT_EQ(packages["cudnn"]["licenseDeclared"], "LicenseRef-NVIDIA-cudnn");
  EXPECT_EQ(packages["cuda_cudart"]["licenseDeclared"], "LicenseRef-NVIDIA-CUDA-Toolkit");
  EXPECT_EQ(packages["cuda_cudart"]["versionInfo"], "12.4.127");
  // local archives are not NVIDIA's bytes: no download location is claimed for them
  EXPECT_EQ(packages["cuda_cudart"]["downloadLocation"], "NOASSERTION");

  // every staged regular file, with the SHA-256 of the bytes in the tree and one package containing it
  auto receipt = json::parse(read_text(s.dest / ".stackpin/receipt.json"));
  std::size_t regular = 0;
  for (const auto& f : receipt["files"]) regular += f["type"] == "file";
  ASSERT_EQ(doc["files"].size(), regular);
  std::map<std::string, int> contained;
  for (const auto& rel : doc["relationships"])
    if (rel["relationshipType"] == "CONTAINS") ++contained[rel["relatedSpdxElement"]];
  for (const auto& f : doc["files"]) {
    std::string path = f["fileName"].get<std::string>().substr(2);
    EXPECT_EQ(f["checksums"][1]["checksumValue"], fixtures::info(s.dest / path).sha256) << path;
    EXPECT_EQ(f["checksums"][0]["algorithm"], "SHA1");
    EXPECT_EQ(contained[f["SPDXID"]], path == "version.json" ? 0 : 1) << path;
  }
  EXPECT_EQ(packages["cuda_cudart"]["supplier"], "NOASSERTION");
  // the licence texts are those the archives carry
  bool cudnn_licence = false;
  for (const auto& l : doc["hasExtractedLicensingInfos"])
    if (l["licenseId"] == "LicenseRef-NVIDIA-cudnn") {
      cudnn_licence = true;
      EXPECT_EQ(l["extractedText"], read_text(s.dest / "LICENSE"));
    }
  EXPECT_TRUE(cudnn_licence) << doc["hasExtractedLicensingInfos"].dump(1);

  std::string skip;
  auto errors = testing_support::schema_errors("spdx-2.3.json", out, skip);
  if (!skip.empty()) {
    std::cout << "[ SKIPPED  ] the SPDX schema check: " << skip << "\n";
  } else {
    EXPECT_EQ(errors, "");
  }
  // the same tree and time give the same document
  auto again = stackpin({"sbom", "--dest", s.dest.string()}, {"SOURCE_DATE_EPOCH=1767225600"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, read_text(out));
}

TEST(SbomCli, RefusesATreeChangedSinceStagingAndAnEmptyOne) {
  Staged s;
  fs::path lib;
  for (const auto& e : fs::recursive_directory_iterator(s.dest / "lib64"))
    if (e.is_regular_file() && !e.is_symlink()) lib = e.path();
  ASSERT_FALSE(lib.empty());
  { std::ofstream(lib, std::ios::app) << "x"; }
  fs::path out = s.dir.path() / "sbom.json";
  auto r = stackpin({"sbom", "--dest", s.dest.string(), "-o", out.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("changed since it was staged"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  ScratchDir empty;
  auto none = stackpin({"sbom", "--dest", empty.path().string(), "--json"});
  EXPECT_EQ(none.exit_code, 1) << none.out;
  auto doc = json::parse(none.out);
  EXPECT_EQ(doc["ok"], false);
}

}  // namespace cli_sbom_test
