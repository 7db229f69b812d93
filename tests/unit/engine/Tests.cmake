# Host-side runtime logic that needs no GPU: the timing cache file and C API argument checks.
# Included from tests/CMakeLists.txt (paths relative to tests/).
add_executable(EngineHostTest
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/engine/TimingCacheTest.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/engine/CApiTest.cpp)
target_link_libraries(EngineHostTest PRIVATE KilnRuntime GTest::gtest_main)
gtest_discover_tests(EngineHostTest PROPERTIES LABELS "unit")
