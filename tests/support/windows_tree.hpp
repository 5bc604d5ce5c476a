#pragma once
// A fake Windows drive for the doctor tests, built at test time under a local directory: every
// Windows path "C:\a\b" lands at <root>/a/b with the case it is written in (so tests can make
// mixed-case names on disk and ask for them in another case). DLLs are small placeholder files,
// or minimal PE headers when a test needs the machine type.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace testing_support {

class WindowsTree {
 public:
  explicit WindowsTree(std::filesystem::path root);
  const std::filesystem::path& root() const { return m_root; }

  // <root>/a/b for "C:\a\b" (the drive letter is dropped).
  std::filesystem::path local(std::string_view windows_path) const;
  void dir(std::string_view windows_path) const;
  void file(std::string_view windows_path, const std::string& content = "placeholder, not a DLL\n") const;
  // A minimal PE image: "MZ", e_lfanew, "PE\0\0", the machine (0x8664 x64, 0x14c x86).
  void pe(std::string_view windows_path, std::uint16_t machine) const;

  // C:\Windows with System32 and System; the VC++ runtime DLLs in System32 when asked.
  void windows(bool vc_runtime = true) const;
  // A CUDA toolkit's DLL directory: ...\CUDA\v<X.Y>\bin (bin\x64 too when `x64`), with cudart.
  std::string cuda(const std::string& xy, bool x64 = false) const;
  // A cuDNN tree at `root` (Windows path): every DLL in `dlls` in root\<bin>, and
  // root\include\cudnn_version.h of `version` (three parts) when `header`. Returns root\<bin>.
  std::string cudnn(const std::string& root, const std::string& version, const std::vector<std::string>& dlls,
                    const std::string& bin = "bin", bool header = true) const;

 private:
  std::filesystem::path m_root;
};

// The text of a cudnn_version.h for "8.9.5".
std::string cudnn_version_header(const std::string& version);

}  // namespace testing_support
