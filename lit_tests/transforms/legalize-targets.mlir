// Each fusion target's declared kernels: rlx-legalize{target=…} keeps what the target runs
// natively and rewrites the rest; --dispatch-report reads the same set (from rlx-legalize, or
// from rlx-fusion-pipeline's target when the pipeline has no rlx-legalize).
// RUN: rlx-opt %s --dispatch-report -p 'rlx-legalize{target=cpu}' 2>&1 | filecheck %s --check-prefix=CPU
// RUN: rlx-opt %s --dispatch-report -p 'rlx-legalize{target=cpu dispatch=common}' 2>&1 | filecheck %s --check-prefix=CPU-COMMON
// RUN: rlx-opt %s --dispatch-report -p 'rlx-legalize{target=cuda}' 2>&1 | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --dispatch-report -p 'rlx-legalize{target=metal}' 2>&1 | filecheck %s --check-prefix=METAL
// RUN: rlx-opt %s --dispatch-report -p 'rlx-legalize{target=tpu}' 2>&1 | filecheck %s --check-prefix=TPU
// RUN: rlx-opt %s --dispatch-report=json -p 'rlx-fusion-pipeline{target=tpu}' -o /dev/null 2>&1 | filecheck %s --check-prefix=TPU-JSON

// cpu: every kernel but control flow, every fused op.
// CPU:      dispatch report:
// CPU-NEXT:   mir.fused_swiglu   1  native
// CPU-NEXT:   mir.layer_norm_2d  1  native
// CPU-NEXT:   mir.relu_backward  1  native
// CPU-NEXT:   mir.softmax        1  native
// CPU-NEXT: compile-ready: yes
// CPU-LABEL: func.func @f
// CPU-NEXT:    mir.layer_norm_2d
// CPU-NEXT:    mir.relu_backward
// CPU-NEXT:    mir.fused_swiglu
// CPU-NEXT:    mir.softmax
// CPU-NEXT:    func.return

// dispatch=common (RLX's RLX_KERNEL_DISPATCH=common): the logical kernels become common IR
// even on a target that runs them.
// CPU-COMMON:      mir.layer_norm_2d  1  common IR
// CPU-COMMON:      mir.relu_backward  1  native
// CPU-COMMON-LABEL: func.func @f
// CPU-COMMON-NEXT:    mir.transpose
// CPU-COMMON-NEXT:    mir.layer_norm
// CPU-COMMON-NEXT:    mir.transpose
// CPU-COMMON-NEXT:    mir.relu_backward

// cuda: no backward kernels, the logical kernels as common IR, no FusedSwiGLU.
// CUDA:      dispatch report:
// CUDA-NEXT:   mir.fused_swiglu   1  rewritten
// CUDA-NEXT:   mir.layer_norm_2d  1  common IR
// CUDA-NEXT:   mir.relu_backward  1  rewritten
// CUDA-NEXT:   mir.softmax        1  native
// CUDA-NEXT: compile-ready: yes
// CUDA-LABEL: func.func @f
// CUDA-NOT:    mir.layer_norm_2d
// CUDA-NOT:    mir.relu_backward
// CUDA-NOT:    mir.fused_swiglu
// CUDA:        mir.layer_norm
// CUDA:        mir.silu
// CUDA:        mir.softmax
// CUDA:        func.return

// metal claims FusedSwiGLU (it lacks FusedAttentionBlock only).
// METAL:      mir.fused_swiglu   1  native
// METAL:      mir.relu_backward  1  rewritten
// METAL-LABEL: func.func @f
// METAL:        mir.fused_swiglu
// METAL-NOT:    mir.relu_backward

// tpu: the primitive set and its four fused kinds; softmax and layer_norm become reductions.
// TPU:      dispatch report:
// TPU-NEXT:   mir.fused_swiglu   1  rewritten
// TPU-NEXT:   mir.layer_norm_2d  1  common IR
// TPU-NEXT:   mir.relu_backward  1  rewritten
// TPU-NEXT:   mir.softmax        1  rewritten
// TPU-NEXT: compile-ready: yes
// TPU-LABEL: func.func @f
// TPU-NOT:    mir.softmax
// TPU-NOT:    mir.layer_norm
// TPU:        mir.reduce max
// TPU:        func.return

// TPU-JSON:      "op": "mir.softmax",
// TPU-JSON-NEXT: "count": 1,
// TPU-JSON-NEXT: "path": "rewritten"
// TPU-JSON:      "compile_ready": true
func.func @f(%x: tensor<1x4x2x2xf32>, %g: tensor<4xf32>, %dy: tensor<1x4x2x2xf32>) -> (tensor<1x4x2x1xf32>, tensor<1x4x2x1xf32>) {
  %0 = mir.layer_norm_2d %x, %g, %g eps = 1.0e-06 : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  %1 = mir.relu_backward %dy, %0 : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %2 = mir.fused_swiglu %1 : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x1xf32>
  %3 = mir.softmax %2 axis = -1 : (tensor<1x4x2x1xf32>) -> tensor<1x4x2x1xf32>
  func.return %2, %3 : tensor<1x4x2x1xf32>, tensor<1x4x2x1xf32>
}
