// The downloader: attempts (one HTTP request each) that append to FILE.part, a retry loop
// around them, and the checks that run before FILE.part becomes FILE.
#include "engine/runtime/download.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#ifndef NIWA_HAVE_CURL
#define NIWA_HAVE_CURL 0  // engine/runtime/CMakeLists.txt defines it to 1 when libcurl was found
#endif
#if NIWA_HAVE_CURL
#include <curl/curl.h>
#endif

namespace niwa::runtime {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// ---- SHA-256 ---------------------------------------------------------------------------

namespace {

constexpr std::array<uint32_t, 64> kRound = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr uint32_t rotr(uint32_t x, int n) {
    return (x >> n) | (x << (32 - n));
}

}  // namespace

void Sha256::reset() {
    h_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    buffered_ = 0;
    length_ = 0;
}

void Sha256::block(const uint8_t* p) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
        w[i] = uint32_t(p[4 * i]) << 24 | uint32_t(p[4 * i + 1]) << 16 | uint32_t(p[4 * i + 2]) << 8 |
               uint32_t(p[4 * i + 3]);
    for (int i = 16; i < 64; ++i) {
        const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (int i = 0; i < 64; ++i) {
        const uint32_t t1 =
            h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
        const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h_[0] += a, h_[1] += b, h_[2] += c, h_[3] += d, h_[4] += e, h_[5] += f, h_[6] += g, h_[7] += h;
}

void Sha256::update(const void* data, size_t n) {
    auto p = static_cast<const uint8_t*>(data);
    length_ += n;
    if (buffered_) {
        const size_t take = std::min(n, buf_.size() - buffered_);
        std::memcpy(buf_.data() + buffered_, p, take);
        buffered_ += take, p += take, n -= take;
        if (buffered_ < buf_.size()) return;
        block(buf_.data());
        buffered_ = 0;
    }
    for (; n >= 64; p += 64, n -= 64) block(p);
    std::memcpy(buf_.data(), p, n);
    buffered_ = n;
}

std::string Sha256::hex_digest() const {
    Sha256 s = *this;  // padding is applied to a copy so the stream can go on
    const uint64_t bits = length_ * 8;
    const uint8_t one = 0x80, zero = 0;
    s.update(&one, 1);
    while (s.buffered_ != 56) s.update(&zero, 1);
    uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = uint8_t(bits >> (56 - 8 * i));
    s.update(len, 8);
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (uint32_t v : s.h_)
        for (int shift = 28; shift >= 0; shift -= 4) out += hex[(v >> shift) & 15];
    return out;
}

// ---- Messages --------------------------------------------------------------------------

std::string format_bytes(double bytes) {
    static const char* units[] = {"B", "kB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1000 && u < 4) bytes /= 1000, ++u;
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
    return buf;
}

std::string disk_full_message(const fs::path& folder, const fs::path& part,
                              std::optional<uint64_t> bytes_needed, std::optional<uint64_t> bytes_free) {
    std::string m = "disk full: not enough space in " + folder.string() + " for the download";
    if (bytes_needed) {
        m += " (" + std::to_string(*bytes_needed) + " more bytes needed, " +
             format_bytes(double(*bytes_needed));
        if (bytes_free) m += "; " + format_bytes(double(*bytes_free)) + " free";
        m += ")";
    } else if (bytes_free) {
        m += " (" + format_bytes(double(*bytes_free)) + " free)";
    }
    return m + "; free some space, or choose another --out, and run the same command again: the partial " +
           "download is kept at " + part.string();
}

bool download_supported() {
    return NIWA_HAVE_CURL != 0;
}

#if NIWA_HAVE_CURL

namespace {

bool valid_sha256(const std::string& s) {
    return s.size() == 64 &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(uint8_t(c)); });
}

std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower(uint8_t(c)));
    return s;
}

// FILE.part, written with plain write(2) so that ENOSPC reaches us as an errno, and hashed
// alongside so the digest always covers exactly the bytes on disk.
class PartFile {
public:
    explicit PartFile(fs::path path) : path_(std::move(path)) {
        fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ < 0) throw DownloadError("cannot open " + path_.string() + ": " + std::strerror(errno));
        struct stat st {};
        if (::fstat(fd_, &st) != 0)
            throw DownloadError("cannot stat " + path_.string() + ": " + std::strerror(errno));
        size_ = uint64_t(st.st_size);
    }
    PartFile(const PartFile&) = delete;
    PartFile& operator=(const PartFile&) = delete;
    ~PartFile() {
        if (fd_ >= 0) ::close(fd_);
    }

    const fs::path& path() const { return path_; }
    uint64_t size() const { return size_; }
    const Sha256& hash() const { return sha_; }

    void truncate_to_zero() {
        if (::ftruncate(fd_, 0) != 0)
            throw DownloadError("cannot truncate " + path_.string() + ": " + std::strerror(errno));
        size_ = 0;
        sha_.reset();
    }

    // Appends; returns 0 or the errno of the failed write (the bytes before it stay written).
    int append(const char* data, size_t n) {
        while (n > 0) {
            const ssize_t w = ::pwrite(fd_, data, n, off_t(size_));
            if (w < 0) {
                if (errno == EINTR) continue;
                return errno;
            }
            sha_.update(data, size_t(w));
            size_ += uint64_t(w), data += w, n -= size_t(w);
        }
        return 0;
    }

    // Brings the digest up to the file's size (bytes already there when a run resumes).
    void hash_existing() {
        std::vector<char> buf(1 << 20);
        while (sha_.bytes() < size_) {
            const size_t want = size_t(std::min<uint64_t>(buf.size(), size_ - sha_.bytes()));
            const ssize_t r = ::pread(fd_, buf.data(), want, off_t(sha_.bytes()));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) throw DownloadError("cannot read " + path_.string() + ": " + std::strerror(errno));
            sha_.update(buf.data(), size_t(r));
        }
    }

    void sync_and_close() {
        const int fd = fd_;
        fd_ = -1;
        if (::fsync(fd) != 0 || ::close(fd) != 0)
            throw DownloadError("cannot write " + path_.string() + ": " + std::strerror(errno));
    }

private:
    fs::path path_;
    int fd_ = -1;
    uint64_t size_ = 0;
    Sha256 sha_;
};

std::string hash_file(const fs::path& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw DownloadError("cannot read " + path.string() + ": " + std::strerror(errno));
    Sha256 sha;
    std::vector<char> buf(1 << 20);
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) sha.update(buf.data(), n);
    const bool failed = std::ferror(f);
    std::fclose(f);
    if (failed) throw DownloadError("cannot read " + path.string());
    return sha.hex_digest();
}

// A FILE that is already there counts as downloaded when it passes the checks we can make.
DownloadResult check_existing(const DownloadOptions& o) {
    const uint64_t size = fs::file_size(o.out);
    if (o.expected_size && size != *o.expected_size)
        throw DownloadError(o.out.string() + " already exists but is " + std::to_string(size) +
                            " bytes, not the " + std::to_string(*o.expected_size) +
                            " expected; remove it and run again");
    DownloadResult r{o.out, size, hash_file(o.out), true};
    if (!o.sha256.empty() && r.sha256 != lower(o.sha256))
        throw DownloadError(o.out.string() + " already exists but its SHA-256 is " + r.sha256 + ", not " +
                            lower(o.sha256) + "; remove it and run again");
    return r;
}

// Rate over a sliding window of a few seconds, so a stall shows as a falling rate.
class RateMeter {
public:
    void reset() { samples_.clear(); }
    double sample(Clock::time_point now, uint64_t bytes) {
        samples_.emplace_back(now, bytes);
        while (samples_.size() > 2 && now - samples_[1].first > std::chrono::seconds(5)) samples_.pop_front();
        const auto& [t0, b0] = samples_.front();
        const double dt = std::chrono::duration<double>(now - t0).count();
        return dt > 0 && bytes >= b0 ? double(bytes - b0) / dt : 0.0;
    }

private:
    std::deque<std::pair<Clock::time_point, uint64_t>> samples_;
};

// How one attempt ended.
struct Outcome {
    enum Kind { Complete, Retry, RestartNow } kind = Complete;
    std::string reason;  // for Retry: what went wrong
    bool progressed = false;
};

class Downloader {
public:
    Downloader(const DownloadOptions& o, PartFile& part) : o_(o), part_(part) {
        folder_ = o.out.parent_path().empty() ? fs::path(".") : o.out.parent_path();
    }

    Outcome attempt() {
        resetAttemptState();
        CURL* curl = curl_easy_init();
        if (!curl) throw DownloadError("cannot initialise libcurl");
        const std::string range = std::to_string(offset_) + "-";
        char errbuf[CURL_ERROR_SIZE] = {};
        curl_easy_setopt(curl, CURLOPT_URL, o_.url.c_str());
        curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);  // Hugging Face redirects to its CDN
        curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
        curl_easy_setopt(curl, CURLOPT_USERAGENT, "niwa-engine");
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 30L);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, o_.low_speed_seconds);
        curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
        if (offset_ > 0) curl_easy_setopt(curl, CURLOPT_RANGE, range.c_str());
        curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &Downloader::onHeader);
        curl_easy_setopt(curl, CURLOPT_HEADERDATA, this);
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Downloader::onBody);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, this);
        curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &Downloader::onTick);
        curl_easy_setopt(curl, CURLOPT_XFERINFODATA, this);
        const CURLcode rc = curl_easy_perform(curl);
        long status = 0;
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_cleanup(curl);
        return conclude(rc, status, errbuf[0] ? errbuf : curl_easy_strerror(rc));
    }

    uint64_t part_bytes() const { return part_.size(); }

    void report(bool force) {
        if (!o_.on_progress) return;
        const auto now = Clock::now();
        const double rate = rate_.sample(now, part_.size());
        if (!force && now - last_report_ < o_.progress_interval) return;
        last_report_ = now;
        o_.on_progress({part_.size(), total_, rate});
    }

private:
    void resetAttemptState() {
        offset_ = part_.size();
        decided_ = false;
        http_status_ = 0;
        content_range_.clear();
        content_length_.reset();
        fatal_.clear();
        restart_ = false;
        cancelled_ = false;
        start_size_ = offset_;
    }

    bool cancelRequested() const { return o_.cancel && o_.cancel->load(); }
    void notice(const std::string& m) const {
        if (o_.on_notice) o_.on_notice(m);
    }

    static size_t onHeader(char* data, size_t size, size_t n, void* self) {
        auto* d = static_cast<Downloader*>(self);
        std::string line(data, size * n);
        while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
        if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a redirect or a 100)
            d->content_range_.clear();
            d->content_length_.reset();
            const auto sp = line.find(' ');
            d->http_status_ = sp == std::string::npos ? 0 : std::atol(line.c_str() + sp + 1);
            return size * n;
        }
        const auto colon = line.find(':');
        if (colon == std::string::npos) return size * n;
        const std::string name = lower(line.substr(0, colon));
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(" \t"));
        if (name == "content-range") d->content_range_ = value;
        if (name == "content-length") {
            char* end = nullptr;
            const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
            if (end != value.c_str()) d->content_length_ = v;
        }
        return size * n;
    }

    static size_t onBody(char* data, size_t size, size_t n, void* self) {
        auto* d = static_cast<Downloader*>(self);
        const size_t bytes = size * n;
        if (d->cancelRequested()) return d->cancelled_ = true, 0;
        if (d->http_status_ >= 300) return bytes;  // an error page: read and dropped
        if (!d->decided_ && !d->decide()) return 0;
        if (const int err = d->part_.append(data, bytes)) {
            d->fatal_ = err == ENOSPC || err == EDQUOT
                            ? d->diskFull()
                            : "cannot write " + d->part_.path().string() + ": " + std::strerror(err);
            return 0;
        }
        d->report(false);
        return bytes;
    }

    static int onTick(void* self, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
        auto* d = static_cast<Downloader*>(self);
        if (d->cancelRequested()) return d->cancelled_ = true, 1;
        if (d->decided_) d->report(false);  // before the headers the total is not known yet
        return 0;
    }

    std::string diskFull() const {
        std::optional<uint64_t> needed, free;
        if (total_ && *total_ > part_.size()) needed = *total_ - part_.size();
        std::error_code ec;
        const auto space = fs::space(folder_, ec);
        if (!ec) free = space.available;
        return disk_full_message(folder_, part_.path(), needed, free);
    }

    // The first body byte of a 2xx response: is it the continuation we asked for? Returns
    // false (and sets fatal_ or restart_) to stop the transfer.
    bool decide() {
        decided_ = true;
        if (http_status_ == 206) {
            uint64_t first = 0, last = 0;
            char total[32] = {};
            if (std::sscanf(content_range_.c_str(), "bytes %" SCNu64 "-%" SCNu64 "/%31s", &first, &last,
                            total) < 2 ||
                first != offset_) {
                notice("the server answered the resume request from byte " + std::to_string(offset_) +
                       " with Content-Range '" + content_range_ + "'; starting again from zero");
                part_.truncate_to_zero();
                restart_ = true;
                return false;
            }
            if (total[0] != '*' && total[0])
                total_ = std::strtoull(total, nullptr, 10);
            else
                total_ = last + 1;
            part_.hash_existing();
            if (offset_ > 0)
                notice("resuming at " + format_bytes(double(offset_)) + " of " +
                       format_bytes(double(*total_)));
        } else {
            if (offset_ > 0) {
                notice("the server ignored the resume request (HTTP " + std::to_string(http_status_) +
                       "): starting again from zero");
                part_.truncate_to_zero();
                offset_ = start_size_ = 0;
                rate_.reset();
            }
            total_ = content_length_;
        }
        if (total_ && o_.expected_size && *total_ != *o_.expected_size) {
            fatal_ = "size mismatch: the server's file is " + std::to_string(*total_) + " bytes, but " +
                     std::to_string(*o_.expected_size) + " were expected (" + o_.url +
                     "); if the file was re-published, pull it by URL";
            return false;
        }
        std::error_code ec;
        const auto space = fs::space(folder_, ec);
        if (total_ && !ec && *total_ > offset_ && space.available < *total_ - offset_) {
            fatal_ = disk_full_message(folder_, part_.path(), *total_ - offset_, space.available);
            return false;
        }
        return true;
    }

    Outcome conclude(CURLcode rc, long status, const std::string& curl_error) {
        if (cancelled_)
            throw DownloadCancelled("interrupted: the partial download is kept at " + part_.path().string() +
                                    " (" + format_bytes(double(part_.size())) +
                                    "); run the same command again to resume");
        if (!fatal_.empty()) throw DownloadError(fatal_);
        if (restart_) return {Outcome::RestartNow, "", true};
        const bool progressed = part_.size() > start_size_;
        if (rc != CURLE_OK) {
            switch (rc) {
                case CURLE_UNSUPPORTED_PROTOCOL:
                case CURLE_URL_MALFORMAT:
                case CURLE_TOO_MANY_REDIRECTS:
                case CURLE_PEER_FAILED_VERIFICATION:
                case CURLE_SSL_CACERT_BADFILE:
                case CURLE_REMOTE_ACCESS_DENIED:
                case CURLE_LOGIN_DENIED:
                    throw DownloadError("cannot download " + o_.url + ": " + curl_error);
                default:
                    return {Outcome::Retry, curl_error, progressed};
            }
        }
        if (status == 404 || status == 410)
            throw DownloadError("not found: " + o_.url + " (HTTP " + std::to_string(status) + ")");
        if (status == 408 || status == 429 || status >= 500)
            return {Outcome::Retry, "HTTP " + std::to_string(status) + " from " + o_.url, progressed};
        if (status == 416 && offset_ > 0) return rangeNotSatisfiable();
        if (status >= 300)
            throw DownloadError("the server refused " + o_.url + " (HTTP " + std::to_string(status) +
                                "); check the URL and whether the file needs a login");
        if (!decided_ && !decide()) return conclude(CURLE_OK, status, curl_error);  // an empty body
        if (total_ && part_.size() < *total_)
            return {Outcome::Retry,
                    "the connection closed at " + format_bytes(double(part_.size())) + " of " +
                        format_bytes(double(*total_)),
                    progressed};
        return {Outcome::Complete, "", progressed};
    }

    // 416: the range starts at or past the end. When the .part is exactly the whole file,
    // a previous run finished the transfer; otherwise the .part is stale.
    Outcome rangeNotSatisfiable() {
        unsigned long long size = 0;
        if (std::sscanf(content_range_.c_str(), "bytes */%llu", &size) == 1 && size == offset_) {
            total_ = size;
            part_.hash_existing();
            return {Outcome::Complete, "", false};
        }
        notice("the partial download at " + part_.path().string() +
               " does not fit the server's file (HTTP 416); starting again from zero");
        part_.truncate_to_zero();
        return {Outcome::RestartNow, "", true};
    }

    const DownloadOptions& o_;
    PartFile& part_;
    fs::path folder_;
    uint64_t offset_ = 0, start_size_ = 0;
    bool decided_ = false, restart_ = false, cancelled_ = false;
    long http_status_ = 0;
    std::string content_range_;
    std::optional<uint64_t> content_length_, total_;
    std::string fatal_;
    RateMeter rate_;
    Clock::time_point last_report_{};
};

void sleep_unless_cancelled(std::chrono::milliseconds ms, const std::atomic<bool>* cancel) {
    const auto until = Clock::now() + ms;
    while (Clock::now() < until) {
        if (cancel && cancel->load()) return;
        std::this_thread::sleep_for(
            std::min<Clock::duration>(std::chrono::milliseconds(50), until - Clock::now()));
    }
}

std::string format_seconds(std::chrono::milliseconds ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g s", double(ms.count()) / 1000.0);
    return buf;
}

// Attempts until one completes; between failed ones, back-off.
void transfer(const DownloadOptions& o, Downloader& d) {
    int failures = 0;
    auto delay = o.retry_base;
    for (;;) {
        if (o.cancel && o.cancel->load())
            throw DownloadCancelled("interrupted: the partial download is kept at " + o.out.string() +
                                    ".part" + "; run the same command again to resume");
        const Outcome out = d.attempt();
        if (out.kind == Outcome::Complete) break;
        if (out.kind == Outcome::RestartNow) continue;
        // A cut that moved the file forward is not held against the retry budget: a long
        // download over a flaky link may need many of them.
        if (out.progressed) failures = 0, delay = o.retry_base;
        if (failures >= o.retries) {
            std::string m = "cannot download " + o.url + ": " + out.reason + " (gave up after " +
                            std::to_string(failures + 1) + " attempts";
            if (d.part_bytes() > 0)
                m += "; the partial download is kept at " + o.out.string() + ".part for the next run";
            throw DownloadError(m + ")");
        }
        ++failures;
        if (o.on_notice)
            o.on_notice(out.reason + "; retrying in " + format_seconds(delay) + " (retry " +
                        std::to_string(failures) + " of " + std::to_string(o.retries) + ")");
        sleep_unless_cancelled(delay, o.cancel);
        delay = std::min(delay * 2, o.retry_cap);
    }
}

void init_curl() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

DownloadResult download(const DownloadOptions& o) {
    if (!o.sha256.empty() && !valid_sha256(o.sha256))
        throw DownloadError("--sha256 expects 64 hex digits, got '" + o.sha256 + "'");
    const fs::path folder = o.out.parent_path().empty() ? fs::path(".") : o.out.parent_path();
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) throw DownloadError("cannot create the folder " + folder.string() + ": " + ec.message());
    if (fs::exists(o.out)) return check_existing(o);
    init_curl();

    fs::path part_path = o.out;
    part_path += ".part";
    PartFile part(part_path);
    Downloader d(o, part);
    try {
        transfer(o, d);
    } catch (const DownloadError&) {
        std::error_code ignored;
        if (part.size() == 0) fs::remove(part_path, ignored);  // an empty .part helps no resume
        throw;
    }

    part.hash_existing();  // no-op unless the transfer resumed from a .part it never read
    DownloadResult r{o.out, part.size(), part.hash().hex_digest(), false};
    d.report(true);
    auto discard = [&](const std::string& why) {
        std::error_code ignored;
        fs::remove(part_path, ignored);
        throw DownloadError(why + "; the download was removed");
    };
    if (o.expected_size && r.bytes != *o.expected_size)
        discard("size mismatch: expected " + std::to_string(*o.expected_size) + " bytes, got " +
                std::to_string(r.bytes));
    if (!o.sha256.empty() && r.sha256 != lower(o.sha256))
        discard("checksum mismatch: expected " + lower(o.sha256) + ", got " + r.sha256);
    part.sync_and_close();
    fs::rename(part_path, o.out, ec);
    if (ec)
        throw DownloadError("cannot rename " + part_path.string() + " to " + o.out.string() + ": " +
                            ec.message());
    return r;
}

#else  // no libcurl in this build

DownloadResult download(const DownloadOptions&) {
    throw DownloadError(
        "this niwa-engine was built without libcurl, so it cannot download: install libcurl4-openssl-dev, "
        "configure again and rebuild (or download the file with a browser or curl)");
}

#endif

}  // namespace niwa::runtime
