// Files written so that nothing is ever lost or half-written.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace wb {

// A whole file's bytes, the workbook's one way of reading a file. Throws std::runtime_error
// ("cannot open PATH") when it cannot be opened.
std::string read_file(const std::filesystem::path& path);

// Writes `content` to a temp file next to `path`, flushes it, then renames it into place:
// readers see the old file or the new one, never a torn one. Throws std::runtime_error.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

// `data` as a gzip file's bytes (zlib, level 1..9). Throws std::runtime_error if zlib fails.
std::string gzip_compress(std::string_view data, int level = 6);

// Creates `dir` (and parents) if needed and proves it is writable by creating and removing a
// probe file -- before any profiling starts. Throws std::runtime_error with the reason
// ("not a directory", "permission denied", ...).
void prepare_output_dir(const std::filesystem::path& dir);

// An exclusive lock on an output folder (flock on DIR/.lock), so two runs writing the same
// --out fail clearly instead of interleaving files. Released by the destructor (or process exit).
// Within one process the lock nests: the harness holds --out for the whole run, and report()
// or a chapter may lock the same folder again without failing.
class DirLock {
 public:
  explicit DirLock(const std::filesystem::path& dir);  // throws std::runtime_error if held
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
  unsigned long long dev_ = 0, ino_ = 0;  // the lock file's identity, for nesting
};

}  // namespace wb
