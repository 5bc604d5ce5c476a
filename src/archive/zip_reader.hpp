#pragma once
// The lower half of stackpin's own zip reader (zip_reader.cpp): bytes of a sealed PinnedFile at
// any offset, where each entry's data lie (from its local header, checked against the central
// directory), and raw deflate decoding. extract.cpp runs it: names, types and bounds first, on one
// thread, then the entries' data on several.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "archive/extract.hpp"
#include "util/result.hpp"
#include "zip_directory.hpp"

namespace archive_io::detail {

// Reads a sealed PinnedFile (PinnedFile::read_sealed_chunk) through one cached chunk: every byte
// handed out was checked against the tag taken when the file was hashed.
class SealedReader {
 public:
  explicit SealedReader(const PinnedFile& f);
  // Copies [at, at + len). Errors: io, conflict (changed since it was hashed), invalid (past the end).
  util::Status read(std::uint64_t at, void* buf, std::size_t len);
  // The bytes from `at` on, at most `max`, within one chunk (valid until the next call).
  util::Result<std::pair<const char*, std::size_t>> view(std::uint64_t at, std::size_t max);

 private:
  util::Status load(std::uint64_t index);
  const PinnedFile& m_f;
  std::unique_ptr<char[]> m_buf;
  std::uint64_t m_index = ~std::uint64_t{0};
  std::size_t m_len = 0;
};

// Reads every local header, in file order (`order`: indices into dir.entries by local offset),
// and checks it against the central directory: the signature, the same name bytes, method and
// flags, the same CRC-32 and sizes (in the header, or in the data descriptor that follows the
// data), and that no entry's data (descriptor included) overlaps the next entry or the directory.
// A zip whose local headers disagree with its directory is one that tools would unpack
// differently. Returns where each entry's compressed data start (indexed like dir.entries; they
// run for its `compressed` bytes). Errors: invalid (the message names the entry), io, conflict.
util::Result<std::vector<std::uint64_t>> locate_zip_entries(const ZipDirectory& dir, const std::vector<std::size_t>& order,
                                                            SealedReader& r);

// Raw deflate (zip method 8), streaming: ISA-L's decoder where the build has it (several times
// zlib's speed on x86-64), else zlib's.
class Inflater {
 public:
  Inflater();
  ~Inflater();
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  void reset();
  // Decodes from in[0..in_len) into out[0..cap): `used` input bytes consumed, `produced` output
  // bytes, `end` once the deflate stream has ended. False on corrupt data (error() says why).
  bool run(const unsigned char* in, std::size_t in_len, unsigned char* out, std::size_t cap, std::size_t& used, std::size_t& produced,
           bool& end);
  const std::string& error() const { return m_error; }
  // Once the stream has ended: input bytes counted in `used` that the decoder had read ahead
  // beyond the stream's end (they follow it in the file).
  std::size_t read_ahead() const;

 private:
  struct State;
  std::unique_ptr<State> m_state;
  std::string m_error;
};

// CRC-32 (the zip and gzip polynomial), continued from `crc`.
std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t len);

}  // namespace archive_io::detail
