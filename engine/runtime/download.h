// The downloader behind `niwa-engine pull`: one URL to one file, written to FILE.part and
// renamed only when complete and verified, resumable with HTTP Range, retried with back-off,
// checked against a SHA-256 and an expected size. Built on libcurl (an error without it).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

namespace niwa::runtime {

// SHA-256 (FIPS 180-4), fed incrementally as the bytes reach the disk, so a finished
// download needs no second pass over a multi-gigabyte file.
class Sha256 {
public:
    Sha256() { reset(); }
    void reset();
    void update(const void* data, size_t n);
    std::string hex_digest() const;  // of everything fed so far; does not finish the stream
    uint64_t bytes() const { return length_; }

private:
    void block(const uint8_t* p);
    std::array<uint32_t, 8> h_{};
    std::array<uint8_t, 64> buf_{};
    size_t buffered_ = 0;
    uint64_t length_ = 0;
};

struct DownloadProgress {
    uint64_t bytes = 0;             // in the .part file, resumed bytes included
    std::optional<uint64_t> total;  // when the server said
    double rate = 0;                // bytes per second, smoothed over the last few seconds
};

struct DownloadOptions {
    std::string url;
    std::filesystem::path out;  // the finished file; FILE.part while downloading
    std::string sha256;         // expected, lowercase or uppercase hex; empty: not checked
    std::optional<uint64_t> expected_size;
    int retries = 8;                             // further attempts after the first one fails
    std::chrono::milliseconds retry_base{1000};  // back-off: base, 2 base, 4 base, ... up to cap
    std::chrono::milliseconds retry_cap{30000};
    long low_speed_seconds = 30;  // below 1 KiB/s for this long counts as a time-out
    std::chrono::milliseconds progress_interval{1000};
    std::function<void(const DownloadProgress&)> on_progress;  // every interval, and at the end
    std::function<void(const std::string&)> on_notice;         // retries, restarts, resumes
    const std::atomic<bool>* cancel = nullptr;                 // set (e.g. by SIGINT) to stop
};

struct DownloadResult {
    std::filesystem::path path;
    uint64_t bytes = 0;
    std::string sha256;
    bool already_present = false;  // FILE existed and passed the checks; nothing was fetched
};

// Every failure; `what()` is the message for the user (what, where, what to do).
class DownloadError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};
// The download was stopped through `cancel`; the .part file is kept for a later resume.
class DownloadCancelled : public DownloadError {
public:
    using DownloadError::DownloadError;
};

// Downloads `options.url` to `options.out`. Throws DownloadError (or DownloadCancelled).
DownloadResult download(const DownloadOptions& options);

// False when this build has no libcurl (download() then throws a message saying so).
bool download_supported();

// The message for a full disk: names the folder, the bytes still needed (when known) and the
// bytes free (when known), and says the partial file is kept for a resume.
std::string disk_full_message(const std::filesystem::path& folder, const std::filesystem::path& part,
                              std::optional<uint64_t> bytes_needed, std::optional<uint64_t> bytes_free);

// "7.21 GB", "512 B": decimal units, as download sizes are usually quoted.
std::string format_bytes(double bytes);

}  // namespace niwa::runtime
