// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p rlx-plan-memory
// RUN: not rlx-opt %s --split-input-file -p 'rlx-plan-memory{strategy=worst-fit}' 2>&1 | filecheck %s --check-prefix=STRATEGY
// RUN: not rlx-opt %s --split-input-file -p 'rlx-plan-memory{alignment=48}' 2>&1 | filecheck %s --check-prefix=ALIGN

// A bad strategy is a usage error, before any IR is read.
// STRATEGY: rlx-opt: error: invalid options for pass 'rlx-plan-memory': strategy=worst-fit: 'worst-fit' is not one of auto, first-fit, best-fit, longest-first, earliest-first, latest-first, rlx
// ALIGN: error: alignment must be a power of two, got 48

// Shapes must be static: the error points at the first dynamic value and says how to fix it.
// expected-error@+1 {{'func.func' argument #0 has dynamic type tensor<?x8xf32>: memory planning needs static shapes; bind them first with rlx-specialize{shapes=NAME=DIMS,...}}}
func.func @dynamic_argument(%x: tensor<?x8xf32> {rlx.name = "x"}) -> tensor<?x8xf32> {
  %0 = mir.exp %x : (tensor<?x8xf32>) -> tensor<?x8xf32>
  func.return %0 : tensor<?x8xf32>
}

// -----

func.func @dynamic_result(%x: tensor<2x8xf32>) -> tensor<?xf32> {
  // expected-error@+1 {{'mir.reshape' result has dynamic type tensor<?xf32>: memory planning needs static shapes}}
  %0 = "mir.reshape"(%x) <{new_shape = array<i64: -1>}> : (tensor<2x8xf32>) -> tensor<?xf32>
  func.return %0 : tensor<?xf32>
}

// -----

func.func @not_a_tensor(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'arith.constant' result has type index: memory plans hold tensors only}}
  %i = arith.constant 0 : index
  func.return %x : tensor<4xf32>
}
