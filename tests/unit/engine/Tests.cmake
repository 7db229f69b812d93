# Host-side runtime logic that needs no GPU: the timing cache file, the cuDNN plan store, device peak rates, C API argument checks and the
# attention step's acceptance and timing-cache key.
# Included from tests/CMakeLists.txt (paths relative to tests/).
add_executable(EngineHostTest
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/engine/TimingCacheTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/engine/CudnnPlanStoreTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/engine/DevicePeaksTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/engine/CApiTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/engine/AttentionProblemTest.cpp)
target_link_libraries(EngineHostTest PRIVATE KilnRuntime GTest::gtest_main)
gtest_discover_tests(EngineHostTest PROPERTIES LABELS "unit")
