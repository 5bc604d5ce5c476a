// core::fetch against a real HTTP/1.1 server on loopback (tests/support/http_server): the cache
// layout, resumption with Range, retries, stalls, drips (the rate check and the deadline), refused
// bytes, 404, a server ignoring Range, --offline, mirrors (http and file://), proxies, TLS failures
// and a full disk; plus the pieces fetch is made of (candidate URLs, the cache's default place, the
// settings file).
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include "core/archives/cache.hpp"
#include "core/archives/fetch.hpp"
#include "core/archives/verify.hpp"
#include "crypto/sha256.hpp"
#include "format/config_reader.hpp"
#include "format/manifest_reader.hpp"
#include "http_server.hpp"
#include "test_support.hpp"

namespace fetch_test {

namespace {
namespace fs = std::filesystem;
using testing_support::Fault;
using testing_support::HttpServer;
using testing_support::ScratchDir;
using util::ErrorCode;

const std::string k_nvidia = "https://developer.download.nvidia.com/compute/cudnn/redist/";
const std::string k_file = "cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz";
const std::string k_path = "/cudnn/" + k_file;

std::string blob(std::size_t n, unsigned seed = 7) {
  std::string s(n, '\0');
  std::uint32_t x = seed;
  for (auto& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

std::string hex(const std::string& data) { return crypto::to_hex(crypto::sha256_of(data)); }

std::string manifest_text(const std::string& url, const std::string& sha, std::uint64_t size) {
  return "schema = 1\nname = \"fixture\"\n\n[cuda]\nversion = \"12.2.2\"\n\n[cudnn]\nversion = \"8.9.7.29\"\ncuda = 12\n\n"
         "[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\nurl = \"" +
         url + "\"\nsha256 = \"" + sha + "\"\nsize = " + std::to_string(size) + "\n";
}

class Fetch : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"http_proxy", "https_proxy", "HTTPS_PROXY", "ALL_PROXY", "all_proxy", "no_proxy", "NO_PROXY"}) ::unsetenv(v);
    body = blob(300000);
    server.serve(k_path, body);
    cache = scratch.path() / "cache";
  }

  model::Manifest manifest(const std::string& url, const std::string& data) {
    auto m = format::parse_manifest(manifest_text(url, hex(data), data.size()), "stack.toml");
    EXPECT_TRUE(m) << (m ? "" : m.error().message);
    return *m;
  }

  core::FetchOptions options() {
    core::FetchOptions o;
    o.cache_dir = cache;
    o.retry_delay = std::chrono::milliseconds(1);
    o.stall_timeout_s = 1;
    o.connect_timeout_s = 5;
    o.sleep = [this](std::chrono::milliseconds d) { sleeps.push_back(d.count()); };
    return o;
  }

  model::FetchedArchive run(const model::Manifest& m, const core::FetchOptions& o) {
    findings.clear();
    auto r = core::fetch(m, knowledge::KnowledgeBase::embedded(), o);
    findings = testing_support::findings_of(r);
    model::FetchedArchive none;  // what a failed call gives the test, which then fails on it
    none.error = util::Error(ErrorCode::internal, "core::fetch returned no report");
    if (!r) {
      ADD_FAILURE() << r.error().message;
      return none;
    }
    if (r->archives.size() != 1u) {
      ADD_FAILURE() << r->archives.size() << " archives in the report";
      return none;
    }
    return r->archives.front();
  }

  fs::path cached_path() const { return testing_support::cached_archive(cache, hex(body), k_file); }
  core::ArchiveExpectation expect() const { return {model::Platform::linux_x86_64, k_file, hex(body), body.size()}; }
  // Changes one byte of a cached copy of `body` in place: the pinned size, another hash.
  void flip_byte(const fs::path& p, std::size_t at) const {
    std::fstream f(p, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(at));
    f.put(static_cast<char>(body[at] ^ 0x01));
    ASSERT_TRUE(f.good()) << "cannot change " << p;
  }
  // Dates a cache entry back past the age at which a lookup flushes it and gives it its plain name.
  static void written_long_ago(const fs::path& p) {
    fs::last_write_time(p, fs::file_time_type::clock::now() - core::k_settle_after - std::chrono::minutes(1));
  }
  static constexpr const char* k_fsynced_here =
      "no unsynced cache entries here (the kernel names no boot, or the cache is on a shared file system): downloads are fsynced";
  bool nothing_left() const {
    std::error_code ec;
    for (fs::recursive_directory_iterator it(cache, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file() && it->path().extension() != ".lock") return false;
    return true;
  }

  HttpServer server;
  ScratchDir scratch;
  fs::path cache;
  std::string body;
  std::vector<long> sleeps;
  std::vector<model::Finding> findings;
};

TEST_F(Fetch, DownloadsIntoTheContentAddressedCache) {
  auto a = run(manifest(server.url(k_path), body), options());
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.status, model::FetchStatus::downloaded);
  EXPECT_EQ(a.path, cached_path().string());
  EXPECT_EQ(testing_support::read_text(a.path), body);
  EXPECT_EQ(a.attempts, 1);
  EXPECT_EQ(a.bytes_downloaded, body.size());
  EXPECT_FALSE(fs::exists(core::partial_path(cache, hex(body))));
  EXPECT_FALSE(fs::exists(core::partial_url_path(cache, hex(body))));
  auto reqs = server.requests_for(k_path);
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].range, "");
  EXPECT_EQ(reqs[0].user_agent.rfind("stackpin", 0), 0u);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule, "fetch.ok");

  auto again = run(manifest(server.url(k_path), body), options());  // a second run: from the cache
  EXPECT_EQ(again.status, model::FetchStatus::cached);
  EXPECT_EQ(server.requests_for(k_path).size(), 1u);
}

TEST_F(Fetch, ResumesAfterACutWithARangeRequest) {
  server.fault(k_path, {Fault::Kind::cut_after, 100000}, 1);
  auto a = run(manifest(server.url(k_path), body), options());
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.status, model::FetchStatus::resumed);
  EXPECT_EQ(a.attempts, 2);
  auto reqs = server.requests_for(k_path);
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1].range, "bytes=100000-");
  EXPECT_EQ(reqs[1].status, 206);
  EXPECT_EQ(crypto::to_hex(crypto::hash_file(a.path)->digest), hex(body));
}

TEST_F(Fetch, ResumesAPartialLeftByAnEarlierRun) {
  server.fault(k_path, {Fault::Kind::cut_after, 120000}, 1);
  auto o = options();
  o.retries = 0;
  auto first = run(manifest(server.url(k_path), body), o);
  ASSERT_TRUE(first.error);
  EXPECT_EQ(first.error->code, ErrorCode::io);
  EXPECT_NE(first.error->message.find("transient"), std::string::npos) << first.error->message;
  EXPECT_EQ(fs::file_size(core::partial_path(cache, hex(body))), 120000u);

  auto second = run(manifest(server.url(k_path), body), options());
  ASSERT_FALSE(second.error) << second.error->message;
  EXPECT_EQ(second.status, model::FetchStatus::resumed);
  EXPECT_EQ(second.bytes_downloaded, body.size() - 120000);
  EXPECT_EQ(server.requests_for(k_path).back().range, "bytes=120000-");
  EXPECT_EQ(testing_support::read_text(second.path), body);
}

TEST_F(Fetch, APartialFromAnotherUrlIsResumedTheHashDecides) {
  // the pinned SHA-256 names the bytes, so a partial download from another mirror is completed
  server.serve("/other/" + k_file, body);
  fs::create_directories(cache / "partial");
  std::ofstream(core::partial_path(cache, hex(body)), std::ios::binary) << body.substr(0, 5000);
  std::ofstream(core::partial_url_path(cache, hex(body))) << server.url("/other/" + k_file) << "\n";
  auto a = run(manifest(server.url(k_path), body), options());
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.status, model::FetchStatus::resumed);
  EXPECT_EQ(server.requests_for(k_path).at(0).range, "bytes=5000-");
  EXPECT_EQ(testing_support::read_text(a.path), body);
}

TEST_F(Fetch, RetriesAfter503WithExponentialBackoff) {
  server.fail_first(k_path, 3, 503);
  auto a = run(manifest(server.url(k_path), body), options());
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.attempts, 4);
  EXPECT_EQ(sleeps, (std::vector<long>{1, 2, 4}));
  EXPECT_EQ(testing_support::read_text(a.path), body);
}

TEST_F(Fetch, GivesUpAfterTheRetriesWithTheLastError) {
  server.fail_first(k_path, 10, 503);
  auto o = options();
  o.retries = 2;
  auto a = run(manifest(server.url(k_path), body), o);
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.status, model::FetchStatus::failed);
  EXPECT_EQ(a.error->code, ErrorCode::io);
  EXPECT_NE(a.error->message.find("HTTP 503"), std::string::npos) << a.error->message;
  EXPECT_NE(a.error->message.find("gave up after 3 attempts"), std::string::npos) << a.error->message;
  EXPECT_EQ(server.requests_for(k_path).size(), 3u);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule, "fetch.io");
  EXPECT_EQ(findings[0].severity, model::Severity::error);
}

TEST_F(Fetch, AStalledTransferIsAbortedAndResumed) {
  Fault f{Fault::Kind::stall_after, 50000, 5000};
  server.fault(k_path, f, 1);
  auto a = run(manifest(server.url(k_path), body), options());
  ASSERT_FALSE(a.error) << a.error->message;
  // A second request from byte 50000 on: the stalled first one was given up, not waited out (had it
  // been, its body would have arrived whole and there would be no second request).
  auto reqs = server.requests_for(k_path);
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1].range, "bytes=50000-");
  EXPECT_EQ(testing_support::read_text(a.path), body);
}

TEST_F(Fetch, ADripIsCutAfterARateWindowAndResumed) {
  // 50000 bytes, then one byte every 100 ms: never silent for the 1 s stall timeout, but the second
  // rate window brings about 10 bytes where 1000 are due
  server.fault(k_path, {Fault::Kind::drip, 50000, 100}, 1);
  auto o = options();
  o.min_rate = 1000;
  o.rate_window_s = 1;
  auto a = run(manifest(server.url(k_path), body), o);
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.status, model::FetchStatus::resumed);
  EXPECT_EQ(a.attempts, 2);
  auto reqs = server.requests_for(k_path);
  ASSERT_EQ(reqs.size(), 2u);
  // resumed after the 50000 bytes and whatever dripped after them
  ASSERT_EQ(reqs[1].range.rfind("bytes=", 0), 0u) << reqs[1].range;
  EXPECT_GE(std::stoull(reqs[1].range.substr(6)), 50000u) << reqs[1].range;
  EXPECT_EQ(reqs[1].status, 206);
  EXPECT_EQ(testing_support::read_text(a.path), body);
}

TEST_F(Fetch, AServerThatAlwaysDripsIsGivenUpAtTheDeadline) {
  // every answer drips: each attempt is cut as too slow and resumed, until the deadline ends them
  // all (without it, the retries would go on while each attempt kept its window's rate)
  server.fault(k_path, {Fault::Kind::drip, 1000, 200});
  auto o = options();
  o.min_rate = 1000;
  o.rate_window_s = 1;
  o.deadline_s = 3;
  auto a = run(manifest(server.url(k_path), body), o);
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.status, model::FetchStatus::failed);
  EXPECT_EQ(a.error->code, ErrorCode::io);
  const auto& msg = a.error->message;
  EXPECT_NE(msg.find(server.url(k_path)), std::string::npos) << msg;
  EXPECT_NE(msg.find("not finished within its deadline of 3 s (--deadline 3)"), std::string::npos) << msg;
  EXPECT_NE(msg.find(" of 300000 bytes after "), std::string::npos) << msg;
  ASSERT_FALSE(a.error->hints.empty());
  EXPECT_NE(a.error->hints[0].find("--deadline"), std::string::npos) << a.error->hints[0];
  EXPECT_GE(a.attempts, 1);
  EXPECT_LE(a.attempts, 3);  // attempts of about 2 s each: never all 6 the retries allow
  // the bytes received are kept for the next run to resume
  EXPECT_GE(fs::file_size(core::partial_path(cache, hex(body))), 1000u);
  EXPECT_EQ(findings.at(0).rule, "fetch.io");
}

TEST_F(Fetch, TheDerivedDeadlineScalesWithThePinnedSize) {
  // 2 x --rate-window 1 s + --stall-timeout 1 s + 300000 bytes at 1000000 B/s (rounded up to 1 s)
  // = 4 s: each attempt is cut as too slow after its first window, and a later one runs into the
  // deadline
  server.fault(k_path, {Fault::Kind::drip, 1000, 200});
  auto o = options();
  o.min_rate = 1000000;
  o.rate_window_s = 1;
  auto a = run(manifest(server.url(k_path), body), o);
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->code, ErrorCode::io);
  const auto& msg = a.error->message;
  EXPECT_NE(msg.find("deadline of 4 s (2 x --rate-window 1 s + --stall-timeout 1 s + 300000 bytes at --min-rate 1000000 B/s)"),
            std::string::npos)
      << msg;
  ASSERT_GE(a.error->hints.size(), 2u);
  EXPECT_NE(a.error->hints[1].find("too slow"), std::string::npos) << a.error->hints[1];  // the last attempt's failure
}

TEST_F(Fetch, PastItsDeadlineAUrlIsLeftForTheNextMirror) {
  // no rate check: the deadline alone cuts the dripping mirror's one attempt, which is not retried
  std::string rel = "cudnn/linux-x86_64/" + k_file;
  server.serve("/m1/" + rel, body);
  server.serve("/m2/" + rel, body);
  server.fault("/m1/" + rel, {Fault::Kind::drip, 20000, 200});
  auto o = options();
  o.min_rate = 0;
  o.deadline_s = 2;
  o.mirrors = {server.url("/m1/"), server.url("/m2/")};
  auto a = run(manifest(k_nvidia + rel, body), o);
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.status, model::FetchStatus::resumed);
  EXPECT_EQ(server.requests_for("/m1/" + rel).size(), 1u);
  auto second = server.requests_for("/m2/" + rel);
  ASSERT_EQ(second.size(), 1u);
  ASSERT_EQ(second[0].range.rfind("bytes=", 0), 0u) << second[0].range;
  EXPECT_GE(std::stoull(second[0].range.substr(6)), 20000u) << second[0].range;  // the first mirror's bytes were kept
  EXPECT_EQ(testing_support::read_text(a.path), body);
}

TEST_F(Fetch, AHealthyTransferNeverTripsTheRateCheck) {
  // all but the last 7 bytes at once, then those at 5 bytes a second: the transfer outlasts its
  // first rate window, which held far more than is due, and ends within the second
  server.fault(k_path, {Fault::Kind::drip, 300000 - 7, 200});
  auto o = options();
  o.min_rate = 1000;
  o.rate_window_s = 1;
  auto a = run(manifest(server.url(k_path), body), o);
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.status, model::FetchStatus::downloaded);
  EXPECT_EQ(a.attempts, 1);
  EXPECT_EQ(server.requests_for(k_path).size(), 1u);
  EXPECT_EQ(testing_support::read_text(a.path), body);
}

TEST_F(Fetch, WrongBytesAreRefusedAndNothingIsLeft) {
  server.fault(k_path, {Fault::Kind::wrong_bytes});
  auto a = run(manifest(server.url(k_path), body), options());
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->code, ErrorCode::mismatch);
  const auto& msg = a.error->message;
  EXPECT_NE(msg.find(server.url(k_path)), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected sha256 " + hex(body)), std::string::npos) << msg;
  std::string wrong = body;
  for (auto& c : wrong) c = static_cast<char>(~static_cast<unsigned char>(c));
  EXPECT_NE(msg.find("got " + hex(wrong)), std::string::npos) << msg;
  ASSERT_FALSE(a.error->hints.empty());
  EXPECT_NE(a.error->hints[0].find("proxy"), std::string::npos) << a.error->hints[0];
  EXPECT_EQ(server.requests_for(k_path).size(), 1u);  // not retried
  EXPECT_TRUE(nothing_left());
  EXPECT_EQ(findings.at(0).rule, "fetch.mismatch");
}

TEST_F(Fetch, MoreBytesThanPinnedAreRefusedAsTheyArrive) {
  server.serve(k_path, body + blob(50000, 9));
  auto a = run(manifest(server.url(k_path), body), options());
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->code, ErrorCode::mismatch);
  EXPECT_NE(a.error->message.find("more than the pinned 300000 bytes"), std::string::npos) << a.error->message;
  EXPECT_TRUE(nothing_left());
}

TEST_F(Fetch, NotFoundIsNotRetried) {
  auto a = run(manifest(server.url("/cudnn/nope/" + k_file), body), options());
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->code, ErrorCode::not_found);
  EXPECT_NE(a.error->message.find("HTTP 404"), std::string::npos) << a.error->message;
  EXPECT_NE(a.error->message.find("/cudnn/nope/"), std::string::npos) << a.error->message;
  EXPECT_EQ(a.attempts, 1);
  EXPECT_EQ(server.requests().size(), 1u);
  EXPECT_TRUE(sleeps.empty());
}

TEST_F(Fetch, AServerIgnoringRangeIsFollowedFromByteZero) {
  server.fault(k_path, {Fault::Kind::cut_after, 100000}, 1);
  server.fault(k_path, {Fault::Kind::ignore_range}, 2);
  auto a = run(manifest(server.url(k_path), body), options());
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.status, model::FetchStatus::downloaded);
  auto reqs = server.requests_for(k_path);
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1].range, "bytes=100000-");
  EXPECT_EQ(reqs[1].status, 200);
  EXPECT_EQ(testing_support::read_text(a.path), body);
}

TEST_F(Fetch, OfflineListsWhatIsMissingAndDownloadsNothing) {
  auto o = options();
  o.offline = true;
  auto a = run(manifest(server.url(k_path), body), o);
  EXPECT_EQ(a.status, model::FetchStatus::missing);
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->code, ErrorCode::not_found);
  for (const std::string& part : {std::string("linux-x86_64"), k_file, hex(body), std::string("300000 bytes"), server.url(k_path)})
    EXPECT_NE(a.error->message.find(part), std::string::npos) << part << " in " << a.error->message;
  EXPECT_TRUE(server.requests().empty());
  EXPECT_EQ(findings.at(0).rule, "fetch.missing");
  EXPECT_FALSE(fs::exists(cache / "sha256"));

  run(manifest(server.url(k_path), body), options());
  EXPECT_EQ(run(manifest(server.url(k_path), body), o).status, model::FetchStatus::cached);
}

TEST_F(Fetch, MirrorsReplaceNvidiasBaseAndOnlyMirrorsAreTried) {
  std::string rel = "cudnn/linux-x86_64/" + k_file;
  server.serve("/mirror/" + rel, body);
  auto o = options();
  o.mirrors = {server.url("/empty"), server.url("/mirror")};  // the first lacks the file; no trailing '/'
  auto a = run(manifest(k_nvidia + rel, body), o);
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.url, server.url("/mirror/" + rel));
  EXPECT_EQ(a.tried, (std::vector<std::string>{server.url("/empty/" + rel), server.url("/mirror/" + rel)}));
  EXPECT_EQ(server.requests().size(), 2u);  // the empty mirror, then the good one; never NVIDIA
  EXPECT_EQ(testing_support::read_text(a.path), body);
}

TEST_F(Fetch, AFileMirrorWorks) {
  std::string rel = "cudnn/linux-x86_64/" + k_file;
  fs::path tree = scratch.path() / "mirror";
  fs::create_directories(tree / "cudnn" / "linux-x86_64");
  std::ofstream(tree / rel, std::ios::binary) << body;
  auto o = options();
  o.mirrors = {"file://" + tree.string() + "/"};
  auto a = run(manifest(k_nvidia + rel, body), o);
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.url, "file://" + (tree / rel).string());
  EXPECT_EQ(testing_support::read_text(a.path), body);
}

TEST_F(Fetch, AMissingFileUrlIsNotFound) {
  auto a = run(manifest("file://" + (scratch.path() / k_file).string(), body), options());
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->code, ErrorCode::not_found);
  EXPECT_EQ(a.attempts, 1);
}

TEST_F(Fetch, HttpProxyFromTheEnvironmentIsHonoured) {
  util::MapEnv env({{"http_proxy", server.base()}});
  server.serve("/via-proxy/" + k_file, body);
  auto o = options();
  o.env = &env;
  auto a = run(manifest("http://stackpin-proxy-test.invalid/via-proxy/" + k_file, body), o);
  ASSERT_FALSE(a.error) << a.error->message;
  auto reqs = server.requests_for("/via-proxy/" + k_file);
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_TRUE(reqs[0].absolute_uri);
  EXPECT_EQ(reqs[0].target, "http://stackpin-proxy-test.invalid/via-proxy/" + k_file);
  EXPECT_EQ(reqs[0].host, "stackpin-proxy-test.invalid");
}

TEST_F(Fetch, TlsFailureIsPermanentWithAClearMessage) {
  std::string url = "https://127.0.0.1:" + std::to_string(server.port()) + k_path;
  auto a = run(manifest(url, body), options());
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->code, ErrorCode::io);
  EXPECT_NE(a.error->message.find("TLS failure"), std::string::npos) << a.error->message;
  EXPECT_NE(a.error->message.find("not retried"), std::string::npos) << a.error->message;
  EXPECT_EQ(a.attempts, 1);
  EXPECT_TRUE(sleeps.empty());
  EXPECT_TRUE(nothing_left());
}

TEST_F(Fetch, NotEnoughSpaceIsRefusedBeforeDownloading) {
  fs::create_directories(cache);
  if (::mount("tmpfs", cache.c_str(), "tmpfs", 0, "size=1m") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root): " << std::strerror(errno);
  std::string big = blob(2u << 20, 3);
  server.serve("/big/" + k_file, big);
  auto a = run(manifest(server.url("/big/" + k_file), big), options());
  bool empty = fs::is_empty(cache);
  ::umount2(cache.c_str(), MNT_DETACH);
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->code, ErrorCode::io);
  EXPECT_NE(a.error->message.find("not enough free space"), std::string::npos) << a.error->message;
  EXPECT_NE(a.error->message.find("2097152 bytes"), std::string::npos) << a.error->message;
  ASSERT_FALSE(a.error->hints.empty());
  EXPECT_NE(a.error->hints[0].find("--cache-dir"), std::string::npos) << a.error->hints[0];
  EXPECT_TRUE(empty);
  EXPECT_TRUE(server.requests().empty());
}

TEST_F(Fetch, ADiskThatFillsDuringTheDownloadRemovesThePartial) {
  // the cache has room by its free-space check, but its partial/ folder is a 64 KiB tmpfs: the
  // write fails with ENOSPC mid-transfer
  fs::path partial = cache / "partial";
  fs::create_directories(partial);
  if (::mount("tmpfs", partial.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root): " << std::strerror(errno);
  auto a = run(manifest(server.url(k_path), body), options());
  std::error_code ec;
  bool left = fs::exists(core::partial_path(cache, hex(body)), ec);
  ::umount2(partial.c_str(), MNT_DETACH);
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->code, ErrorCode::io);
  EXPECT_NE(a.error->message.find("disk"), std::string::npos) << a.error->message;
  EXPECT_FALSE(left);
  EXPECT_FALSE(fs::exists(cached_path()));
  EXPECT_EQ(a.attempts, 1);  // not retried: a full disk does not go away by waiting
}

TEST_F(Fetch, VerifyCachedReplacesACorruptCachedArchive) {
  fs::create_directories(cached_path().parent_path());
  std::string corrupt = body;
  corrupt[1234] = static_cast<char>(corrupt[1234] ^ 0x01);
  std::ofstream(cached_path(), std::ios::binary) << corrupt;
  auto trusted = run(manifest(server.url(k_path), body), options());  // size matches: taken as it is
  ASSERT_FALSE(trusted.error) << trusted.error->message;
  EXPECT_EQ(trusted.status, model::FetchStatus::cached);
  EXPECT_TRUE(server.requests().empty());
  auto o = options();
  o.verify_cached = true;
  auto checked = run(manifest(server.url(k_path), body), o);
  ASSERT_FALSE(checked.error) << checked.error->message;
  EXPECT_EQ(checked.status, model::FetchStatus::downloaded);
  EXPECT_EQ(testing_support::read_text(cached_path()), body);
}

// Where the kernel names its boot, a verified download is not fsynced: it is named by the boot it
// was written in, and used as it is for as long as that boot lasts.
TEST_F(Fetch, ADownloadIsNamedByTheBootItWasWrittenIn) {
  auto boot = core::unsynced_boot(cache);
  if (!boot) GTEST_SKIP() << k_fsynced_here;
  auto a = run(manifest(server.url(k_path), body), options());
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(fs::path(a.path), core::unsynced_entry_path(cache, hex(body), *boot, k_file));
  EXPECT_FALSE(fs::exists(core::cache_entry_path(cache, hex(body), k_file)));
  auto again = run(manifest(server.url(k_path), body), options());
  EXPECT_EQ(again.status, model::FetchStatus::cached);
  EXPECT_EQ(again.path, a.path);
  EXPECT_EQ(server.requests_for(k_path).size(), 1u);
  const core::ArchiveExpectation e = expect();
  EXPECT_EQ(core::find_in_cache(cache, e), fs::path(a.path));
}

// A crash of the machine is a new boot: what the old boot left unsynced may be torn, so it is
// re-hashed before any use, kept under the plain name when it is the pin and removed when not.
TEST_F(Fetch, WhatAnotherBootLeftUnsyncedIsReHashedBeforeUse) {
  auto boot = core::unsynced_boot(cache);
  if (!boot) GTEST_SKIP() << k_fsynced_here;
  const std::string before = "00000000-0000-4000-8000-000000000000";
  const fs::path unsynced = core::cache_entry_dir(cache, hex(body)) / ".unsynced";
  const fs::path plain = core::cache_entry_path(cache, hex(body), k_file);
  const core::ArchiveExpectation e = expect();
  auto reboot = [&] {
    ASSERT_TRUE(fs::is_directory(unsynced / *boot));
    fs::rename(unsynced / *boot, unsynced / before);
  };

  // intact: a dry run's lookup uses it where it is; an offline fetch finds it and moves it to the
  // plain name
  ASSERT_FALSE(run(manifest(server.url(k_path), body), options()).error);
  reboot();
  EXPECT_EQ(core::find_in_cache(cache, e, core::CacheLookup::read_only), unsynced / before / k_file);
  EXPECT_FALSE(fs::exists(plain));
  auto o = options();
  o.offline = true;
  auto intact = run(manifest(server.url(k_path), body), o);
  ASSERT_FALSE(intact.error) << intact.error->message;
  EXPECT_EQ(intact.status, model::FetchStatus::cached);
  EXPECT_EQ(fs::path(intact.path), plain);
  EXPECT_EQ(testing_support::read_text(plain), body);
  EXPECT_FALSE(fs::exists(unsynced));
  EXPECT_EQ(server.requests_for(k_path).size(), 1u);

  // torn (the pinned size, other bytes): never returned, removed, downloaded again
  fs::remove_all(core::cache_entry_dir(cache, hex(body)));
  ASSERT_FALSE(run(manifest(server.url(k_path), body), options()).error);
  reboot();
  fs::path torn = unsynced / before / k_file;
  flip_byte(torn, 4096);
  // a lookup that may not settle (a dry run) hashes it where it is, and neither uses nor removes it
  EXPECT_FALSE(core::find_in_cache(cache, e, core::CacheLookup::read_only));
  EXPECT_TRUE(fs::exists(torn));
  bool by_content = false;
  auto m = manifest(server.url(k_path), body);  // the pin refers into it
  auto p = core::pinned_archive(m, model::Platform::linux_x86_64, knowledge::KnowledgeBase::embedded());
  ASSERT_TRUE(p);
  auto found = core::find_pinned_archive(*p, {}, by_content, cache);  // what stage asks
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().code, ErrorCode::not_found);
  EXPECT_FALSE(fs::exists(unsynced / before)) << "the torn entry was not removed";
  auto again = run(manifest(server.url(k_path), body), options());
  ASSERT_FALSE(again.error) << again.error->message;
  EXPECT_EQ(again.status, model::FetchStatus::downloaded);
  EXPECT_EQ(testing_support::read_text(again.path), body);
  EXPECT_EQ(server.requests_for(k_path).size(), 3u);
}

// Once the kernel has written this boot's entry back, a later lookup flushes it (cheap by then) and
// links it under the plain name, so that the next boot need not re-hash it; readers holding the
// unsynced name keep it.
TEST_F(Fetch, AWrittenBackEntryGainsThePlainName) {
  auto boot = core::unsynced_boot(cache);
  if (!boot) GTEST_SKIP() << k_fsynced_here;
  auto a = run(manifest(server.url(k_path), body), options());
  ASSERT_FALSE(a.error) << a.error->message;
  const fs::path plain = core::cache_entry_path(cache, hex(body), k_file);
  const core::ArchiveExpectation e = expect();
  EXPECT_EQ(core::find_in_cache(cache, e), fs::path(a.path));  // young: left as it is
  EXPECT_FALSE(fs::exists(plain));
  written_long_ago(a.path);
  EXPECT_EQ(core::find_in_cache(cache, e), plain);
  EXPECT_EQ(fs::hard_link_count(plain), 2u);
  EXPECT_TRUE(fs::equivalent(plain, a.path));
  auto again = run(manifest(server.url(k_path), body), options());
  EXPECT_EQ(again.status, model::FetchStatus::cached);
  EXPECT_EQ(fs::path(again.path), plain);
}

// A plain name linked to this boot's entry shares its bytes: --verify-cached that finds them
// corrupt removes every name, so that the archive is downloaded again rather than linked back.
TEST_F(Fetch, VerifyCachedRemovesEveryNameOfACorruptArchive) {
  auto boot = core::unsynced_boot(cache);
  if (!boot) GTEST_SKIP() << k_fsynced_here;
  auto a = run(manifest(server.url(k_path), body), options());
  ASSERT_FALSE(a.error) << a.error->message;
  const core::ArchiveExpectation e = expect();
  written_long_ago(a.path);
  const fs::path plain = core::cache_entry_path(cache, hex(body), k_file);
  ASSERT_EQ(core::find_in_cache(cache, e), plain);
  flip_byte(plain, 1234);
  auto o = options();
  o.verify_cached = true;
  auto checked = run(manifest(server.url(k_path), body), o);
  ASSERT_FALSE(checked.error) << checked.error->message;
  EXPECT_EQ(checked.status, model::FetchStatus::downloaded);
  EXPECT_EQ(testing_support::read_text(checked.path), body);
  EXPECT_FALSE(fs::exists(plain));
  EXPECT_EQ(server.requests_for(k_path).size(), 2u);
}

// An archive of many blocks: the blocks the hashing and writing threads are done with are taken
// again for the next bytes, and the file is the bytes sent.
TEST_F(Fetch, ALargeDownloadIsTheBytesSent) {
  std::string big(24u << 20, '\0');
  std::mt19937 rng(testing_support::test_seed());
  for (auto& c : big) c = static_cast<char>(rng());
  server.serve("/cudnn/big/" + k_file, big);
  auto a = run(manifest(server.url("/cudnn/big/" + k_file), big), options());
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.status, model::FetchStatus::downloaded);
  EXPECT_EQ(fs::file_size(a.path), big.size());
  EXPECT_TRUE(testing_support::read_text(a.path) == big) << "the cached file differs from the bytes sent";
}

TEST_F(Fetch, RefusesAPinWithoutSizeAtItsLocation) {
  auto m = format::parse_manifest(
      "schema = 1\nname = \"f\"\n[cuda]\nversion = \"12.2.2\"\n[cudnn]\nversion = \"8.9.7.29\"\ncuda = 12\n"
      "[[cudnn.archives]]\nplatform = \"linux-x86_64\"\norigin = \"local\"\nurl = \"" +
          server.url(k_path) + "\"\nsha256 = \"" + hex(body) + "\"\n",
      "stack.toml");
  ASSERT_TRUE(m);
  auto r = core::fetch(*m, knowledge::KnowledgeBase::embedded(), options());
  findings = testing_support::findings_of(r);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::invalid);
  EXPECT_NE(r.error().message.find("no size pinned"), std::string::npos) << r.error().message;
  ASSERT_TRUE(r.error().where);
  EXPECT_EQ(r.error().where->line, 8);
}

TEST(FetchPieces, CandidateUrls) {
  std::string u = k_nvidia + "cudnn/linux-x86_64/" + k_file;
  EXPECT_EQ(core::candidate_urls(u, "", {}, k_nvidia), std::vector<std::string>{u});
  EXPECT_EQ(core::candidate_urls(u, "", {"http://m/a", "file:///srv/m/"}, k_nvidia),
            (std::vector<std::string>{"http://m/a/cudnn/linux-x86_64/" + k_file, "file:///srv/m/cudnn/linux-x86_64/" + k_file}));
  EXPECT_EQ(core::candidate_urls("https://example.org/x.tar.xz", "", {"http://m/"}, k_nvidia),
            std::vector<std::string>{"https://example.org/x.tar.xz"});
}

TEST(FetchPieces, DefaultCacheDirAndConfigPath) {
  util::MapEnv env(std::map<std::string, std::string>{{"HOME", "/home/u"}});
  EXPECT_EQ(core::default_cache_dir(env)->string(), "/home/u/.cache/stackpin");
  EXPECT_EQ(core::user_config_path(env)->string(), "/home/u/.config/stackpin/config.toml");
  env.set("XDG_CACHE_HOME", "/xdg/cache");
  env.set("XDG_CONFIG_HOME", "/xdg/config");
  EXPECT_EQ(core::default_cache_dir(env)->string(), "/xdg/cache/stackpin");
  EXPECT_EQ(core::user_config_path(env)->string(), "/xdg/config/stackpin/config.toml");
  env.set("STACKPIN_CACHE_DIR", "/c");
  env.set("STACKPIN_CONFIG", "/etc/sp.toml");
  EXPECT_EQ(core::default_cache_dir(env)->string(), "/c");
  EXPECT_EQ(core::user_config_path(env)->string(), "/etc/sp.toml");
  auto none = core::default_cache_dir(util::MapEnv{});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::not_found);
  EXPECT_NE(none.error().hints.at(0).find("--cache-dir"), std::string::npos) << none.error().hints.at(0);
}

TEST(FetchPieces, ConfigFileMirrorsAndErrors) {
  auto c = format::parse_user_config("[fetch]\nmirrors = [\"http://m1/redist/\", \"file:///srv/m2\"]\n", "config.toml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->mirrors, (std::vector<std::string>{"http://m1/redist/", "file:///srv/m2"}));
  auto bad = format::parse_user_config("# site settings\n[fetch]\nmirrors = [\"http://ok/\", 3]\n", "config.toml");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::invalid);
  ASSERT_TRUE(bad.error().where);
  EXPECT_EQ(bad.error().where->file, "config.toml");
  EXPECT_EQ(bad.error().where->line, 3);
  auto unknown = format::parse_user_config("[fetch]\nmirror = []\n", "config.toml");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().where->line, 2);
  auto syntax = format::parse_user_config("[fetch\n", "config.toml");
  ASSERT_FALSE(syntax);
  EXPECT_EQ(syntax.error().code, ErrorCode::invalid);
  ASSERT_TRUE(syntax.error().where);
  EXPECT_EQ(syntax.error().where->line, 1);
  auto base = format::parse_user_config("[nvidia]\nbase = \"https://artifactory.example.org/nvidia/compute/\"\n", "config.toml");
  ASSERT_TRUE(base) << base.error().message;
  EXPECT_EQ(base->nvidia_base, "https://artifactory.example.org/nvidia/compute/");
  auto no_url = format::parse_user_config("[nvidia]\nbase = 3\n", "config.toml");
  ASSERT_FALSE(no_url);
  EXPECT_EQ(no_url.error().where->line, 2);
  auto unknown_key = format::parse_user_config("[nvidia]\nbases = \"https://x/\"\n", "config.toml");
  ASSERT_FALSE(unknown_key);
  EXPECT_EQ(unknown_key.error().where->line, 2);
  auto absent = format::load_user_config("/nonexistent/stackpin/config.toml");
  ASSERT_TRUE(absent);
  EXPECT_FALSE(*absent);
}

TEST_F(Fetch, ArchiveTakingCommandsFindTheCachedArchive) {
  auto m = manifest(server.url(k_path), body);
  run(m, options());
  auto p = core::pinned_archive(m, model::Platform::linux_x86_64, knowledge::KnowledgeBase::embedded());
  ASSERT_TRUE(p);
  fs::create_directories(scratch.path() / "empty");
  bool by_content = false;
  auto found = core::find_pinned_archive(*p, scratch.path() / "empty", by_content, cache);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(*found, cached_path());
  auto cache_only = core::find_pinned_archive(*p, {}, by_content, cache);
  ASSERT_TRUE(cache_only);

  auto missing = core::find_pinned_archive(*p, scratch.path() / "empty", by_content, scratch.path() / "other-cache");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::not_found);
  EXPECT_NE(missing.error().message.find((scratch.path() / "empty").string()), std::string::npos) << missing.error().message;
  EXPECT_NE(missing.error().message.find("download cache " + (scratch.path() / "other-cache").string()), std::string::npos)
      << missing.error().message;
  EXPECT_NE(missing.error().hints.at(0).find("stackpin fetch MANIFEST"), std::string::npos) << missing.error().hints.at(0);

  auto v = core::verify_manifest(m, {}, std::nullopt, knowledge::KnowledgeBase::embedded(), cache);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->archives.at(0).ok);
}

TEST_F(Fetch, NoProxyHostsBypassTheProxyAndNothingIsReadFromTheProcess) {
  // the process's own variables are not stackpin's to read: only the Env given is
  ::setenv("http_proxy", "http://127.0.0.1:9", 1);
  auto a = run(manifest(server.url(k_path), body), options());
  ::unsetenv("http_proxy");
  ASSERT_FALSE(a.error) << a.error->message;
  util::MapEnv env({{"http_proxy", "http://127.0.0.1:9"}, {"no_proxy", "127.0.0.1"}});
  auto o = options();
  o.env = &env;
  fs::remove_all(cache);
  auto b = run(manifest(server.url(k_path), body), o);
  ASSERT_FALSE(b.error) << b.error->message;
  EXPECT_FALSE(server.requests_for(k_path).back().absolute_uri);
}

TEST(FetchProxy, ChosenAsCurlChoosesIt) {
  util::MapEnv env({{"HTTP_PROXY", "http://upper:1"}, {"HTTPS_PROXY", "http://secure:2"}, {"all_proxy", "http://all:3"}});
  EXPECT_EQ(core::proxy_for("http://h/x", &env), "http://all:3");  // HTTP_PROXY in upper case is not read
  EXPECT_EQ(core::proxy_for("https://h/x", &env), "http://secure:2");
  EXPECT_EQ(core::proxy_for("file:///x", &env), "");
  EXPECT_EQ(core::proxy_for("https://h/x", nullptr), "");
  util::MapEnv lower({{"http_proxy", "http://p:4"}, {"ALL_PROXY", "http://all:5"}});
  EXPECT_EQ(core::proxy_for("http://h/x", &lower), "http://p:4");
  EXPECT_EQ(core::proxy_for("ftp://h/x", &lower), "http://all:5");
}

TEST_F(Fetch, APartialIsResumedFromTheNextMirror) {
  std::string rel = "cudnn/linux-x86_64/" + k_file;
  server.serve("/m1/" + rel, body);
  server.serve("/m2/" + rel, body);
  server.fault("/m1/" + rel, {Fault::Kind::cut_after, 110000});
  auto o = options();
  o.retries = 0;
  o.mirrors = {server.url("/m1/"), server.url("/m2/")};
  auto a = run(manifest(k_nvidia + rel, body), o);
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.status, model::FetchStatus::resumed);
  auto second = server.requests_for("/m2/" + rel);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].range, "bytes=110000-");  // the first mirror's bytes were kept
  EXPECT_EQ(testing_support::read_text(a.path), body);
}

TEST_F(Fetch, ACorruptPartialIsFetchedAgainFromZeroNotBlamedOnTheServer) {
  fs::create_directories(core::partial_path(cache, hex(body)).parent_path());
  std::string bad = body.substr(0, 50000);
  bad[100] = static_cast<char>(bad[100] ^ 0xff);
  std::ofstream(core::partial_path(cache, hex(body)), std::ios::binary) << bad;
  auto a = run(manifest(server.url(k_path), body), options());
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.status, model::FetchStatus::downloaded);
  auto reqs = server.requests_for(k_path);
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].range, "bytes=50000-");
  EXPECT_EQ(reqs[1].range, "");
  EXPECT_EQ(testing_support::read_text(a.path), body);
}

TEST_F(Fetch, ARangeTheServerRefusesDropsThePartialOnce) {
  fs::create_directories(core::partial_path(cache, hex(body)).parent_path());
  std::ofstream(core::partial_path(cache, hex(body)), std::ios::binary) << body.substr(0, 40000);
  server.fault(k_path, {Fault::Kind::status, 0, 0, 416}, 1);
  auto a = run(manifest(server.url(k_path), body), options());
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.status, model::FetchStatus::downloaded);
  auto reqs = server.requests_for(k_path);
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].status, 416);
  EXPECT_EQ(reqs[1].range, "");
}

TEST_F(Fetch, NothingPinnedForTheTargetsIsAClearError) {
  // a Windows-only manifest whose archives are all implied by the lock or the knowledge base, of a
  // release the knowledge base knows only for Linux (an excerpt of NVIDIA's manifest)
  auto m = format::parse_manifest(
      "schema = 1\nname = \"x\"\n[cuda]\nversion = \"12.4.1\"\n[cudnn]\nversion = \"9.24.0.43\"\n"
      "[targets.windows]\nlayout = \"isolated\"\nprefix = 'C:\\cudnn'\n",
      "w.toml");
  ASSERT_TRUE(m);
  model::ArchivePin linux_only;
  linux_only.implied = true;
  linux_only.platform.value = model::Platform::linux_sbsa;
  linux_only.url = model::Located<std::string>{server.url(k_path), {}};
  linux_only.sha256 = model::Located<std::string>{hex(body), {}};
  linux_only.size = model::Located<std::uint64_t>{body.size(), {}};
  m->cudnn->archives.push_back(linux_only);
  std::vector<model::Finding> f;
  auto r = core::fetch(*m, knowledge::KnowledgeBase::embedded(), options());
  f = testing_support::findings_of(r);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::invalid);
  EXPECT_NE(r.error().message.find("this manifest's targets (windows-x86_64)"), std::string::npos) << r.error().message;
}

}  // namespace

}  // namespace fetch_test
