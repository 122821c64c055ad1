// RUN: rlx-opt %s --split-input-file --verify-diagnostics

// mir.scan -------------------------------------------------------------------------------

func.func @scan_length(%h: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan' length must be >= 1, got 0}}
  %r = mir.scan init(%h : tensor<4xf32>) length = 0 -> tensor<4xf32> {
  ^bb0(%c: tensor<4xf32>):
    mir.yield %c : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @scan_checkpoints_zero(%h: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan' num_checkpoints must be in 1..=4, got 0}}
  %r = mir.scan init(%h : tensor<4xf32>) length = 4 num_checkpoints = 0 -> tensor<4xf32> {
  ^bb0(%c: tensor<4xf32>):
    mir.yield %c : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @scan_checkpoints_above_length(%h: tensor<4xf32>) -> tensor<5x4xf32> {
  // expected-error@+1 {{'mir.scan' num_checkpoints must be in 1..=4, got 5}}
  %r = mir.scan init(%h : tensor<4xf32>) length = 4 save_trajectory num_checkpoints = 5 -> tensor<5x4xf32> {
  ^bb0(%c: tensor<4xf32>):
    mir.yield %c : tensor<4xf32>
  }
  func.return %r : tensor<5x4xf32>
}

// -----

func.func @scan_no_carry() {
  // expected-error@+1 {{'mir.scan' must carry at least one value}}
  "mir.scan"() <{length = 2 : i64, operandSegmentSizes = array<i32: 0, 0, 0>}> ({
    "mir.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

func.func @scan_xs_rank0(%h: tensor<4xf32>, %x: tensor<f32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan' xs #0 must have rank >= 1, got a rank-0 tensor}}
  %r = mir.scan init(%h : tensor<4xf32>) xs(%x : tensor<f32>) length = 3 -> tensor<4xf32> {
  ^bb0(%c: tensor<4xf32>, %t: tensor<f32>):
    mir.yield %c : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @scan_xs_length(%h: tensor<4xf32>, %xs: tensor<5x4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan' xs #0 has leading dim 5 but length is 3}}
  %r = mir.scan init(%h : tensor<4xf32>) xs(%xs : tensor<5x4xf32>) length = 3 -> tensor<4xf32> {
  ^bb0(%c: tensor<4xf32>, %x: tensor<4xf32>):
    mir.yield %c : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @scan_body_args(%h: tensor<4xf32>, %w: tensor<2xf32>, %xs: tensor<3x4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan' body region argument types (tensor<4xf32>, tensor<4xf32>) do not match the expected (carry, bcast, x_t) types (tensor<4xf32>, tensor<2xf32>, tensor<4xf32>)}}
  %r = mir.scan init(%h : tensor<4xf32>) bcasts(%w : tensor<2xf32>) xs(%xs : tensor<3x4xf32>) length = 3 -> tensor<4xf32> {
  ^bb0(%c: tensor<4xf32>, %x: tensor<4xf32>):
    mir.yield %c : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @scan_body_x_t_type(%h: tensor<4xf32>, %xs: tensor<3x4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan' body region argument types (tensor<4xf32>, tensor<3x4xf32>) do not match the expected (carry, bcast, x_t) types (tensor<4xf32>, tensor<4xf32>)}}
  %r = mir.scan init(%h : tensor<4xf32>) xs(%xs : tensor<3x4xf32>) length = 3 -> tensor<4xf32> {
  ^bb0(%c: tensor<4xf32>, %x: tensor<3x4xf32>):
    mir.yield %c : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @scan_body_yield(%h: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan' body region yields (tensor<4xf16>) but the carry types are (tensor<4xf32>)}}
  %r = mir.scan init(%h : tensor<4xf32>) length = 3 -> tensor<4xf32> {
  ^bb0(%c: tensor<4xf32>):
    %n = mir.cast %c : (tensor<4xf32>) -> tensor<4xf16>
    mir.yield %n : tensor<4xf16>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @scan_body_yield_count(%h: tensor<4xf32>, %k: tensor<i32>) -> (tensor<4xf32>, tensor<i32>) {
  // expected-error@+1 {{'mir.scan' body region yields (tensor<4xf32>) but the carry types are (tensor<4xf32>, tensor<i32>)}}
  %r, %q = mir.scan init(%h, %k : tensor<4xf32>, tensor<i32>) length = 3 -> tensor<4xf32>, tensor<i32> {
  ^bb0(%c: tensor<4xf32>, %i: tensor<i32>):
    mir.yield %c : tensor<4xf32>
  }
  func.return %r, %q : tensor<4xf32>, tensor<i32>
}

// -----

func.func @scan_body_not_yield(%h: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan' body region must end with 'mir.yield'}}
  %r = mir.scan init(%h : tensor<4xf32>) length = 3 -> tensor<4xf32> {
  ^bb0(%c: tensor<4xf32>):
    "llvm.unreachable"() : () -> ()
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @scan_trajectory_type(%h: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan' inferred result type tensor<3x4xf32> does not match declared type tensor<4xf32>}}
  %r = mir.scan init(%h : tensor<4xf32>) length = 3 save_trajectory -> tensor<4xf32> {
  ^bb0(%c: tensor<4xf32>):
    mir.yield %c : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @scan_checkpointed_trajectory_type(%h: tensor<4xf32>) -> tensor<6x4xf32> {
  // expected-error@+1 {{'mir.scan' inferred result type tensor<2x4xf32> does not match declared type tensor<6x4xf32>}}
  %r = mir.scan init(%h : tensor<4xf32>) length = 6 save_trajectory num_checkpoints = 2 -> tensor<6x4xf32> {
  ^bb0(%c: tensor<4xf32>):
    mir.yield %c : tensor<4xf32>
  }
  func.return %r : tensor<6x4xf32>
}

// -----

func.func @scan_result_count(%h: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan' expected 1 results, got 2}}
  %r, %s = mir.scan init(%h : tensor<4xf32>) length = 3 -> tensor<4xf32>, tensor<4xf32> {
  ^bb0(%c: tensor<4xf32>):
    mir.yield %c : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// Bcasts enter as block arguments: using %w directly is rejected.
func.func @scan_implicit_capture(%h: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{Operation using value defined out of its IsolatedFromAbove parent}}
  %r = mir.scan init(%h : tensor<4xf32>) length = 3 -> tensor<4xf32> {
  ^bb0(%c: tensor<4xf32>):
    %n = mir.add %c, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %n : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// mir.scan_backward -----------------------------------------------------------------------

// -----

func.func @scan_backward_length(%h: tensor<4xf32>, %t: tensor<1x4xf32>, %u: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan_backward' length must be >= 1, got -1}}
  %d = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%t : tensor<1x4xf32>) upstream(%u : tensor<4xf32>) length = -1 -> tensor<4xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %dn: tensor<4xf32>):
    mir.yield %dn : tensor<4xf32>
  }
  func.return %d : tensor<4xf32>
}

// -----

func.func @scan_backward_checkpoints(%h: tensor<4xf32>, %t: tensor<5x4xf32>, %u: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan_backward' num_checkpoints must be in 1..=4, got 5}}
  %d = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%t : tensor<5x4xf32>) upstream(%u : tensor<4xf32>) length = 4 num_checkpoints = 5 -> tensor<4xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %dn: tensor<4xf32>):
    mir.yield %dn : tensor<4xf32>
  }
  func.return %d : tensor<4xf32>
}

// -----

func.func @scan_backward_no_carry() {
  // expected-error@+1 {{'mir.scan_backward' must have at least one carry}}
  "mir.scan_backward"() <{length = 2 : i64, operandSegmentSizes = array<i32: 0, 0, 0, 0>}> ({
    "mir.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

func.func @scan_backward_trajectory_count(%h: tensor<4xf32>, %k: tensor<i32>, %t: tensor<3x4xf32>, %u: tensor<4xf32>, %v: tensor<i32>) -> (tensor<4xf32>, tensor<i32>) {
  // expected-error@+1 {{'mir.scan_backward' expected one trajectory per carry (2), got 1}}
  %d, %e = mir.scan_backward init(%h, %k : tensor<4xf32>, tensor<i32>) trajectory(%t : tensor<3x4xf32>) upstream(%u, %v : tensor<4xf32>, tensor<i32>) length = 3 -> tensor<4xf32>, tensor<i32> vjp {
  ^bb0(%c: tensor<4xf32>, %i: tensor<i32>, %dc: tensor<4xf32>, %di: tensor<i32>):
    mir.yield %dc, %di : tensor<4xf32>, tensor<i32>
  }
  func.return %d, %e : tensor<4xf32>, tensor<i32>
}

// -----

func.func @scan_backward_upstream_count(%h: tensor<4xf32>, %t: tensor<3x4xf32>, %u: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan_backward' expected one upstream per carry (1), got 2}}
  %d = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%t : tensor<3x4xf32>) upstream(%u, %u : tensor<4xf32>, tensor<4xf32>) length = 3 -> tensor<4xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %dn: tensor<4xf32>):
    mir.yield %dn : tensor<4xf32>
  }
  func.return %d : tensor<4xf32>
}

// -----

func.func @scan_backward_trajectory_rows(%h: tensor<4xf32>, %t: tensor<3x4xf32>, %u: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan_backward' trajectory #0 must be tensor<2x4xf32>, got tensor<3x4xf32>}}
  %d = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%t : tensor<3x4xf32>) upstream(%u : tensor<4xf32>) length = 3 num_checkpoints = 2 -> tensor<4xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %dn: tensor<4xf32>):
    mir.yield %dn : tensor<4xf32>
  } forward {
  ^bb0(%c: tensor<4xf32>):
    mir.yield %c : tensor<4xf32>
  }
  func.return %d : tensor<4xf32>
}

// -----

func.func @scan_backward_upstream_carry(%h: tensor<4xf32>, %t: tensor<3x4xf32>, %u: tensor<3x4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan_backward' upstream #0 must be tensor<4xf32>, got tensor<3x4xf32>}}
  %d = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%t : tensor<3x4xf32>) upstream(%u : tensor<3x4xf32>) length = 3 -> tensor<4xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %dn: tensor<4xf32>):
    mir.yield %dn : tensor<4xf32>
  }
  func.return %d : tensor<4xf32>
}

// -----

func.func @scan_backward_upstream_rows(%h: tensor<4xf32>, %t: tensor<3x4xf32>, %u: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan_backward' upstream #0 must be tensor<3x4xf32>, got tensor<4xf32>}}
  %d = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%t : tensor<3x4xf32>) upstream(%u : tensor<4xf32>) length = 3 save_trajectory -> tensor<4xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %dn: tensor<4xf32>):
    mir.yield %dn : tensor<4xf32>
  }
  func.return %d : tensor<4xf32>
}

// -----

func.func @scan_backward_xs_length(%h: tensor<4xf32>, %t: tensor<3x4xf32>, %u: tensor<4xf32>, %xs: tensor<2x4xf32>) -> (tensor<4xf32>, tensor<2x4xf32>) {
  // expected-error@+1 {{'mir.scan_backward' xs #0 has leading dim 2 but length is 3}}
  %d, %dx = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%t : tensor<3x4xf32>) upstream(%u : tensor<4xf32>) xs(%xs : tensor<2x4xf32>) length = 3 -> tensor<4xf32>, tensor<2x4xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %x: tensor<4xf32>, %dn: tensor<4xf32>):
    mir.yield %dn, %x : tensor<4xf32>, tensor<4xf32>
  }
  func.return %d, %dx : tensor<4xf32>, tensor<2x4xf32>
}

// -----

func.func @scan_backward_vjp_args(%h: tensor<4xf32>, %t: tensor<3x4xf32>, %u: tensor<4xf32>, %xs: tensor<3x2xf32>) -> (tensor<4xf32>, tensor<3x2xf32>) {
  // expected-error@+1 {{'mir.scan_backward' vjp region argument types (tensor<4xf32>, tensor<4xf32>) do not match the expected (carry, x_t, d_next) types (tensor<4xf32>, tensor<2xf32>, tensor<4xf32>)}}
  %d, %dx = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%t : tensor<3x4xf32>) upstream(%u : tensor<4xf32>) xs(%xs : tensor<3x2xf32>) length = 3 -> tensor<4xf32>, tensor<3x2xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %dn: tensor<4xf32>):
    mir.yield %dn : tensor<4xf32>
  }
  func.return %d, %dx : tensor<4xf32>, tensor<3x2xf32>
}

// -----

func.func @scan_backward_vjp_yield(%h: tensor<4xf32>, %t: tensor<3x4xf32>, %u: tensor<4xf32>, %xs: tensor<3x2xf32>) -> (tensor<4xf32>, tensor<3x2xf32>) {
  // expected-error@+1 {{'mir.scan_backward' vjp region yields (tensor<4xf32>) but the (d_carry, d_x_t) types are (tensor<4xf32>, tensor<2xf32>)}}
  %d, %dx = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%t : tensor<3x4xf32>) upstream(%u : tensor<4xf32>) xs(%xs : tensor<3x2xf32>) length = 3 -> tensor<4xf32>, tensor<3x2xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %x: tensor<2xf32>, %dn: tensor<4xf32>):
    mir.yield %dn : tensor<4xf32>
  }
  func.return %d, %dx : tensor<4xf32>, tensor<3x2xf32>
}

// -----

func.func @scan_backward_needs_forward(%h: tensor<4xf32>, %t: tensor<2x4xf32>, %u: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan_backward' needs a forward region to recompute the steps between its 2 checkpoints}}
  %d = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%t : tensor<2x4xf32>) upstream(%u : tensor<4xf32>) length = 6 num_checkpoints = 2 -> tensor<4xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %dn: tensor<4xf32>):
    mir.yield %dn : tensor<4xf32>
  }
  func.return %d : tensor<4xf32>
}

// -----

func.func @scan_backward_needless_forward(%h: tensor<4xf32>, %t: tensor<3x4xf32>, %u: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan_backward' has a forward region but its trajectory saves every step (nothing to recompute)}}
  %d = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%t : tensor<3x4xf32>) upstream(%u : tensor<4xf32>) length = 3 num_checkpoints = 3 -> tensor<4xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %dn: tensor<4xf32>):
    mir.yield %dn : tensor<4xf32>
  } forward {
  ^bb0(%c: tensor<4xf32>):
    mir.yield %c : tensor<4xf32>
  }
  func.return %d : tensor<4xf32>
}

// -----

func.func @scan_backward_forward_args(%h: tensor<4xf32>, %t: tensor<2x4xf32>, %u: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan_backward' forward region argument types (tensor<4xf32>, tensor<4xf32>) do not match the expected (carry, x_t) types (tensor<4xf32>)}}
  %d = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%t : tensor<2x4xf32>) upstream(%u : tensor<4xf32>) length = 6 num_checkpoints = 2 -> tensor<4xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %dn: tensor<4xf32>):
    mir.yield %dn : tensor<4xf32>
  } forward {
  ^bb0(%c: tensor<4xf32>, %dn: tensor<4xf32>):
    mir.yield %c : tensor<4xf32>
  }
  func.return %d : tensor<4xf32>
}

// -----

func.func @scan_backward_forward_yield(%h: tensor<4xf32>, %t: tensor<2x4xf32>, %u: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.scan_backward' forward region yields (tensor<4xf32>, tensor<4xf32>) but the carry types are (tensor<4xf32>)}}
  %d = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%t : tensor<2x4xf32>) upstream(%u : tensor<4xf32>) length = 6 num_checkpoints = 2 -> tensor<4xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %dn: tensor<4xf32>):
    mir.yield %dn : tensor<4xf32>
  } forward {
  ^bb0(%c: tensor<4xf32>):
    mir.yield %c, %c : tensor<4xf32>, tensor<4xf32>
  }
  func.return %d : tensor<4xf32>
}

// -----

func.func @scan_backward_result_type(%h: tensor<4xf32>, %t: tensor<3x4xf32>, %u: tensor<4xf32>, %xs: tensor<3x2xf32>) -> (tensor<4xf32>, tensor<2xf32>) {
  // expected-error@+1 {{'mir.scan_backward' inferred result #1 type tensor<3x2xf32> does not match declared type tensor<2xf32>}}
  %d, %dx = mir.scan_backward init(%h : tensor<4xf32>) trajectory(%t : tensor<3x4xf32>) upstream(%u : tensor<4xf32>) xs(%xs : tensor<3x2xf32>) length = 3 -> tensor<4xf32>, tensor<2xf32> vjp {
  ^bb0(%c: tensor<4xf32>, %x: tensor<2xf32>, %dn: tensor<4xf32>):
    mir.yield %dn, %x : tensor<4xf32>, tensor<2xf32>
  }
  func.return %d, %dx : tensor<4xf32>, tensor<2xf32>
}

// mir.custom_fn ---------------------------------------------------------------------------

// -----

func.func @custom_fn_forward_args(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.custom_fn' forward region argument types (tensor<4xf32>) do not match the expected input types (tensor<4xf32>, tensor<4xf32>)}}
  %r = mir.custom_fn (%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    mir.yield %a : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @custom_fn_no_results(%x: tensor<4xf32>) {
  // expected-error@+1 {{'mir.custom_fn' forward region must yield at least one value}}
  mir.custom_fn (%x) : (tensor<4xf32>) -> () {
  ^bb0(%a: tensor<4xf32>):
    mir.yield
  }
  func.return
}

// -----

func.func @custom_fn_forward_not_yield(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.custom_fn' forward region must end with 'mir.yield'}}
  %r = mir.custom_fn (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    "llvm.unreachable"() : () -> ()
  }
  func.return %r : tensor<4xf32>
}

// -----

// RLX's vjp_body needs Inputs named 'primal_output' and 'd_output': here they are arguments.
func.func @custom_fn_vjp_args(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.custom_fn' vjp region argument types (tensor<4xf32>, tensor<4xf32>) do not match the expected (x, y, dy) types (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)}}
  %r = mir.custom_fn (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    mir.yield %a : tensor<4xf32>
  } vjp {
  ^bb0(%a: tensor<4xf32>, %dy: tensor<4xf32>):
    mir.yield %dy : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// One gradient per input, of the input's type.
func.func @custom_fn_vjp_yield(%x: tensor<4xf32>, %n: tensor<2xi32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.custom_fn' vjp region yields (tensor<4xf32>) but the input types are (tensor<4xf32>, tensor<2xi32>)}}
  %r = mir.custom_fn (%x, %n) : (tensor<4xf32>, tensor<2xi32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<2xi32>):
    mir.yield %a : tensor<4xf32>
  } vjp {
  ^bb0(%a: tensor<4xf32>, %b: tensor<2xi32>, %y: tensor<4xf32>, %dy: tensor<4xf32>):
    mir.yield %dy : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @custom_fn_jvp_args(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.custom_fn' jvp region argument types (tensor<4xf32>, tensor<4xf32>) do not match the expected (x, y, tx) types (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)}}
  %r = mir.custom_fn (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    mir.yield %a : tensor<4xf32>
  } jvp {
  ^bb0(%a: tensor<4xf32>, %t: tensor<4xf32>):
    mir.yield %t : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// One tangent per result (RLX allows exactly one result).
func.func @custom_fn_jvp_yield(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error@+1 {{'mir.custom_fn' jvp region yields (tensor<4xf32>) but the result types are (tensor<4xf32>, tensor<4xf32>)}}
  %r, %s = mir.custom_fn (%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    mir.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  } jvp {
  ^bb0(%a: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>, %t: tensor<4xf32>):
    mir.yield %t : tensor<4xf32>
  }
  func.return %r, %s : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @custom_fn_result_type(%x: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error@+1 {{'mir.custom_fn' inferred result type tensor<4xf32> does not match declared type tensor<4xf64>}}
  %r = mir.custom_fn (%x) : (tensor<4xf32>) -> tensor<4xf64> {
  ^bb0(%a: tensor<4xf32>):
    mir.yield %a : tensor<4xf32>
  }
  func.return %r : tensor<4xf64>
}

// -----

func.func @custom_fn_implicit_capture(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{Operation using value defined out of its IsolatedFromAbove parent}}
  %r = mir.custom_fn () : () -> tensor<4xf32> {
    mir.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// mir.selective_scan ----------------------------------------------------------------------

// -----

func.func @ssm_integer(%x: tensor<1x2x3xi32>, %d: tensor<1x2x3xi32>, %a: tensor<3x4xi32>, %b: tensor<1x2x4xi32>, %c: tensor<1x2x4xi32>) -> tensor<1x2x3xi32> {
  // expected-error@+1 {{'mir.selective_scan' x must have a floating-point element type, got i32}}
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<1x2x3xi32>, tensor<1x2x3xi32>, tensor<3x4xi32>, tensor<1x2x4xi32>, tensor<1x2x4xi32>) -> tensor<1x2x3xi32>
  func.return %y : tensor<1x2x3xi32>
}

// -----

func.func @ssm_rank(%x: tensor<2x3xf32>, %d: tensor<1x2x3xf32>, %a: tensor<3x4xf32>, %b: tensor<1x2x4xf32>, %c: tensor<1x2x4xf32>) -> tensor<1x2x3xf32> {
  // expected-error@+1 {{'mir.selective_scan' x must have rank 3, got [2, 3]}}
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<2x3xf32>, tensor<1x2x3xf32>, tensor<3x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x3xf32>
  func.return %y : tensor<1x2x3xf32>
}

// -----

func.func @ssm_a_rank(%x: tensor<1x2x3xf32>, %d: tensor<1x2x3xf32>, %a: tensor<3xf32>, %b: tensor<1x2x4xf32>, %c: tensor<1x2x4xf32>) -> tensor<1x2x3xf32> {
  // expected-error@+1 {{'mir.selective_scan' a must have rank 2, got [3]}}
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<3xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x3xf32>
  func.return %y : tensor<1x2x3xf32>
}

// -----

func.func @ssm_dtypes(%x: tensor<1x2x3xf32>, %d: tensor<1x2x3xf32>, %a: tensor<3x4xf32>, %b: tensor<1x2x4xf16>, %c: tensor<1x2x4xf32>) -> tensor<1x2x3xf32> {
  // expected-error@+1 {{'mir.selective_scan' b must have element type f32 (as x), got f16}}
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<3x4xf32>, tensor<1x2x4xf16>, tensor<1x2x4xf32>) -> tensor<1x2x3xf32>
  func.return %y : tensor<1x2x3xf32>
}

// -----

func.func @ssm_batch(%x: tensor<1x2x3xf32>, %d: tensor<1x2x3xf32>, %a: tensor<3x4xf32>, %b: tensor<2x2x4xf32>, %c: tensor<1x2x4xf32>) -> tensor<1x2x3xf32> {
  // expected-error@+1 {{'mir.selective_scan' dim B differs: x has 1 but b has 2}}
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<3x4xf32>, tensor<2x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x3xf32>
  func.return %y : tensor<1x2x3xf32>
}

// -----

func.func @ssm_seq(%x: tensor<1x2x3xf32>, %d: tensor<1x5x3xf32>, %a: tensor<3x4xf32>, %b: tensor<1x2x4xf32>, %c: tensor<1x2x4xf32>) -> tensor<1x2x3xf32> {
  // expected-error@+1 {{'mir.selective_scan' dim S differs: x has 2 but delta has 5}}
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<1x2x3xf32>, tensor<1x5x3xf32>, tensor<3x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x3xf32>
  func.return %y : tensor<1x2x3xf32>
}

// -----

func.func @ssm_hidden(%x: tensor<1x2x3xf32>, %d: tensor<1x2x3xf32>, %a: tensor<5x4xf32>, %b: tensor<1x2x4xf32>, %c: tensor<1x2x4xf32>) -> tensor<1x2x3xf32> {
  // expected-error@+1 {{'mir.selective_scan' dim H differs: x has 3 but a has 5}}
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<5x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x3xf32>
  func.return %y : tensor<1x2x3xf32>
}

// -----

func.func @ssm_state_size(%x: tensor<1x2x3xf32>, %d: tensor<1x2x3xf32>, %a: tensor<3x4xf32>, %b: tensor<1x2x4xf32>, %c: tensor<1x2x4xf32>) -> tensor<1x2x3xf32> {
  // expected-error@+1 {{'mir.selective_scan' dim N differs: state_size has 8 but a has 4}}
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 8 : (tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<3x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x3xf32>
  func.return %y : tensor<1x2x3xf32>
}

// -----

func.func @ssm_c_state(%x: tensor<1x2x3xf32>, %d: tensor<1x2x3xf32>, %a: tensor<3x4xf32>, %b: tensor<1x2x4xf32>, %c: tensor<1x2x6xf32>) -> tensor<1x2x3xf32> {
  // expected-error@+1 {{'mir.selective_scan' dim N differs: state_size has 4 but c has 6}}
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<3x4xf32>, tensor<1x2x4xf32>, tensor<1x2x6xf32>) -> tensor<1x2x3xf32>
  func.return %y : tensor<1x2x3xf32>
}

// -----

func.func @ssm_state_size_positive(%x: tensor<1x2x3xf32>, %d: tensor<1x2x3xf32>, %a: tensor<3x4xf32>, %b: tensor<1x2x4xf32>, %c: tensor<1x2x4xf32>) -> tensor<1x2x3xf32> {
  // expected-error@+1 {{'mir.selective_scan' state_size must be >= 1, got 0}}
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 0 : (tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<3x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x3xf32>
  func.return %y : tensor<1x2x3xf32>
}

// -----

func.func @ssm_result(%x: tensor<1x2x3xf32>, %d: tensor<1x2x3xf32>, %a: tensor<3x4xf32>, %b: tensor<1x2x4xf32>, %c: tensor<1x2x4xf32>) -> tensor<1x2x4xf32> {
  // expected-error@+1 {{'mir.selective_scan' inferred result type tensor<1x2x3xf32> does not match declared type tensor<1x2x4xf32>}}
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<3x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  func.return %y : tensor<1x2x4xf32>
}

// mir.gated_delta_net ---------------------------------------------------------------------

// -----

func.func @gdn_integer(%q: tensor<1x2x3x4xi8>, %g: tensor<1x2x3xi8>) -> tensor<1x2x3x4xi8> {
  // expected-error@+1 {{'mir.gated_delta_net' q must have a floating-point element type, got i8}}
  %o = mir.gated_delta_net %q, %q, %q, %g, %g state_size = 4 : (tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3xi8>, tensor<1x2x3xi8>) -> tensor<1x2x3x4xi8>
  func.return %o : tensor<1x2x3x4xi8>
}

// -----

func.func @gdn_gate_rank(%q: tensor<1x2x3x4xf32>, %g: tensor<1x2x3x1xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.gated_delta_net' g must have rank 3, got [1, 2, 3, 1]}}
  %o = mir.gated_delta_net %q, %q, %q, %g, %g state_size = 4 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x1xf32>, tensor<1x2x3x1xf32>) -> tensor<1x2x3x4xf32>
  func.return %o : tensor<1x2x3x4xf32>
}

// -----

func.func @gdn_dtypes(%q: tensor<1x2x3x4xf32>, %v: tensor<1x2x3x4xbf16>, %g: tensor<1x2x3xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.gated_delta_net' v must have element type f32 (as q), got bf16}}
  %o = mir.gated_delta_net %q, %q, %v, %g, %g state_size = 4 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xbf16>, tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3x4xf32>
  func.return %o : tensor<1x2x3x4xf32>
}

// -----

func.func @gdn_heads(%q: tensor<1x2x3x4xf32>, %g: tensor<1x2x2xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.gated_delta_net' dim H differs: q has 3 but g has 2}}
  %o = mir.gated_delta_net %q, %q, %q, %g, %g state_size = 4 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>) -> tensor<1x2x3x4xf32>
  func.return %o : tensor<1x2x3x4xf32>
}

// -----

func.func @gdn_key_size(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x5xf32>, %g: tensor<1x2x3xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.gated_delta_net' dim N differs: state_size has 4 but k has 5}}
  %o = mir.gated_delta_net %q, %k, %q, %g, %g state_size = 4 : (tensor<1x2x3x4xf32>, tensor<1x2x3x5xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3x4xf32>
  func.return %o : tensor<1x2x3x4xf32>
}

// -----

func.func @gdn_state_shape(%q: tensor<1x2x3x4xf32>, %g: tensor<1x2x3xf32>, %s: tensor<1x3x4x2xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x3x4x4xf32>) {
  // expected-error@+1 {{'mir.gated_delta_net' dim N differs: state_size has 4 but state has 2}}
  %o, %f = mir.gated_delta_net %q, %q, %q, %g, %g state %s state_size = 4 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x3x4x2xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x3x4x4xf32>)
  func.return %o, %f : tensor<1x2x3x4xf32>, tensor<1x3x4x4xf32>
}

// -----

func.func @gdn_state_batch(%q: tensor<1x2x3x4xf32>, %g: tensor<1x2x3xf32>, %s: tensor<2x3x4x4xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x3x4x4xf32>) {
  // expected-error@+1 {{'mir.gated_delta_net' dim B differs: q has 1 but state has 2}}
  %o, %f = mir.gated_delta_net %q, %q, %q, %g, %g state %s state_size = 4 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<2x3x4x4xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x3x4x4xf32>)
  func.return %o, %f : tensor<1x2x3x4xf32>, tensor<1x3x4x4xf32>
}

// -----

func.func @gdn_state_size_positive(%q: tensor<1x2x3x4xf32>, %g: tensor<1x2x3xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.gated_delta_net' state_size must be >= 1, got -2}}
  %o = mir.gated_delta_net %q, %q, %q, %g, %g state_size = -2 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3x4xf32>
  func.return %o : tensor<1x2x3x4xf32>
}

// -----

// With a state the op also returns the final state.
func.func @gdn_final_state_missing(%q: tensor<1x2x3x4xf32>, %g: tensor<1x2x3xf32>, %s: tensor<1x3x4x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.gated_delta_net' expected 2 results, got 1}}
  %o = "mir.gated_delta_net"(%q, %q, %q, %g, %g, %s) <{state_size = 4 : i64}> : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x3x4x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %o : tensor<1x2x3x4xf32>
}

// -----

func.func @gdn_result(%q: tensor<1x2x3x4xf32>, %g: tensor<1x2x3xf32>) -> tensor<1x2x3x3xf32> {
  // expected-error@+1 {{'mir.gated_delta_net' inferred result type tensor<1x2x3x4xf32> does not match declared type tensor<1x2x3x3xf32>}}
  %o = mir.gated_delta_net %q, %q, %q, %g, %g state_size = 4 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %o : tensor<1x2x3x3xf32>
}

// mir.yield ---------------------------------------------------------------------------------

// -----

func.func @yield_outside(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.yield' expects parent op to be one of 'mir.if', 'mir.while', 'mir.scan', 'mir.scan_backward', 'mir.custom_fn'}}
  mir.yield %a : tensor<4xf32>
}
