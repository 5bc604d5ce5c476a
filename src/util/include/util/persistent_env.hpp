#pragma once
// The environment a user's new programs start with, as opposed to this process's: on Windows the
// registry's User (HKCU\Environment) and Machine (HKLM\...\Session Manager\Environment) values,
// which `stackpin activate` changes. Behind an interface, so that the activation's decisions are
// tested against a map on any OS and the registry backend under Wine.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "util/result.hpp"

namespace util {

enum class EnvScope { user, machine };
const char* to_string(EnvScope s);  // "user", "machine"

struct PersistentValue {
  std::string value;        // UTF-8, %VARS% as written
  bool expandable = false;  // REG_EXPAND_SZ: %VARS% are expanded when a program starts
};

class PersistentEnv {
 public:
  virtual ~PersistentEnv() = default;
  // nullopt when the scope has no such variable. Errors: io (the store cannot be read).
  virtual Result<std::optional<PersistentValue>> get(EnvScope scope, const std::string& name) const = 0;
  // Errors: io (the Machine scope without an elevated prompt among them, with what to do).
  virtual Status set(EnvScope scope, const std::string& name, const PersistentValue& v) = 0;
  virtual Status remove(EnvScope scope, const std::string& name) = 0;
  // Tells running programs (Explorer, new terminals) that the environment changed.
  virtual void announce() = 0;
  // Where a scope's values live, for messages ("HKCU\Environment").
  virtual std::string where(EnvScope scope) const = 0;
};

// The machine's own store: the registry on Windows. Errors: unsupported elsewhere (Linux has no
// per-user or machine environment store; activation there writes files).
Result<std::unique_ptr<PersistentEnv>> system_persistent_env();

// A store in memory, for tests: names compare without case, as Windows compares them.
class MapPersistentEnv final : public PersistentEnv {
 public:
  Result<std::optional<PersistentValue>> get(EnvScope scope, const std::string& name) const override;
  Status set(EnvScope scope, const std::string& name, const PersistentValue& v) override;
  Status remove(EnvScope scope, const std::string& name) override;
  void announce() override { ++announced; }
  std::string where(EnvScope scope) const override;
  int announced = 0;
  bool machine_denied = false;  // set() and remove() of the Machine scope fail as without elevation

 private:
  std::map<std::pair<EnvScope, std::string>, PersistentValue> m_values;
};

}  // namespace util
