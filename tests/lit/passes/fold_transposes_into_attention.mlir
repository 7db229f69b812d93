// RUN: kiln-opt %S/../tools/Inputs/mha_batch2.mlir -kiln-fold-transposes-into-attention --verify-diagnostics | FileCheck %s
// RUN: kiln-opt %S/../tools/Inputs/mha_batch2.mlir -kiln-fold-transposes-into-attention -kiln-form-fusion-groups 2>/dev/null | FileCheck %s --check-prefix=GROUPS

// Both transposes of nn.MultiheadAttention at batch 2 go: the in_proj multiplies the [B, S, E]
// hidden state and the views read its [B, S, 3E] rows; the attention writes [B, S, E] rows,
// which the out_proj multiplies in that order. Then the residual add joins the out_proj's
// epilogue.
// CHECK-NOT: kiln.transpose
// CHECK: %[[P:.*]] = kiln.add {{.*}} -> tensor<2x8x48xbf16>
// CHECK: %[[O:.*]] = kiln.attention %[[P]], %[[P]], %[[P]] {{{.*}}k_view = array<i64: 16, 384, 8, 48, 1>, o_view = array<i64: 0, 128, 8, 16, 1>, q_view = array<i64: 0, 384, 8, 48, 1>{{.*}}v_view = array<i64: 32, 384, 8, 48, 1>} : {{.*}} -> tensor<2x8x16xbf16>
// CHECK: kiln.matmul %[[O]], %{{.*}} -> tensor<2x8x16xbf16>
// CHECK-NOT: kiln.transpose
// GROUPS: kiln.fusion_group "gemm"
// GROUPS: kiln.attention
// GROUPS: kiln.fusion_group "gemm"
// GROUPS: kiln.matmul
// GROUPS: kiln.add
// GROUPS: kiln.add
// GROUPS: kiln.yield
// GROUPS-NOT: kiln.add
// GROUPS: return
