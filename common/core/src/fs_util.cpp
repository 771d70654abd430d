#include "workbook/fs_util.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>

#include <zlib.h>

namespace fs = std::filesystem;

namespace wb {

namespace {
std::runtime_error sys_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}
}  // namespace

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file_atomic(const fs::path& path, std::string_view content) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::string tmpl = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw sys_error("cannot create a temp file in " + dir.string());
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      auto err = sys_error("cannot write " + tmpl);
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw err;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    auto err = sys_error("cannot flush " + tmpl);
    ::unlink(tmpl.c_str());
    throw err;
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    auto err = sys_error("cannot move " + tmpl + " to " + path.string());
    ::unlink(tmpl.c_str());
    throw err;
  }
}

std::string gzip_compress(std::string_view data, int level) {
  z_stream zs{};
  // 16 + MAX_WBITS: a gzip header and trailer, so gunzip and Python's gzip module read it.
  if (deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("gzip: zlib init failed");
  std::string out(deflateBound(&zs, static_cast<uLong>(data.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("gzip: deflate failed (" + std::to_string(rc) + ")");
  return out;
}

void prepare_output_dir(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw std::runtime_error("--out " + dir.string() + " exists and is not a directory");
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create --out " + dir.string() + ": " + ec.message());
  const fs::path probe = dir / (".write-probe-" + std::to_string(::getpid()));
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) throw sys_error("--out " + dir.string() + " is not writable");
  ::close(fd);
  ::unlink(probe.c_str());
}

namespace {
// Lock files this process holds, by (device, inode), with how many DirLocks share each. flock
// belongs to an open file, so a second open + flock in the same process would conflict.
std::mutex held_mutex;
std::map<std::pair<unsigned long long, unsigned long long>, int> held;
}  // namespace

DirLock::DirLock(const fs::path& dir) {
  const fs::path lock = dir / ".lock";
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw sys_error("cannot open lock file " + lock.string());
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    auto err = sys_error("cannot stat lock file " + lock.string());
    ::close(fd_);
    throw err;
  }
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  std::lock_guard<std::mutex> g(held_mutex);
  if (auto it = held.find({dev_, ino_}); it != held.end()) {  // already ours: nest
    ++it->second;
    ::close(fd_);
    fd_ = -1;
    return;
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("another run is writing to " + dir.string() +
                             " right now; wait for it or choose another --out");
  }
  held[{dev_, ino_}] = 1;
}

DirLock::~DirLock() {
  std::lock_guard<std::mutex> g(held_mutex);
  auto it = held.find({dev_, ino_});
  if (it != held.end() && --it->second == 0) held.erase(it);
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock (the outermost DirLock holds it)
}

}  // namespace wb
