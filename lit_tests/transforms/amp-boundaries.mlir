// rlx-amp at function and region boundaries, with indices, explicit casts and ops it
// cannot retype (here under auto-mixed-bf16).
// RUN: rlx-opt %s --split-input-file -p 'rlx-amp{policy=auto-mixed-bf16}' | filecheck %s

// Two consumers of %x share one cast, placed right after %x; %h returned twice gets one cast back.
// CHECK-LABEL: func.func @shared(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
// CHECK-NEXT:    %x_bf16 = mir.cast %x : (tensor<4x4xf32>) -> tensor<4x4xbf16>
// CHECK-NEXT:    %w_bf16 = mir.cast %w : (tensor<4x4xf32>) -> tensor<4x4xbf16>
// CHECK-NEXT:    %h = mir.matmul %x_bf16, %w_bf16 : (tensor<4x4xbf16>, tensor<4x4xbf16>) -> tensor<4x4xbf16>
// CHECK-NEXT:    %h_f32 = mir.cast %h : (tensor<4x4xbf16>) -> tensor<4x4xf32>
// CHECK-NEXT:    %s = mir.silu %x_bf16 : (tensor<4x4xbf16>) -> tensor<4x4xbf16>
// CHECK-NEXT:    %s_f32 = mir.cast %s : (tensor<4x4xbf16>) -> tensor<4x4xf32>
// CHECK-NEXT:    func.return %h_f32, %h_f32, %s_f32 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
func.func @shared(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %h = mir.matmul %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = mir.silu %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %h, %h, %s : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Indices and labels are never cast, and what computes them keeps its precision
// (bf16 would turn index 257 into 256); the data they index is cast.
// CHECK-LABEL: func.func @ids(%table: tensor<300x2xf32>, %ids: tensor<2xf32>, %logits: tensor<2x8xf32>) -> (tensor<2x2xf32>, tensor<2xf32>) {
// CHECK-NEXT:    %table_bf16 = mir.cast %table : (tensor<300x2xf32>) -> tensor<300x2xbf16>
// CHECK-NEXT:    %logits_bf16 = mir.cast %logits : (tensor<2x8xf32>) -> tensor<2x8xbf16>
// CHECK-NEXT:    %two = mir.constant dense<2.000000e+00> : tensor<2xf32>
// CHECK-NEXT:    %shifted = mir.add %ids, %two : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %rows = mir.gather %table_bf16, %shifted axis = 0 : (tensor<300x2xbf16>, tensor<2xf32>) -> tensor<2x2xbf16>
// CHECK-NEXT:    %rows_f32 = mir.cast %rows : (tensor<2x2xbf16>) -> tensor<2x2xf32>
// CHECK-NEXT:    %loss = mir.softmax_cross_entropy_with_logits %logits_bf16, %ids : (tensor<2x8xbf16>, tensor<2xf32>) -> tensor<2xbf16>
// CHECK-NEXT:    %loss_f32 = mir.cast %loss : (tensor<2xbf16>) -> tensor<2xf32>
// CHECK-NEXT:    func.return %rows_f32, %loss_f32 : tensor<2x2xf32>, tensor<2xf32>
func.func @ids(%table: tensor<300x2xf32>, %ids: tensor<2xf32>, %logits: tensor<2x8xf32>) -> (tensor<2x2xf32>, tensor<2xf32>) {
  %two = mir.constant dense<2.000000e+00> : tensor<2xf32>
  %shifted = mir.add %ids, %two : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %rows = mir.gather %table, %shifted axis = 0 : (tensor<300x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %loss = mir.softmax_cross_entropy_with_logits %logits, %ids : (tensor<2x8xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %rows, %loss : tensor<2x2xf32>, tensor<2xf32>
}

// -----

// A program's own casts keep their result type; one made an identity by the rewrite goes.
// CHECK-LABEL: func.func @explicit(%x: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xi32>) {
// CHECK-NEXT:    %x_bf16 = mir.cast %x : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK-NEXT:    %e = mir.exp %x_bf16 : (tensor<4xbf16>) -> tensor<4xbf16>
// CHECK-NEXT:    %i = mir.cast %e : (tensor<4xbf16>) -> tensor<4xi32>
// CHECK-NEXT:    func.return %e, %i : tensor<4xbf16>, tensor<4xi32>
func.func @explicit(%x: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xi32>) {
  %e = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = mir.cast %e : (tensor<4xf32>) -> tensor<4xbf16>
  %i = mir.cast %e : (tensor<4xf32>) -> tensor<4xi32>
  func.return %b, %i : tensor<4xbf16>, tensor<4xi32>
}

// -----

// Region ops keep their signature; their bodies are rewritten like functions.
// CHECK-LABEL: func.func @region(%p: tensor<1xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = mir.if %p (%x) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%a: tensor<4xf32>):
// CHECK-NEXT:    %a_bf16 = mir.cast %a : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK-NEXT:    %e = mir.exp %a_bf16 : (tensor<4xbf16>) -> tensor<4xbf16>
// CHECK-NEXT:    %e_f32 = mir.cast %e : (tensor<4xbf16>) -> tensor<4xf32>
// CHECK-NEXT:    mir.yield %e_f32 : tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:    ^bb0(%b: tensor<4xf32>):
// CHECK-NEXT:    mir.yield %b : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : tensor<4xf32>
func.func @region(%p: tensor<1xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = mir.if %p (%x) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = mir.exp %a : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %e : tensor<4xf32>
  } else {
  ^bb0(%b: tensor<4xf32>):
    mir.yield %b : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// Ops of other dialects and ops on f64 data keep their types.
// CHECK-LABEL: func.func @kept(%x: tensor<4xf32>, %d: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xf64>) {
// CHECK-NEXT:    %x_bf16 = mir.cast %x : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK-NEXT:    %s = mir.silu %x_bf16 : (tensor<4xbf16>) -> tensor<4xbf16>
// CHECK-NEXT:    %s_f32 = mir.cast %s : (tensor<4xbf16>) -> tensor<4xf32>
// CHECK-NEXT:    %t = "test.op"(%s_f32) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %m = mir.add %d, %d : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
// CHECK-NEXT:    func.return %t, %m : tensor<4xf32>, tensor<4xf64>
func.func @kept(%x: tensor<4xf32>, %d: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xf64>) {
  %s = mir.silu %x : (tensor<4xf32>) -> tensor<4xf32>
  %t = "test.op"(%s) : (tensor<4xf32>) -> tensor<4xf32>
  %m = mir.add %d, %d : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  func.return %t, %m : tensor<4xf32>, tensor<4xf64>
}

// -----

// Values keep their declared shapes: inference knows `add` of a 3 and a ? is 3, and the
// reshape and expand results are static, but each result still says `?` (only its element
// type changes), so the function's results are still its declared types.
// CHECK-LABEL: func.func @declared_shapes(%x: tensor<3xf32>, %d: tensor<?xf32>, %m: tensor<2x3xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>) {
// CHECK-NEXT:    %x_bf16 = mir.cast %x : (tensor<3xf32>) -> tensor<3xbf16>
// CHECK-NEXT:    %d_bf16 = mir.cast %d : (tensor<?xf32>) -> tensor<?xbf16>
// CHECK-NEXT:    %m_bf16 = mir.cast %m : (tensor<2x3xf32>) -> tensor<2x3xbf16>
// CHECK-NEXT:    %a = mir.add %x_bf16, %d_bf16 : (tensor<3xbf16>, tensor<?xbf16>) -> tensor<?xbf16>
// CHECK-NEXT:    %a_f32 = mir.cast %a : (tensor<?xbf16>) -> tensor<?xf32>
// CHECK-NEXT:    %r = mir.reshape %m_bf16 new_shape = [6] : (tensor<2x3xbf16>) -> tensor<?xbf16>
// CHECK-NEXT:    %r_f32 = mir.cast %r : (tensor<?xbf16>) -> tensor<?xf32>
// CHECK-NEXT:    %e = mir.expand %x_bf16 target_shape = [2, 3] : (tensor<3xbf16>) -> tensor<?x?xbf16>
// CHECK-NEXT:    %e_f32 = mir.cast %e : (tensor<?x?xbf16>) -> tensor<?x?xf32>
// CHECK-NEXT:    func.return %a_f32, %r_f32, %e_f32 : tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>
func.func @declared_shapes(%x: tensor<3xf32>, %d: tensor<?xf32>, %m: tensor<2x3xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>) {
  %a = mir.add %x, %d : (tensor<3xf32>, tensor<?xf32>) -> tensor<?xf32>
  %r = mir.reshape %m new_shape = [6] : (tensor<2x3xf32>) -> tensor<?xf32>
  %e = mir.expand %x target_shape = [2, 3] : (tensor<3xf32>) -> tensor<?x?xf32>
  func.return %a, %r, %e : tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>
}

// -----

// A program cast that also changes the declared shape is not reused for a cast of the
// same element type (its result says `?`, the silu's operand says 3).
// CHECK-LABEL: func.func @shape_changing_cast(%x: tensor<3xf32>) -> (tensor<?xbf16>, tensor<3xf32>) {
// CHECK-NEXT:    %h = mir.cast %x : (tensor<3xf32>) -> tensor<?xbf16>
// CHECK-NEXT:    %x_bf16 = mir.cast %x : (tensor<3xf32>) -> tensor<3xbf16>
// CHECK-NEXT:    %s = mir.silu %x_bf16 : (tensor<3xbf16>) -> tensor<3xbf16>
// CHECK-NEXT:    %s_f32 = mir.cast %s : (tensor<3xbf16>) -> tensor<3xf32>
// CHECK-NEXT:    func.return %h, %s_f32 : tensor<?xbf16>, tensor<3xf32>
func.func @shape_changing_cast(%x: tensor<3xf32>) -> (tensor<?xbf16>, tensor<3xf32>) {
  %h = mir.cast %x : (tensor<3xf32>) -> tensor<?xbf16>
  %s = mir.silu %x : (tensor<3xf32>) -> tensor<3xf32>
  func.return %h, %s : tensor<?xbf16>, tensor<3xf32>
}
