// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// A plain scan: one carry, no bcasts or xs, the final carry.
// CHECK-LABEL: func.func @scan_plain
// GENERIC-LABEL: "func.func"() <{sym_name = "scan_plain"
func.func @scan_plain(%h: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %r = mir.scan init(%h : tensor<4xf32>) length = 5 -> tensor<4xf32> {
  // CHECK-NEXT: ^bb0(%c: tensor<4xf32>):
  // CHECK-NEXT:   %n = mir.tanh %c : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT:   mir.yield %n : tensor<4xf32>
  // CHECK-NEXT: }
  // GENERIC:      %r = "mir.scan"(%h) <{length = 5 : i64, operandSegmentSizes = array<i32: 1, 0, 0>}> ({
  // GENERIC-NEXT: ^bb0(%c: tensor<4xf32>):
  // GENERIC:      }) : (tensor<4xf32>) -> tensor<4xf32>
  %r = mir.scan init(%h : tensor<4xf32>) length = 5 -> tensor<4xf32> {
  ^bb0(%c: tensor<4xf32>):
    %n = mir.tanh %c : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %n : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// xs: step t sees row t of each xs.
// CHECK-LABEL: func.func @scan_with_xs
func.func @scan_with_xs(%h: tensor<4xf32>, %xs: tensor<7x4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %r = mir.scan init(%h : tensor<4xf32>) xs(%xs : tensor<7x4xf32>) length = 7 -> tensor<4xf32> {
  // CHECK-NEXT: ^bb0(%c: tensor<4xf32>, %x: tensor<4xf32>):
  // GENERIC: "mir.scan"(%h, %xs) <{length = 7 : i64, operandSegmentSizes = array<i32: 1, 0, 1>}>
  %r = mir.scan init(%h : tensor<4xf32>) xs(%xs : tensor<7x4xf32>) length = 7 -> tensor<4xf32> {
  ^bb0(%c: tensor<4xf32>, %x: tensor<4xf32>):
    %n = mir.add %c, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %n : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// Two carries, a bcast and two xs (one of them rank 1: its step slice is rank 0),
// returning both trajectories.
// CHECK-LABEL: func.func @scan_bcasts_xs_trajectory
func.func @scan_bcasts_xs_trajectory(%h: tensor<1x3xf32>, %k: tensor<i32>, %w: tensor<3x3xf32>, %xs: tensor<6x1x3xf32>, %s: tensor<6xf32>) -> (tensor<6x1x3xf32>, tensor<6xi32>) {
  // CHECK-NEXT: %r, %q = mir.scan init(%h, %k : tensor<1x3xf32>, tensor<i32>) bcasts(%w : tensor<3x3xf32>) xs(%xs, %s : tensor<6x1x3xf32>, tensor<6xf32>) length = 6 save_trajectory -> tensor<6x1x3xf32>, tensor<6xi32> {
  // CHECK-NEXT: ^bb0(%c: tensor<1x3xf32>, %i: tensor<i32>, %wb: tensor<3x3xf32>, %x: tensor<1x3xf32>, %st: tensor<f32>):
  // CHECK:        mir.yield %n, %j : tensor<1x3xf32>, tensor<i32>
  // GENERIC: "mir.scan"(%h, %k, %w, %xs, %s) <{length = 6 : i64, save_trajectory, operandSegmentSizes = array<i32: 2, 1, 2>}>
  %r, %q = mir.scan init(%h, %k : tensor<1x3xf32>, tensor<i32>) bcasts(%w : tensor<3x3xf32>) xs(%xs, %s : tensor<6x1x3xf32>, tensor<6xf32>) length = 6 save_trajectory -> tensor<6x1x3xf32>, tensor<6xi32> {
  ^bb0(%c: tensor<1x3xf32>, %i: tensor<i32>, %wb: tensor<3x3xf32>, %x: tensor<1x3xf32>, %st: tensor<f32>):
    %m = mir.matmul %c, %wb : (tensor<1x3xf32>, tensor<3x3xf32>) -> tensor<1x3xf32>
    %a = mir.add %m, %x : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
    %n = mir.mul %a, %st : (tensor<1x3xf32>, tensor<f32>) -> tensor<1x3xf32>
    %one = mir.constant dense<1> : tensor<i32>
    %j = mir.add %i, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
    mir.yield %n, %j : tensor<1x3xf32>, tensor<i32>
  }
  func.return %r, %q : tensor<6x1x3xf32>, tensor<6xi32>
}

// -----

// Checkpointed: with a trajectory, only num_checkpoints rows; without one, the final carry.
// CHECK-LABEL: func.func @scan_checkpointed
func.func @scan_checkpointed(%h: tensor<?x4xf32>, %xs: tensor<9x?x4xf32>) -> (tensor<3x?x4xf32>, tensor<?x4xf32>) {
  // CHECK-NEXT: %t = mir.scan init(%h : tensor<?x4xf32>) xs(%xs : tensor<9x?x4xf32>) length = 9 save_trajectory num_checkpoints = 3 -> tensor<3x?x4xf32> {
  // CHECK:      %f = mir.scan init(%h : tensor<?x4xf32>) xs(%xs : tensor<9x?x4xf32>) length = 9 num_checkpoints = 3 -> tensor<?x4xf32> {
  // GENERIC: "mir.scan"(%h, %xs) <{length = 9 : i64, save_trajectory, num_checkpoints = 3 : i64, operandSegmentSizes = array<i32: 1, 0, 1>}>
  %t = mir.scan init(%h : tensor<?x4xf32>) xs(%xs : tensor<9x?x4xf32>) length = 9 save_trajectory num_checkpoints = 3 -> tensor<3x?x4xf32> {
  ^bb0(%c: tensor<?x4xf32>, %x: tensor<?x4xf32>):
    %n = mir.add %c, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    mir.yield %n : tensor<?x4xf32>
  }
  %f = mir.scan init(%h : tensor<?x4xf32>) xs(%xs : tensor<9x?x4xf32>) length = 9 num_checkpoints = 3 -> tensor<?x4xf32> {
  ^bb0(%c: tensor<?x4xf32>, %x: tensor<?x4xf32>):
    %n = mir.add %c, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    mir.yield %n : tensor<?x4xf32>
  }
  func.return %t, %f : tensor<3x?x4xf32>, tensor<?x4xf32>
}

// -----

// The reverse sweep of a scan with xs: d_init and d_xs from one op.
// CHECK-LABEL: func.func @scan_backward_full
func.func @scan_backward_full(%h: tensor<4xf32>, %traj: tensor<5x4xf32>, %up: tensor<4xf32>, %xs: tensor<5x4xf32>) -> (tensor<4xf32>, tensor<5x4xf32>) {
  // CHECK-NEXT: %dh, %dxs = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%traj : tensor<5x4xf32>) upstream(%up : tensor<4xf32>) xs(%xs : tensor<5x4xf32>) length = 5 -> tensor<4xf32>, tensor<5x4xf32> vjp {
  // CHECK-NEXT: ^bb0(%c: tensor<4xf32>, %x: tensor<4xf32>, %dn: tensor<4xf32>):
  // CHECK-NEXT:   mir.yield %dn, %dn : tensor<4xf32>, tensor<4xf32>
  // CHECK-NEXT: }
  // GENERIC: "mir.scan_backward"(%h, %traj, %up, %xs) <{length = 5 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
  // GENERIC: }) : (tensor<4xf32>, tensor<5x4xf32>, tensor<4xf32>, tensor<5x4xf32>) -> (tensor<4xf32>, tensor<5x4xf32>)
  %dh, %dxs = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%traj : tensor<5x4xf32>) upstream(%up : tensor<4xf32>) xs(%xs : tensor<5x4xf32>) length = 5 -> tensor<4xf32>, tensor<5x4xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %x: tensor<4xf32>, %dn: tensor<4xf32>):
    mir.yield %dn, %dn : tensor<4xf32>, tensor<4xf32>
  }
  func.return %dh, %dxs : tensor<4xf32>, tensor<5x4xf32>
}

// -----

// Checkpointed, with a per-row upstream: the forward body recomputes between checkpoints.
// CHECK-LABEL: func.func @scan_backward_checkpointed
func.func @scan_backward_checkpointed(%h: tensor<4xf32>, %traj: tensor<2x4xf32>, %up: tensor<2x4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %dh = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%traj : tensor<2x4xf32>) upstream(%up : tensor<2x4xf32>) length = 8 save_trajectory num_checkpoints = 2 -> tensor<4xf32> vjp {
  // CHECK:      } forward {
  // CHECK-NEXT: ^bb0(%[[C:.*]]: tensor<4xf32>):
  // CHECK-NEXT:   %n = mir.sin %[[C]] : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT:   mir.yield %n : tensor<4xf32>
  // CHECK-NEXT: }
  // GENERIC: "mir.scan_backward"(%h, %traj, %up) <{length = 8 : i64, save_trajectory, num_checkpoints = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  // GENERIC: }, {
  %dh = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%traj : tensor<2x4xf32>) upstream(%up : tensor<2x4xf32>) length = 8 save_trajectory num_checkpoints = 2 -> tensor<4xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %dn: tensor<4xf32>):
    %cos = mir.cos %c : (tensor<4xf32>) -> tensor<4xf32>
    %d = mir.mul %dn, %cos : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %d : tensor<4xf32>
  } forward {
  ^bb0(%c: tensor<4xf32>):
    %n = mir.sin %c : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %n : tensor<4xf32>
  }
  func.return %dh : tensor<4xf32>
}

// -----

// A custom function with a forward body only.
// CHECK-LABEL: func.func @custom_fn_forward_only
func.func @custom_fn_forward_only(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %y = mir.custom_fn (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: ^bb0(%a: tensor<4xf32>):
  // CHECK-NEXT:   %s = mir.mul %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT:   mir.yield %s : tensor<4xf32>
  // CHECK-NEXT: }
  // CHECK-NEXT: func.return %y
  // GENERIC: "mir.custom_fn"(%x) <{regionSegmentSizes = array<i32: 1, 0, 0>}> ({
  %y = mir.custom_fn (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %s = mir.mul %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %s : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

// Two inputs, two results of different dtypes, vjp and jvp bodies.
// CHECK-LABEL: func.func @custom_fn_vjp_jvp
func.func @custom_fn_vjp_jvp(%x: tensor<4xf32>, %n: tensor<2xi32>) -> (tensor<4xf32>, tensor<2xi32>) {
  // CHECK-NEXT: %y, %m = mir.custom_fn (%x, %n) : (tensor<4xf32>, tensor<2xi32>) -> (tensor<4xf32>, tensor<2xi32>) {
  // CHECK:      } vjp {
  // CHECK-NEXT: ^bb0(%va: tensor<4xf32>, %vb: tensor<2xi32>, %ya: tensor<4xf32>, %yb: tensor<2xi32>, %dya: tensor<4xf32>, %dyb: tensor<2xi32>):
  // CHECK:      } jvp {
  // CHECK-NEXT: ^bb0(%ja: tensor<4xf32>, %jb: tensor<2xi32>, %jya: tensor<4xf32>, %jyb: tensor<2xi32>, %ta: tensor<4xf32>, %tb: tensor<2xi32>):
  // GENERIC: "mir.custom_fn"(%x, %n) <{regionSegmentSizes = array<i32: 1, 1, 1>}> ({
  %y, %m = mir.custom_fn (%x, %n) : (tensor<4xf32>, tensor<2xi32>) -> (tensor<4xf32>, tensor<2xi32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<2xi32>):
    %s = mir.mul %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %s, %b : tensor<4xf32>, tensor<2xi32>
  } vjp {
  ^bb0(%va: tensor<4xf32>, %vb: tensor<2xi32>, %ya: tensor<4xf32>, %yb: tensor<2xi32>, %dya: tensor<4xf32>, %dyb: tensor<2xi32>):
    %two = mir.constant dense<2.0> : tensor<f32>
    %g = mir.mul %dya, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %ga = mir.mul %g, %va : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %ga, %dyb : tensor<4xf32>, tensor<2xi32>
  } jvp {
  ^bb0(%ja: tensor<4xf32>, %jb: tensor<2xi32>, %jya: tensor<4xf32>, %jyb: tensor<2xi32>, %ta: tensor<4xf32>, %tb: tensor<2xi32>):
    %t2 = mir.add %ta, %ta : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %ty = mir.mul %t2, %ja : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %ty, %tb : tensor<4xf32>, tensor<2xi32>
  }
  func.return %y, %m : tensor<4xf32>, tensor<2xi32>
}

// -----

// A jvp body without a vjp body; no inputs at all.
// CHECK-LABEL: func.func @custom_fn_jvp_only
func.func @custom_fn_jvp_only() -> tensor<2xf64> {
  // CHECK-NEXT: %y = mir.custom_fn () : () -> tensor<2xf64> {
  // CHECK:      } jvp {
  // CHECK-NOT:  vjp
  // GENERIC: "mir.custom_fn"() <{regionSegmentSizes = array<i32: 1, 0, 1>}> ({
  %y = mir.custom_fn () : () -> tensor<2xf64> {
    %c = mir.constant dense<[1.0, 2.0]> : tensor<2xf64>
    mir.yield %c : tensor<2xf64>
  } jvp {
  ^bb0(%v: tensor<2xf64>):
    %z = mir.constant dense<0.0> : tensor<2xf64>
    mir.yield %z : tensor<2xf64>
  }
  func.return %y : tensor<2xf64>
}

// -----

// CHECK-LABEL: func.func @selective_scan
func.func @selective_scan(%x: tensor<2x5x3xf32>, %d: tensor<2x5x3xf32>, %a: tensor<3x4xf32>, %b: tensor<2x5x4xf32>, %c: tensor<2x5x4xf32>) -> tensor<2x5x3xf32> {
  // CHECK-NEXT: %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<2x5x3xf32>, tensor<2x5x3xf32>, tensor<3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>) -> tensor<2x5x3xf32>
  // GENERIC: %y = "mir.selective_scan"(%x, %d, %a, %b, %c) <{state_size = 4 : i64}> : (tensor<2x5x3xf32>, tensor<2x5x3xf32>, tensor<3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>) -> tensor<2x5x3xf32>
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<2x5x3xf32>, tensor<2x5x3xf32>, tensor<3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>) -> tensor<2x5x3xf32>
  func.return %y : tensor<2x5x3xf32>
}

// -----

// Dynamic dims are refined from the operands that know them.
// CHECK-LABEL: func.func @selective_scan_dynamic
func.func @selective_scan_dynamic(%x: tensor<?x?x3xbf16>, %d: tensor<2x?x?xbf16>, %a: tensor<3x4xbf16>, %b: tensor<?x5x4xbf16>, %c: tensor<?x?x?xbf16>) -> tensor<2x5x3xbf16> {
  // CHECK-NEXT: %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<?x?x3xbf16>, tensor<2x?x?xbf16>, tensor<3x4xbf16>, tensor<?x5x4xbf16>, tensor<?x?x?xbf16>) -> tensor<2x5x3xbf16>
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<?x?x3xbf16>, tensor<2x?x?xbf16>, tensor<3x4xbf16>, tensor<?x5x4xbf16>, tensor<?x?x?xbf16>) -> tensor<2x5x3xbf16>
  func.return %y : tensor<2x5x3xbf16>
}

// -----

// CHECK-LABEL: func.func @gated_delta_net
func.func @gated_delta_net(%q: tensor<1x3x2x4xf32>, %k: tensor<1x3x2x4xf32>, %v: tensor<1x3x2x4xf32>, %g: tensor<1x3x2xf32>, %beta: tensor<1x3x2xf32>, %s: tensor<1x2x4x4xf32>) -> (tensor<1x3x2x4xf32>, tensor<1x3x2x4xf32>, tensor<1x2x4x4xf32>) {
  // CHECK-NEXT: %o = mir.gated_delta_net %q, %k, %v, %g, %beta state_size = 4 : (tensor<1x3x2x4xf32>, tensor<1x3x2x4xf32>, tensor<1x3x2x4xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2x4xf32>
  // CHECK-NEXT: %p, %final = mir.gated_delta_net %q, %k, %v, %g, %beta state %s state_size = 4 : (tensor<1x3x2x4xf32>, tensor<1x3x2x4xf32>, tensor<1x3x2x4xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x2x4x4xf32>) -> (tensor<1x3x2x4xf32>, tensor<1x2x4x4xf32>)
  // GENERIC: %o = "mir.gated_delta_net"(%q, %k, %v, %g, %beta) <{state_size = 4 : i64}>
  // GENERIC: %p, %final = "mir.gated_delta_net"(%q, %k, %v, %g, %beta, %s) <{state_size = 4 : i64}>
  %o = mir.gated_delta_net %q, %k, %v, %g, %beta state_size = 4 : (tensor<1x3x2x4xf32>, tensor<1x3x2x4xf32>, tensor<1x3x2x4xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2x4xf32>
  %p, %final = mir.gated_delta_net %q, %k, %v, %g, %beta state %s state_size = 4 : (tensor<1x3x2x4xf32>, tensor<1x3x2x4xf32>, tensor<1x3x2x4xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x2x4x4xf32>) -> (tensor<1x3x2x4xf32>, tensor<1x2x4x4xf32>)
  func.return %o, %p, %final : tensor<1x3x2x4xf32>, tensor<1x3x2x4xf32>, tensor<1x2x4x4xf32>
}
