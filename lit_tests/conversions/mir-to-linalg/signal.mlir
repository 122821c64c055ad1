// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// log_mel: the frames-by-filters contraction (F reduced), then log10(max(m, eps)) elementwise.
// CHECK-LABEL: func.func @log_mel
// CHECK:         iterator_types = ["parallel", "parallel", "reduction"]} ins(%s, %w : tensor<3x5xf32>, tensor<5x4xf32>)
// CHECK:         arith.maximumf
// CHECK:         math.log
// CHECK-NOT:     mir.
func.func @log_mel(%s: tensor<3x5xf32>, %w: tensor<5x4xf32>) -> tensor<3x4xf32> {
  %0 = mir.log_mel %s, %w eps = 1.000000e-10 : (tensor<3x5xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

// log_mel_backward: the contraction, the masked quotient, then a contraction with the filters over M.
// CHECK-LABEL: func.func @log_mel_backward
// CHECK:         iterator_types = ["parallel", "parallel", "reduction"]} ins(%s, %w : tensor<3x5xf32>, tensor<5x4xf32>)
// CHECK:         arith.cmpf oge
// CHECK:         arith.select
// CHECK:         iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-NOT:     mir.
func.func @log_mel_backward(%s: tensor<3x5xf32>, %w: tensor<5x4xf32>, %g: tensor<3x4xf32>) -> tensor<3x5xf32> {
  %0 = mir.log_mel_backward %s, %w, %g eps = 1.000000e-10 : (tensor<3x5xf32>, tensor<5x4xf32>, tensor<3x4xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

// fft on the real layout: a constant DFT matrix [2N, 2N] and one contraction over its columns.
// CHECK-LABEL: func.func @fft_real_layout
// CHECK:         arith.constant dense<{{.*}}> : tensor<8x8xf32>
// CHECK:         iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %{{.*}} : tensor<3x8xf32>, tensor<8x8xf32>)
// CHECK-NOT:     mir.
func.func @fft_real_layout(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %0 = mir.fft %x inverse norm = ortho : (tensor<3x8xf32>) -> tensor<3x8xf32>
  func.return %0 : tensor<3x8xf32>
}
