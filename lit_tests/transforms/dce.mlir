// RUN: rlx-opt %s --split-input-file -p rlx-dce | filecheck %s

// A dead chain goes in one sweep; live ops and unused arguments stay.
// CHECK-LABEL: func.func @chain(%x: tensor<4xf32>, %unused: tensor<2xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %live = mir.relu %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %live : tensor<4xf32>
// CHECK-NEXT:  }
func.func @chain(%x: tensor<4xf32>, %unused: tensor<2xf32>) -> tensor<4xf32> {
  %d1 = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %d2 = mir.add %d1, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %live = mir.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %d3 = mir.neg %d2 : (tensor<4xf32>) -> tensor<4xf32>
  func.return %live : tensor<4xf32>
}

// -----

// An op with unknown side effects is kept, and so is what it uses.
// CHECK-LABEL: func.func @effects
// CHECK-NEXT:    %used = mir.neg %x
// CHECK-NEXT:    %r = "test.op"(%used)
// CHECK-NEXT:    func.return %x
func.func @effects(%x: tensor<4xf32>) -> tensor<4xf32> {
  %used = mir.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %r = "test.op"(%used) : (tensor<4xf32>) -> tensor<4xf32>
  %dead = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %x : tensor<4xf32>
}

// -----

// A dead region op whose body is pure goes, with the values only its body used.
// CHECK-LABEL: func.func @dead_pure_region
// CHECK-NEXT:    func.return %x
func.func @dead_pure_region(%c: i1, %x: tensor<4xf32>) -> tensor<4xf32> {
  %inner_only = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %r = scf.if %c -> (tensor<4xf32>) {
    %y = mir.sin %inner_only : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  func.return %x : tensor<4xf32>
}

// -----

// A region op with an impure body stays, even when it claims to be Pure.
// CHECK-LABEL: func.func @impure_bodies
// CHECK-NEXT:    %r = scf.if %c
// CHECK:         "test.op"() : () -> ()
// CHECK:         %p = "test.pureop"() ({
// CHECK-NEXT:      "test.op"() : () -> ()
// CHECK-NEXT:      "test.termop"() : () -> ()
// CHECK-NEXT:    }) : () -> tensor<4xf32>
// CHECK-NEXT:    func.return %x
func.func @impure_bodies(%c: i1, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.if %c -> (tensor<4xf32>) {
    "test.op"() : () -> ()
    scf.yield %x : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  %p = "test.pureop"() ({
    "test.op"() : () -> ()
    "test.termop"() : () -> ()
  }) : () -> tensor<4xf32>
  func.return %x : tensor<4xf32>
}

// -----

// Dead ops inside the bodies of a live mir.if go; a dead mir.while goes whole.
// CHECK-LABEL: func.func @mir_regions
// CHECK-NEXT:    %r = mir.if %p (%a) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%x: tensor<4xf32>):
// CHECK-NEXT:      %live = mir.neg %x
// CHECK-NEXT:      mir.yield %live : tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<4xf32>):
// CHECK-NEXT:      mir.yield %{{.*}} : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : tensor<4xf32>
func.func @mir_regions(%p: tensor<1xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %r = mir.if %p (%a) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %dead = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
    %live = mir.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %live : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>):
    %dead = mir.cos %x : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %x : tensor<4xf32>
  }
  %w = mir.while (%a) max_iterations = 3 : (tensor<4xf32>) -> tensor<4xf32> cond {
  ^bb0(%x: tensor<4xf32>):
    %t = mir.constant dense<true> : tensor<1xi1>
    mir.yield %t : tensor<1xi1>
  } do {
  ^bb0(%x: tensor<4xf32>):
    %y = mir.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %y : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// Every function of the module is cleaned; multi-result ops die only when all
// their results are unused.
// CHECK-LABEL: func.func @first
// CHECK-NEXT:    func.return %x
// CHECK-LABEL: func.func @second
// CHECK-NEXT:    %values, %indices = mir.topk %x k = 2
// CHECK-NEXT:    func.return %indices
func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %x : tensor<4xf32>
}
func.func @second(%x: tensor<4xf32>) -> tensor<2xi64> {
  %values, %indices = mir.topk %x k = 2 : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  %unused, %also_unused = mir.topk %x k = 1 : (tensor<4xf32>) -> (tensor<1xf32>, tensor<1xi64>)
  func.return %indices : tensor<2xi64>
}
