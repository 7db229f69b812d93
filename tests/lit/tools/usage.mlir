// A bad command line exits with 2 and says what is wrong, whichever layer finds it: llvm::cl
// (unknown option, bad option value), or the command (no model, bad --shape or --input).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/exit_status.py 2 kiln compile %S/Inputs/tiny_cnn.mlir -o %t/a.kiln --precision int3 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: %python %S/Inputs/exit_status.py 2 kiln eval %S/Inputs/tiny_cnn.mlir --precision=half 2>&1 | FileCheck %s --check-prefix=PRECISION-EVAL
// RUN: %python %S/Inputs/exit_status.py 2 kiln compile %S/Inputs/tiny_cnn.mlir -o %t/a.kiln --precision int8 2>&1 | FileCheck %s --check-prefix=INT8-NO-FILE
// RUN: %python %S/Inputs/exit_status.py 2 kiln compile %S/Inputs/tiny_cnn.mlir -o %t/a.kiln --precision fp8 2>&1 | FileCheck %s --check-prefix=FP8-NO-FILE
// RUN: %python %S/Inputs/exit_status.py 2 kiln eval %S/Inputs/tiny_cnn.mlir --precision fp8 --calibration %t 2>&1 | FileCheck %s --check-prefix=FP8-NO-FILE
// RUN: %python %S/Inputs/exit_status.py 2 kiln compile %S/Inputs/tiny_cnn.mlir -o %t/a.kiln --precision bf16 --calibration %t 2>&1 | FileCheck %s --check-prefix=CALIBRATION
// RUN: %python %S/Inputs/exit_status.py 2 kiln eval %S/Inputs/tiny_cnn.mlir --layout nhcw 2>&1 | FileCheck %s --check-prefix=LAYOUT
// RUN: %python %S/Inputs/exit_status.py 2 kiln compile %S/Inputs/tiny_cnn.mlir -o %t/a.kiln --keep-fp32 conv1,,Softmax 2>&1 | FileCheck %s --check-prefix=KEEP
// RUN: %python %S/Inputs/exit_status.py 2 kiln import %S/Inputs/tiny_cnn.mlir --keep-fp32= 2>&1 | FileCheck %s --check-prefix=KEEP
// RUN: %python %S/Inputs/exit_status.py 2 kiln compile %S/Inputs/tiny_cnn.mlir -o %t/a.kiln --force-precision conv1=int3 2>&1 | FileCheck %s --check-prefix=FORCE
// RUN: %python %S/Inputs/exit_status.py 2 kiln compile %S/Inputs/tiny_cnn.mlir -o %t/a.kiln --force-precision conv1=fp32,Gemm 2>&1 | FileCheck %s --check-prefix=FORCE-NO-VALUE
// RUN: %python %S/Inputs/exit_status.py 2 kiln compile %S/Inputs/tiny_cnn.mlir -o %t/a.kiln --target sm_61 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: %python %S/Inputs/exit_status.py 2 kiln compile %S/Inputs/tiny_cnn.mlir -o %t/a.kiln --presicion bf16 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: %python %S/Inputs/exit_status.py 2 kiln compile %S/Inputs/tiny_cnn.mlir -o 2>&1 | FileCheck %s --check-prefix=NO-VALUE
// RUN: %python %S/Inputs/exit_status.py 2 kiln compile %S/Inputs/tiny_cnn.mlir 2>&1 | FileCheck %s --check-prefix=NO-OUTPUT
// RUN: %python %S/Inputs/exit_status.py 2 kiln eval 2>&1 | FileCheck %s --check-prefix=NO-MODEL
// RUN: %python %S/Inputs/exit_status.py 2 kiln import %S/Inputs/tiny_cnn.mlir %S/Inputs/tiny_cnn.mlir 2>&1 | FileCheck %s --check-prefix=TWO-MODELS
// RUN: %python %S/Inputs/exit_status.py 2 kiln compile %S/Inputs/tiny_cnn.mlir -o %t/a.kiln --shape x 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: %python %S/Inputs/exit_status.py 2 kiln eval %S/Inputs/tiny_cnn.mlir --input x 2>&1 | FileCheck %s --check-prefix=INPUT
// RUN: %python %S/Inputs/exit_status.py 2 kiln eval %S/Inputs/tiny_cnn.mlir --seed -3 2>&1 | FileCheck %s --check-prefix=SEED
// RUN: %python %S/Inputs/exit_status.py 2 kiln bench %t/a.kiln --iterations 0 2>&1 | FileCheck %s --check-prefix=ITERATIONS
// RUN: %python %S/Inputs/exit_status.py 2 kiln profile %t/a.kiln --passes 0 2>&1 | FileCheck %s --check-prefix=PASSES
// RUN: %python %S/Inputs/exit_status.py 2 kiln compare %t 2>&1 | FileCheck %s --check-prefix=ONE-DUMP
// RUN: %python %S/Inputs/exit_status.py 1 kiln compare %t %t 2>&1 | FileCheck %s --check-prefix=NO-DUMP
// RUN: %python %S/Inputs/exit_status.py 2 kiln compare %t --reference onnxruntime 2>&1 | FileCheck %s --check-prefix=REFERENCE
// RUN: %python %S/Inputs/exit_status.py 2 kiln compare %t --reference interpreter 2>&1 | FileCheck %s --check-prefix=REFERENCE-MODEL
// RUN: %python %S/Inputs/exit_status.py 1 kiln compare %t/missing.kiln %t 2>&1 | FileCheck %s --check-prefix=NO-SIDE
// RUN: %python %S/Inputs/exit_status.py 2 kiln run 2>&1 | FileCheck %s --check-prefix=NO-PLAN
// RUN: %python %S/Inputs/exit_status.py 2 kiln frobnicate 2>&1 | FileCheck %s --check-prefix=COMMAND
// RUN: %python %S/Inputs/exit_status.py 2 kiln 2>&1 | FileCheck %s --check-prefix=NO-COMMAND
// --help and --version are no errors.
// RUN: %python %S/Inputs/exit_status.py 0 kiln compile --help > %t/help.txt
// RUN: %python %S/Inputs/exit_status.py 0 kiln --version > %t/version.txt

// PRECISION: kiln: for the --precision option: 'int3' is not a precision; use fp32, tf32, bf16, fp16, fp8, int8 or (kiln compile) auto
// PRECISION-EVAL: kiln: for the --precision option: 'half' is not a precision; use fp32, tf32, bf16, fp16, fp8, int8 or (kiln compile) auto
// INT8-NO-FILE: --precision int8 needs --calibration calib.json, the ranges `kiln calibrate MODEL --calibration DIR -o calib.json` measures
// FP8-NO-FILE: --precision fp8 needs --calibration calib.json, the ranges `kiln calibrate MODEL --calibration DIR -o calib.json` measures
// CALIBRATION: --calibration goes with --precision auto (a directory of inputs) or fp8, int8 (a calibration file)
// LAYOUT: kiln: for the --layout option: Cannot find option named 'nhcw'!
// KEEP: kiln: for the --keep-fp32 option: empty name
// FORCE: kiln: for the --force-precision option: {{.*}}'conv1=int3' is not NAME=PRECISION
// FORCE-NO-VALUE: kiln: for the --force-precision option: {{.*}}'Gemm' is not NAME=PRECISION
// TARGET: kiln: for the --target option: 'sm_61' is not sm_XY (sm_70 or newer)
// UNKNOWN: Unknown command line argument '--presicion'
// UNKNOWN: Did you mean '--precision'?
// NO-VALUE: kiln: for the -o option: requires a value!
// NO-OUTPUT: kiln compile: no output given (-o model.kiln); run 'kiln compile --help'
// NO-MODEL: kiln eval: no model given; run 'kiln eval --help'
// TWO-MODELS: Too many positional arguments specified!
// SHAPE: kiln compile: --shape 'x': missing name or dims
// INPUT: kiln eval: --input 'x' is not name=file.npy
// SEED: kiln: for the --seed option: '-3' value invalid
// ITERATIONS: kiln bench: --iterations needs a count >= 1
// PASSES: kiln profile: --passes needs a count >= 1
// ONE-DUMP: kiln compare: needs two sides, A and B: value dumps or plans (got 1)
// REFERENCE: kiln compare: --reference takes 'interpreter' (got 'onnxruntime')
// REFERENCE-MODEL: kiln compare: --reference interpreter needs --model model.onnx
// NO-SIDE: kiln compare: error: '{{.*}}missing.kiln' is neither a value dump directory nor a plan file
// NO-DUMP: kiln compare: error: '{{.*}}' is no value dump: cannot read {{.*}}manifest.json {{.*}}; write one with `kiln eval --dump`
// NO-PLAN: kiln run: no plan given; run 'kiln run --help'
// COMMAND: Unknown subcommand 'frobnicate'
// NO-COMMAND: USAGE: kiln [subcommand] [options]
