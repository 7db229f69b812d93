//===- CudnnPlanStoreTest.cpp - serialized cuDNN plans kept by key ---------===//

#include "runtime/engine/CudnnPlanStore.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using kiln::runtime::CudnnPlanStore;

namespace {

std::filesystem::path tempDir(const std::string &name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("kiln-cudnn-plans-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" + name);
  std::filesystem::remove_all(dir);
  return dir;
}

struct Warnings {
  std::vector<std::string> messages;
  CudnnPlanStore::Warn fn() {
    return [this](const std::string &m) { messages.push_back(m); };
  }
};

const CudnnPlanStore::Bytes kPlan = {0x5b, 0x00, 0xff, 0x0a, 0x7b, 0x42};

TEST(CudnnPlanStore, DirectoryGoesBesideTheTimingCache) {
  EXPECT_EQ(CudnnPlanStore::directoryFor("/home/u/.cache/kiln/timing_cache.txt"),
            "/home/u/.cache/kiln/timing_cache.cudnn-plans");
  EXPECT_EQ(CudnnPlanStore::directoryFor("cache"), "cache.cudnn-plans");
  EXPECT_EQ(CudnnPlanStore::directoryFor(""), "");
}

TEST(CudnnPlanStore, MemoryOnlyKeepsPlansForTheProcess) {
  CudnnPlanStore store("", "|gpu=x", nullptr);
  EXPECT_EQ(store.find("conv a"), nullptr);
  store.insert("conv a", kPlan);
  ASSERT_NE(store.find("conv a"), nullptr);
  EXPECT_EQ(*store.find("conv a"), kPlan);
  EXPECT_EQ(store.find("conv b"), nullptr);
  store.erase("conv a");
  EXPECT_EQ(store.find("conv a"), nullptr);
}

TEST(CudnnPlanStore, AnotherProcessReadsTheFile) {
  auto dir = tempDir("reload");
  Warnings warnings;
  {
    CudnnPlanStore writer(dir.string(), "|gpu=H200|cudnn=91400", warnings.fn());
    writer.insert("conv x=[1,3,8,8] engine=7", kPlan);
  }
  CudnnPlanStore reader(dir.string(), "|gpu=H200|cudnn=91400", warnings.fn());
  auto found = reader.find("conv x=[1,3,8,8] engine=7");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(*found, kPlan);
  EXPECT_EQ(reader.find("conv x=[1,3,8,8] engine=8"), nullptr);
  // The device key is part of the key: another GPU or cuDNN version does not see the plan.
  CudnnPlanStore otherGpu(dir.string(), "|gpu=H100|cudnn=91400", warnings.fn());
  EXPECT_EQ(otherGpu.find("conv x=[1,3,8,8] engine=7"), nullptr);
  EXPECT_TRUE(warnings.messages.empty());
  std::filesystem::remove_all(dir);
}

TEST(CudnnPlanStore, AFileOfAnotherKeyOrVersionIsNotUsed) {
  auto dir = tempDir("mismatch");
  CudnnPlanStore store(dir.string(), "|gpu=H200", nullptr);
  store.insert("key a", kPlan);
  std::string path = store.pathFor("key a|gpu=H200");
  ASSERT_TRUE(std::filesystem::exists(path));
  std::ifstream in(path, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(file.rfind(std::string(CudnnPlanStore::kHeader) + "key a|gpu=H200\n", 0), 0u);

  // The same file name holding another key (a hash collision): not this key's plan.
  std::string other = std::string(CudnnPlanStore::kHeader) + "key b|gpu=H200\n" + "xyz";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << other;
  CudnnPlanStore fresh(dir.string(), "|gpu=H200", nullptr);
  EXPECT_EQ(fresh.find("key a"), nullptr);
  // An older format's header, or a file cut after the key: not used either.
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "kiln cudnn plan v0\nkey a|gpu=H200\nxyz";
  EXPECT_EQ(CudnnPlanStore(dir.string(), "|gpu=H200", nullptr).find("key a"), nullptr);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << CudnnPlanStore::kHeader << "key a|gpu=H200\n";
  EXPECT_EQ(CudnnPlanStore(dir.string(), "|gpu=H200", nullptr).find("key a"), nullptr);
  std::filesystem::remove_all(dir);
}

TEST(CudnnPlanStore, AnUnwritableDirectoryWarnsAndKeepsThePlanInMemory) {
  auto dir = tempDir("unwritable");
  // A regular file where the directory should be: creating it fails.
  std::ofstream(dir.string()) << "not a directory";
  Warnings warnings;
  CudnnPlanStore store(dir.string(), "", warnings.fn());
  store.insert("k", kPlan);
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_NE(warnings.messages[0].find("kept in memory only"), std::string::npos) << warnings.messages[0];
  ASSERT_NE(store.find("k"), nullptr);
  EXPECT_EQ(*store.find("k"), kPlan);
  std::filesystem::remove(dir);
}

} // namespace
