// `stackpin apply` as root in a fresh Debian container (the host-built binary, no network): the
// deb layout builds the packages and really installs them with dpkg, the loader then resolves
// the pinned cuDNN through the ld.so cache (doctor passes), and a second run finds everything in
// place; the lib64 layout stages into the prefix and doctor sees it first on the loader path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "container.hpp"
#include "fixtures.hpp"
#include "test_support.hpp"

namespace apply_container_test {

namespace fs = std::filesystem;
namespace ct = testing_support::container;
using nlohmann::json;

namespace {

const std::string k_stackpin = "/opt/stackpin/bin/stackpin";

std::map<std::string, std::string> statuses(const std::string& out) {
  std::map<std::string, std::string> s;
  json doc = json::parse(out, nullptr, false);
  if (doc.is_discarded() || !doc.contains("report") || !doc["report"].is_object()) return s;
  for (const auto& step : doc["report"]["steps"]) s[step["name"]] = step["status"];
  return s;
}

struct Box {
  testing_support::ScratchDir dir;
  std::unique_ptr<ct::Container> box;

  explicit Box(const std::string& targets) {
    fs::path archives = dir.path() / "archives";
    fs::create_directories(archives);
    auto archive = fixtures::make_cudnn_linux_elf(archives, testing_support::doubles_dir() / "stems");
    dir.write("stack.toml", fixtures::local_manifest("9.1.0.70", 12, "12.4.1", {{"linux-x86_64", archive}}, targets));
    ct::Options o;
    o.image = ct::k_stackpin_runtime_image;
    o.mounts = {{testing_support::binary(), k_stackpin}, {dir.path(), "/work"}};
    box = std::make_unique<ct::Container>(o);
  }
  testing_support::RunResult apply() {
    return box->exec({k_stackpin, "apply", "/work/stack.toml", "--target", "linux", "--archives", "/work/archives", "--cache-dir",
                      "/var/cache/stackpin", "--json"},
                     300);
  }
};

}  // namespace

TEST(ContainerApply, DebLayoutInstallsThePackagesAndASecondRunChangesNothing) {
  SP_SKIP_WITHOUT_CONTAINERS(ct::k_stackpin_runtime_image);
  Box b("[targets.linux]\nlayout = \"deb\"\n");
  ASSERT_TRUE(b.box->ok()) << b.box->error();
  auto first = b.apply();
  ASSERT_EQ(first.exit_code, 0) << ct::describe(first);
  auto s = statuses(first.out);
  EXPECT_EQ(s["archive"], "unchanged");
  EXPECT_EQ(s["packages"], "done");
  EXPECT_EQ(s["install"], "done");
  EXPECT_EQ(s["doctor"], "passed") << first.out;
  EXPECT_EQ(s["convtest"], "skipped");
  auto q = b.box->bash("dpkg-query -W -f '${Package} ${Version} ${Status}\\n' stackpin-libcudnn9-cuda-12 stackpin-libcudnn9-dev-cuda-12");
  EXPECT_NE(q.out.find("stackpin-libcudnn9-cuda-12 9.1.0.70-1+cuda12 install ok installed"), std::string::npos) << ct::describe(q);
  EXPECT_NE(q.out.find("stackpin-libcudnn9-dev-cuda-12 9.1.0.70-1+cuda12 install ok installed"), std::string::npos) << ct::describe(q);

  auto second = b.apply();
  ASSERT_EQ(second.exit_code, 0) << ct::describe(second);
  auto s2 = statuses(second.out);
  EXPECT_EQ(s2["packages"], "unchanged");
  EXPECT_EQ(s2["install"], "unchanged");
  EXPECT_EQ(s2["doctor"], "passed");
  EXPECT_FALSE(json::parse(second.out)["report"]["changed"].get<bool>());
}

TEST(ContainerApply, Lib64LayoutIsStagedAndDoctorSeesItFirst) {
  SP_SKIP_WITHOUT_CONTAINERS(ct::k_stackpin_runtime_image);
  Box b("[targets.linux]\nlayout = \"lib64\"\nprefix = \"/opt/cudnn-9.1\"\n");
  ASSERT_TRUE(b.box->ok()) << b.box->error();
  auto first = b.apply();
  ASSERT_EQ(first.exit_code, 0) << ct::describe(first);
  auto s = statuses(first.out);
  EXPECT_EQ(s["stage"], "done");
  EXPECT_EQ(s["doctor"], "passed") << first.out;
  EXPECT_NE(first.out.find("/opt/cudnn-9.1/lib64/libcudnn.so.9"), std::string::npos) << first.out;
  auto again = b.apply();
  ASSERT_EQ(again.exit_code, 0) << ct::describe(again);
  EXPECT_EQ(statuses(again.out)["stage"], "unchanged");
  // and the activation script it names puts that directory first for a new shell
  auto shell = b.box->bash(". /opt/cudnn-9.1/.stackpin/activate.sh && printf '%s' \"$LD_LIBRARY_PATH\"");
  EXPECT_EQ(shell.out.rfind("/opt/cudnn-9.1/lib64", 0), 0u) << ct::describe(shell);
}

}  // namespace apply_container_test
