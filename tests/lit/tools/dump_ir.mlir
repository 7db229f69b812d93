// --dump-ir DIR writes the module before the passes and after each one, numbered in the
// order they ran, with weights and large constants elided, so that two files diff to what one
// pass did. `kiln import` without an optimization option only folds constants.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln compile %S/Inputs/tiny_cnn.mlir -o %t/a.kiln --quiet --precision bf16 --dump-ir %t/compile
// RUN: ls %t/compile | FileCheck %s --check-prefix=FILES
// RUN: FileCheck %s --check-prefix=INPUT --input-file %t/compile/00-input.mlir
// RUN: cat %t/compile/*-kiln-mixed-precision.mlir | FileCheck %s --check-prefix=BF16
// RUN: kiln compile %S/Inputs/tiny_cnn.mlir -o %t/a.kiln --quiet --no-fold --dump-ir %t/no-fold
// RUN: ls %t/no-fold | FileCheck %s --check-prefix=NO-FOLD --implicit-check-not=kiln-fold-constants
// RUN: kiln import %S/Inputs/tiny_cnn.mlir -o %t/imported.mlir --quiet --dump-ir %t/import
// RUN: ls %t/import | FileCheck %s --check-prefix=IMPORT --implicit-check-not=kiln-mixed-precision
// RUN: kiln import %S/Inputs/tiny_cnn.mlir -o %t/imported.mlir --quiet --precision bf16 --dump-ir %t/import-bf16
// RUN: ls %t/import-bf16 | FileCheck %s --check-prefix=FILES
// An unwritable directory is a failure (exit 1) that says so.
// RUN: touch %t/file
// RUN: %python %S/Inputs/exit_status.py 1 kiln compile %S/Inputs/tiny_cnn.mlir -o %t/a.kiln --quiet --dump-ir %t/file/dump 2>&1 | FileCheck %s --check-prefix=UNWRITABLE

// FILES: 00-input.mlir
// FILES-NEXT: 01-kiln-fold-constants.mlir
// FILES: {{[0-9][0-9]}}-kiln-mixed-precision.mlir

// The resource blob and the 20-element bias are elided; the splat constant is short anyway.
// INPUT: kiln.constant dense_resource<conv_w> : tensor<3x2x2x2xf32>
// INPUT: kiln.conv {{.*}} -> tensor<1x3x3x3xf32>
// INPUT: kiln.constant dense<2.500000e-01> : tensor<20x27xf32>
// INPUT: kiln.constant dense_resource<__elided__> : tensor<20xf32>
// INPUT-NOT: 0000003F

// BF16: kiln.gemm {{.*}} -> tensor<1x20xbf16>

// NO-FOLD: 00-input.mlir
// NO-FOLD: kiln-mixed-precision.mlir

// IMPORT: 00-input.mlir
// IMPORT-NEXT: 01-kiln-fold-constants.mlir

// UNWRITABLE: kiln compile: error: cannot create '{{.*}}file/dump'
