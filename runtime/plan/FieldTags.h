//===- FieldTags.h - roles of plan fields for the schema visitors -*- C++ -*-===//
//
// Every plan struct lists its fields once, in file order, in a static visitFields(self, v)
// (Plan.h). The visitors that encode, decode, check, print and document a plan are generic
// over those lists; a field whose plain C++ type does not say enough about it is wrapped in
// one of the tags below, so that a visitor knows, say, that a u32 is a buffer index (checked
// against the buffer table, printed as the buffer's name and type) and not a count.
//
// A tag holds references to the struct's members: `Self` may be const (encode, print, check)
// or not (decode). Visitors that do not care about a tag use the value inside it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_PLAN_FIELDTAGS_H
#define KILN_RUNTIME_PLAN_FIELDTAGS_H

#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

namespace kiln::plan {

/// Index (or indices) into Plan::buffers: a uint32_t, an optional one or a vector of them.
template <class T> struct BufferRef {
  T &value;
};
/// Index into Plan::images.
template <class T> struct ImageRef {
  T &value;
};
/// An element type and a shape, side by side (the field names are "dtype" and "shape").
template <class D, class S> struct TensorTypeRef {
  D &dtype;
  S &shape;
};
/// Bytes (a string or a byte vector) that views summarize by their size.
template <class T> struct BlobRef {
  T &value;
};
/// A version number as CUDA (13000 = 13.0) or as cuDNN/cuBLASLt (91900 = 9.19.0) write it; 0
/// means "not used".
enum class VersionKind { Cuda, Library };
template <class T> struct VersionRef {
  T &value;
  VersionKind kind;
};

template <class T> BufferRef<T> bufferRef(T &value) { return {value}; }
template <class T> ImageRef<T> imageRef(T &value) { return {value}; }
template <class D, class S> TensorTypeRef<D, S> tensorType(D &dtype, S &shape) { return {dtype, shape}; }
template <class T> BlobRef<T> blob(T &value) { return {value}; }
template <class T> VersionRef<T> asCudaVersion(T &value) { return {value, VersionKind::Cuda}; }
template <class T> VersionRef<T> asLibraryVersion(T &value) { return {value, VersionKind::Library}; }

template <class T> inline constexpr bool kIsBufferRef = false;
template <class T> inline constexpr bool kIsBufferRef<BufferRef<T>> = true;
template <class T> inline constexpr bool kIsImageRef = false;
template <class T> inline constexpr bool kIsImageRef<ImageRef<T>> = true;
template <class T> inline constexpr bool kIsTensorType = false;
template <class D, class S> inline constexpr bool kIsTensorType<TensorTypeRef<D, S>> = true;
template <class T> inline constexpr bool kIsBlob = false;
template <class T> inline constexpr bool kIsBlob<BlobRef<T>> = true;
template <class T> inline constexpr bool kIsVersion = false;
template <class T> inline constexpr bool kIsVersion<VersionRef<T>> = true;

/// Calls f(index) for every buffer index a record's fields hold (its BufferRef fields: one
/// index, an optional one or a vector of them), in field order. What reads or writes which
/// buffers (the memory planner's liveness) follows from the schema, not from a list by hand.
template <class Record, class F> void forEachBufferIndex(const Record &record, F &&f) {
  Record::visitFields(record, [&](const char *, auto &&field) {
    using Field = std::decay_t<decltype(field)>;
    if constexpr (kIsBufferRef<Field>) {
      using T = std::decay_t<decltype(field.value)>;
      if constexpr (std::is_same_v<T, std::optional<uint32_t>>) {
        if (field.value)
          f(*field.value);
      } else if constexpr (std::is_same_v<T, uint32_t>) {
        f(field.value);
      } else {
        for (uint32_t index : field.value)
          f(index);
      }
    }
  });
}

/// Tags that wrap one value in `.value` (all but TensorTypeRef, which holds two).
template <class T>
inline constexpr bool kIsValueTag = kIsBufferRef<T> || kIsImageRef<T> || kIsBlob<T> || kIsVersion<T>;
template <class T> inline constexpr bool kIsTag = kIsValueTag<T> || kIsTensorType<T>;

/// Visits what a tag wraps, for a visitor to which the tag makes no difference (the encoder,
/// the decoder): the value under the field's key, or a tensor type's "dtype" and "shape".
template <class V, class Tag> void visitUntagged(V &v, const char *key, const Tag &tag) {
  if constexpr (kIsTensorType<Tag>) {
    v("dtype", tag.dtype);
    v("shape", tag.shape);
  } else {
    v(key, tag.value);
  }
}

/// A plan struct: it lists its fields with visitFields.
template <class T>
concept PlanRecord = requires(T &t) { T::visitFields(t, [](const char *, auto &&) {}); };

/// A table of records (Plan::buffers and the like).
template <class T> inline constexpr bool kIsRecordVector = false;
template <PlanRecord T> inline constexpr bool kIsRecordVector<std::vector<T>> = true;

} // namespace kiln::plan

#endif // KILN_RUNTIME_PLAN_FIELDTAGS_H
