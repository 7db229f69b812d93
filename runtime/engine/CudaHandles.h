//===- CudaHandles.h - owning wrappers for CUDA/cuDNN/cuBLASLt objects -*- C++ -*-===//
//
// Move-only owners so that every early `return status` in the engine frees what was created
// before it. Creation goes through static functions returning StatusOr.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_CUDAHANDLES_H
#define KILN_RUNTIME_ENGINE_CUDAHANDLES_H

#include "runtime/engine/CudaCheck.h"

#include <cstdint>
#include <string>
#include <utility>

namespace kiln::runtime {

/// A unique owner of a pointer-like handle with a C destroy function.
template <typename T, auto Destroy>
class Owned {
public:
  Owned() = default;
  explicit Owned(T handle) : handle_(handle) {}
  Owned(Owned &&other) noexcept : handle_(std::exchange(other.handle_, T{})) {}
  Owned &operator=(Owned &&other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, T{});
    }
    return *this;
  }
  Owned(const Owned &) = delete;
  Owned &operator=(const Owned &) = delete;
  ~Owned() { reset(); }

  T get() const { return handle_; }
  explicit operator bool() const { return handle_ != T{}; }
  void reset() {
    if (handle_ != T{})
      (void)Destroy(handle_);
    handle_ = T{};
  }

private:
  T handle_{};
};

using Stream = Owned<cudaStream_t, cudaStreamDestroy>;
using Event = Owned<cudaEvent_t, cudaEventDestroy>;
using GraphExec = Owned<cudaGraphExec_t, cudaGraphExecDestroy>;
using Graph = Owned<cudaGraph_t, cudaGraphDestroy>;
using Library = Owned<cudaLibrary_t, cudaLibraryUnload>;
using CudnnHandle = Owned<cudnnHandle_t, cudnnDestroy>;
using CublasLtHandle = Owned<cublasLtHandle_t, cublasLtDestroy>;

/// Device memory from cudaMalloc.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  static StatusOr<DeviceBuffer> allocate(uint64_t bytes, const std::string &what) {
    DeviceBuffer buffer;
    if (bytes == 0)
      return buffer;
    Status status = cudaStatus(cudaMalloc(&buffer.ptr_, bytes),
                               "allocating " + std::to_string(bytes) + " bytes of device memory for " + what);
    if (!status.isOk())
      return status;
    buffer.bytes_ = bytes;
    return buffer;
  }
  DeviceBuffer(DeviceBuffer &&other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
    if (this != &other) {
      release();
      ptr_ = std::exchange(other.ptr_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }
  uint8_t *data() const { return static_cast<uint8_t *>(ptr_); }
  uint64_t bytes() const { return bytes_; }

private:
  void release() {
    if (ptr_)
      (void)cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  void *ptr_ = nullptr;
  uint64_t bytes_ = 0;
};

/// Page-locked host memory from cudaMallocHost, so async copies really are asynchronous.
class PinnedBuffer {
public:
  PinnedBuffer() = default;
  static StatusOr<PinnedBuffer> allocate(uint64_t bytes, const std::string &what) {
    PinnedBuffer buffer;
    if (bytes == 0)
      return buffer;
    Status status = cudaStatus(cudaMallocHost(&buffer.ptr_, bytes),
                               "allocating " + std::to_string(bytes) + " bytes of pinned host memory for " + what);
    if (!status.isOk())
      return status;
    buffer.bytes_ = bytes;
    return buffer;
  }
  PinnedBuffer(PinnedBuffer &&other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  PinnedBuffer &operator=(PinnedBuffer &&other) noexcept {
    if (this != &other) {
      release();
      ptr_ = std::exchange(other.ptr_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  ~PinnedBuffer() { release(); }
  uint8_t *data() const { return static_cast<uint8_t *>(ptr_); }
  uint64_t bytes() const { return bytes_; }

private:
  void release() {
    if (ptr_)
      (void)cudaFreeHost(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  void *ptr_ = nullptr;
  uint64_t bytes_ = 0;
};

inline StatusOr<Stream> createStream(const std::string &what) {
  cudaStream_t stream = nullptr;
  // Non-blocking: the legacy default stream used by other code must not serialize with us.
  Status status = cudaStatus(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "creating the stream of " + what);
  if (!status.isOk())
    return status;
  return Stream(stream);
}

inline StatusOr<Event> createEvent(const std::string &what) {
  cudaEvent_t event = nullptr;
  Status status = cudaStatus(cudaEventCreate(&event), "creating a CUDA event for " + what);
  if (!status.isOk())
    return status;
  return Event(event);
}

} // namespace kiln::runtime

#endif // KILN_RUNTIME_ENGINE_CUDAHANDLES_H
