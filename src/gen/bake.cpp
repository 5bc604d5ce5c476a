// docker-bake.json. Bake reads JSON as it reads HCL: "group" and "target" objects keyed by name.
// Each target is written out in full (no "inherits"), so that what a target builds is read in one
// place. Cache entries use BuildKit's registry cache: cache-from reads what any builder wrote,
// cache-to (mode=max) writes every stage's layers, one cache reference per image, platform and
// exporting stage (runtime, devel) so that builders of different targets do not overwrite each
// other's.
#include "gen/bake.hpp"

#include <algorithm>
#include <set>

#include "gen/quote.hpp"

namespace gen {

namespace {

// What bake accepts as a target or group name.
bool target_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}
// An image tag: letters, digits, '_', '.' and '-'.
bool tag_name(const std::string& s) {
  return !s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == std::string::npos;
}

struct Target {
  std::string name, stage, tag;
  const BakeImage* image;
};

std::string render_target(const Target& t, bool last) {
  const BakeImage& i = *t.image;
  std::string out = "    " + json_quote(t.name) + ": {\n";
  out += "      \"context\": " + json_quote(i.context) + ",\n";
  out += "      \"dockerfile\": \"Dockerfile\",\n";
  out += "      \"target\": " + json_quote(t.stage) + ",\n";
  out += "      \"platforms\": " + json_list({i.platform}) + ",\n";
  out += "      \"args\": { \"BASE_IMAGE\": " + json_quote(i.base_image) + " },\n";
  out += "      \"tags\": " + json_list({i.image + ":" + t.tag});
  if (!i.cache_ref.empty()) {
    // runtime and devel each export to their own reference (an export replaces what a reference
    // held); devel and test read the runtime's too, whose layers they build on
    const std::string own = t.stage == "devel" ? i.cache_ref + "-devel" : i.cache_ref;
    std::vector<std::string> from = {"type=registry,ref=" + i.cache_ref};
    if (t.stage == "devel") from.push_back("type=registry,ref=" + own);
    out += ",\n      \"cache-from\": " + json_list(from);
    // the test target only reads the cache: it adds one layer, and its writes would race the runtime's
    if (t.stage != "test") out += ",\n      \"cache-to\": " + json_list({"type=registry,ref=" + own + ",mode=max"});
  }
  out += "\n    }";
  out += last ? "\n" : ",\n";
  return out;
}

}  // namespace

util::Result<std::string> render_bake(const std::vector<BakeImage>& images) {
  auto refuse = [](const std::string& what, const std::string& v) {
    return util::Error(util::ErrorCode::invalid, what + " \"" + comment_safe(v) + "\" cannot be written into a bake file")
        .with_hint("target names are letters, digits, '-' and '_'; paths and image references have no blanks, quotes or commas");
  };
  if (images.empty()) return util::Error(util::ErrorCode::invalid, "a bake file needs at least one image");
  std::vector<Target> targets;
  std::set<std::string> seen;
  for (const auto& i : images) {
    if (!target_name(i.name)) return refuse("the target name", i.name);
    if (!plain_reference(i.context) || i.context.front() == '/') return refuse("the context", i.context);
    for (const auto* v : {&i.platform, &i.base_image, &i.image})
      if (!plain_reference(*v)) return refuse("the value", *v);
    if (!tag_name(i.tag)) return refuse("the tag", i.tag);
    if (!i.cache_ref.empty() && !plain_reference(i.cache_ref)) return refuse("the cache reference", i.cache_ref);
    targets.push_back({i.name, "runtime", i.tag, &i});
    if (i.devel) targets.push_back({i.name + "-devel", "devel", i.tag + "-devel", &i});
    if (i.test) targets.push_back({i.name + "-test", "test", i.tag + "-test", &i});
  }
  for (const auto& t : targets)
    if (!seen.insert(t.name).second)
      return util::Error(util::ErrorCode::invalid, "two images would both be the bake target \"" + t.name + "\"")
          .with_hint("give the manifests different names (the `name` key)");

  std::vector<std::string> runtime, devel, test;
  for (const auto& t : targets) (t.stage == "runtime" ? runtime : t.stage == "devel" ? devel : test).push_back(t.name);
  std::string out = "{\n  \"group\": {\n";
  std::vector<std::pair<std::string, const std::vector<std::string>*>> groups = {{"default", &runtime}};
  if (!devel.empty()) groups.push_back({"devel", &devel});
  if (!test.empty()) groups.push_back({"test", &test});
  for (std::size_t g = 0; g < groups.size(); ++g)
    out += "    " + json_quote(groups[g].first) + ": { \"targets\": " + json_list(*groups[g].second) + " }" +
           (g + 1 < groups.size() ? ",\n" : "\n");
  out += "  },\n  \"target\": {\n";
  for (std::size_t t = 0; t < targets.size(); ++t) out += render_target(targets[t], t + 1 == targets.size());
  out += "  }\n}\n";
  return out;
}

}  // namespace gen
