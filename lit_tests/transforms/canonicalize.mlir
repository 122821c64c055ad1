// RUN: rlx-opt %s -p rlx-canonicalize --split-input-file | filecheck %s
// New ops carry the location of the op they replace.
// RUN: rlx-opt %s -p rlx-canonicalize --split-input-file --print-debuginfo | filecheck %s --check-prefix=LOC

// x + -0.0 and -0.0 + x (IEEE 754's additive identity): splat or not; an integer
// zero; with `?` dims only when the zero cannot broadcast the value. The zeros
// left unused are erased.
// CHECK-LABEL: func.func @add_zero
// CHECK-NEXT:    func.return %x, %x, %x, %i, %x, %d : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>, tensor<?x3xf32>
// CHECK-NEXT:  }
func.func @add_zero(%x: tensor<2x3xf32>, %i: tensor<2x3xi32>, %d: tensor<?x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>, tensor<?x3xf32>) {
  %zero = mir.constant dense<-0.0> : tensor<3xf32>
  %zeros = mir.constant dense<[-0.0, -0.0, -0.0]> : tensor<3xf32>
  %izero = mir.constant dense<0> : tensor<i32>
  %negzero = mir.constant dense<-0.0> : tensor<1x3xf32>
  %a = mir.add %x, %zero : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %b = mir.add %zero, %x : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = mir.add %x, %zeros : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %e = mir.add %izero, %i : (tensor<i32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %f = mir.add %x, %negzero : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %g = mir.add %d, %zero : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  func.return %a, %b, %c, %e, %f, %g : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>, tensor<?x3xf32>
}

// -----

// Not identities: the zero broadcasts x to a larger shape (statically, or
// possibly at run time through a `?` dim declared loosely), promotes its dtype,
// or is not zero everywhere.
// CHECK-LABEL: func.func @add_not_zero
// CHECK-NEXT:    %zero = mir.constant dense<-0.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT:    %mixed = mir.constant dense<[-0.000000e+00, 1.000000e+00, -0.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %fzero = mir.constant dense<-0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %zero3 = mir.constant dense<-0.000000e+00> : tensor<3xf32>
// CHECK-NEXT:    %grow = mir.add %x, %zero : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %some = mir.add %x, %mixed : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %promote = mir.add %i, %fzero : (tensor<3xi32>, tensor<f32>) -> tensor<3xf64>
// CHECK-NEXT:    %maybe_grow = mir.add %d, %zero3 : (tensor<?xf32>, tensor<3xf32>) -> tensor<?xf32>
// CHECK-NEXT:    func.return %grow, %some, %promote, %maybe_grow
func.func @add_not_zero(%x: tensor<3xf32>, %i: tensor<3xi32>, %d: tensor<?xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf64>, tensor<?xf32>) {
  %zero = mir.constant dense<-0.0> : tensor<2x3xf32>
  %mixed = mir.constant dense<[-0.0, 1.0, -0.0]> : tensor<3xf32>
  %fzero = mir.constant dense<-0.0> : tensor<f32>
  %zero3 = mir.constant dense<-0.0> : tensor<3xf32>
  %grow = mir.add %x, %zero : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %some = mir.add %x, %mixed : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %promote = mir.add %i, %fzero : (tensor<3xi32>, tensor<f32>) -> tensor<3xf64>
  %maybe_grow = mir.add %d, %zero3 : (tensor<?xf32>, tensor<3xf32>) -> tensor<?xf32>
  func.return %grow, %some, %promote, %maybe_grow : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf64>, tensor<?xf32>
}

// -----

// x + 0.0 is not x under IEEE 754 (-0.0 + 0.0 = +0.0): neither a +0.0 nor a zero
// with one +0.0 element folds, nor a complex zero with a +0.0 part.
// CHECK-LABEL: func.func @add_positive_zero
// CHECK-NEXT:    %zero = mir.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %signs = mir.constant dense<[-0.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %czero = mir.constant
// CHECK-NEXT:    %a = mir.add %x, %zero
// CHECK-NEXT:    %b = mir.add %zero, %x
// CHECK-NEXT:    %c = mir.add %x, %signs
// CHECK-NEXT:    %d = mir.add %z, %czero
// CHECK-NEXT:    func.return %a, %b, %c, %d
func.func @add_positive_zero(%x: tensor<2xf32>, %z: tensor<2xcomplex<f32>>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xcomplex<f32>>) {
  %zero = mir.constant dense<0.0> : tensor<f32>
  %signs = mir.constant dense<[-0.0, 0.0]> : tensor<2xf32>
  %czero = mir.constant dense<(-0.0, 0.0)> : tensor<complex<f32>>
  %a = mir.add %x, %zero : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %b = mir.add %zero, %x : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  %c = mir.add %x, %signs : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %d = mir.add %z, %czero : (tensor<2xcomplex<f32>>, tensor<complex<f32>>) -> tensor<2xcomplex<f32>>
  func.return %a, %b, %c, %d : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xcomplex<f32>>
}

// -----

// x - 0.0 folds; x - -0.0 is x + 0.0 and stays; 0 - x is a negation and stays.
// CHECK-LABEL: func.func @sub_zero
// CHECK-NEXT:    %zero = mir.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %negzero = mir.constant dense<-0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %negated = mir.sub %zero, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %plus = mir.sub %x, %negzero : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %x, %negated, %plus
func.func @sub_zero(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = mir.constant dense<0.0> : tensor<4xf32>
  %negzero = mir.constant dense<-0.0> : tensor<f32>
  %same = mir.sub %x, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %negated = mir.sub %zero, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %plus = mir.sub %x, %negzero : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %same, %negated, %plus : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// x * 1 and 1 * x fold (integers too); x * 2 and a broadcasting 1 stay.
// CHECK-LABEL: func.func @mul_one
// CHECK-NEXT:    %two = mir.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %ones = mir.constant dense<1.000000e+00> : tensor<2x4xf32>
// CHECK-NEXT:    %doubled = mir.mul %x, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    %grow = mir.mul %ones, %x : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    func.return %x, %x, %i, %doubled, %grow
func.func @mul_one(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xf32>, tensor<2x4xf32>) {
  %one = mir.constant dense<1.0> : tensor<f32>
  %ione = mir.constant dense<[1, 1, 1, 1]> : tensor<4xi64>
  %two = mir.constant dense<2.0> : tensor<f32>
  %ones = mir.constant dense<1.0> : tensor<2x4xf32>
  %a = mir.mul %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = mir.mul %one, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %c = mir.mul %i, %ione : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %doubled = mir.mul %x, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %grow = mir.mul %ones, %x : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %a, %b, %c, %doubled, %grow : tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xf32>, tensor<2x4xf32>
}

// -----

// -(-x) is x; the inner negation stays while something else uses it.
// CHECK-LABEL: func.func @neg_neg
// CHECK-NEXT:    %once = mir.neg %x : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    func.return %x, %once
func.func @neg_neg(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %once = mir.neg %x : (tensor<4xi32>) -> tensor<4xi32>
  %twice = mir.neg %once : (tensor<4xi32>) -> tensor<4xi32>
  func.return %twice, %once : tensor<4xi32>, tensor<4xi32>
}

// -----

// A reshape of a reshape becomes one reshape of the inner input, at the outer
// reshape's location; it disappears when it restores the input's type.
// CHECK-LABEL: func.func @reshape_reshape
// CHECK-NEXT:    %r2 = mir.reshape %x new_shape = [3, -1] : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    func.return %r2, %x
// LOC-LABEL: func.func @reshape_reshape
// LOC-NEXT:    %r2 = mir.reshape %x new_shape = [3, -1] : (tensor<2x3xf32>) -> tensor<3x2xf32> loc("{{.*}}canonicalize.mlir":[[# @LINE + 5]]:3)
// LOC-NEXT:    func.return
func.func @reshape_reshape(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<2x3xf32>) {
  %r1 = mir.reshape %x new_shape = [6] : (tensor<2x3xf32>) -> tensor<6xf32>
  %back = mir.reshape %r1 new_shape = [2, 3] : (tensor<6xf32>) -> tensor<2x3xf32>
  %r2 = mir.reshape %r1 new_shape = [3, -1] : (tensor<6xf32>) -> tensor<3x2xf32>
  func.return %r2, %back : tensor<3x2xf32>, tensor<2x3xf32>
}

// -----

// With `?` dims the merged reshape could infer a less static type (?x2
// instead of 4x2): both reshapes stay. A dynamic reshape to a type equal to
// its input's is not known to be an identity (this one makes 2x? of ?x4).
// CHECK-LABEL: func.func @reshape_dynamic
// CHECK-NEXT:    %flat = mir.reshape %x new_shape = [8]
// CHECK-NEXT:    %pairs = mir.reshape %flat new_shape = [-1, 2]
// CHECK-NEXT:    %loose = mir.reshape %x new_shape = [2, -1] : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT:    func.return %pairs, %loose
func.func @reshape_dynamic(%x: tensor<?x4xf32>) -> (tensor<4x2xf32>, tensor<?x4xf32>) {
  %flat = mir.reshape %x new_shape = [8] : (tensor<?x4xf32>) -> tensor<8xf32>
  %pairs = mir.reshape %flat new_shape = [-1, 2] : (tensor<8xf32>) -> tensor<4x2xf32>
  %loose = mir.reshape %x new_shape = [2, -1] : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %pairs, %loose : tensor<4x2xf32>, tensor<?x4xf32>
}

// -----

// A static reshape to the input's own shape is the input.
// CHECK-LABEL: func.func @reshape_identity
// CHECK-NEXT:    func.return %x : tensor<2x3xf32>
func.func @reshape_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %same = mir.reshape %x new_shape = [2, -1] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %same : tensor<2x3xf32>
}

// -----

// Two transposes compose into one (at the outer one's location), or into
// nothing when they undo each other.
// CHECK-LABEL: func.func @transpose_transpose
// CHECK-NEXT:    %moved = mir.transpose %x perm = [1, 2, 0] : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
// CHECK-NEXT:    func.return %moved, %x
// LOC-LABEL: func.func @transpose_transpose
// LOC-NEXT:    %moved = mir.transpose %x perm = [1, 2, 0] : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32> loc("{{.*}}canonicalize.mlir":[[# @LINE + 3]]:3)
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> (tensor<3x4x2xf32>, tensor<2x3x4xf32>) {
  %t = mir.transpose %x perm = [1, 0, 2] : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %moved = mir.transpose %t perm = [0, 2, 1] : (tensor<3x2x4xf32>) -> tensor<3x4x2xf32>
  %undone = mir.transpose %t perm = [1, 0, 2] : (tensor<3x2x4xf32>) -> tensor<2x3x4xf32>
  func.return %moved, %undone : tensor<3x4x2xf32>, tensor<2x3x4xf32>
}

// -----

// The identity permutation folds; a swap of equal dims keeps the type but
// moves the data, so it stays.
// CHECK-LABEL: func.func @transpose_identity
// CHECK-NEXT:    %swap = mir.transpose %x perm = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
// CHECK-NEXT:    func.return %x, %swap
func.func @transpose_identity(%x: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  %same = mir.transpose %x perm = [0, 1] : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %swap = mir.transpose %x perm = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
  func.return %same, %swap : tensor<3x3xf32>, tensor<3x3xf32>
}

// -----

// A cast to the input's own type folds, dynamic dims included; a real
// conversion stays.
// CHECK-LABEL: func.func @cast
// CHECK-NEXT:    %half = mir.cast %x : (tensor<?x3xf32>) -> tensor<?x3xf16>
// CHECK-NEXT:    func.return %x, %half
func.func @cast(%x: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf16>) {
  %same = mir.cast %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %half = mir.cast %x : (tensor<?x3xf32>) -> tensor<?x3xf16>
  func.return %same, %half : tensor<?x3xf32>, tensor<?x3xf16>
}

// -----

// An expand that keeps every dim (its own size or -1) folds. One that
// broadcasts stays, also when a loosely declared `?` hides it (?x4 -> 3x4).
// CHECK-LABEL: func.func @expand
// CHECK-NEXT:    %grow = mir.expand %x target_shape = [2, 3, 4] : (tensor<3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %maybe_grow = mir.expand %d target_shape = [3, 4] : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT:    func.return %x, %x, %d, %grow, %maybe_grow
func.func @expand(%x: tensor<3x4xf32>, %d: tensor<?x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<?x4xf32>, tensor<2x3x4xf32>, tensor<?x4xf32>) {
  %a = mir.expand %x target_shape = [3, 4] : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %b = mir.expand %x target_shape = [-1, 4] : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %c = mir.expand %d target_shape = [-1, 4] : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %grow = mir.expand %x target_shape = [2, 3, 4] : (tensor<3x4xf32>) -> tensor<2x3x4xf32>
  %maybe_grow = mir.expand %d target_shape = [3, 4] : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %a, %b, %c, %grow, %maybe_grow : tensor<3x4xf32>, tensor<3x4xf32>, tensor<?x4xf32>, tensor<2x3x4xf32>, tensor<?x4xf32>
}

// -----

// A constant condition that is true (false) everywhere picks the true (false)
// branch: splat or not, bool or numeric (nonzero is true).
// CHECK-LABEL: func.func @where_constant
// CHECK-NEXT:    func.return %a, %b, %a, %b
func.func @where_constant(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %yes = mir.constant dense<true> : tensor<2x3xi1>
  %no = mir.constant dense<false> : tensor<1xi1>
  %all = mir.constant dense<[true, true, true]> : tensor<3xi1>
  %zero = mir.constant dense<0.0> : tensor<f32>
  %p = mir.where %yes, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %q = mir.where %no, %a, %b : (tensor<1xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = mir.where %all, %a, %b : (tensor<3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = mir.where %zero, %a, %b : (tensor<f32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %p, %q, %r, %s : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Not foldable: a mixed condition, a chosen branch that the other branch (or
// the condition) broadcasts, and a chosen branch of another dtype.
// CHECK-LABEL: func.func @where_kept
// CHECK-NEXT:    %yes = mir.constant dense<true> : tensor<2x3xi1>
// CHECK-NEXT:    %mixed = mir.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK-NEXT:    %m = mir.where %mixed, %a, %b
// CHECK-NEXT:    %by_other = mir.where %yes, %row, %b
// CHECK-NEXT:    %by_cond = mir.where %yes, %row, %row
// CHECK-NEXT:    %promoted = mir.where %yes, %a, %wide
// CHECK-NEXT:    func.return %m, %by_other, %by_cond, %promoted
func.func @where_kept(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %row: tensor<3xf32>, %wide: tensor<2x3xf64>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf64>) {
  %yes = mir.constant dense<true> : tensor<2x3xi1>
  %mixed = mir.constant dense<[true, false, true]> : tensor<3xi1>
  %m = mir.where %mixed, %a, %b : (tensor<3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %by_other = mir.where %yes, %row, %b : (tensor<2x3xi1>, tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %by_cond = mir.where %yes, %row, %row : (tensor<2x3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %promoted = mir.where %yes, %a, %wide : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf64>) -> tensor<2x3xf64>
  func.return %m, %by_other, %by_cond, %promoted : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf64>
}

// -----

// A concat of one operand is that operand; of two it stays.
// CHECK-LABEL: func.func @concat
// CHECK-NEXT:    %two = mir.concat %x, %x axis = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    func.return %x, %two
func.func @concat(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<4x3xf32>) {
  %one = mir.concat %x axis = 1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %two = mir.concat %x, %x axis = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %one, %two : tensor<2x3xf32>, tensor<4x3xf32>
}

// -----

// Folds chain to a fixpoint, inside region bodies too. Forwarding a value
// gives it the replaced result's name when it had none (%0 prints as %y).
// CHECK-LABEL: func.func @chains_and_regions
// CHECK-NEXT:    %y = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %r = mir.if %p (%y) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%v: tensor<4xf32>):
// CHECK-NEXT:      mir.yield %v : tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:    ^bb0(%v_1: tensor<4xf32>):
// CHECK-NEXT:      %n = mir.neg %v_1 : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:      mir.yield %n : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r
func.func @chains_and_regions(%x: tensor<4xf32>, %p: tensor<1xi1>) -> tensor<4xf32> {
  %one = mir.constant dense<1.0> : tensor<4xf32>
  %0 = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = mir.neg %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = mir.neg %1 : (tensor<4xf32>) -> tensor<4xf32>
  %y = mir.mul %2, %one : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = mir.if %p (%y) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<4xf32>):
    %t = mir.transpose %v perm = [0] : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %t : tensor<4xf32>
  } else {
  ^bb0(%v: tensor<4xf32>):
    %n = mir.neg %v : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %n : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// As in MLIR's canonicalize, ops nobody uses are erased even when no pattern
// applies to them; ops with unknown effects stay.
// CHECK-LABEL: func.func @dead_ops
// CHECK-NEXT:    %kept = "test.op"(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %x
func.func @dead_ops(%x: tensor<4xf32>) -> tensor<4xf32> {
  %unused = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %kept = "test.op"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %x : tensor<4xf32>
}
