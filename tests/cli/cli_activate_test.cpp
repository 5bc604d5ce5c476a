// `stackpin activate` on Linux through the real binary: the machine scope installs the profile.d
// snippet and the ld.so.conf.d entry `generate` writes into --root, the user scope a snippet
// sourced from a marked block in ~/.profile (and a login shell then finds the staged tree first),
// --undo removes exactly those and leaves a file the user changed. The Windows registry side runs
// under Wine (tests/windows/).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "test_support.hpp"
#include "tree.hpp"

namespace cli_activate_test {

namespace {
namespace fs = std::filesystem;
using testing_support::ScratchDir;
using testing_support::show;
using testing_support::stackpin;

struct World {
  ScratchDir dir;
  fixtures::Info info;
  World() {
    fs::create_directories(dir.path() / "archives");
    info = fixtures::make_cudnn_linux(dir.path() / "archives", "8.9.7.29", 12);
    testing_support::write_file(
        manifest(), fixtures::local_manifest("8.9.7.29", 12, "12.2.2", {{"linux-x86_64", info}},
                                             "[targets.linux]\nlayout = \"lib64\"\nprefix = \"" + (dir.path() / "tree").string() + "\"\n"));
    auto s = stackpin(
        {"stage", manifest().string(), "--archives", (dir.path() / "archives").string(), "--target", "linux", "--dest", tree().string()});
    if (s.exit_code != 0) throw std::runtime_error(show(s));
  }
  fs::path manifest() const { return dir.path() / "stack.toml"; }
  fs::path tree() const { return dir.path() / "tree"; }
  fs::path root() const { return dir.path() / "root"; }
  fs::path home() const { return dir.path() / "home"; }
  std::vector<std::string> env() const { return {"HOME=" + home().string()}; }
};

TEST(CliActivate, MachineScopeInstallsWhatGenerateWritesAndUndoRemovesIt) {
  World w;
  auto dry = stackpin({"activate", w.manifest().string(), "--scope", "machine", "--root", w.root().string(), "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << show(dry);
  EXPECT_TRUE(testing_support::contains(dry.out, "would write")) << show(dry);
  EXPECT_FALSE(fs::exists(w.root() / "etc")) << "a dry run writes nothing";

  auto a = stackpin({"activate", w.manifest().string(), "--scope", "machine", "--root", w.root().string()});
  ASSERT_EQ(a.exit_code, 0) << show(a);
  fs::path profile = w.root() / "etc" / "profile.d" / "stackpin-fixture.sh";
  fs::path conf = w.root() / "etc" / "ld.so.conf.d" / "stackpin-fixture.conf";
  ASSERT_TRUE(fs::is_regular_file(profile)) << show(a);
  ASSERT_TRUE(fs::is_regular_file(conf)) << show(a);
  auto gp = stackpin({"generate", "profile-d", w.manifest().string()});
  auto gl = stackpin({"generate", "ldconfig", w.manifest().string()});
  EXPECT_EQ(testing_support::read_text(profile), gp.out);
  EXPECT_EQ(testing_support::read_text(conf), gl.out);
  EXPECT_TRUE(testing_support::contains(testing_support::read_text(conf), (w.tree() / "lib64").string()));

  auto again = stackpin({"activate", w.manifest().string(), "--scope", "machine", "--root", w.root().string(), "--json"});
  ASSERT_EQ(again.exit_code, 0) << show(again);
  EXPECT_EQ(nlohmann::json::parse(again.out)["report"]["changed"], false) << again.out;

  auto undo = stackpin({"activate", w.manifest().string(), "--scope", "machine", "--root", w.root().string(), "--undo"});
  ASSERT_EQ(undo.exit_code, 0) << show(undo);
  EXPECT_FALSE(fs::exists(profile)) << show(undo);
  EXPECT_FALSE(fs::exists(conf)) << show(undo);

  // a file the user changed since is left alone, and said so
  ASSERT_EQ(stackpin({"activate", w.manifest().string(), "--scope", "machine", "--root", w.root().string()}).exit_code, 0);
  testing_support::write_file(conf, "/opt/mine/lib\n");
  auto kept = stackpin({"activate", w.manifest().string(), "--scope", "machine", "--root", w.root().string(), "--undo"});
  ASSERT_EQ(kept.exit_code, 0) << show(kept);
  EXPECT_EQ(testing_support::read_text(conf), "/opt/mine/lib\n");
  EXPECT_FALSE(fs::exists(profile));
  EXPECT_TRUE(testing_support::contains(kept.out, "left alone")) << show(kept);
}

TEST(CliActivate, UserScopeIsSourcedFromProfileAndUndoRestoresItExactly) {
  World w;
  const std::string original = "# the user's own profile\nexport EDITOR=vi\n";
  testing_support::write_file(w.home() / ".profile", original);
  auto a = stackpin({"activate", w.manifest().string()}, w.env());
  ASSERT_EQ(a.exit_code, 0) << show(a);
  std::string profile = testing_support::read_text(w.home() / ".profile");
  EXPECT_EQ(profile.rfind(original, 0), 0u) << "the user's lines stay first and unchanged:\n" << profile;
  EXPECT_TRUE(testing_support::contains(profile, "# >>> stackpin activate fixture >>>")) << profile;
  EXPECT_TRUE(fs::is_regular_file(w.home() / ".config" / "stackpin" / "activate-fixture.sh"));

  // a login shell now finds the staged tree first on the loader path
  auto sh = testing_support::run_process({"/bin/sh", "-c", ". \"$HOME/.profile\"; printf '%s' \"$LD_LIBRARY_PATH\""},
                                         {"HOME=" + w.home().string(), "LD_LIBRARY_PATH=/opt/other/lib"});
  ASSERT_EQ(sh.exit_code, 0) << show(sh);
  EXPECT_EQ(sh.out.rfind((w.tree() / "lib64").string(), 0), 0u) << sh.out;

  auto twice = stackpin({"activate", w.manifest().string()}, w.env());
  ASSERT_EQ(twice.exit_code, 0) << show(twice);
  EXPECT_EQ(testing_support::read_text(w.home() / ".profile"), profile) << "activating again adds no second block";

  auto undo = stackpin({"activate", w.manifest().string(), "--undo"}, w.env());
  ASSERT_EQ(undo.exit_code, 0) << show(undo);
  EXPECT_EQ(testing_support::read_text(w.home() / ".profile"), original);
  EXPECT_FALSE(fs::exists(w.home() / ".config" / "stackpin" / "activate-fixture.sh"));
}

TEST(CliActivate, AProfileThatIsALinkStaysOneAndKeepsItsMode) {
  World w;
  // a dotfile manager's link, to a private file; and a ~/.bash_profile that bash reads instead
  testing_support::write_file(w.dir.path() / "dotfiles" / "profile", "export EDITOR=vi\n");
  fs::permissions(w.dir.path() / "dotfiles" / "profile", fs::perms::owner_read | fs::perms::owner_write);
  fs::create_directories(w.home());
  fs::create_symlink(w.dir.path() / "dotfiles" / "profile", w.home() / ".profile");
  testing_support::write_file(w.home() / ".bash_profile", "# bash's own\n");
  auto a = stackpin({"activate", w.manifest().string(), "--json"}, w.env());
  ASSERT_EQ(a.exit_code, 0) << show(a);
  EXPECT_TRUE(fs::is_symlink(w.home() / ".profile"));
  EXPECT_TRUE(testing_support::contains(testing_support::read_text(w.dir.path() / "dotfiles" / "profile"), "stackpin activate fixture"));
  EXPECT_EQ(fs::status(w.dir.path() / "dotfiles" / "profile").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  auto notes = nlohmann::json::parse(a.out)["report"]["notes"];
  ASSERT_EQ(notes.size(), 1u) << a.out;
  EXPECT_TRUE(testing_support::contains(notes[0].get<std::string>(), ".bash_profile")) << a.out;
  auto undo = stackpin({"activate", w.manifest().string(), "--undo"}, w.env());
  ASSERT_EQ(undo.exit_code, 0) << show(undo);
  EXPECT_TRUE(fs::is_symlink(w.home() / ".profile"));
  EXPECT_EQ(testing_support::read_text(w.dir.path() / "dotfiles" / "profile"), "export EDITOR=vi\n");
}

TEST(CliActivate, RefusesWhatItCannotActivate) {
  World w;
  auto none = stackpin({"activate", w.manifest().string(), "--dest", (w.dir.path() / "nothing").string()}, w.env());
  EXPECT_NE(none.exit_code, 0) << show(none);
  EXPECT_TRUE(testing_support::contains(none.err, "nothing is staged")) << show(none);
  auto scope = stackpin({"activate", w.manifest().string(), "--scope", "everyone"}, w.env());
  EXPECT_EQ(scope.exit_code, 2) << show(scope);
  // the machine scope that cannot write there says what to do (profile.d is a file here, which
  // stops root too)
  testing_support::write_file(w.root() / "etc" / "profile.d", "not a directory");
  auto denied = stackpin({"activate", w.manifest().string(), "--scope", "machine", "--root", w.root().string()});
  EXPECT_NE(denied.exit_code, 0) << show(denied);
  EXPECT_TRUE(testing_support::contains(denied.err, "sudo")) << show(denied);
  EXPECT_FALSE(fs::exists(w.root() / "etc" / "ld.so.conf.d" / "stackpin-fixture.conf")) << show(denied);
}

TEST(CliActivate, AReceiptValueNeverReachesAGeneratedFile) {
  // a tree copied from elsewhere whose receipt says a version with a line break: written into the
  // profile.d script and the loader entry, it would add a loader path and a command every login
  // shell runs (as root with --scope machine)
  for (const std::string& field : {std::string("cudnn"), std::string("prefix"), std::string("manifest")}) {
    SCOPED_TRACE(field);
    World w;
    fs::path receipt = w.tree() / ".stackpin" / "receipt.json";
    auto j = nlohmann::json::parse(testing_support::read_text(receipt));
    if (field == "cudnn") j["cudnn"]["version"] = "8.9.7.29\n/tmp/evil\ntouch /tmp/pwned #";
    if (field == "prefix") j["prefix"] = (w.tree()).string() + "\n/tmp/evil";
    if (field == "manifest") j["manifest"]["name"] = "fixture\nrm -rf ~";
    testing_support::write_file(receipt, j.dump(1));
    auto a = stackpin({"activate", w.manifest().string(), "--scope", "machine", "--root", w.root().string()});
    EXPECT_EQ(a.exit_code, 1) << show(a);
    EXPECT_TRUE(testing_support::contains(a.err, "receipt.json")) << show(a);
    EXPECT_TRUE(testing_support::contains(a.err, "stackpin never writes such a value")) << show(a);
    EXPECT_FALSE(fs::exists(w.root() / "etc")) << "nothing was written";
    auto user = stackpin({"activate", w.manifest().string()}, w.env());
    EXPECT_EQ(user.exit_code, 1) << show(user);
    EXPECT_FALSE(fs::exists(w.home() / ".profile")) << show(user);
  }
}

}  // namespace

}  // namespace cli_activate_test
