//===- Checksum.h - CRC-32C for the plan file ------------------*- C++ -*-===//
//
// Every part of a plan file is covered by a CRC-32C (Castagnoli). A CRC detects every single-bit
// error and every burst up to 32 bits, which is what a damaged copy of a file looks like; it is
// not a defence against someone forging a file (nothing in the runtime trusts plans that far).
// CRC-32C rather than zlib's CRC-32 because x86-64 computes it in hardware (SSE4.2), so checking
// a few hundred MB of weights at load costs tens of milliseconds.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_PLAN_CHECKSUM_H
#define KILN_RUNTIME_PLAN_CHECKSUM_H

#include <cstdint>
#include <span>

namespace kiln::plan {

/// CRC-32C of `data`. `crc` is the value returned for the bytes before `data`, so that
/// crc32c(b, crc32c(a)) == crc32c(a followed by b). Uses the CPU's crc32 instruction when it
/// has one, crc32cPortable otherwise.
uint32_t crc32c(std::span<const uint8_t> data, uint32_t crc = 0);

/// The table-driven (slicing-by-8) implementation, the same values as crc32c on any CPU.
/// Public so tests can check both paths agree on a machine with the hardware instruction.
uint32_t crc32cPortable(std::span<const uint8_t> data, uint32_t crc = 0);

} // namespace kiln::plan

#endif // KILN_RUNTIME_PLAN_CHECKSUM_H
