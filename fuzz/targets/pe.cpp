// The PE reader (x86 vs x64 of a DLL, doctor's zlibwapi and cuDNN checks) on arbitrary bytes.
#include "core/windows/windows_search.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto m = core::pe_machine_of(fuzz::as_text(data, size));
  FUZZ_CHECK(m.empty() || m == "x64" || m == "x86" || m == "arm64" || m == "other", "an unknown machine name: " + m);
  auto dir = fuzz::fresh_dir();
  fuzz::write_file(dir / "x.dll", fuzz::as_text(data, size));
  FUZZ_CHECK(core::pe_machine(dir / "x.dll") == m, "the file and the bytes disagree");
  return 0;
}
