// rlx-amp under every policy, on one block holding every AMP class: compute (matmul),
// reduction (softmax), elementwise (add, exp), data movement (transpose, reshape, gather with
// integer indices), boundary (constant), and an integer computation that never changes.
//
// RUN: rlx-opt %s -p 'rlx-amp{policy=always-f32}' | filecheck %s --check-prefix=F32
// RUN: rlx-opt %s -p 'rlx-amp{policy=always-f16}' | filecheck %s --check-prefix=F16
// RUN: rlx-opt %s -p 'rlx-amp{policy=auto-mixed}' | filecheck %s --check-prefix=F16
// RUN: rlx-opt %s -p 'rlx-amp{policy=auto-mixed-conservative}' | filecheck %s --check-prefix=CONS
// RUN: rlx-opt %s -p 'rlx-amp{policy=auto-mixed-bf16}' | filecheck %s --check-prefix=BF16
// RUN: rlx-opt %s -p 'rlx-amp{policy=custom compute=f16 reduction=f32 elementwise=bf16 data-movement=f16}' | filecheck %s --check-prefix=CUSTOM
// RUN: rlx-opt %s -p 'rlx-amp{policy=torch-cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s -p 'rlx-amp{policy=torch-cpu}' | filecheck %s --check-prefix=CPU
// RUN: rlx-opt %s -p 'rlx-amp{policy=auto-mixed ops=mir.softmax:f32,mir.gather:keep}' | filecheck %s --check-prefix=OPS

// always-f32 (the default) changes nothing.
// F32-LABEL: func.func @classes(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %n: tensor<2x4xi32>, %ids: tensor<2xi64>) -> (tensor<2x4xf32>, tensor<2x4xi32>) {
// F32-NEXT:    %c = mir.constant dense<5.000000e-01> : tensor<4xf32>
// F32-NEXT:    %mm = mir.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
// F32-NEXT:    %sm = mir.softmax %mm axis = -1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
// F32-NEXT:    %a = mir.add %sm, %c : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// F32-NEXT:    %t = mir.transpose %a perm = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
// F32-NEXT:    %r = mir.reshape %t new_shape = [2, 4] : (tensor<4x2xf32>) -> tensor<2x4xf32>
// F32-NEXT:    %e = mir.exp %r : (tensor<2x4xf32>) -> tensor<2x4xf32>
// F32-NEXT:    %g = mir.gather %e, %ids axis = 0 : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
// F32-NEXT:    %i = mir.add %n, %n : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
// F32-NEXT:    func.return %g, %i : tensor<2x4xf32>, tensor<2x4xi32>
// F32-NEXT:    }

// always-f16 and auto-mixed: every class in f16; the constant keeps its type and is cast
// once; the output is cast back; integers are untouched.
// F16-LABEL: func.func @classes(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %n: tensor<2x4xi32>, %ids: tensor<2xi64>) -> (tensor<2x4xf32>, tensor<2x4xi32>) {
// F16-NEXT:    %x_f16 = mir.cast %x : (tensor<2x4xf32>) -> tensor<2x4xf16>
// F16-NEXT:    %w_f16 = mir.cast %w : (tensor<4x4xf32>) -> tensor<4x4xf16>
// F16-NEXT:    %c = mir.constant dense<5.000000e-01> : tensor<4xf32>
// F16-NEXT:    %c_f16 = mir.cast %c : (tensor<4xf32>) -> tensor<4xf16>
// F16-NEXT:    %mm = mir.matmul %x_f16, %w_f16 : (tensor<2x4xf16>, tensor<4x4xf16>) -> tensor<2x4xf16>
// F16-NEXT:    %sm = mir.softmax %mm axis = -1 : (tensor<2x4xf16>) -> tensor<2x4xf16>
// F16-NEXT:    %a = mir.add %sm, %c_f16 : (tensor<2x4xf16>, tensor<4xf16>) -> tensor<2x4xf16>
// F16-NEXT:    %t = mir.transpose %a perm = [1, 0] : (tensor<2x4xf16>) -> tensor<4x2xf16>
// F16-NEXT:    %r = mir.reshape %t new_shape = [2, 4] : (tensor<4x2xf16>) -> tensor<2x4xf16>
// F16-NEXT:    %e = mir.exp %r : (tensor<2x4xf16>) -> tensor<2x4xf16>
// F16-NEXT:    %g = mir.gather %e, %ids axis = 0 : (tensor<2x4xf16>, tensor<2xi64>) -> tensor<2x4xf16>
// F16-NEXT:    %g_f32 = mir.cast %g : (tensor<2x4xf16>) -> tensor<2x4xf32>
// F16-NEXT:    %i = mir.add %n, %n : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
// F16-NEXT:    func.return %g_f32, %i : tensor<2x4xf32>, tensor<2x4xi32>
// F16-NEXT:    }

// auto-mixed-conservative: the reduction (softmax) in f32, with a cast on each side
// (RLX's cast tax).
// CONS-LABEL: func.func @classes(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %n: tensor<2x4xi32>, %ids: tensor<2xi64>) -> (tensor<2x4xf32>, tensor<2x4xi32>) {
// CONS-NEXT:    %x_f16 = mir.cast %x : (tensor<2x4xf32>) -> tensor<2x4xf16>
// CONS-NEXT:    %w_f16 = mir.cast %w : (tensor<4x4xf32>) -> tensor<4x4xf16>
// CONS-NEXT:    %c = mir.constant dense<5.000000e-01> : tensor<4xf32>
// CONS-NEXT:    %c_f16 = mir.cast %c : (tensor<4xf32>) -> tensor<4xf16>
// CONS-NEXT:    %mm = mir.matmul %x_f16, %w_f16 : (tensor<2x4xf16>, tensor<4x4xf16>) -> tensor<2x4xf16>
// CONS-NEXT:    %mm_f32 = mir.cast %mm : (tensor<2x4xf16>) -> tensor<2x4xf32>
// CONS-NEXT:    %sm = mir.softmax %mm_f32 axis = -1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CONS-NEXT:    %sm_f16 = mir.cast %sm : (tensor<2x4xf32>) -> tensor<2x4xf16>
// CONS-NEXT:    %a = mir.add %sm_f16, %c_f16 : (tensor<2x4xf16>, tensor<4xf16>) -> tensor<2x4xf16>
// CONS-NEXT:    %t = mir.transpose %a perm = [1, 0] : (tensor<2x4xf16>) -> tensor<4x2xf16>
// CONS-NEXT:    %r = mir.reshape %t new_shape = [2, 4] : (tensor<4x2xf16>) -> tensor<2x4xf16>
// CONS-NEXT:    %e = mir.exp %r : (tensor<2x4xf16>) -> tensor<2x4xf16>
// CONS-NEXT:    %g = mir.gather %e, %ids axis = 0 : (tensor<2x4xf16>, tensor<2xi64>) -> tensor<2x4xf16>
// CONS-NEXT:    %g_f32 = mir.cast %g : (tensor<2x4xf16>) -> tensor<2x4xf32>
// CONS-NEXT:    %i = mir.add %n, %n : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
// CONS-NEXT:    func.return %g_f32, %i : tensor<2x4xf32>, tensor<2x4xi32>
// CONS-NEXT:    }

// auto-mixed-bf16: every class in bf16.
// BF16-LABEL: func.func @classes(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %n: tensor<2x4xi32>, %ids: tensor<2xi64>) -> (tensor<2x4xf32>, tensor<2x4xi32>) {
// BF16-NEXT:    %x_bf16 = mir.cast %x : (tensor<2x4xf32>) -> tensor<2x4xbf16>
// BF16-NEXT:    %w_bf16 = mir.cast %w : (tensor<4x4xf32>) -> tensor<4x4xbf16>
// BF16-NEXT:    %c = mir.constant dense<5.000000e-01> : tensor<4xf32>
// BF16-NEXT:    %c_bf16 = mir.cast %c : (tensor<4xf32>) -> tensor<4xbf16>
// BF16-NEXT:    %mm = mir.matmul %x_bf16, %w_bf16 : (tensor<2x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4xbf16>
// BF16-NEXT:    %sm = mir.softmax %mm axis = -1 : (tensor<2x4xbf16>) -> tensor<2x4xbf16>
// BF16-NEXT:    %a = mir.add %sm, %c_bf16 : (tensor<2x4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
// BF16-NEXT:    %t = mir.transpose %a perm = [1, 0] : (tensor<2x4xbf16>) -> tensor<4x2xbf16>
// BF16-NEXT:    %r = mir.reshape %t new_shape = [2, 4] : (tensor<4x2xbf16>) -> tensor<2x4xbf16>
// BF16-NEXT:    %e = mir.exp %r : (tensor<2x4xbf16>) -> tensor<2x4xbf16>
// BF16-NEXT:    %g = mir.gather %e, %ids axis = 0 : (tensor<2x4xbf16>, tensor<2xi64>) -> tensor<2x4xbf16>
// BF16-NEXT:    %g_f32 = mir.cast %g : (tensor<2x4xbf16>) -> tensor<2x4xf32>
// BF16-NEXT:    %i = mir.add %n, %n : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
// BF16-NEXT:    func.return %g_f32, %i : tensor<2x4xf32>, tensor<2x4xi32>
// BF16-NEXT:    }

// custom: one precision per class.
// CUSTOM-LABEL: func.func @classes(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %n: tensor<2x4xi32>, %ids: tensor<2xi64>) -> (tensor<2x4xf32>, tensor<2x4xi32>) {
// CUSTOM-NEXT:    %x_f16 = mir.cast %x : (tensor<2x4xf32>) -> tensor<2x4xf16>
// CUSTOM-NEXT:    %w_f16 = mir.cast %w : (tensor<4x4xf32>) -> tensor<4x4xf16>
// CUSTOM-NEXT:    %c = mir.constant dense<5.000000e-01> : tensor<4xf32>
// CUSTOM-NEXT:    %c_bf16 = mir.cast %c : (tensor<4xf32>) -> tensor<4xbf16>
// CUSTOM-NEXT:    %mm = mir.matmul %x_f16, %w_f16 : (tensor<2x4xf16>, tensor<4x4xf16>) -> tensor<2x4xf16>
// CUSTOM-NEXT:    %mm_f32 = mir.cast %mm : (tensor<2x4xf16>) -> tensor<2x4xf32>
// CUSTOM-NEXT:    %sm = mir.softmax %mm_f32 axis = -1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CUSTOM-NEXT:    %sm_bf16 = mir.cast %sm : (tensor<2x4xf32>) -> tensor<2x4xbf16>
// CUSTOM-NEXT:    %a = mir.add %sm_bf16, %c_bf16 : (tensor<2x4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
// CUSTOM-NEXT:    %a_f16 = mir.cast %a : (tensor<2x4xbf16>) -> tensor<2x4xf16>
// CUSTOM-NEXT:    %t = mir.transpose %a_f16 perm = [1, 0] : (tensor<2x4xf16>) -> tensor<4x2xf16>
// CUSTOM-NEXT:    %r = mir.reshape %t new_shape = [2, 4] : (tensor<4x2xf16>) -> tensor<2x4xf16>
// CUSTOM-NEXT:    %r_bf16 = mir.cast %r : (tensor<2x4xf16>) -> tensor<2x4xbf16>
// CUSTOM-NEXT:    %e = mir.exp %r_bf16 : (tensor<2x4xbf16>) -> tensor<2x4xbf16>
// CUSTOM-NEXT:    %e_f16 = mir.cast %e : (tensor<2x4xbf16>) -> tensor<2x4xf16>
// CUSTOM-NEXT:    %g = mir.gather %e_f16, %ids axis = 0 : (tensor<2x4xf16>, tensor<2xi64>) -> tensor<2x4xf16>
// CUSTOM-NEXT:    %g_f32 = mir.cast %g : (tensor<2x4xf16>) -> tensor<2x4xf32>
// CUSTOM-NEXT:    %i = mir.add %n, %n : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
// CUSTOM-NEXT:    func.return %g_f32, %i : tensor<2x4xf32>, tensor<2x4xi32>
// CUSTOM-NEXT:    }

// torch-cuda: matmul in f16, softmax and exp in f32; add, transpose, reshape and gather
// promote (here to f32).
// CUDA-LABEL: func.func @classes(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %n: tensor<2x4xi32>, %ids: tensor<2xi64>) -> (tensor<2x4xf32>, tensor<2x4xi32>) {
// CUDA-NEXT:    %x_f16 = mir.cast %x : (tensor<2x4xf32>) -> tensor<2x4xf16>
// CUDA-NEXT:    %w_f16 = mir.cast %w : (tensor<4x4xf32>) -> tensor<4x4xf16>
// CUDA-NEXT:    %c = mir.constant dense<5.000000e-01> : tensor<4xf32>
// CUDA-NEXT:    %mm = mir.matmul %x_f16, %w_f16 : (tensor<2x4xf16>, tensor<4x4xf16>) -> tensor<2x4xf16>
// CUDA-NEXT:    %mm_f32 = mir.cast %mm : (tensor<2x4xf16>) -> tensor<2x4xf32>
// CUDA-NEXT:    %sm = mir.softmax %mm_f32 axis = -1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CUDA-NEXT:    %a = mir.add %sm, %c : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CUDA-NEXT:    %t = mir.transpose %a perm = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
// CUDA-NEXT:    %r = mir.reshape %t new_shape = [2, 4] : (tensor<4x2xf32>) -> tensor<2x4xf32>
// CUDA-NEXT:    %e = mir.exp %r : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CUDA-NEXT:    %g = mir.gather %e, %ids axis = 0 : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
// CUDA-NEXT:    %i = mir.add %n, %n : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
// CUDA-NEXT:    func.return %g, %i : tensor<2x4xf32>, tensor<2x4xi32>
// CUDA-NEXT:    }

// torch-cpu: matmul in bf16, softmax promotes (stays bf16), add of bf16 and f32 promotes to f32.
// CPU-LABEL: func.func @classes(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %n: tensor<2x4xi32>, %ids: tensor<2xi64>) -> (tensor<2x4xf32>, tensor<2x4xi32>) {
// CPU-NEXT:    %x_bf16 = mir.cast %x : (tensor<2x4xf32>) -> tensor<2x4xbf16>
// CPU-NEXT:    %w_bf16 = mir.cast %w : (tensor<4x4xf32>) -> tensor<4x4xbf16>
// CPU-NEXT:    %c = mir.constant dense<5.000000e-01> : tensor<4xf32>
// CPU-NEXT:    %mm = mir.matmul %x_bf16, %w_bf16 : (tensor<2x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4xbf16>
// CPU-NEXT:    %sm = mir.softmax %mm axis = -1 : (tensor<2x4xbf16>) -> tensor<2x4xbf16>
// CPU-NEXT:    %sm_f32 = mir.cast %sm : (tensor<2x4xbf16>) -> tensor<2x4xf32>
// CPU-NEXT:    %a = mir.add %sm_f32, %c : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CPU-NEXT:    %t = mir.transpose %a perm = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
// CPU-NEXT:    %r = mir.reshape %t new_shape = [2, 4] : (tensor<4x2xf32>) -> tensor<2x4xf32>
// CPU-NEXT:    %e = mir.exp %r : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CPU-NEXT:    %g = mir.gather %e, %ids axis = 0 : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
// CPU-NEXT:    %i = mir.add %n, %n : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
// CPU-NEXT:    func.return %g, %i : tensor<2x4xf32>, tensor<2x4xi32>
// CPU-NEXT:    }

// Per-op overrides: softmax in f32, gather keeps its declared (f32) types.
// OPS-LABEL: func.func @classes(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %n: tensor<2x4xi32>, %ids: tensor<2xi64>) -> (tensor<2x4xf32>, tensor<2x4xi32>) {
// OPS-NEXT:    %x_f16 = mir.cast %x : (tensor<2x4xf32>) -> tensor<2x4xf16>
// OPS-NEXT:    %w_f16 = mir.cast %w : (tensor<4x4xf32>) -> tensor<4x4xf16>
// OPS-NEXT:    %c = mir.constant dense<5.000000e-01> : tensor<4xf32>
// OPS-NEXT:    %c_f16 = mir.cast %c : (tensor<4xf32>) -> tensor<4xf16>
// OPS-NEXT:    %mm = mir.matmul %x_f16, %w_f16 : (tensor<2x4xf16>, tensor<4x4xf16>) -> tensor<2x4xf16>
// OPS-NEXT:    %mm_f32 = mir.cast %mm : (tensor<2x4xf16>) -> tensor<2x4xf32>
// OPS-NEXT:    %sm = mir.softmax %mm_f32 axis = -1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
// OPS-NEXT:    %sm_f16 = mir.cast %sm : (tensor<2x4xf32>) -> tensor<2x4xf16>
// OPS-NEXT:    %a = mir.add %sm_f16, %c_f16 : (tensor<2x4xf16>, tensor<4xf16>) -> tensor<2x4xf16>
// OPS-NEXT:    %t = mir.transpose %a perm = [1, 0] : (tensor<2x4xf16>) -> tensor<4x2xf16>
// OPS-NEXT:    %r = mir.reshape %t new_shape = [2, 4] : (tensor<4x2xf16>) -> tensor<2x4xf16>
// OPS-NEXT:    %e = mir.exp %r : (tensor<2x4xf16>) -> tensor<2x4xf16>
// OPS-NEXT:    %e_f32 = mir.cast %e : (tensor<2x4xf16>) -> tensor<2x4xf32>
// OPS-NEXT:    %g = mir.gather %e_f32, %ids axis = 0 : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
// OPS-NEXT:    %i = mir.add %n, %n : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
// OPS-NEXT:    func.return %g, %i : tensor<2x4xf32>, tensor<2x4xi32>
// OPS-NEXT:    }

func.func @classes(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %n: tensor<2x4xi32>, %ids: tensor<2xi64>) -> (tensor<2x4xf32>, tensor<2x4xi32>) {
  %c = mir.constant dense<5.000000e-01> : tensor<4xf32>
  %mm = mir.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %sm = mir.softmax %mm axis = -1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %a = mir.add %sm, %c : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %t = mir.transpose %a perm = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
  %r = mir.reshape %t new_shape = [2, 4] : (tensor<4x2xf32>) -> tensor<2x4xf32>
  %e = mir.exp %r : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = mir.gather %e, %ids axis = 0 : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  %i = mir.add %n, %n : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
  func.return %g, %i : tensor<2x4xf32>, tensor<2x4xi32>
}
