// Every plan step lists the ONNX values it completes, with their buffers (`values=[...]
// valueBuffers=[...]`, from the kiln.onnx_values the importer sets and the passes keep): a
// fused conv group completes only what leaves it (the ReLU's output: conv and BatchNorm stay
// inside), in the layout and type the plan computes it (channels last, bf16); a reshape that
// is a view completes its value with the step before it; casts and transposes the passes add
// complete none. `kiln run --dump` reads these buffers.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln compile %S/../../../examples/tiny_cnn.onnx --shape image=2x3x32x32 --precision bf16 -o %t/a.kiln --quiet
// RUN: kiln inspect %t/a.kiln | FileCheck %s
// RUN: kiln compile %S/../../../examples/tiny_cnn.onnx --shape image=2x3x32x32 -o %t/fp32.kiln --quiet
// RUN: kiln inspect --json %t/fp32.kiln | %python -c "import json, sys; print(' '.join(','.join(s['values']) or '-' for s in json.load(sys.stdin)['steps']))" | FileCheck %s --check-prefix=FP32

// CHECK: step 0 "conv1" op="kiln.cast" {{.*}} values=[] valueBuffers=[]
// CHECK: step 1 "conv1" op="kiln.transpose" {{.*}} values=[] valueBuffers=[]
// CHECK: step 2 "conv1" op="kiln.fusion_group" nodes=["conv1","bn1","relu1"] conv {{.*}} values=["r1"] valueBuffers=[conv1:bf16[2,32,32,8]]
// CHECK: step 3 "pool1" {{.*}} values=["p1"] valueBuffers=[pool1:bf16[2,16,16,8]]
// CHECK: step 4 "conv2" {{.*}} values=["r2"] valueBuffers=[conv2:bf16[2,8,8,16]]
// CHECK: step 5 "gap" {{.*}} values=["g","f"] valueBuffers=[gap:bf16[2,1,1,16],flatten:bf16[2,16]]
// CHECK: step 6 "fc" {{.*}} values=["logits"] valueBuffers=[fc:bf16[2,10]]
// CHECK: step 7 "softmax" {{.*}} values=["probs"]
// CHECK: step 8 "softmax" op="kiln.cast" {{.*}} values=[] valueBuffers=[]

// In fp32 (no conv groups, BatchNorm folded into the conv), each value of the graph but the
// folded conv's is completed by one step.
// FP32: {{^}}b1 r1 p1 c2 r2 g,f logits probs{{$}}
