#pragma once
// The CUDA toolkit releases stackpin can provision component by component: NVIDIA's redistrib
// manifests (data/redist/cuda/redistrib_<release>.json, embedded verbatim), each parsed on first
// use, and the resolution of a manifest's [cuda] components (NVIDIA's names, short aliases and the
// named sets of cuda-components.toml) into one archive per component for a platform.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "format/redistrib.hpp"
#include "model/facts.hpp"
#include "model/platform.hpp"
#include "model/version.hpp"
#include "util/result.hpp"

namespace knowledge {

class CudaCatalog {
 public:
  // NVIDIA's base URL the manifests' relative_path values are relative to.
  static constexpr const char* k_base_url = "https://developer.download.nvidia.com/compute/cuda/redist/";

  // The manifests embedded at build time.
  static const CudaCatalog& embedded();
  // A catalog of manifests given as (file name, JSON text); names must be redistrib_<release>.json.
  // Errors: invalid (a name that does not say its release, two files for one release).
  static util::Result<CudaCatalog> from_files(const std::vector<std::pair<std::string, std::string_view>>& files);

  // The embedded manifests and, for releases they lack, manifests read elsewhere (NVIDIA's, read
  // live), each with how a finding names its source. One of a release the embedded ones have is
  // left out: stackpin's own copy stands.
  static CudaCatalog embedded_with(std::vector<std::pair<format::CudaRedistribRelease, std::string>> read);

  CudaCatalog(CudaCatalog&&) noexcept;
  CudaCatalog& operator=(CudaCatalog&&) noexcept;
  ~CudaCatalog();

  // The releases the catalog has a manifest for, ascending.
  std::vector<model::Version> releases() const;
  // The manifest of exactly `release` (three parts), parsed on first use; nullptr when the catalog has
  // none. A manifest that does not parse is an error naming its file.
  util::Result<const format::CudaRedistribRelease*> release(const model::Version& release) const;
  // Where the manifest of a release came from, for a finding's or a lock's source.
  std::string source_of(const model::Version& release) const;
  // The release NVIDIA's file name says ("redistrib_12.4.1.json" -> 12.4.1; any folder before
  // it ignored), nullopt for another name.
  static std::optional<model::Version> release_of_file(std::string_view path);
  // NVIDIA's name for a component of a release ("cuda_cudart" -> "CUDA Runtime (cudart)"), as
  // version.json lists it; the id itself when the catalog does not know the release or component.
  std::string component_name(const model::Version& release, std::string_view id) const;

 private:
  struct Entry;
  CudaCatalog();
  std::vector<std::unique_ptr<Entry>> m_entries;
};

// One component a manifest's [cuda] components resolve to, with its archive for the platform.
struct ResolvedComponent {
  const format::CudaComponent* component = nullptr;
  const format::CudaComponentArchive* archive = nullptr;
  std::size_t index = 0;  // the position in the list of names that brought it in
  std::string via;        // that name as written ("runtime", "cudart", "cuda_cudart")
};

// A name that cannot be provisioned: not a component, set or alias of the release, or not shipped
// for the platform. `message` says what and `hint` lists what exists.
struct ComponentProblem {
  std::size_t index = 0;
  std::string message, hint;
};

struct ComponentResolution {
  std::vector<ResolvedComponent> components;  // in the order the names bring them in, each once
  std::vector<ComponentProblem> problems;
};

// The sets of `sets` that apply to a CUDA major, by name ("runtime" -> the set for that major).
const model::CudaComponentSet* component_set(const std::vector<model::CudaComponentSet>& sets, std::string_view name, int cuda_major);

// Resolves `names` against one release for one platform. A name is, in this order: a set for the
// release's major, NVIDIA's component name, or a short alias (cudart -> cuda_cudart, cublas ->
// libcublas). A set's required members must all be shipped for the platform; its optional ones are
// taken where they are.
ComponentResolution resolve_components(const format::CudaRedistribRelease& release, int cuda_major, model::Platform platform,
                                       const std::vector<std::string>& names, const std::vector<model::CudaComponentSet>& sets);

// The component NVIDIA's manifest names `id` ("cuda_cudart"), nullptr when the release has none.
const format::CudaComponent* find_component(const format::CudaRedistribRelease& release, std::string_view id);
// The component a name means: NVIDIA's key, or that key without its "cuda_" or "lib" prefix
// ("nvcc" -> cuda_nvcc, "cublas" -> libcublas); nullptr when the release has none.
const format::CudaComponent* find_component_named(const format::CudaRedistribRelease& release, const std::string& name);

// The platform's archive of a component, nullptr when NVIDIA does not ship it there.
const format::CudaComponentArchive* archive_for(const format::CudaComponent& c, model::Platform platform);

}  // namespace knowledge
