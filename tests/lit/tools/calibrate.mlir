// `kiln calibrate --device cpu`: activation ranges of the bundled tiny CNN over two calibration
// inputs, the same as numpy finds in the inputs and in `kiln eval --dump` of each; the same bytes
// twice.
// RUN: rm -rf %t && mkdir -p %t/in/a %t/in/b %t/bad/a
// RUN: %python -c "import numpy as np; [np.save('%t/in/%%s/image.npy' %% s, np.random.default_rng(k).standard_normal((2, 3, 32, 32)).astype(np.float32) * (k + 1)) for k, s in enumerate('ab')]"
// RUN: kiln calibrate %S/../../../examples/tiny_cnn.onnx --shape image=2x3x32x32 --calibration %t/in -o %t/c.json --device cpu 2>&1 | FileCheck %s
// RUN: kiln eval %S/../../../examples/tiny_cnn.onnx --shape image=2x3x32x32 --input image=%t/in/a/image.npy --dump %t/dump-a > /dev/null
// RUN: kiln eval %S/../../../examples/tiny_cnn.onnx --shape image=2x3x32x32 --input image=%t/in/b/image.npy --dump %t/dump-b > /dev/null
// RUN: %python %S/Inputs/check_calibration.py %t/c.json %S/../../../examples/tiny_cnn.onnx %t/in %t/dump-a %t/dump-b
// RUN: kiln calibrate %S/../../../examples/tiny_cnn.onnx --shape image=2x3x32x32 --calibration %t/in -o %t/again.json --quiet --method minmax --device cpu
// RUN: %python -c "import json, sys; a, b = (json.load(open(p)) for p in sys.argv[1:]); assert b.pop('method') == 'minmax' and a.pop('method') == 'entropy' and a == b" %t/c.json %t/again.json
// RUN: kiln calibrate %S/../../../examples/tiny_cnn.onnx --shape image=2x3x32x32 --calibration %t/in -o %t/third.json --quiet --device cpu && cmp %t/c.json %t/third.json
// The file drives an int8 evaluation; its value dump says so (kiln compare shows it).
// RUN: kiln eval %S/../../../examples/tiny_cnn.onnx --shape image=2x3x32x32 --input image=%t/in/a/image.npy --precision int8 --calibration %t/c.json --dump %t/dump-8 > /dev/null
// RUN: kiln compare %t/dump-a %t/dump-8 | FileCheck %s --check-prefix=COMPARE
// --keep-unquantized keeps a node out of 8 bits, says so and records it in the plan.
// RUN: kiln compile %S/../../../examples/tiny_cnn.onnx --shape image=2x3x32x32 --precision int8 --calibration %t/c.json --keep-unquantized conv2 -o %t/keep.kiln 2>&1 | FileCheck %s --check-prefix=KEEP
// RUN: kiln inspect %t/keep.kiln | FileCheck %s --check-prefix=KEEP-PLAN
// RUN: %python %S/Inputs/exit_status.py 2 kiln compile %S/../../../examples/tiny_cnn.onnx --keep-unquantized conv2 -o %t/x.kiln 2>&1 | FileCheck %s --check-prefix=KEEP-ALONE
// --keep-last-layer keeps the classifier (fc: no conv or linear layer reads it) and
// --keep-first-layer=false quantizes what reads the image; the plan records both.
// RUN: kiln compile %S/../../../examples/tiny_cnn.onnx --shape image=2x3x32x32 --precision fp8 --calibration %t/c.json --keep-last-layer --keep-first-layer=false -o %t/layers.kiln 2>&1 | FileCheck %s --check-prefix=LAYERS
// RUN: kiln inspect %t/layers.kiln | FileCheck %s --check-prefix=LAYERS-PLAN
// RUN: %python %S/Inputs/exit_status.py 2 kiln compile %S/../../../examples/tiny_cnn.onnx --keep-last-layer -o %t/x.kiln 2>&1 | FileCheck %s --check-prefix=LAYERS-ALONE

// Usage errors exit with 2 and say what to give.
// RUN: %python %S/Inputs/exit_status.py 2 kiln calibrate %S/../../../examples/tiny_cnn.onnx -o %t/x.json 2>&1 | FileCheck %s --check-prefix=NO-DIR
// RUN: %python %S/Inputs/exit_status.py 2 kiln calibrate %S/../../../examples/tiny_cnn.onnx --calibration %t/in 2>&1 | FileCheck %s --check-prefix=NO-OUT
// RUN: %python %S/Inputs/exit_status.py 2 kiln calibrate %S/../../../examples/tiny_cnn.onnx --calibration %t/in -o %t/x.json --percentile 0 2>&1 | FileCheck %s --check-prefix=PERCENT
// RUN: %python %S/Inputs/exit_status.py 2 kiln calibrate %S/../../../examples/tiny_cnn.onnx --calibration %t/in -o %t/x.json --method median 2>&1 | FileCheck %s --check-prefix=METHOD
// RUN: %python -c "import numpy as np; np.save('%t/bad/a/other.npy', np.zeros(3, np.float32))"
// RUN: %python %S/Inputs/exit_status.py 2 kiln calibrate %S/../../../examples/tiny_cnn.onnx --shape image=2x3x32x32 --calibration %t/bad -o %t/x.json 2>&1 | FileCheck %s --check-prefix=NO-INPUT
// A wrong shape fails the evaluation (exit 1), naming the calibration input.
// RUN: %python %S/Inputs/exit_status.py 1 kiln calibrate %S/../../../examples/tiny_cnn.onnx --shape image=1x3x32x32 --calibration %t/in -o %t/x.json 2>&1 | FileCheck %s --check-prefix=SHAPE

// CHECK: kiln calibrate: evaluating 2 calibration input(s)
// CHECK: kiln calibrate: wrote {{.*}}c.json: 10 values, 3 weights, 2 input(s) on the interpreter
// COMPARE: calibration: - -> {{.*}}c.json
// COMPARE: precision: fp32 -> int8
// KEEP: node 'conv2' (Conv): not quantized: keep=conv2
// KEEP-PLAN: precision="int8" precisionOverrides=["--keep-unquantized conv2"]
// KEEP-ALONE: --keep-unquantized goes with --precision fp8 or int8
// LAYERS-NOT: the first layer; keep-first
// LAYERS: node 'fc' (Gemm): not quantized: no other quantizable op reads what it computes (a last layer; keep-last)
// LAYERS-PLAN: precision="fp8" precisionOverrides=["--keep-first-layer=false","--keep-last-layer=true"]
// LAYERS-ALONE: --keep-first-layer and --keep-last-layer go with --precision fp8 or int8
// NO-DIR: no calibration inputs given (--calibration DIR)
// NO-OUT: no output given (-o calib.json)
// PERCENT: --percentile 0 is not above 0 and at most 100
// METHOD: Cannot find option named 'median'
// NO-INPUT: calibration input '{{.*}}a' has no image.npy for model input 'image'
// SHAPE: kiln calibrate: error: calibration input 'a': {{.*}}image
