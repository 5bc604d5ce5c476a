// lock --check for the Python lock: every pinned wheel is looked up again where it came from. An
// index's project page lists each file with its hash; a wheel that is no longer listed, or listed
// with another hash, is what breaks an install months later, so it is named now. A wheel whose
// package names no index is asked of its server directly (its size), a file:// one is hashed.
#include <map>

#include "core/archives/http.hpp"
#include "core/python/python_env.hpp"
#include "crypto/sha256.hpp"
#include "format/simple_index.hpp"

namespace core {
namespace {

constexpr std::uint64_t k_max_page = 64u << 20;

// The wheel's bytes from its URL, hashed: missing (404), unreadable (any other failure), changed
// (another size or SHA-256).
void check_bytes(const model::PyWheel& w, const PythonToolOptions& o, WheelRecheck& r) {
  crypto::Sha256 h;
  std::uint64_t got = 0;
  net::Sink sink;
  sink.start = [](const net::Response&) { return true; };
  sink.data = [&](const char* data, std::size_t size) {
    got += size;
    if (got > w.size) return false;  // more than the pin: changed, whatever follows
    h.update(data, size);
    return true;
  };
  auto a = net::attempt(http_request(w.url, o.env), sink);
  if (a.error && !(a.aborted_by_sink && got > w.size)) {
    r.state = a.error->code == util::ErrorCode::not_found ? WheelRecheck::State::missing : WheelRecheck::State::unreadable;
    r.detail = w.url + ": " + a.error->message;
    return;
  }
  const std::string hex = got == w.size ? crypto::to_hex(h.finish()) : std::string();
  if (got != w.size || hex != w.sha256) {
    r.state = WheelRecheck::State::changed;
    r.detail = w.url + " now sends " +
               (got > w.size ? "more than " + std::to_string(w.size) + " bytes" : std::to_string(got) + " bytes, SHA-256 " + hex);
  }
}

}  // namespace

std::vector<WheelRecheck> recheck_pylock(const model::PyLock& lock, const PythonToolOptions& o) {
  std::vector<WheelRecheck> out;
  struct Page {
    std::vector<format::IndexFile> files;
    std::string error;
    bool gone = false;  // the index answered that the project has no page (404)
  };
  std::map<std::string, Page> pages;
  for (const auto& p : lock.packages) {
    for (const auto& w : p.wheels) {
      WheelRecheck r;
      r.package = p.name + " " + p.version;
      r.wheel = w.name;
      r.index = p.index;
      r.pos = w.pos;
      if (auto local = model::file_url_path(w.url); !local.empty()) {
        auto hashed = crypto::hash_file(local);
        if (!hashed) {
          r.state = WheelRecheck::State::missing;
          r.detail = local + ": " + hashed.error().message;
        } else if (crypto::to_hex(hashed->digest) != w.sha256 || hashed->size != w.size) {
          r.state = WheelRecheck::State::changed;
          r.detail = local + " now has SHA-256 " + crypto::to_hex(hashed->digest) + " (" + std::to_string(hashed->size) + " bytes)";
        }
        out.push_back(std::move(r));
        continue;
      }
      if (p.index.empty()) {
        // no index to ask: the wheel's own bytes, from its URL
        check_bytes(w, o, r);
        out.push_back(std::move(r));
        continue;
      }
      std::string base = p.index;
      while (!base.empty() && base.back() == '/') base.pop_back();
      std::string page_url = base + "/" + p.name + "/";
      auto it = pages.find(page_url);
      if (it == pages.end()) {
        Page page;
        // pip reads a local PEP 503 tree's directories through their index.html
        auto got = http_text(page_url.rfind("file://", 0) == 0 ? page_url + "index.html" : page_url, k_max_page, o.env);
        if (got) {
          page.files = format::parse_simple_index(*got, page_url);
        } else {
          page.error = got.error().message;
          page.gone = got.error().code == util::ErrorCode::not_found;
        }
        it = pages.emplace(page_url, std::move(page)).first;
      }
      const Page& page = it->second;
      if (!page.error.empty()) {
        r.state = page.gone ? WheelRecheck::State::missing : WheelRecheck::State::unreadable;
        r.detail = page_url + ": " + page.error;
        out.push_back(std::move(r));
        continue;
      }
      const format::IndexFile* listed = nullptr;
      for (const auto& f : page.files)
        if (f.file == w.name) listed = &f;
      if (!listed) {
        r.state = WheelRecheck::State::missing;
        r.detail = page_url + " no longer lists it";
      } else if (!listed->sha256.empty() && listed->sha256 != w.sha256) {
        r.state = WheelRecheck::State::changed;
        r.detail = page_url + " lists it with SHA-256 " + listed->sha256;
      } else if (listed->url != w.url) {
        r.state = WheelRecheck::State::changed;
        r.detail = page_url + " lists it at another URL, " + listed->url + ": the pinned one may no longer serve it";
      } else if (listed->sha256.empty()) {
        check_bytes(w, o, r);  // the page gives no hash: the bytes do
      }
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace core
