# Finds LLVM/MLIR 22 and protobuf, and defines kiln_mlir_libs, which links either
# the shared libMLIR/libLLVM (fast incremental builds) or, with KILN_STATIC_LLVM, the static
# archives in one --start-group so the binary needs only libc and libstdc++.
find_package(MLIR REQUIRED CONFIG
  HINTS /usr/lib/llvm-22/lib/cmake/mlir)
message(STATUS "Using MLIR ${LLVM_PACKAGE_VERSION} from ${MLIR_DIR}")
list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
include(TableGen)
include(AddLLVM)
include(AddMLIR)

find_program(KILN_LIT NAMES lit lit.py HINTS ${LLVM_TOOLS_BINARY_DIR} /usr/lib/llvm-22/bin REQUIRED)
find_program(KILN_FILECHECK FileCheck HINTS ${LLVM_TOOLS_BINARY_DIR} /usr/lib/llvm-22/bin REQUIRED)

if(KILN_STATIC_LLVM)
  set(Protobuf_USE_STATIC_LIBS ON)
endif()
find_package(Protobuf REQUIRED)

# mlir_tablegen reads directory-scope include dirs; compiler targets also get them through the
# interface library below.
include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
add_library(kiln_mlir_headers INTERFACE)
target_include_directories(kiln_mlir_headers SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
separate_arguments(_kiln_llvm_defs UNIX_COMMAND "${LLVM_DEFINITIONS}")
target_compile_options(kiln_mlir_headers INTERFACE ${_kiln_llvm_defs})

# The MLIR/LLVM libraries as one interface target. KilnIR links it PUBLIC, so CMake places the
# libraries after every Kiln archive on each link line (a static group placed before KilnIR
# would leave KilnIR's references unresolved).
add_library(kiln_mlir_libs INTERFACE)
if(KILN_STATIC_LLVM)
  file(GLOB _mlir_static "${LLVM_LIBRARY_DIR}/libMLIR*.a")
  list(FILTER _mlir_static EXCLUDE REGEX "libMLIR(CAPI|Python|.*Test|.*TestLib|ExecutionEngine|JitRunner|.*Runner).*\\.a$")
  set(_llvm_static
    ${LLVM_LIBRARY_DIR}/libLLVMSupport.a ${LLVM_LIBRARY_DIR}/libLLVMRemarks.a
    ${LLVM_LIBRARY_DIR}/libLLVMBitstreamReader.a ${LLVM_LIBRARY_DIR}/libLLVMDemangle.a
    ${LLVM_LIBRARY_DIR}/libLLVMTargetParser.a)
  target_link_libraries(kiln_mlir_libs INTERFACE
    -Wl,--start-group ${_mlir_static} ${_llvm_static} -Wl,--end-group pthread dl m)
  target_link_options(kiln_mlir_libs INTERFACE -static-libgcc)
else()
  target_link_libraries(kiln_mlir_libs INTERFACE
    ${LLVM_LIBRARY_DIR}/libMLIR.so ${LLVM_LIBRARY_DIR}/libLLVM.so)
endif()
if(NOT LLVM_PACKAGE_VERSION MATCHES "^22\\.")
  message(FATAL_ERROR "Kiln needs MLIR 22, found ${LLVM_PACKAGE_VERSION} at ${MLIR_DIR}; run scripts/setup-deps.sh")
endif()
