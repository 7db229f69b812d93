// `kiln --help` lists the commands and none of the options LLVM registers for itself (LLVM's
// libraries bring hundreds); `kiln <command> --help` starts with the command's prose and lists
// every option it takes, grouped.
// RUN: kiln --help | FileCheck %s --check-prefix=MAIN --implicit-check-not=--color --implicit-check-not=amdgpu
// RUN: kiln compile --help | FileCheck %s --check-prefixes=COMPILE,PIPELINE
// RUN: kiln compile -h | FileCheck %s --check-prefixes=COMPILE,PIPELINE
// RUN: kiln import --help | FileCheck %s --check-prefixes=IMPORT,PIPELINE
// RUN: kiln eval --help | FileCheck %s --check-prefixes=EVAL,PIPELINE
// RUN: kiln run --help | FileCheck %s --check-prefix=EXEC
// RUN: kiln bench --help | FileCheck %s --check-prefix=BENCH
// RUN: kiln profile --help | FileCheck %s --check-prefix=PROFILE
// RUN: kiln compare --help | FileCheck %s --check-prefix=COMPARE
// RUN: kiln inspect --help | FileCheck %s --check-prefix=INSPECT
// RUN: kiln --version | FileCheck %s --check-prefix=VERSION
// RUN: kiln compile --version | FileCheck %s --check-prefix=VERSION

// MAIN: USAGE: kiln [subcommand] [options]
// MAIN: bench   - Time a plan on the GPU
// MAIN: compare - Compare two evaluations of a model value by value
// MAIN: compile - Compile a model into a plan file
// MAIN: eval    - Run a model (ONNX or kiln MLIR) on the CPU reference interpreter
// MAIN: import  - Import an ONNX model
// MAIN: inspect - Show what a plan file holds
// MAIN: profile - Where a plan's GPU time goes
// MAIN: run     - Run a plan once on the GPU
// MAIN: --help
// MAIN: --version

// COMPILE: OVERVIEW: Imports the model (every shape static), runs the optimization pipeline
// COMPILE: With --precision auto, --max-error E and --calibration DIR, the precision is chosen
// COMPILE: Exit status: 0 on success, 1 when the model cannot be compiled
// COMPILE: USAGE: kiln compile [options] <model.onnx|model.mlir>
// COMPILE-DAG: -o <model.kiln> {{.*}}Write the plan here (required)
// COMPILE-DAG: --target=<sm_XY> {{.*}}GPU architecture of the cubins
// COMPILE-DAG: --quiet {{.*}}No progress, summary or remarks
// COMPILE-DAG: --max-error=<e> {{.*}}--precision auto: the output error allowed
// COMPILE-DAG: --calibration=<dir|file> {{.*}}--precision auto (kiln compile): the calibration inputs
// COMPILE-DAG: --precision-report=<file.json>

// IMPORT: OVERVIEW: Reads the model
// IMPORT: USAGE: kiln import [options] <model.onnx|model.mlir>
// IMPORT-DAG: -o <file> {{.*}}Write the MLIR here
// IMPORT-DAG: --onnx-value-names {{.*}}Keep the kiln.onnx_values attributes
// IMPORT-DAG: --locations {{.*}}Print each op's location: the ONNX node it comes from

// EVAL: OVERVIEW: Runs the optimization pipeline of `kiln compile` with the same options
// EVAL-DAG: --input=<name=file.npy> {{.*}}Value of an input (repeatable)
// EVAL-DAG: --seed=<n>
// EVAL-DAG: --output-dir=<dir>
// EVAL-DAG: --dump=<dir> {{.*}}Also write every ONNX value the module computes

// PIPELINE-DAG: --dump-ir=<dir> {{.*}}Write the module into <dir> before the passes (00-input.mlir)
// PIPELINE-DAG: --print-ir-after-all {{.*}}Print the module after every pass to stderr
// PIPELINE-DAG: --shape=<name=dims> {{.*}}Static shape for a graph input with symbolic dims
// PIPELINE-DAG: --precision=<fp32|tf32|bf16|fp16|auto|fp8|int8> {{.*}}fp32 (default): strict IEEE fp32
// PIPELINE-DAG: --strict-fp32 {{.*}}fp32 ops that remain in a tf32, bf16 or fp16 plan
// PIPELINE-DAG: --keep-fp32=<name|optype> {{.*}}Ops that stay fp32
// PIPELINE-DAG: --force-precision=<name=precision> {{.*}}Run ops in the given precision
// PIPELINE-DAG: --no-fold {{.*}}Keep ops whose operands are all constants
// PIPELINE-DAG: --layout=<value> {{.*}}Which 2-d convs run channels last
// PIPELINE-DAG: =nhwc {{.*}}every 2-d conv

// EXEC: USAGE: kiln run [options] <model.kiln>
// EXEC-DAG: --input=<name=file.npy>
// EXEC-DAG: --seed=<n>
// EXEC-DAG: --timing-cache=<file>
// EXEC-DAG: --no-graph
// EXEC-DAG: --output-dir=<dir>
// EXEC-DAG: --dump=<dir> {{.*}}Then run the steps again one by one
// EXEC-DAG: --quiet

// BENCH: times, bottlenecks and achieved FLOP rates: `kiln profile`
// BENCH: USAGE: kiln bench [options] <model.kiln>
// BENCH-DAG: --iterations=<n> {{.*}}Timed runs (default 100)
// BENCH-DAG: --warmup=<n> {{.*}}Untimed runs first (default 10)
// BENCH-DAG: --json
// BENCH-DAG: --timing-cache=<file>

// PROFILE: OVERVIEW: Loads the plan like `kiln run`
// PROFILE: compute or memory (the larger fraction of its peak); when both are under
// PROFILE: underused
// PROFILE: USAGE: kiln profile [options] <model.kiln>
// PROFILE-DAG: --json {{.*}}every step, the groups and the bottleneck
// PROFILE-DAG: --top=<n>
// PROFILE-DAG: --passes=<n> {{.*}}(default 5)
// PROFILE-DAG: --iterations=<n> {{.*}}(default 20)
// PROFILE-DAG: --timing-cache=<file>

// COMPARE: OVERVIEW: Compares two evaluations of one model on the same inputs, value by value
// COMPARE: culprits, the values whose relative error exceeds the largest of their inputs'
// COMPARE: USAGE: kiln compare [options] <A dump dir> <B dump dir>
// COMPARE-DAG: --json
// COMPARE-DAG: --top=<n>

// INSPECT: OVERVIEW: Validates the plan
// INSPECT: Each step lists the ONNX nodes it covers
// INSPECT: USAGE: kiln inspect [options] <model.kiln>
// INSPECT: --json {{.*}}The same content as JSON

// VERSION: kiln {{[0-9]+\.[0-9]+\.[0-9]+}}
