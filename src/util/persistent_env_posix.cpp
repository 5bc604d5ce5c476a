// Linux and other POSIX systems keep no environment store of their own: activation there writes
// profile and loader files instead (core/provision/activate.cpp).
#include "util/persistent_env.hpp"

namespace util {

Result<std::unique_ptr<PersistentEnv>> system_persistent_env() {
  return Error(ErrorCode::unsupported, "this system keeps no user or machine environment in a registry")
      .with_hint("on Linux, `stackpin activate` installs a profile.d script and an ld.so.conf.d entry instead");
}

}  // namespace util
