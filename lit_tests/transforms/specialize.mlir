// Binding by rlx.name and by position (argN), one function selected with func=.
// RUN: rlx-opt %s -p 'rlx-specialize{shapes="x=2x8","w=8x16","arg2=16" func=mlp}' | filecheck %s --check-prefix=MLP
// A `?` keeps a dim; by default every function with the named arguments is bound.
// RUN: rlx-opt %s -p 'rlx-specialize{shapes="x=?x8","y=4x8"}' | filecheck %s --check-prefix=ALL
// Region arguments of mir.if / mir.while follow their operands.
// RUN: rlx-opt %s -p 'rlx-specialize{shapes="arg1=4" func=flow}' | filecheck %s --check-prefix=FLOW
// Compile once, specialise, clean up: the typical pipeline.
// RUN: rlx-opt %s -p 'rlx-specialize{shapes="x=3x8","y=3x8" func=pair},rlx-dce' | filecheck %s --check-prefix=PIPE

// Errors are located at the function (argument errors) or at the op whose
// inference fails.
// RUN: not rlx-opt %s -p 'rlx-specialize{shapes="z=3" func=mlp}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not rlx-opt %s -p 'rlx-specialize{shapes="x=2x8x1" func=mlp}' 2>&1 | filecheck %s --check-prefix=RANK
// RUN: not rlx-opt %s -p 'rlx-specialize{shapes="x=2x4" func=mlp}' 2>&1 | filecheck %s --check-prefix=STATIC
// RUN: not rlx-opt %s -p 'rlx-specialize{shapes="x=2xq"}' 2>&1 | filecheck %s --check-prefix=MALFORMED
// RUN: not rlx-opt %s -p 'rlx-specialize{shapes="x=2x8","y=3x8" func=pair}' 2>&1 | filecheck %s --check-prefix=CLASH
// RUN: not rlx-opt %s -p 'rlx-specialize{shapes="x=2x8" func=nope}' 2>&1 | filecheck %s --check-prefix=NOFUNC

// MALFORMED: error: malformed binding 'x=2xq': dimension 'q' is not a non-negative integer or '?'
// NOFUNC: error: no function named 'nope'

// MLP-LABEL: func.func @mlp(%x: tensor<2x8xf32> {rlx.name = "x"}, %w: tensor<8x16xf32> {rlx.name = "w", rlx.param}, %b: tensor<16xf32>) -> tensor<2x16xf32> {
// MLP-NEXT:    %0 = mir.matmul %x, %w : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
// MLP-NEXT:    %1 = mir.add %0, %b : (tensor<2x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
// MLP-NEXT:    %2 = mir.relu %1 : (tensor<2x16xf32>) -> tensor<2x16xf32>
// MLP-NEXT:    func.return %2 : tensor<2x16xf32>
// MLP-LABEL: func.func @pair(%x: tensor<?x8xf32> {rlx.name = "x"}, %y: tensor<?x8xf32> {rlx.name = "y"}) -> tensor<?x8xf32> {

// ALL-LABEL: func.func @mlp(%x: tensor<?x8xf32> {rlx.name = "x"}, %w: tensor<8x?xf32>
// ALL-LABEL: func.func @pair(%x: tensor<?x8xf32> {rlx.name = "x"}, %y: tensor<4x8xf32> {rlx.name = "y"}) -> tensor<4x8xf32> {
// ALL-NEXT:    %0 = mir.add %x, %y : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// ALL-NEXT:    %1 = mir.exp %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>

// UNKNOWN: specialize.mlir:[[# @LINE + 3]]:1: error: unknown argument 'z': @mlp has arguments x, w, arg2
// RANK: specialize.mlir:[[# @LINE + 2]]:1: error: binding x=2x8x1 has rank 3 but argument 'x' of @mlp has type tensor<?x8xf32> (rank 2)
// STATIC: specialize.mlir:[[# @LINE + 1]]:1: error: binding x=2x4 sets dimension 1 of argument 'x' of @mlp to 4, but it is statically 8 (tensor<?x8xf32>)
func.func @mlp(%x: tensor<?x8xf32> {rlx.name = "x"}, %w: tensor<8x?xf32> {rlx.name = "w", rlx.param}, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %0 = mir.matmul %x, %w : (tensor<?x8xf32>, tensor<8x?xf32>) -> tensor<?x?xf32>
  %1 = mir.add %0, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %2 = mir.relu %1 : (tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %2 : tensor<?x?xf32>
}

// PIPE-LABEL: func.func @pair(%x: tensor<3x8xf32> {rlx.name = "x"}, %y: tensor<3x8xf32> {rlx.name = "y"}) -> tensor<3x8xf32> {
// PIPE-NEXT:    %0 = mir.add %x, %y : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
// PIPE-NEXT:    %1 = mir.exp %0 : (tensor<3x8xf32>) -> tensor<3x8xf32>
// PIPE-NEXT:    func.return %1 : tensor<3x8xf32>
func.func @pair(%x: tensor<?x8xf32> {rlx.name = "x"}, %y: tensor<?x8xf32> {rlx.name = "y"}) -> tensor<?x8xf32> {
  // CLASH: specialize.mlir:[[# @LINE + 1]]:3: error: cannot infer the result type of 'mir.add' after binding x=2x8, y=3x8: 'mir.add' shapes [2, 8], [3, 8] do not broadcast
  %0 = mir.add %x, %y : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = mir.exp %0 : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %dead = mir.neg %0 : (tensor<?x8xf32>) -> tensor<?x8xf32>
  func.return %1 : tensor<?x8xf32>
}

// FLOW-LABEL: func.func @flow(%p: tensor<1xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
// FLOW-NEXT:    %r = mir.if %p (%a) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32> {
// FLOW-NEXT:    ^bb0(%x: tensor<4xf32>):
// FLOW-NEXT:      %z = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
// FLOW-NEXT:      mir.yield %z : tensor<4xf32>
// FLOW-NEXT:    } else {
// FLOW-NEXT:    ^bb0(%{{.*}}: tensor<4xf32>):
// FLOW-NEXT:      mir.yield %{{.*}} : tensor<4xf32>
// FLOW-NEXT:    }
// FLOW-NEXT:    %w = mir.while (%r) max_iterations = 3 : (tensor<4xf32>) -> tensor<4xf32> cond {
// FLOW-NEXT:    ^bb0(%{{.*}}: tensor<4xf32>):
// FLOW-NEXT:      %t = mir.constant dense<true> : tensor<1xi1>
// FLOW-NEXT:      mir.yield %t : tensor<1xi1>
// FLOW-NEXT:    } do {
// FLOW-NEXT:    ^bb0(%{{.*}}: tensor<4xf32>):
// FLOW-NEXT:      %y = mir.neg %{{.*}} : (tensor<4xf32>) -> tensor<4xf32>
// FLOW-NEXT:      mir.yield %y : tensor<4xf32>
// FLOW-NEXT:    }
// FLOW-NEXT:    func.return %w : tensor<4xf32>
func.func @flow(%p: tensor<1xi1>, %a: tensor<?xf32>) -> tensor<?xf32> {
  %r = mir.if %p (%a) : (tensor<1xi1>, tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%x: tensor<?xf32>):
    %z = mir.exp %x : (tensor<?xf32>) -> tensor<?xf32>
    mir.yield %z : tensor<?xf32>
  } else {
  ^bb0(%x: tensor<?xf32>):
    mir.yield %x : tensor<?xf32>
  }
  %w = mir.while (%r) max_iterations = 3 : (tensor<?xf32>) -> tensor<?xf32> cond {
  ^bb0(%x: tensor<?xf32>):
    %t = mir.constant dense<true> : tensor<1xi1>
    mir.yield %t : tensor<1xi1>
  } do {
  ^bb0(%x: tensor<?xf32>):
    %y = mir.neg %x : (tensor<?xf32>) -> tensor<?xf32>
    mir.yield %y : tensor<?xf32>
  }
  func.return %w : tensor<?xf32>
}
