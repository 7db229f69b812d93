// What the passes report reaches the user as a Kiln message naming the ONNX node (from the op's
// location); remarks go with --quiet, warnings and errors stay. A module the parser rejects is
// an error at its position, exit status 1.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln compile %S/Inputs/tiny_cnn.mlir -o %t/a.kiln --precision bf16 --keep-fp32 conv1,nope 2>&1 | FileCheck %s
// RUN: kiln compile %S/Inputs/tiny_cnn.mlir -o %t/a.kiln --precision bf16 --keep-fp32 conv1,nope --quiet 2>&1 | FileCheck %s --check-prefix=QUIET --implicit-check-not=remark
// RUN: kiln eval %S/Inputs/tiny_cnn.mlir --precision bf16 --force-precision Relu=fp32 2>&1 >/dev/null | FileCheck %s --check-prefix=EVAL
// RUN: %python %S/Inputs/exit_status.py 1 kiln compile %S/Inputs/bad_syntax.mlir -o %t/b.kiln --quiet 2>&1 | FileCheck %s --check-prefix=PARSE

// CHECK-DAG: kiln compile: remark: node 'conv1' (Conv): runs in fp32
// CHECK-DAG: kiln compile: warning: {{.*}}tiny_cnn.mlir:{{[0-9]+}}:{{[0-9]+}}: --keep-fp32 'nope' matches no ONNX node
// QUIET: kiln compile: warning: {{.*}}--keep-fp32 'nope'
// EVAL: kiln eval: remark: node 'relu1' (Relu): runs in fp32
// PARSE: kiln compile: error: {{.*}}bad_syntax.mlir:3:{{[0-9]+}}: {{.*}}
// PARSE: kiln compile: error: cannot parse '{{.*}}bad_syntax.mlir' as kiln MLIR
