// core::activate_windows against an in-memory environment store and a fake C: drive: the values it
// writes (the PATH rule's, the variables of the manifest's tree), the record it keeps, and what
// --undo restores. The registry backend itself runs under Wine (tests/windows/).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/provision/activate.hpp"
#include "format/activation.hpp"
#include "format/manifest_reader.hpp"
#include "knowledge/knowledge_base.hpp"
#include "test_support.hpp"
#include "tree.hpp"

namespace activate_test {

namespace {
namespace fs = std::filesystem;
using testing_support::ScratchDir;
using util::EnvScope;

// cu118-cudnn880-win.toml: isolated at C:\tools\cudnn\v8.8.0, CUDA 11.8 at its installer's path
struct World {
  ScratchDir dir;
  core::WindowsTree tree;
  util::MapPersistentEnv store;
  model::Manifest manifest;
  World() {
    tree.drives['C'] = dir.path() / "c";
    tree.vars = core::windows_default_vars();
    auto m = format::load_manifest(testing_support::source_dir() / "manifests" / "cu118-cudnn880-win.toml");
    if (!m) throw std::runtime_error(m.error().message);
    manifest = *m;
    testing_support::write_file(state() / ".stackpin" / "receipt.json", "{}");
    file("old\\cudnn\\bin\\cudnn64_8.dll");  // another cuDNN tree
  }
  fs::path state() const { return dir.path() / "staged"; }
  void file(std::string rel) const {
    std::replace(rel.begin(), rel.end(), '\\', '/');
    testing_support::write_file(dir.path() / "c" / rel, "MZ");
  }
  core::ActivateOptions options(EnvScope scope = EnvScope::user) const {
    core::ActivateOptions o;
    o.scope = scope;
    o.state = state();
    return o;
  }
  util::Result<model::ActivationReport> run(const core::ActivateOptions& o) {
    return core::activate_windows(manifest, knowledge::KnowledgeBase::embedded(), tree, store, o);
  }
  std::optional<std::string> get(const std::string& name, EnvScope scope = EnvScope::user) const {
    auto v = store.get(scope, name);
    return v && *v ? std::optional<std::string>((*v)->value) : std::nullopt;
  }
};

const std::string k_old_path = "C:\\old\\cudnn\\bin;%SystemRoot%\\system32;;C:\\tools\\bin";
const std::string k_bin = "C:\\tools\\cudnn\\v8.8.0\\bin";
const std::string k_cuda = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8";

TEST(Activate, PutsTheTreeFirstSetsTheVariablesAndUndoRestoresTheMachine) {
  World w;
  ASSERT_TRUE(w.store.set(EnvScope::user, "Path", {k_old_path, true}).ok());
  ASSERT_TRUE(w.store.set(EnvScope::user, "CUDA_PATH", {"C:\\CUDA\\v12.4", false}).ok());  // another toolkit's installer

  auto dry = w.run([&] {
    auto o = w.options();
    o.dry_run = true;
    return o;
  }());
  ASSERT_TRUE(dry.ok()) << dry.error().message;
  EXPECT_TRUE(dry->changed());
  EXPECT_EQ(w.get("Path"), k_old_path) << "a dry run writes nothing";
  EXPECT_EQ(w.store.announced, 0);
  EXPECT_FALSE(fs::exists(w.state() / ".stackpin" / "activation-user.json"));

  auto r = w.run(w.options());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(w.get("Path"), k_bin + ";%SystemRoot%\\system32;C:\\tools\\bin");
  EXPECT_TRUE(w.store.get(EnvScope::user, "Path")->value().expandable) << "the value's type is kept";
  EXPECT_EQ(w.get("CUDNN_PATH"), "C:\\tools\\cudnn\\v8.8.0");
  EXPECT_EQ(w.get("CUDA_PATH"), k_cuda);
  EXPECT_EQ(w.get("CUDA_PATH_V11_8"), k_cuda);
  EXPECT_EQ(r->path_removed, (std::vector<std::string>{"C:\\old\\cudnn\\bin"}));
  EXPECT_EQ(w.store.announced, 1);
  EXPECT_FALSE(w.get("Path", EnvScope::machine)) << "the other scope is untouched";

  auto again = w.run(w.options());
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->changed());
  EXPECT_EQ(w.store.announced, 1) << "nothing changed, nothing announced";

  // a second activation (the tree moved) keeps the values from before the first
  auto moved = w.options();
  moved.root = "C:\\tools\\cudnn\\v8.8.0-b";
  ASSERT_TRUE(w.run(moved).ok());
  EXPECT_EQ(w.get("Path"), "C:\\tools\\cudnn\\v8.8.0-b\\bin;%SystemRoot%\\system32;C:\\tools\\bin");

  auto undo = w.options();
  undo.undo = true;
  auto u = w.run(undo);
  ASSERT_TRUE(u.ok()) << u.error().message;
  EXPECT_EQ(w.get("Path"), "C:\\old\\cudnn\\bin;%SystemRoot%\\system32;C:\\tools\\bin") << "the removed entry back in its place";
  EXPECT_EQ(w.get("CUDA_PATH"), "C:\\CUDA\\v12.4");
  EXPECT_FALSE(w.get("CUDNN_PATH"));
  EXPECT_FALSE(w.get("CUDA_PATH_V11_8"));
  EXPECT_FALSE(fs::exists(w.state() / ".stackpin" / "activation-user.json"));
  auto twice = w.run(undo);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, util::ErrorCode::not_found);
}

TEST(Activate, UndoLeavesWhatTheUserChangedSince) {
  World w;
  ASSERT_TRUE(w.run(w.options()).ok());  // no Path before: it is created
  EXPECT_EQ(w.get("Path"), k_bin);
  ASSERT_TRUE(w.store.set(EnvScope::user, "CUDNN_PATH", {"D:\\mine", false}).ok());
  ASSERT_TRUE(w.store.set(EnvScope::user, "Path", {k_bin + ";D:\\bin", true}).ok());
  auto undo = w.options();
  undo.undo = true;
  auto u = w.run(undo);
  ASSERT_TRUE(u.ok()) << u.error().message;
  EXPECT_EQ(w.get("CUDNN_PATH"), "D:\\mine");
  EXPECT_EQ(w.get("Path"), "D:\\bin") << "only the entry stackpin added goes";
  ASSERT_EQ(u->left_alone.size(), 1u);
  EXPECT_NE(u->left_alone[0].find("CUDNN_PATH"), std::string::npos) << u->left_alone[0];
}

TEST(Activate, NeedsAStagedTreeAndSaysWhatToDoWithoutElevation) {
  World w;
  auto o = w.options();
  o.state = w.dir.path() / "nothing";
  auto none = w.run(o);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, util::ErrorCode::not_found);
  EXPECT_NE(none.error().hints.at(0).find("stackpin stage"), std::string::npos) << none.error().hints.at(0);

  w.store.machine_denied = true;
  auto denied = w.run(w.options(EnvScope::machine));
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, util::ErrorCode::io);
  EXPECT_FALSE(w.get("Path", EnvScope::machine));
}

TEST(Activate, AHostileRecordIsRefusedNamingTheEntry) {
  const std::string ok = R"({"schema":1,"scope":"user","path_added":["C:\\a\\bin"],"path_removed":[{"entry":"C:\\old","index":1}],)"
                         R"("vars":[{"name":"CUDNN_PATH","before":null,"after":"C:\\a"}]})";
  ASSERT_TRUE(format::parse_activation_record(ok, "rec.json", "user").ok());
  struct Case {
    std::string text, needle;
  };
  for (const auto& c : std::vector<Case>{
           {"not json", "not a JSON document"},
           {R"({"schema":2,"scope":"user","path_added":[],"path_removed":[],"vars":[]})", "schema"},
           {R"({"schema":1,"scope":"machine","path_added":[],"path_removed":[],"vars":[]})", "user scope"},
           {R"({"schema":1,"scope":"user","path_added":["C:\\a;C:\\b"],"path_removed":[],"vars":[]})", "path_added[0]"},
           {R"({"schema":1,"scope":"user","path_added":[""],"path_removed":[],"vars":[]})", "path_added[0] is empty"},
           {R"({"schema":1,"scope":"user","path_added":[],"path_removed":[{"entry":"C:\\x","index":99999}],"vars":[]})", "index"},
           {R"({"schema":1,"scope":"user","path_added":[],"path_removed":[],"vars":[{"name":"ComSpec","before":null,"after":"x"}]})",
            "ComSpec"},
           {R"({"schema":1,"scope":"user","path_added":[],"path_removed":[],"vars":[{"name":"CUDA_PATH","before":"a\nb","after":"x"}]})",
            "control character"},
           {R"({"schema":1,"scope":"user","path_added":[],"path_removed":[],"vars":[{"name":"CUDA_PATH","after":"x"}]})", "vars[0]"},
       }) {
    auto r = format::parse_activation_record(c.text, "rec.json", "user");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().message.find("rec.json"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(c.needle), std::string::npos) << c.text << "\n" << r.error().message;
  }
  std::string many = R"({"schema":1,"scope":"user","path_added":[)";
  for (int i = 0; i < 300; ++i) many += std::string(i ? "," : "") + "\"C:\\\\d" + std::to_string(i) + "\"";
  many += R"(],"path_removed":[],"vars":[]})";
  EXPECT_FALSE(format::parse_activation_record(many, "rec.json", "user").ok());
}

}  // namespace

}  // namespace activate_test
