// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// complex<f32> stays complex<f32>; element bodies compute with the upstream complex dialect.
// A real operand is promoted with complex.create (imaginary part 0).
// CHECK-LABEL: func.func @arith
// CHECK:         arith.constant dense<[(1.500000e+00,-2.000000e+00), (0.000000e+00,3.000000e+00)]> : tensor<2xcomplex<f32>>
// CHECK:         ^bb0(%{{.*}}: complex<f32>, %{{.*}}: complex<f32>, %{{.*}}: complex<f32>):
// CHECK-NEXT:      complex.add
// CHECK:         complex.sub
// CHECK:         complex.mul
// CHECK:         ^bb0(%{{.*}}: complex<f32>, %[[X:.*]]: f32, %{{.*}}: complex<f32>):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[XZ:.*]] = complex.create %[[X]], %[[ZERO]] : complex<f32>
// CHECK-NEXT:      complex.div %{{.*}}, %[[XZ]] : complex<f32>
// CHECK:         complex.neg
// CHECK-NOT:     mir.
func.func @arith(%z: tensor<2xcomplex<f32>>, %x: tensor<2xf32>) -> tensor<2xcomplex<f32>> {
  %c = mir.constant dense<[(1.5, -2.0), (0.0, 3.0)]> : tensor<2xcomplex<f32>>
  %0 = mir.add %z, %c : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %1 = mir.sub %0, %z : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %2 = mir.mul %1, %z : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  %3 = mir.div %2, %x : (tensor<2xcomplex<f32>>, tensor<2xf32>) -> tensor<2xcomplex<f32>>
  %4 = mir.neg %3 : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  func.return %4 : tensor<2xcomplex<f32>>
}

// -----

// Contractions and sums start from a complex zero (a generic yielding complex.constant:
// linalg.fill takes no complex scalar in xDSL) and accumulate with complex.mul/add.
// CHECK-LABEL: func.func @matmul_and_sum
// CHECK:         complex.constant [0.000000e+00 : f32, 0.000000e+00 : f32] : complex<f32>
// CHECK:         iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<3x4xcomplex<f32>>, tensor<4x2xcomplex<f32>>)
// CHECK-NEXT:    ^bb0(%[[L:.*]]: complex<f32>, %[[R:.*]]: complex<f32>, %[[ACC:.*]]: complex<f32>):
// CHECK-NEXT:      %[[P:.*]] = complex.mul %[[L]], %[[R]] : complex<f32>
// CHECK-NEXT:      complex.add %[[ACC]], %[[P]] : complex<f32>
// CHECK:         complex.constant [0.000000e+00 : f32, 0.000000e+00 : f32] : complex<f32>
// CHECK:         iterator_types = ["parallel", "reduction"]}
// CHECK-NEXT:    ^bb0(%[[E:.*]]: complex<f32>, %[[T:.*]]: complex<f32>):
// CHECK-NEXT:      complex.add %[[T]], %[[E]] : complex<f32>
// CHECK-NOT:     mir.
func.func @matmul_and_sum(%a: tensor<3x4xcomplex<f32>>, %b: tensor<4x2xcomplex<f32>>) -> tensor<3xcomplex<f32>> {
  %0 = mir.matmul %a, %b : (tensor<3x4xcomplex<f32>>, tensor<4x2xcomplex<f32>>) -> tensor<3x2xcomplex<f32>>
  %1 = mir.reduce sum %0 axes = [1] : (tensor<3x2xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  func.return %1 : tensor<3xcomplex<f32>>
}

// -----

// conjugate is complex.conj; |z|² is re² + im² in f32; its backward is 2 g conj(z).
// CHECK-LABEL: func.func @norms
// CHECK:         complex.conj
// CHECK:         ^bb0(%[[Z:.*]]: complex<f32>, %{{.*}}: f32):
// CHECK-NEXT:      %[[RE:.*]] = complex.re %[[Z]] : complex<f32>
// CHECK-NEXT:      %[[IM:.*]] = complex.im %[[Z]] : complex<f32>
// CHECK-NEXT:      %[[RR:.*]] = arith.mulf %[[RE]], %[[RE]] : f32
// CHECK-NEXT:      %[[II:.*]] = arith.mulf %[[IM]], %[[IM]] : f32
// CHECK-NEXT:      arith.addf %[[RR]], %[[II]] : f32
// CHECK:         ^bb0(%[[Z2:.*]]: complex<f32>, %[[G:.*]]: f32, %{{.*}}: complex<f32>):
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %[[G2:.*]] = arith.mulf %[[G]], %[[TWO]] : f32
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[S:.*]] = complex.create %[[G2]], %[[ZERO]] : complex<f32>
// CHECK-NEXT:      %[[C:.*]] = complex.conj %[[Z2]] : complex<f32>
// CHECK-NEXT:      complex.mul %[[S]], %[[C]] : complex<f32>
// CHECK-NOT:     mir.
func.func @norms(%z: tensor<2x?xcomplex<f32>>, %g: tensor<2x?xf32>) -> (tensor<2x?xf32>, tensor<2x?xcomplex<f32>>) {
  %0 = mir.conjugate %z : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xcomplex<f32>>
  %1 = mir.complex_norm_sq %0 : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xf32>
  %2 = mir.complex_norm_sq_backward %z, %g : (tensor<2x?xcomplex<f32>>, tensor<2x?xf32>) -> tensor<2x?xcomplex<f32>>
  func.return %1, %2 : tensor<2x?xf32>, tensor<2x?xcomplex<f32>>
}

// -----

// fft on complex<f32>: one contraction with the constant [N, N] DFT matrix, norm included
// (ortho: every entry has magnitude 1/sqrt(4) = 0.5; row 1 is 0.5 * (-i)^k).
// CHECK-LABEL: func.func @fft
// CHECK:         arith.constant dense<{{\[}}[(5.000000e-01,0.000000e+00), (5.000000e-01,0.000000e+00), {{.*}}], [(5.000000e-01,0.000000e+00), ({{.*}},-5.000000e-01), {{.*}}> : tensor<4x4xcomplex<f32>>
// CHECK:         iterator_types = ["parallel", "parallel", "reduction"]} ins(%z, %{{.*}} : tensor<3x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>)
// CHECK:           complex.mul
// CHECK-NEXT:      complex.add
// CHECK-NOT:     mir.
func.func @fft(%z: tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>> {
  %0 = mir.fft %z norm = ortho : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
  func.return %0 : tensor<3x4xcomplex<f32>>
}

// -----

// Casts as numpy's: complex -> real takes the real part, complex -> i1 is "nonzero";
// abs is the modulus (complex.abs), as a complex number again.
// CHECK-LABEL: func.func @casts_and_abs
// CHECK:         ^bb0(%[[Z:.*]]: complex<f32>, %{{.*}}: i32):
// CHECK-NEXT:      %[[RE:.*]] = complex.re %[[Z]] : complex<f32>
// CHECK-NEXT:      arith.fptosi %[[RE]] : f32 to i32
// CHECK:         ^bb0(%[[Z1:.*]]: complex<f32>, %{{.*}}: i1):
// CHECK-NEXT:      %[[RE1:.*]] = complex.re %[[Z1]] : complex<f32>
// CHECK:           arith.cmpf une, %[[RE1]]
// CHECK:           %[[IM1:.*]] = complex.im %[[Z1]] : complex<f32>
// CHECK:           arith.cmpf une, %[[IM1]]
// CHECK:           arith.ori
// CHECK:         ^bb0(%[[Z2:.*]]: complex<f32>, %{{.*}}: complex<f32>):
// CHECK-NEXT:      %[[M:.*]] = complex.abs %[[Z2]] : complex<f32>
// CHECK:           complex.create %[[M]], %{{.*}} : complex<f32>
// CHECK-NOT:     mir.
func.func @casts_and_abs(%z: tensor<2xcomplex<f32>>) -> (tensor<2xi32>, tensor<2xi1>, tensor<2xcomplex<f32>>) {
  %0 = mir.cast %z : (tensor<2xcomplex<f32>>) -> tensor<2xi32>
  %1 = mir.cast %z : (tensor<2xcomplex<f32>>) -> tensor<2xi1>
  %2 = mir.abs %z : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  func.return %0, %1, %2 : tensor<2xi32>, tensor<2xi1>, tensor<2xcomplex<f32>>
}
