// The in-memory persistent environment (tests) and what every backend shares.
#include "util/persistent_env.hpp"

#include "util/strings.hpp"

namespace util {

const char* to_string(EnvScope s) { return s == EnvScope::user ? "user" : "machine"; }

Result<std::optional<PersistentValue>> MapPersistentEnv::get(EnvScope scope, const std::string& name) const {
  auto it = m_values.find({scope, to_lower(name)});
  if (it == m_values.end()) return std::optional<PersistentValue>();
  return std::optional<PersistentValue>(it->second);
}

Status MapPersistentEnv::set(EnvScope scope, const std::string& name, const PersistentValue& v) {
  if (scope == EnvScope::machine && machine_denied)
    return Error(ErrorCode::io, "cannot write " + name + " in " + where(scope) + ": access is denied");
  m_values[{scope, to_lower(name)}] = v;
  return {};
}

Status MapPersistentEnv::remove(EnvScope scope, const std::string& name) {
  if (scope == EnvScope::machine && machine_denied)
    return Error(ErrorCode::io, "cannot remove " + name + " from " + where(scope) + ": access is denied");
  m_values.erase({scope, to_lower(name)});
  return {};
}

std::string MapPersistentEnv::where(EnvScope scope) const {
  return scope == EnvScope::user ? "the user environment" : "the machine environment";
}

}  // namespace util
