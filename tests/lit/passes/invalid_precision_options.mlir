// RUN: not kiln-opt %s -kiln-mixed-precision="precision=int3" 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not kiln-opt %s -kiln-mixed-precision="precision=bf16 force-precision=fc1" 2>&1 | FileCheck %s --check-prefix=FORCE
// RUN: not kiln-opt %s -kiln-mixed-precision="precision=bf16 force-precision=fc1=fp8" 2>&1 | FileCheck %s --check-prefix=FORCE
// RUN: not kiln-opt %s --kiln-pipeline="precision=half" 2>&1 | FileCheck %s --check-prefix=PIPELINE

// PRECISION: error: kiln-mixed-precision: precision 'int3' is not one of fp32, tf32, bf16, fp16
// FORCE: error: kiln-mixed-precision: force-precision 'fc1{{(=fp8)?}}' is not NAME=PRECISION with PRECISION one of fp32, tf32, bf16, fp16
// PIPELINE: kiln-pipeline: precision 'half' is not one of fp32, tf32, bf16, fp16
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %r = kiln.relu %x : tensor<2xf32>
  return %r : tensor<2xf32>
}
