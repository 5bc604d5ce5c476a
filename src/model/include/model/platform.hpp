// NVIDIA's redistributable platforms and the host's.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace model {

// NVIDIA's redistributable platform names (linux-aarch64 is Jetson; linux-sbsa is Arm servers;
// windows-arm64 is Windows on Arm, from CUDA 13.4 and cuDNN 9.27).
enum class Platform { linux_x86_64, linux_sbsa, windows_x86_64, linux_aarch64, windows_arm64 };

std::optional<Platform> parse_platform(std::string_view text);
// The Linux archive platform of the machine stackpin was built for: linux-sbsa on 64-bit Arm
// servers, linux-x86_64 otherwise (Jetson's linux-aarch64 is only ever chosen explicitly).
Platform host_linux_platform();
const char* to_string(Platform p);
bool is_windows(Platform p);
// The Windows architecture directory NVIDIA's Windows trees use below bin\ and lib\ ("x64" or
// "arm64"): CUDA 13's bin\x64 and bin\arm64, cuDNN's lib\x64 and lib\arm64. "" on Linux.
const char* windows_arch_dir(Platform p);
// The PE machine name of a Windows platform's images ("x64", "arm64"), as windows_search reads it.
const char* windows_machine(Platform p);
const std::vector<std::string>& platform_names();
// Archive extension NVIDIA uses for the platform ("zip" or "tar.xz").
const char* archive_extension(Platform p);

enum class Os { linux, windows };
const char* to_string(Os os);

}  // namespace model
