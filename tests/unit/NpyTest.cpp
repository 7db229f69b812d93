//===- NpyTest.cpp - .npy reading and writing ------------------------------===//

#include "runtime/Npy.h"
#include "runtime/TensorData.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

using namespace kiln::runtime;

namespace {

std::string header(const std::string &dict) {
  std::string h = dict;
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += char(h.size() & 0xff);
  out += char(h.size() >> 8);
  return out + h;
}

TEST(Npy, ParsesFloat32Matrix) {
  float values[6] = {1, 2, 3, 4, 5, 6};
  std::string bytes = header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }") +
                      std::string(reinterpret_cast<char *>(values), sizeof(values));
  auto array = parseNpy(bytes, "m.npy");
  ASSERT_TRUE(array.isOk()) << array.status().toString();
  EXPECT_EQ(array.value().dtype, "<f4");
  EXPECT_EQ(array.value().shape, (std::vector<int64_t>{2, 3}));
  float back[6];
  std::memcpy(back, array.value().data.data(), sizeof(back));
  EXPECT_EQ(back[5], 6.0f);
}

TEST(Npy, ScalarAndOneDim) {
  auto scalar = parseNpy(header("{'descr': '<i8', 'fortran_order': False, 'shape': (), }") +
                             std::string(8, '\0'), "s.npy");
  ASSERT_TRUE(scalar.isOk());
  EXPECT_TRUE(scalar.value().shape.empty());
  auto vec = parseNpy(header("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }") +
                          std::string(3, '\1'), "v.npy");
  ASSERT_TRUE(vec.isOk());
  EXPECT_EQ(vec.value().shape, (std::vector<int64_t>{3}));
}

TEST(Npy, RejectsBadInput) {
  EXPECT_NE(parseNpy("hello", "x.npy").status().message().find("bad magic"), std::string::npos);
  EXPECT_NE(parseNpy(header("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }") +
                         std::string(8, '\0'), "f.npy")
                .status().message().find("Fortran"),
            std::string::npos);
  EXPECT_NE(parseNpy(header("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }") +
                         std::string(8, '\0'), "t.npy")
                .status().message().find("truncated"),
            std::string::npos);
  EXPECT_NE(parseNpy(header("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }") +
                         std::string(4, '\0'), "b.npy")
                .status().message().find("not supported"),
            std::string::npos);
  EXPECT_NE(parseNpy(header("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }") +
                         std::string(8, '\0'), "c.npy")
                .status().message().find("not supported"),
            std::string::npos);
}

TEST(Npy, WriteThenRead) {
  NpyArray array;
  array.dtype = "<f2";
  array.shape = {2, 1};
  array.data = {'\x00', '\x3c', '\x00', '\xc0'}; // 1.0, -2.0 in f16
  std::string path = ::testing::TempDir() + "/kiln_npy_roundtrip.npy";
  ASSERT_TRUE(writeNpy(path, array).isOk());
  auto back = readNpy(path);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back.value().dtype, "<f2");
  EXPECT_EQ(back.value().shape, array.shape);
  EXPECT_EQ(back.value().data, array.data);
  std::remove(path.c_str());
}

} // namespace

// What `kiln compare` reads dumps with: each .npy dtype back to the element type it holds.
TEST(Npy, DtypesMapBackToElementTypes) {
  using kiln::plan::DType;
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::Bool, DType::I8, DType::U8, DType::I16, DType::U16,
                      DType::I32, DType::U32, DType::I64, DType::U64}) {
    NpyArray array = npyFromBytes(std::vector<uint8_t>(kiln::plan::dtypeBytes(dtype)), dtype, {1});
    EXPECT_EQ(dtypeOfNpy(array.dtype), dtype) << array.dtype;
  }
  EXPECT_EQ(dtypeOfNpy("<u1"), DType::U8); // one-byte types: '<' or '|'
  EXPECT_EQ(dtypeOfNpy("<c8"), std::nullopt);
  // bf16 travels as float32: it reads back as f32.
  EXPECT_EQ(dtypeOfNpy(npyFromBytes({0, 0}, DType::BF16, {1}).dtype), DType::F32);
}
