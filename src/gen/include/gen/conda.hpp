#pragma once
// A conda environment.yml for a manifest's stack (conda.cpp). Pure: the spec holds every decision
// (channels, which cuDNN, which framework comes from conda or pip and from which index) and the
// reasons for them; the same spec always gives the same bytes.
#include <string>
#include <vector>

namespace gen {

struct CondaEntry {
  std::string spec;                   // "cudnn=8.9.7.29", "torch==2.1.0+cu121", "--index-url URL"
  std::vector<std::string> comments;  // comment lines written above it: why this entry
};

struct CondaSpec {
  std::string manifest_file, manifest_sha256;  // the header names the manifest it came from
  std::string manifest_description;            // "" when the manifest has none
  std::vector<std::string> header_notes;       // comment lines under the header
  std::string env_name;                        // name:
  std::vector<std::string> channels;           // channels:, in the manifest's order
  std::vector<CondaEntry> dependencies;        // conda packages, in order
  std::vector<CondaEntry> pip;                 // the pip: subsection (index options first); empty = none
};

// The environment.yml text: a header comment (manifest file and sha256, description), name,
// channels and dependencies, with `pip` and a `pip:` list when the spec has pip entries. Every
// value that came from the manifest (name, channels, description, file name) is written with
// yaml_quote, inside comments too, so no value can end a comment or change the document's
// structure; package specs made only of name, operator and version characters stay plain.
std::string render_environment_yml(const CondaSpec& s);

}  // namespace gen
