// Verifier errors are reported at the failing op's line in the file (also in
// later --split-input-file chunks), with the source line and the op; valid
// chunks are still printed and the exit status is 1.
// RUN: not rlx-opt %s --split-input-file 2>&1 | filecheck %s

func.func @broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // CHECK:      diagnostics.mlir:[[# @LINE + 4]]:3: error: 'mir.add' shapes [2, 3], [4] do not broadcast
  // CHECK-NEXT: {{^}}  %0 = mir.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>{{$}}
  // CHECK-NEXT: {{^}}  ^{{$}}
  // CHECK-NEXT: diagnostics.mlir:[[# @LINE + 1]]:3: note: see current operation: %0 = "mir.add"(%a, %b) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  %0 = mir.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// CHECK: func.func @valid
func.func @valid(%a: tensor<2xf32>) -> tensor<2xf32> {
  func.return %a : tensor<2xf32>
}

// -----

// An error nested two modules deep, in the third chunk.
builtin.module {
  builtin.module {
    func.func @nested(%a: tensor<2xf32>) -> tensor<2xi32> {
      // CHECK: diagnostics.mlir:[[# @LINE + 1]]:7: error: 'mir.relu' inferred result type tensor<2xf32> does not match declared type tensor<2xi32>
      %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xi32>
      func.return %0 : tensor<2xi32>
    }
  }
}

// -----

func.func @undefined() {
  // CHECK: diagnostics.mlir:[[# @LINE + 1]]:3: error: use of undefined value '%x'
  %0 = mir.relu %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @bad_type(%a: tensor<2xf32>) {
  // CHECK: diagnostics.mlir:[[# @LINE + 1]]:50: error: Expected shape type.
  %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xq32>
  func.return
}

// CHECK-NOT: Traceback
