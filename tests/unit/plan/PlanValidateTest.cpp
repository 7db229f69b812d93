//===- PlanValidateTest.cpp - every structural check of validatePlan -------===//
//
// Each case breaks one thing in the valid sample plan and checks the message names it. Every
// case runs twice: on the in-memory plan (what writePlanFile checks) and on its file bytes
// (what parsePlan checks after the checksums pass, i.e. a plan written by a buggy kiln).
//
//===----------------------------------------------------------------------===//

#include "PlanFixtures.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>

namespace kiln::plan {
namespace {
using namespace kiln::plan::testing;
using runtime::StatusCode;

struct BreakCase {
  const char *name;
  std::function<void(Plan &)> breakIt;
  const char *message; // a substring of the expected error
};

GemmStep &gemm(Plan &p, size_t step) { return std::get<GemmStep>(p.steps[step].params); }
ConvStep &conv(Plan &p, size_t step) { return std::get<ConvStep>(p.steps[step].params); }
KernelStep &kernel(Plan &p, size_t step) { return std::get<KernelStep>(p.steps[step].params); }
CopyStep &copy(Plan &p) { return std::get<CopyStep>(p.steps[3].params); }

/// Makes f32 buffers int8 of the same bytes (the last axis 4x longer), input 0 with buffer 0.
/// Makes f32 `buffers` 8-bit (int8 or f8e4m3fn), four times the elements in the same bytes.
void eightBitBuffers(Plan &p, std::initializer_list<size_t> buffers, DType type) {
  for (size_t b : buffers) {
    p.buffers[b].dtype = type;
    p.buffers[b].shape.back() *= 4;
    if (b == p.inputs[0].buffer)
      p.inputs[0].dtype = type, p.inputs[0].shape = p.buffers[b].shape;
  }
}
void int8Buffers(Plan &p, std::initializer_list<size_t> buffers) { eightBitBuffers(p, buffers, DType::I8); }

const BreakCase kCases[] = {
    // The ONNX values a step completes: a name per buffer, buffers that exist.
    {"ValueWithoutBuffer", [](Plan &p) { p.steps[2].valueBuffers.clear(); },
     "step 2 '/fc/Gemm' (kiln.gemm): names 1 ONNX values but gives 0 buffers for them"},
    {"ValueWithoutName", [](Plan &p) { p.steps[2].values = {""}; },
     "step 2 '/fc/Gemm' (kiln.gemm): an ONNX value without a name"},
    {"ValueBufferOutOfRange", [](Plan &p) { p.steps[2].valueBuffers = {99}; }, "step 2 '/fc/Gemm' (kiln.gemm): valueBuffers"},
    // Enum values this kiln does not know.
    {"UnknownInputDType", [](Plan &p) { p.inputs[0].dtype = static_cast<DType>(99); },
     "input 0 'x': dtype has the unknown dtype value 99 (this kiln knows 1=f32, 2=f16, 3=bf16,"},
    {"UnknownBufferDType", [](Plan &p) { p.buffers[2].dtype = static_cast<DType>(0); },
     "buffer 2 'conv.b': dtype has the unknown dtype value 0"},
    {"UnknownMemorySpace", [](Plan &p) { p.buffers[2].space = static_cast<MemorySpace>(7); },
     "buffer 2 'conv.b': space has the unknown memory space value 7 (this kiln knows 1=arena, 2=weights)"},
    {"UnknownMathMode", [](Plan &p) { gemm(p, 2).math = static_cast<MathMode>(5); },
     "step 2 '/fc/Gemm' (kiln.gemm): math has the unknown math mode value 5 (this kiln knows 0=strict-f32, 1=tf32)"},
    {"UnknownActivation", [](Plan &p) { gemm(p, 5).activation = static_cast<Activation>(9); },
     "step 5 '/bmm/MatMul' (kiln.matmul): activation has the unknown activation value 9 (this kiln knows 0=none, "
     "1=relu, 2=gelu, 3=clip, 4=sigmoid, 5=hard-sigmoid, 6=hard-swish)"},
    {"ConvWithGelu", [](Plan &p) { conv(p, 0).activation = Activation::Gelu; },
     "step 0 '/conv1/Conv' (kiln.conv): channels-first convolutions fuse only no activation or relu"},
    {"UnknownConvMathMode", [](Plan &p) { conv(p, 4).math = static_cast<MathMode>(200); },
     "step 4 '/up/ConvTranspose' (kiln.conv_transpose): math has the unknown math mode value 200"},

    // Indices out of range.
    {"InputBufferOutOfRange", [](Plan &p) { p.inputs[0].buffer = 12; },
     "input 0 'x': buffer = 12 is not a buffer index (the plan has 12 buffers)"},
    {"OutputBufferOutOfRange", [](Plan &p) { p.outputs[1].buffer = 4000000000u; },
     "output 1 'up': buffer = 4000000000 is not a buffer index"},
    {"KernelArgOutOfRange", [](Plan &p) { kernel(p, 1).args[1] = 12; },
     "step 1 '/relu1/Relu' (kiln.relu): args[1] = 12 is not a buffer index (the plan has 12 buffers)"},
    {"KernelImageOutOfRange", [](Plan &p) { kernel(p, 6).image = 2; },
     "step 6 '/tail/Mul' (kiln.mul): image = 2 is not an image index (the plan has 2 images)"},
    {"GemmOperandOutOfRange", [](Plan &p) { gemm(p, 2).a = 50; },
     "step 2 '/fc/Gemm' (kiln.gemm): a = 50 is not a buffer index"},
    {"GemmOptionalOperandOutOfRange", [](Plan &p) { gemm(p, 2).bias = 13; },
     "step 2 '/fc/Gemm' (kiln.gemm): bias = 13 is not a buffer index"},
    {"ConvBiasOutOfRange", [](Plan &p) { conv(p, 0).bias = 12; },
     "step 0 '/conv1/Conv' (kiln.conv): bias = 12 is not a buffer index"},
    {"CopyDstOutOfRange", [](Plan &p) { copy(p).dst = 99; },
     "step 3 '/Reshape' (kiln.reshape): dst = 99 is not a buffer index"},

    // Buffers: their tensor type against their size, their range in their memory space.
    {"BufferBytesDisagreeWithType", [](Plan &p) { p.buffers[10].bytes += 1; },
     "buffer 10 'up.y': f32[1,2,16,16] is 2048 bytes but the buffer has 2049"},
    {"BufferShapeDisagreesWithBytes", [](Plan &p) { p.buffers[3].shape = {1, 4, 8}; },
     "buffer 3 'conv.y': f32[1,4,8] is 128 bytes but the buffer has 1024"},
    {"BufferTypeDisagreesWithBytes", [](Plan &p) { p.buffers[6].dtype = DType::F16; },
     "buffer 6 'fc.b': f16[10] is 20 bytes but the buffer has 40"},
    {"BufferNegativeDim", [](Plan &p) { p.buffers[3].shape = {1, -4, 8, 8}; },
     "buffer 3 'conv.y': shape [1,-4,8,8] has a negative dimension"},
    {"BufferTypeOverflows", [](Plan &p) { p.buffers[0].shape = {int64_t(1) << 40, int64_t(1) << 40}; },
     "buffer 0 'x': f32[1099511627776,1099511627776] does not fit in 64 bits"},
    {"ArenaBufferPastArena", [](Plan &p) { p.metadata.arenaBytes = 5000; },
     "buffer 10 'up.y': bytes [3328, 3328+2048) lie outside the arena of 5000 bytes"},
    {"WeightsBufferPastBlob", [](Plan &p) { p.buffers[11].offset = 4096; },
     "buffer 11 'bmm.b': bytes [4096, 4096+64) lie outside the weights blob of 3904 bytes"},
    {"BufferEndOverflows", [](Plan &p) { p.buffers[0].offset = 0xFFFFFFFFFFFFFF00ull; },
     "buffer 0 'x': bytes [18446744073709551360, 18446744073709551360+768) lie outside the arena"},
    {"MisalignedOffset", [](Plan &p) { p.buffers[3].offset = 800; },
     "buffer 3 'conv.y': offset 800 is not a multiple of 256"},
    {"ArenaSmallerThanLowerBound", [](Plan &p) { p.metadata.arenaLowerBound = 6000; },
     "metadata: the arena lower bound (6000 bytes) is larger than the arena (5376 bytes)"},

    // Inputs and outputs.
    {"BindingShapeMismatch", [](Plan &p) { p.outputs[0].shape = {4, 11}; },
     "output 0 'y': f32[4,11] but buffer 8 'y' holds f32[4,10]"},
    {"BindingSameBytesOtherShape", [](Plan &p) { p.outputs[0].shape = {40}; },
     "output 0 'y': f32[40] but buffer 8 'y' holds f32[4,10]"},
    {"BindingDTypeMismatch", [](Plan &p) { p.inputs[0].dtype = DType::F16; },
     "input 0 'x': f16[1,3,8,8] but buffer 0 'x' holds f32[1,3,8,8]"},
    {"BindingNegativeDim", [](Plan &p) { p.inputs[0].shape = {-1, 3, 8, 8}; },
     "input 0 'x': shape [-1,3,8,8] has a negative dimension"},
    {"BindingInWeights", [](Plan &p) { p.outputs[0].buffer = 6; },
     "output 0 'y': buffer 6 'fc.b' is in the weights, not in the arena"},
    {"DuplicateInputName", [](Plan &p) { p.inputs.push_back(p.inputs[0]); },
     "input 1 'x': another input has the same name"},
    {"DuplicateOutputName", [](Plan &p) { p.outputs[1].name = "y"; },
     "output 1 'y': another output has the same name"},
    {"UnnamedInput", [](Plan &p) { p.inputs[0].name.clear(); }, "input 0 has no name"},

    // Kernel launches.
    {"ZeroGrid", [](Plan &p) { kernel(p, 6).grid[1] = 0; },
     "step 6 '/tail/Mul' (kiln.mul): grid (2,0,4) and block (8,8,4) must not be zero"},
    {"ZeroBlock", [](Plan &p) { kernel(p, 1).block = {0, 1, 1}; },
     "step 1 '/relu1/Relu' (kiln.relu): grid (1,1,1) and block (0,1,1) must not be zero"},
    {"BlockTooLarge", [](Plan &p) { kernel(p, 6).block = {32, 32, 2}; },
     "step 6 '/tail/Mul' (kiln.mul): block (32,32,2) has 2048 threads, more than 1024"},
    {"BlockZTooLarge", [](Plan &p) { kernel(p, 6).block = {1, 1, 65}; },
     "step 6 '/tail/Mul' (kiln.mul): grid (2,3,4) or block (1,1,65) exceeds CUDA's limits"},
    {"GridYTooLarge", [](Plan &p) { kernel(p, 6).grid = {1, 65536, 1}; },
     "grid (1,65536,1) or block (8,8,4) exceeds CUDA's limits"},
    {"EmptyFunctionName", [](Plan &p) { kernel(p, 1).function.clear(); }, "the kernel function name is empty"},

    // Gemm shapes against buffers.
    {"GemmATooSmall", [](Plan &p) { gemm(p, 2).k = 65; },
     "step 2 '/fc/Gemm' (kiln.gemm): A needs 1040 bytes but buffer 4 'relu.y' has 1024"},
    {"GemmBTooSmall", [](Plan &p) { gemm(p, 5).strideB = 16; },
     "step 5 '/bmm/MatMul' (kiln.matmul): B needs 128 bytes but buffer 11 'bmm.b' has 64"},
    {"GemmDTooSmall", [](Plan &p) { gemm(p, 2).d = 8; gemm(p, 2).m = 5; gemm(p, 2).k = 51; },
     "step 2 '/fc/Gemm' (kiln.gemm): D needs 200 bytes but buffer 8 'y' has 160"},
    {"GemmCTooSmall", [](Plan &p) { gemm(p, 5).c = 2; },
     "step 5 '/bmm/MatMul' (kiln.matmul): C needs 128 bytes but buffer 2 'conv.b' has 16"},
    {"GemmBiasTooSmall", [](Plan &p) { gemm(p, 2).bias = 2; },
     "step 2 '/fc/Gemm' (kiln.gemm): bias needs 40 bytes but buffer 2 'conv.b' has 16"},
    {"GemmWritesWeights", [](Plan &p) { gemm(p, 2).d = 5; },
     "step 2 '/fc/Gemm' (kiln.gemm): writes D into buffer 5 'fc.w', which is in the read-only weights"},
    {"GemmZeroDim", [](Plan &p) { gemm(p, 2).n = 0; }, "batch, m, n, k (1, 4, 0, 64) must all be at least 1"},
    {"GemmNegativeStride", [](Plan &p) { gemm(p, 5).strideA = -16; }, "batch strides must not be negative"},
    {"GemmOverlappingOutputBatches", [](Plan &p) { gemm(p, 5).strideD = 8; },
     "strideD 8 is smaller than one 4x4 output matrix, so the batches overlap"},
    {"GemmBetaWithoutC", [](Plan &p) { gemm(p, 5).c.reset(); }, "beta is 0.5 but there is no C buffer"},
    {"GemmNonFiniteAlpha", [](Plan &p) { gemm(p, 2).alpha = std::numeric_limits<float>::infinity(); }, "alpha and beta must be finite"},
    {"GemmSizeOverflow", [](Plan &p) { gemm(p, 2).m = int64_t(1) << 40; gemm(p, 2).k = int64_t(1) << 40; },
     "the size of A overflows 64 bits"},

    // Operand element types, read from the buffers. Each break keeps the buffer's bytes.
    {"GemmUnsupportedType", [](Plan &p) { p.buffers[4].dtype = DType::I32; },
     "step 2 '/fc/Gemm' (kiln.gemm): A (buffer 4 'relu.y') is i32; cuBLASLt steps take f32, f16, bf16 or f8e4m3fn "
     "operands"},
    {"GemmBDiffersFromA", [](Plan &p) { p.buffers[5].dtype = DType::F16, p.buffers[5].shape = {64, 10, 2}; },
     "step 2 '/fc/Gemm' (kiln.gemm): B (buffer 5 'fc.w') is f16 but A is f32 and B must have A's type"},
    {"GemmHalfOutputOfF32", [](Plan &p) { p.buffers[7].dtype = DType::F16, p.buffers[7].shape = {4, 10, 2}; },
     "step 2 '/fc/Gemm' (kiln.gemm): D (buffer 7 'fc.y') is f16 but must have A's type (f32) or f32"},
    {"GemmBiasDiffersFromD", [](Plan &p) { p.buffers[6].dtype = DType::BF16, p.buffers[6].shape = {20}; },
     "step 2 '/fc/Gemm' (kiln.gemm): bias (buffer 6 'fc.b') is bf16 but D is f32 and bias must have D's type"},
    {"GemmCDiffersFromD",
     [](Plan &p) {
       p.buffers[8].dtype = p.outputs[0].dtype = DType::I32;
       gemm(p, 5).c = 8;
     },
     "step 5 '/bmm/MatMul' (kiln.matmul): C (buffer 8 'y') is i32 but D is f32 and C must have D's type"},
    {"ConvUnsupportedType", [](Plan &p) { p.buffers[0].dtype = p.inputs[0].dtype = DType::I32; },
     "step 0 '/conv1/Conv' (kiln.conv): x (buffer 0 'x') is i32; cuDNN steps take f32, f16, bf16 or (channels last) int8 or f8e4m3fn operands"},
    {"ConvMixedTypes", [](Plan &p) { p.buffers[1].dtype = DType::F16, p.buffers[1].shape = {4, 3, 3, 3, 2}; },
     "step 0 '/conv1/Conv' (kiln.conv): w (buffer 1 'conv.w') is f16 but x is f32 and a convolution's operands "
     "share one type"},
    {"ConvBiasType", [](Plan &p) { p.buffers[2].dtype = DType::BF16, p.buffers[2].shape = {8}; },
     "step 0 '/conv1/Conv' (kiln.conv): bias (buffer 2 'conv.b') is bf16 but x is f32"},

    // INT8 convolutions: channels last, an int8 weight, their f32 scales.
    {"ConvScaleWithFloats", [](Plan &p) { conv(p, 0).scale = 2; },
     "step 0 '/conv1/Conv' (kiln.conv): scale goes with 8-bit (int8, f8e4m3fn) operands, and x (buffer 0 'x') is f32"},
    // A float convolution writing int8 (a first layer kept in bf16 before INT8 convolutions).
    {"FloatConvInt8YChannelsFirst", [](Plan &p) { int8Buffers(p, {3}); },
     "step 0 '/conv1/Conv' (kiln.conv): 8-bit outputs (yScale, yQuantized) are channels last"},
    {"FloatConvInt8YWithoutYScale",
     [](Plan &p) {
       int8Buffers(p, {3});
       conv(p, 0).channelsLast = true;
     },
     "step 0 '/conv1/Conv' (kiln.conv): an 8-bit y needs its yScale"},
    {"FloatConvYScaleWithFloatY",
     [](Plan &p) {
       conv(p, 0).channelsLast = true;
       conv(p, 0).yScale = 2; // conv.b: f32
     },
     "step 0 '/conv1/Conv' (kiln.conv): yScale goes with an 8-bit y, and y (buffer 3 'conv.y') is f32"},
    {"Int8ConvChannelsFirst", [](Plan &p) { int8Buffers(p, {0}); },
     "step 0 '/conv1/Conv' (kiln.conv): int8 convolutions are channels last"},
    {"Int8ConvWithoutScale",
     [](Plan &p) {
       int8Buffers(p, {0, 1});
       conv(p, 0).channelsLast = true;
     },
     "step 0 '/conv1/Conv' (kiln.conv): an int8 convolution needs its scale"},
    {"Int8ConvInt8YWithoutYScale",
     [](Plan &p) {
       int8Buffers(p, {0, 1, 3});
       conv(p, 0).channelsLast = true;
       conv(p, 0).scale = 2; // conv.b: f32 [4], one per output channel
     },
     "step 0 '/conv1/Conv' (kiln.conv): an 8-bit y needs its yScale"},
    {"Int8ConvQuantizedWithoutYScale",
     [](Plan &p) {
       int8Buffers(p, {0, 1});
       conv(p, 0).channelsLast = true;
       conv(p, 0).scale = 2;
       conv(p, 0).yQuantized = 4; // relu.y: 1024 bytes, room for the int8 [1,4,8,8]
     },
     "step 0 '/conv1/Conv' (kiln.conv): yQuantized goes with a float y and a yScale"},

    // An int8 residual and its scale (one f32), channels last.
    {"Int8ResidualWithoutScale",
     [](Plan &p) {
       conv(p, 0).channelsLast = true;
       p.buffers.push_back({"res", MemorySpace::Arena, 5376, 256, DType::I8, {1, 4, 8, 8}});
       p.metadata.arenaBytes += 256;
       conv(p, 0).residual = 12;
     },
     "step 0 '/conv1/Conv' (kiln.conv): an 8-bit residual (i8) needs its residualScale"},
    {"ResidualScaleWithFloatResidual",
     [](Plan &p) {
       conv(p, 0).channelsLast = true;
       conv(p, 0).residual = 4;
       conv(p, 0).residualScale = 2;
     },
     "step 0 '/conv1/Conv' (kiln.conv): residualScale goes with an 8-bit residual of a channels-last convolution"},

    // Convolution geometry and buffers.
    {"ConvXTooSmall", [](Plan &p) { conv(p, 0).x = 2; },
     "step 0 '/conv1/Conv' (kiln.conv): x needs 768 bytes but buffer 2 'conv.b' has 16"},
    {"ConvWTooSmall", [](Plan &p) { conv(p, 4).w = 11; },
     "step 4 '/up/ConvTranspose' (kiln.conv_transpose): w needs 128 bytes but buffer 11 'bmm.b' has 64"},
    {"ConvYTooSmall", [](Plan &p) { conv(p, 4).y = 4; },
     "step 4 '/up/ConvTranspose' (kiln.conv_transpose): y needs 2048 bytes but buffer 4 'relu.y' has 1024"},
    {"ConvWritesWeights", [](Plan &p) { conv(p, 0).y = 5; }, "writes y into buffer 5 'fc.w', which is in the read-only weights"},
    {"ConvBiasTooSmall", [](Plan &p) { p.buffers[2].bytes = 12, p.buffers[2].shape = {3}; },
     "step 0 '/conv1/Conv' (kiln.conv): bias needs 16 bytes but buffer 2 'conv.b' has 12"},
    {"ConvWrongOutputSize", [](Plan &p) { conv(p, 0).strides = {2, 2}; },
     "step 0 '/conv1/Conv' (kiln.conv): the convolution of x [1,3,8,8] with w [4,3,3,3] (groups 1, pads [1,1], "
     "strides [2,2], dilations [1,1]) does not give y [1,4,8,8]"},
    {"ConvTransposeWrongOutputSize", [](Plan &p) { conv(p, 4).pads = {1, 1}; },
     "the transposed convolution of x [1,4,8,8] with w [4,2,2,2] (groups 1, pads [1,1], strides [2,2], dilations "
     "[1,1]) does not give y [1,2,16,16]"},
    {"ConvChannelMismatch", [](Plan &p) { conv(p, 0).wShape = {4, 1, 3, 3}; },
     "does not give y [1,4,8,8]"},
    // The channels-last epilogue (a cuDNN graph) and what channels-first convolutions refuse.
    {"ChannelsFirstConvResidual", [](Plan &p) { conv(p, 0).residual = 4; },
     "step 0 '/conv1/Conv' (kiln.conv): only channels-last convolutions add a residual"},
    {"ChannelsFirstConvHardSwish", [](Plan &p) { conv(p, 0).activation = Activation::HardSwish; },
     "channels-first convolutions fuse only no activation or relu, not activation 6"},
    {"ChannelsLastTransposedConv", [](Plan &p) { conv(p, 4).channelsLast = true; },
     "step 4 '/up/ConvTranspose' (kiln.conv_transpose): channels-last convolutions are 2-d forward convolutions"},
    {"ChannelsLastConvGelu", [](Plan &p) { conv(p, 0).channelsLast = true, conv(p, 0).activation = Activation::Gelu; },
     "convolutions do not fuse gelu"},
    {"ChannelsLastEmptyClip",
     [](Plan &p) {
       ConvStep &c = conv(p, 0);
       c.channelsLast = true, c.activation = Activation::Clip, c.activationAlpha = 6, c.activationBeta = 0;
     },
     "clip bounds [6, 0] are empty"},
    {"ChannelsLastInfiniteParameter",
     [](Plan &p) {
       ConvStep &c = conv(p, 0);
       c.channelsLast = true, c.activation = Activation::HardSigmoid;
       c.activationAlpha = std::numeric_limits<float>::infinity();
     },
     "activation parameters must be finite"},
    {"ConvResidualTooSmall", [](Plan &p) { conv(p, 0).channelsLast = true, conv(p, 0).residual = 2; },
     "step 0 '/conv1/Conv' (kiln.conv): residual needs 1024 bytes but buffer 2 'conv.b' has 16"},
    {"ConvGroupsDoNotDivide", [](Plan &p) { conv(p, 0).groups = 3; },
     "groups 3 must be positive and divide w's first dimension 4"},
    {"ConvRankMismatch", [](Plan &p) { conv(p, 0).wShape = {4, 3, 3}; },
     "x [1,3,8,8], w [4,3,3] and y [1,4,8,8] must have the same rank, at least 3"},
    {"ConvMissingPads", [](Plan &p) { conv(p, 0).pads = {1}; },
     "pads, strides and dilations need 2 values each"},
    {"ConvZeroStride", [](Plan &p) { conv(p, 0).strides = {1, 0}; }, "strides [1,0] and dilations [1,1] >= 1"},

    // Copies, images, metadata.
    {"CopyTooLarge", [](Plan &p) { copy(p).bytes = 161; },
     "step 3 '/Reshape' (kiln.reshape): src needs 161 bytes but buffer 7 'fc.y' has 160"},
    {"CopyIntoWeights", [](Plan &p) { copy(p).dst = 5; },
     "writes dst into buffer 5 'fc.w', which is in the read-only weights"},
    {"ImageWithoutCode", [](Plan &p) { p.images[1].ptx.clear(); }, "image 1 'kernels1' has neither a cubin nor PTX"},
    {"ImageForOtherArch", [](Plan &p) { p.images[0].smVersion = 80; },
     "image 0 'kernels0': its cubin is for sm_80 but the plan targets sm_90"},
    {"NoCudaVersion", [](Plan &p) { p.metadata.cudaVersion = 0; },
     "metadata: the plan has kernel images but records no CUDA version"},
    {"NoCudnnVersion", [](Plan &p) { p.metadata.cudnnVersion = 0; },
     "metadata: the plan has cuDNN steps (e.g. '/conv1/Conv') but records no cuDNN version"},
    {"NoCublasLtVersion", [](Plan &p) { p.metadata.cublasLtVersion = 0; },
     "metadata: the plan has cuBLASLt steps (e.g. '/fc/Gemm') but records no cuBLASLt version"},
    {"NoComputeCapability", [](Plan &p) { p.metadata.computeCapability = 0; },
     "metadata: the target compute capability is 0"},
};

class PlanValidateTest : public ::testing::TestWithParam<BreakCase> {};

TEST_P(PlanValidateTest, InMemoryPlanIsRejected) {
  Plan plan = makeSamplePlan();
  GetParam().breakIt(plan);
  Status s = validatePlan(plan);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kInvalidPlan);
  EXPECT_NE(s.message().find(GetParam().message), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("recompile the model with `kiln compile`"), std::string::npos) << s.message();
}

TEST_P(PlanValidateTest, FileIsRejected) {
  Plan plan = makeSamplePlan();
  GetParam().breakIt(plan);
  StatusOr<Plan> parsed = parsePlan(serializePlan(plan), "broken.kiln");
  ASSERT_FALSE(parsed.isOk());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidPlan);
  EXPECT_EQ(parsed.status().message().rfind("broken.kiln: ", 0), 0u) << parsed.status().message();
  EXPECT_NE(parsed.status().message().find(GetParam().message), std::string::npos) << parsed.status().message();
}

INSTANTIATE_TEST_SUITE_P(EveryCheck, PlanValidateTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<BreakCase> &param) { return std::string(param.param.name); });

TEST(PlanValidate, InputAndOutputMayShareAName) {
  // ONNX allows a graph input to be a graph output too (an identity model).
  Plan plan = makeSamplePlan();
  plan.outputs[0].name = "x";
  EXPECT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
}

/// x[4,8] @ w[8,5] + bias into d[4,5], with the operand types given.
Plan typedGemmPlan(DType ab, DType d) {
  Plan plan;
  plan.metadata.arenaBytes = 512;
  plan.metadata.cublasLtVersion = 130100;
  size_t abBytes = dtypeBytes(ab), dBytes = dtypeBytes(d);
  plan.buffers = {{"x", MemorySpace::Arena, 0, 32 * abBytes, ab, {4, 8}},
                  {"w", MemorySpace::Weights, 0, 40 * abBytes, ab, {8, 5}},
                  {"bias", MemorySpace::Weights, 256, 5 * dBytes, d, {5}},
                  {"d", MemorySpace::Arena, 256, 20 * dBytes, d, {4, 5}}};
  plan.inputs = {{"x", ab, {4, 8}, 0}};
  plan.outputs = {{"d", d, {4, 5}, 3}};
  GemmStep g;
  g.m = 4, g.n = 5, g.k = 8;
  g.a = 0, g.b = 1, g.bias = 2, g.d = 3;
  plan.steps = {{"fc", "kiln.gemm", {"fc"}, g}};
  plan.setWeights(std::vector<uint8_t>(512));
  return plan;
}

TEST(PlanValidate, GemmOperandTypesFollowTheRules) {
  // A and B share f32, f16 or bf16; D has A's type or f32.
  for (DType ab : {DType::F32, DType::F16, DType::BF16})
    for (DType d : {ab, DType::F32}) {
      Plan plan = typedGemmPlan(ab, d);
      EXPECT_TRUE(validatePlan(plan).isOk()) << dtypeName(ab) << " -> " << dtypeName(d) << ": "
                                             << validatePlan(plan).toString();
      EXPECT_TRUE(parsePlan(serializePlan(plan)).isOk());
    }
  Status narrowing = validatePlan(typedGemmPlan(DType::BF16, DType::F16));
  EXPECT_NE(narrowing.message().find("D (buffer 3 'd') is f16 but must have A's type (bf16) or f32"), std::string::npos)
      << narrowing.toString();
  Status f64 = validatePlan(typedGemmPlan(DType::F64, DType::F64));
  EXPECT_NE(f64.message().find("A (buffer 0 'x') is f64; cuBLASLt steps take f32, f16, bf16 or f8e4m3fn operands"),
            std::string::npos)
      << f64.toString();
}

/// An FP8 gemm as codegen writes it: A [4, 16] and B stored [N, K] = [16, 16] in E4M3 (transB),
/// bias and D of type `d`.
Plan fp8GemmPlan(DType d) {
  Plan plan;
  plan.metadata.arenaBytes = 512;
  plan.metadata.cublasLtVersion = 130100;
  size_t dBytes = dtypeBytes(d);
  plan.buffers = {{"x", MemorySpace::Arena, 0, 64, DType::F8E4M3FN, {4, 16}},
                  {"w", MemorySpace::Weights, 0, 256, DType::F8E4M3FN, {16, 16}},
                  {"bias", MemorySpace::Weights, 256, 16 * dBytes, d, {16}},
                  {"d", MemorySpace::Arena, 256, 64 * dBytes, d, {4, 16}}};
  plan.inputs = {{"x", DType::F8E4M3FN, {4, 16}, 0}};
  plan.outputs = {{"d", d, {4, 16}, 3}};
  GemmStep g;
  g.m = 4, g.n = 16, g.k = 16, g.transB = true, g.alpha = 1e-3f;
  g.a = 0, g.b = 1, g.bias = 2, g.d = 3;
  plan.steps = {{"fc", "kiln.gemm", {"fc"}, g}};
  plan.setWeights(std::vector<uint8_t>(512));
  return plan;
}

TEST(PlanValidate, Fp8GemmsRunOnlyAsCublasLtTakesThem) {
  // E4M3 A and B give f32, f16 or bf16; B stored [N, K] (transB); K and N multiples of 16.
  for (DType d : {DType::F32, DType::F16, DType::BF16}) {
    Plan plan = fp8GemmPlan(d);
    if (d == DType::F32) // cuBLASLt's FP8 kernels writing f32 read a bias as bf16: none here
      std::get<GemmStep>(plan.steps[0].params).bias.reset();
    EXPECT_TRUE(validatePlan(plan).isOk()) << dtypeName(d) << ": " << validatePlan(plan).toString();
    EXPECT_TRUE(parsePlan(serializePlan(plan)).isOk());
  }
  Status f32Bias = validatePlan(fp8GemmPlan(DType::F32));
  EXPECT_NE(f32Bias.message().find("an FP8 gemm writing f32 takes no bias"), std::string::npos) << f32Bias.toString();
  const std::string layout = "FP8 gemms run only with A [m, k] and B stored [n, k] (transA 0, transB 1)";
  Plan notTransposed = fp8GemmPlan(DType::BF16);
  std::get<GemmStep>(notTransposed.steps[0].params).transB = false;
  EXPECT_NE(validatePlan(notTransposed).message().find(layout), std::string::npos)
      << validatePlan(notTransposed).toString();
  Plan oddN = fp8GemmPlan(DType::BF16);
  std::get<GemmStep>(oddN.steps[0].params).n = 8;
  EXPECT_NE(validatePlan(oddN).message().find(layout), std::string::npos) << validatePlan(oddN).toString();
  // An E4M3 D is scaled by one f32 (scaleD); bias (and C) keep a 16-bit type.
  Plan fp8Out = fp8GemmPlan(DType::F8E4M3FN);
  Status unscaled = validatePlan(fp8Out);
  EXPECT_NE(unscaled.message().find("an f8e4m3fn D needs scaleD (one f32)"), std::string::npos) << unscaled.toString();
  fp8Out.buffers[2] = {"bias", MemorySpace::Weights, 256, 32, DType::BF16, {16}};
  fp8Out.buffers.push_back({"scale_d", MemorySpace::Weights, 0, 4, DType::F32, {1}});
  std::get<GemmStep>(fp8Out.steps[0].params).scaleD = 4;
  EXPECT_TRUE(validatePlan(fp8Out).isOk()) << validatePlan(fp8Out).toString();
  EXPECT_TRUE(parsePlan(serializePlan(fp8Out)).isOk());
  fp8Out.buffers[2] = {"bias", MemorySpace::Weights, 256, 64, DType::F32, {16}};
  Status wideBias = validatePlan(fp8Out);
  EXPECT_NE(wideBias.message().find("with an f8e4m3fn D, C and bias are bf16 or f16"), std::string::npos)
      << wideBias.toString();
  Plan bf16Scaled = fp8GemmPlan(DType::BF16);
  bf16Scaled.buffers.push_back({"scale_d", MemorySpace::Weights, 0, 4, DType::F32, {1}});
  std::get<GemmStep>(bf16Scaled.steps[0].params).scaleD = 4;
  EXPECT_NE(validatePlan(bf16Scaled).message().find("scaleD goes with an f8e4m3fn D only"), std::string::npos)
      << validatePlan(bf16Scaled).toString();
}

TEST(PlanValidate, OperandSizesUseEachOperandsType) {
  // bf16 operands need half the bytes of f32 ones: a 4x8 bf16 A is 64 bytes, and 63 are too few.
  Plan plan = typedGemmPlan(DType::BF16, DType::F32);
  ASSERT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
  std::get<GemmStep>(plan.steps[0].params).k = 9;
  Status s = validatePlan(plan);
  EXPECT_NE(s.message().find("A needs 72 bytes but buffer 0 'x' has 64"), std::string::npos) << s.toString();
}

TEST(PlanValidate, FloatConvMayWriteAndAddInt8) {
  // An int8 y with its yScale, or the f32 y and its int8 quantization (a new int8 buffer).
  auto withInt8Buffer = [] {
    Plan plan = makeSamplePlan();
    plan.metadata.arenaBytes += 256;
    plan.buffers.push_back({"conv.q", MemorySpace::Arena, 5376, 256, DType::I8, {1, 4, 8, 8}}); // 12
    conv(plan, 0).channelsLast = true;
    conv(plan, 0).yScale = 2; // conv.b: f32
    return plan;
  };
  Plan int8Y = withInt8Buffer();
  conv(int8Y, 0).y = 12;
  EXPECT_TRUE(validatePlan(int8Y).isOk()) << validatePlan(int8Y).toString();
  Plan both = withInt8Buffer();
  conv(both, 0).yQuantized = 12;
  EXPECT_TRUE(validatePlan(both).isOk()) << validatePlan(both).toString();
  // An int8 residual with its scale.
  Plan residual = withInt8Buffer();
  conv(residual, 0).yScale.reset();
  conv(residual, 0).residual = 12;
  conv(residual, 0).residualScale = 2;
  EXPECT_TRUE(validatePlan(residual).isOk()) << validatePlan(residual).toString();
  EXPECT_TRUE(parsePlan(serializePlan(residual)).isOk());
}

TEST(PlanValidate, Fp8ConvsTakeE4M3LikeInt8) {
  // x and w f8e4m3fn with their K f32 scales (conv.b: f32 [4]), channels last, an f32 y.
  auto fp8Conv = [] {
    Plan plan = makeSamplePlan();
    eightBitBuffers(plan, {0, 1}, DType::F8E4M3FN);
    conv(plan, 0).channelsLast = true;
    conv(plan, 0).scale = 2;
    return plan;
  };
  Plan floatY = fp8Conv();
  EXPECT_TRUE(validatePlan(floatY).isOk()) << validatePlan(floatY).toString();
  EXPECT_TRUE(parsePlan(serializePlan(floatY)).isOk());
  // An E4M3 y (a new buffer: conv.y is read by other steps) needs its yScale; with it, it
  // validates, and so does an E4M3 residual with its scale.
  Plan fp8Y = fp8Conv();
  fp8Y.metadata.arenaBytes += 512;
  fp8Y.buffers.push_back({"conv.q", MemorySpace::Arena, 5376, 256, DType::F8E4M3FN, {1, 4, 8, 8}}); // 12
  fp8Y.buffers.push_back({"res", MemorySpace::Arena, 5632, 256, DType::F8E4M3FN, {1, 4, 8, 8}});    // 13
  conv(fp8Y, 0).y = 12;
  EXPECT_NE(validatePlan(fp8Y).message().find("an 8-bit y needs its yScale"), std::string::npos)
      << validatePlan(fp8Y).toString();
  conv(fp8Y, 0).yScale = 2;
  EXPECT_TRUE(validatePlan(fp8Y).isOk()) << validatePlan(fp8Y).toString();
  conv(fp8Y, 0).residual = 13;
  EXPECT_NE(validatePlan(fp8Y).message().find("an 8-bit residual (f8e4m3fn) needs its residualScale"),
            std::string::npos)
      << validatePlan(fp8Y).toString();
  conv(fp8Y, 0).residualScale = 2;
  EXPECT_TRUE(validatePlan(fp8Y).isOk()) << validatePlan(fp8Y).toString();
  EXPECT_TRUE(parsePlan(serializePlan(fp8Y)).isOk());
  // One 8-bit type for x and w, the scales, channels last.
  Plan mixed = fp8Conv();
  mixed.buffers[1].dtype = DType::I8;
  EXPECT_NE(validatePlan(mixed).message().find(
                "w (buffer 1 'conv.w') is i8 but x is f8e4m3fn and so is an 8-bit convolution's weight"),
            std::string::npos)
      << validatePlan(mixed).toString();
  Plan unscaled = fp8Conv();
  conv(unscaled, 0).scale.reset();
  EXPECT_NE(validatePlan(unscaled).message().find("an FP8 convolution needs its scale"), std::string::npos)
      << validatePlan(unscaled).toString();
  Plan channelsFirst = fp8Conv();
  conv(channelsFirst, 0).channelsLast = false;
  EXPECT_NE(validatePlan(channelsFirst).message().find("FP8 convolutions are channels last"), std::string::npos)
      << validatePlan(channelsFirst).toString();
}

TEST(PlanValidate, ScratchIsAByteTensor) {
  Plan plan = makeSamplePlan();
  plan.buffers.push_back({"scratch", MemorySpace::Arena, 4096, 100, DType::U8, {100}});
  std::get<KernelStep>(plan.steps[1].params).args.push_back(12);
  EXPECT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
}

TEST(PlanValidate, PtxOnlyImageNeedNotMatchTheTarget) {
  Plan plan = makeSamplePlan();
  plan.images[1].smVersion = 80; // no cubin: its PTX is JIT-compiled for whatever GPU runs it
  EXPECT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
}

} // namespace
} // namespace kiln::plan
