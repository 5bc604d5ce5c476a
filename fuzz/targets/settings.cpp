// The settings file reader (~/.config/stackpin/config.toml) on arbitrary bytes.
#include "format/config_reader.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto c = format::parse_user_config(fuzz::as_text(data, size), "config.toml");
  if (!c) FUZZ_CHECK(!c.error().message.empty(), "an error without a message");
  return 0;
}
